"""Regenerate src/app/config/kafka_broker_keys.txt, the names of Apache Kafka's broker configs, from Kafka's source.

    python scripts/kafka_broker_keys.py /path/to/apache-kafka.git [commit] > src/app/config/kafka_broker_keys.txt

Kafka's broker ConfigDef is `AbstractKafkaConfig.CONFIG_DEF`, a merge of the CONFIG_DEFs of the classes in
`CONFIG_DEF_CLASSES`. Without building Kafka (no JVM dependencies here) this reads their Java source: every
`.define(NAME, ...)` in those classes, with NAME resolved through the `static final String` constants of
the whole source tree (string literals, `+` concatenation, and `ServerTopicConfigSynonyms.serverSynonym`,
which is `log.` + the topic config unless Kafka lists another name). ZooKeeper's configs are left out: Kafka
4.0 removed ZooKeeper mode. Works on a bare git directory (reads with `git show`).
"""

from __future__ import annotations

import re
import subprocess
import sys

CONFIG_DEF_CLASSES = [
    "RemoteLogManagerConfig",
    "ServerConfigs",
    "KRaftConfigs",
    "SocketServerConfigs",
    "ReplicationConfigs",
    "GroupCoordinatorConfig",
    "CleanerConfig",
    "LogConfig",
    "ShareGroupConfig",
    "ShareCoordinatorConfig",
    "TransactionLogConfig",
    "TransactionStateManagerConfig",
    "QuorumConfig",
    "MetricConfigs",
    "QuotaConfig",
    "BrokerSecurityConfigs",
    "DelegationTokenManagerConfigs",
    "PasswordEncoderConfigs",
]
# Classes that declare other ConfigDefs too (topic configs, client quotas): only this one is the broker's.
BLOCKS = {"LogConfig": "SERVER_CONFIG_DEF", "QuotaConfig": "CONFIG_DEF"}
CONST = re.compile(r"(?:public|private|protected)?\s*static\s+final\s+String\s+(\w+)\s*=\s*(.*?);", re.S)
DEFINE = re.compile(r"\.define(?:Internal)?\(\s*([\w.]+)\s*,")


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True).stdout


def main(repo: str, commit: str = "HEAD") -> None:
    files = [
        f
        for f in git(repo, "ls-tree", "-r", "--name-only", commit).split()
        if f.endswith(".java") and "/src/main/" in f
    ]
    sources = {
        f: git(repo, "show", f"{commit}:{f}")
        for f in files
        if any(
            part in f
            for part in (
                "/config",
                "/server/",
                "/raft/",
                "/coordinator/",
                "/storage/",
                "/network/",
                "/security/",
                "/clients/",
            )
        )
    }
    consts: dict[str, dict[str, str]] = {}
    for path, text in sources.items():
        cls = path.rsplit("/", 1)[1][:-5]
        consts.setdefault(cls, {}).update({name: expr.strip() for name, expr in CONST.findall(text)})

    synonyms_src = next(t for p, t in sources.items() if p.endswith("/ServerTopicConfigSynonyms.java"))
    synonyms: dict[str, str] = {}  # topic config constant -> its first server synonym
    for kind, const, rest in re.findall(
        r"(sameName|sameNameWithLogPrefix|sameNameWithLogCleanerPrefix|singleWithLogPrefix|singleWithLogCleanerPrefix|single|listWithLogPrefix)"
        r"\(\s*TopicConfig\.(\w+)\s*(?:,\s*(?:new ConfigSynonym\()?\"([^\"]+)\")?",
        synonyms_src,
    ):
        synonyms[const] = {
            "sameName": "{t}",
            "sameNameWithLogPrefix": "log.{t}",
            "sameNameWithLogCleanerPrefix": "log.cleaner.{t}",
            "singleWithLogPrefix": "log.{r}",
            "singleWithLogCleanerPrefix": "log.cleaner.{r}",
            "single": "{r}",
            "listWithLogPrefix": "log.{r}",
        }[kind].replace("{r}", rest)

    def lookup(owner: str, name: str) -> tuple[str, str] | None:
        if name in consts.get(owner, {}):
            return consts[owner][name], owner
        owners = [cls for cls, table in consts.items() if name in table]  # a static import
        return (consts[owners[0]][name], owners[0]) if len(owners) == 1 else None

    def evaluate(expr: str, cls: str, depth: int = 0) -> str | None:
        if depth > 20:
            return None
        out = ""
        for term in re.split(r"\s*\+\s*", expr.strip()):
            term = term.strip()
            if term.startswith('"') and term.endswith('"'):
                out += term[1:-1]
                continue
            call = re.match(r"ServerTopicConfigSynonyms\.serverSynonym\(TopicConfig\.(\w+)\)$", term)
            if call:
                topic = evaluate(f"TopicConfig.{call.group(1)}", "TopicConfig", depth + 1)
                if topic is None:
                    return None
                out += synonyms.get(call.group(1), "log.{t}").replace("{t}", topic)
                continue
            owner, _, name = term.rpartition(".")
            found = lookup(owner.rsplit(".", 1)[-1] or cls, name)
            if found is None:
                return None
            resolved = evaluate(found[0], found[1], depth + 1)
            if resolved is None:
                return None
            out += resolved
        return out

    keys: set[str] = set()
    unresolved: list[str] = []
    for path, text in sources.items():
        cls = path.rsplit("/", 1)[1][:-5]
        if cls not in CONFIG_DEF_CLASSES:
            continue
        if cls in BLOCKS:
            start = re.search(BLOCKS[cls] + r"\s*=\s*new ConfigDef\(\)", text).start()
            text = text[start : text.index(";", start)]
        for ref in DEFINE.findall(text):
            value = evaluate(ref, cls)
            if value is None:
                unresolved.append(f"{cls}: {ref}")
            elif not value.startswith("zookeeper."):
                keys.add(value)
    if unresolved:
        print("unresolved: " + ", ".join(unresolved), file=sys.stderr)
    print(
        f"# Apache Kafka broker config names, generated by scripts/kafka_broker_keys.py from apache/kafka@{git(repo, 'rev-parse', commit).strip()}"
    )
    for key in sorted(keys):
        print(key)


if __name__ == "__main__":
    main(*sys.argv[1:])
