"""Which names are Kafka broker configs, and how the `apache/kafka` image reads `KAFKA_*` variables.

A name that is no Kafka broker config at all (`kafka_broker_keys.txt`, generated from Kafka's source
by `scripts/kafka_broker_keys.py`) is an error: a typo must not pass silently. `KAFKA_<NAME>`
variables are read as the image reads them (its `KafkaDockerWrapper`): `_` to `.`, then `...` to `-`
and `..` to `_`, lower case.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping

KAFKA_ENV_PREFIX = "KAFKA_"
# Kafka's scripts read these; they are never server.properties entries: KafkaDockerWrapper's
# ExcludeServerPropsEnv, KAFKA_JMX_PORT (the image's `launch` script), the variables of
# bin/kafka-run-class.sh, and KAFKA_HOME, which Kafka installations commonly export.
KAFKA_ENV_NOT_CONFIGS = frozenset(
    {
        "KAFKA_VERSION",
        "KAFKA_HEAP_OPTS",
        "KAFKA_LOG4J_OPTS",
        "KAFKA_OPTS",
        "KAFKA_JMX_OPTS",
        "KAFKA_JVM_PERFORMANCE_OPTS",
        "KAFKA_GC_LOG_OPTS",
        "KAFKA_LOG4J_ROOT_LOGLEVEL",
        "KAFKA_LOG4J_LOGGERS",
        "KAFKA_TOOLS_LOG4J_LOGLEVEL",
        "KAFKA_JMX_HOSTNAME",
        "KAFKA_JMX_PORT",
        "KAFKA_DEBUG",
        "KAFKA_MODE",
        "KAFKA_LOG4J_CMD_OPTS",
        "KAFKA_HOME",
    }
)
# Families of Kafka keys named by prefix (per listener, per plugin, config providers).
_KAFKA_KEY_PREFIXES = ("listener.name.", "rsm.config.", "rlmm.config.", "config.providers.")


@functools.cache
def kafka_broker_keys() -> frozenset[str]:
    # Read beside this module: `importlib.resources` loads its readers and `zipfile` for it (~5 ms of a
    # `trafka serve`'s start, session 15); through it only where the package is no directory (a zip)
    try:
        with open(os.path.join(os.path.dirname(__file__), "kafka_broker_keys.txt"), encoding="utf-8") as file:
            text = file.read()
    except OSError:
        from importlib import resources

        text = resources.files("trafka.app.config").joinpath("kafka_broker_keys.txt").read_text()
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


# StandardAuthorizer's own configs, read by the authorizer rather than declared in the broker's ConfigDef.
_AUTHORIZER_KEYS = frozenset({"super.users", "allow.everyone.if.no.acl.found"})


def is_kafka_key(name: str) -> bool:
    return name in kafka_broker_keys() or name in _AUTHORIZER_KEYS or name.startswith(_KAFKA_KEY_PREFIXES)


def env_to_kafka_key(variable: str) -> str:
    """`KAFKA_LOG_RETENTION_MS` -> `log.retention.ms`, exactly as KafkaDockerWrapper converts names."""
    return variable.replace(KAFKA_ENV_PREFIX, "").lower().replace("_", ".").replace("...", "-").replace("..", "_")


def kafka_environment(environ: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """The `KAFKA_*` variables as Kafka config name -> (value, the variable it came from).

    As the image's `configure` script does, a broker given `KAFKA_ADVERTISED_LISTENERS` without
    `KAFKA_LISTENERS` listens on those listeners with every host replaced by 0.0.0.0."""
    out = {
        env_to_kafka_key(name): (environ[name], name)
        for name in sorted(environ)
        if name.startswith(KAFKA_ENV_PREFIX) and name not in KAFKA_ENV_NOT_CONFIGS
    }
    roles = out.get("process.roles", ("", ""))[0]
    if "advertised.listeners" in out and "listeners" not in out and roles != "controller":
        advertised = out["advertised.listeners"][0]
        listeners = re.sub(r"://[^:]*:", "://0.0.0.0:", advertised)
        out["listeners"] = (listeners, "KAFKA_ADVERTISED_LISTENERS")
    return out
