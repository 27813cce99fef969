"""Only what a feature needs is imported when it is used (ADR 70): a memory broker imports no HTTP
stack, console, Schema Registry, telemetry view, Spark, cleaner process or test tooling, and building
the CLI's parsers (`trafka --help`) imports no broker at all. Each check runs in a fresh interpreter:
this test process has long imported everything."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from trafka.app.cli import users
from trafka.app.cli.main import COMMANDS, build_parser
from trafka.domain.security import ScramMechanism
from trafka.domain.security.scram import MAX_ITERATIONS, MIN_ITERATIONS

# Libraries of features a memory broker without them never uses (and pytest, which trio.testing imports);
# kafka-python is a client, not the broker's codec (ADR 92).
FEATURES = (
    "pytest",
    "kafka",
    "trio.testing",
    "starlette",
    "hypercorn",
    "jinja2",
    "itsdangerous",
    "prometheus_client",
    "jsonschema",
    "fastavro",
    "google.protobuf",
    "grpc_tools",
    "opentelemetry",
    "re2",
    "aiokafka",
    "pyspark",
    "pyarrow",
    "httpx",
    "multiprocessing",
    "trafka.adapters.http.app",
    "trafka.adapters.http.console",
    "trafka.adapters.schema_registry",
    "trafka.adapters.spark",
    "trafka.app.wiring.http",
    "trafka.app.cleaner.process",
    "trafka.adapters.compression.keys",
)
# What `trafka --help` must not load: the broker and every client library.
BROKER = (
    "trio",
    "kafka",
    "trafka.domain",
    "trafka.adapters",
    "trafka.app.wiring",
    "trafka.app.cleaner",
    "trafka.app.config",
    "crc32c",
)


def loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def among(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(name for name in names if any(m == name or m.startswith(name + ".") for m in modules))


# What a broker that has accepted no request yet does not need (ADRs 118 and 124): the share groups'
# coordinator and service (built at the first share group use), the transaction coordinator, the streams
# topology descriptions, the codecs' libraries (the first compressed batch inflated), a TOML reader, the
# IDNA codec, and the version lookup the crc32c package does on import (its C function is loaded alone).
DEFERRED = (
    # Kafka's broker keys read as a file, the rooms' declarations listed for tests only (ADR 128)
    "importlib.resources",
    "zipfile",
    "pkgutil",
    "tomllib",
    "importlib.metadata",
    "encodings.idna",
    "zstandard",
    "lz4",
    "snappy",
    "cramjam",
    "trafka.adapters.filesystem",
    "trafka.app.wiring.share",
    "trafka.adapters.kafka.runtime.share_runtime",
    *(
        f"trafka.domain.groups.share.{module}"
        for module in ("coordinator", "service", "partition", "sessions", "fetched_records", "records")
    ),
    "trafka.domain.groups.streams.description",
    # the GROUP configs' rules: at the first GROUP config, or at start when some are recorded (ADR 124)
    "trafka.adapters.kafka.apis.common.share_group_configs",
    "trafka.adapters.kafka.apis.common.config_resources",
    "trafka.adapters.kafka.runtime.share_dead_letters",
    "trafka.domain.groups.share.configs",
    # SASL's JAAS parser, PLAIN's server and the HTTP listener's password checks: with their listener (issue 39)
    "trafka.domain.security.jaas",
    "trafka.domain.security.plain",
    "trafka.domain.security.passwords",
    "trafka.domain.security.scram",  # SCRAM's hashes: at the first SCRAM handshake or credential (issue 39)
    "secrets",
    # the ssl contexts' wiring, TLS's handshake and its principal mapping rules: with a TLS listener (issue 39)
    "trafka.app.wiring.tls",
    "trafka.adapters.kafka.connection.tls",
    "trafka.domain.security.ssl_mapping",
    # the settings' converter: for a configuration whose values need converting, or a refusal (issue 39)
    "cattrs",
    "trafka.domain.telemetry",  # KIP-714's receiver: with the HTTP listener only (ADR 124)
    # the transaction coordinator: built at the first transactional or idempotent request (ADR 124)
    *(f"trafka.domain.transactions.{module}" for module in ("coordinator", "service", "state")),
    *(
        f"trafka.domain.groups.modern.{module}"
        for module in (
            "consumer",
            "heartbeat",
            "classic_members",
            "member_identity",
            "subscriptions",
            "targets",
            "offset_checks",
            "group_configs",
            # its records and model: the offset stores name them for types only (ADR 124)
            "records",
            "model",
            "reconciliation",
            "migration",
        )
    ),
)


def test_a_memory_broker_imports_no_feature_it_does_not_use():
    modules = loaded_after(
        "import trafka\nwith trafka.Broker(topics={'t': 1}) as broker:\n    broker.create_topic('u', 2)\n"
    )
    assert among(modules, FEATURES) == []
    assert among(modules, DEFERRED) == []
    assert "crc32c" not in modules and "crc32c._crc32c" in modules  # the checksum without its package's init


def test_the_share_groups_runtime_is_built_at_its_first_use_with_its_timer():
    """ADR 118: nothing of the share groups is built at start; the first use builds it once, as it was built
    at start before (its timer task started then), and a closing connection tends only what was built."""
    probe = (
        "import trafka, trio\n"
        "with trafka.Broker() as broker:\n"
        "    services = broker._require().ctx.services\n"
        "    assert services.share_built is None and services.share_groups is not None\n"
        "    share, at_build = trio.from_thread.run_sync(\n"
        "        lambda: (services.share, services.share._deadlines_changed), trio_token=broker._token\n"
        "    )\n"
        "    assert share is not None and services.share_built is share and services.share is share\n"
        "    async def settle():\n"
        "        for _ in range(20):\n"
        "            await trio.lowlevel.checkpoint()\n"
        "    trio.from_thread.run(settle, trio_token=broker._token)\n"
        "    assert share._deadlines_changed is not at_build, 'its timer task runs (each turn waits anew)'\n"
        "with trafka.Broker(group_share_enable=False) as broker:\n"
        "    services = broker._require().ctx.services\n"
        "    assert services.share_groups is None and services.share is None\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=120)


# The rooms a client's first exchanges reach (ApiVersions, Metadata, Produce, ListOffsets, Fetch; ADR 110)
FIRST_ROOMS = {"api_versions", "metadata", "produce", "list_offsets", "fetch"}
ROOMS = "trafka.adapters.kafka.apis."
# A log dir's stores: a memory broker opens none (the log cleaner's `partition_log` is imported, for now)
LOG_DIR_STORES = tuple(
    f"trafka.adapters.filesystem.{store}"
    for store in ("catalog_store", "offset_store", "transaction_store", "share_state_store", "security_store")
)


STREAMS_COORDINATOR = tuple(
    f"trafka.domain.groups.streams.{module}" for module in ("coordinator", "model", "assignor", "records", "tasks")
)


def test_a_memory_broker_imports_the_rooms_of_the_apis_it_is_sent_only():
    """ApiVersions is answered from the rooms' table; a room is imported at its API's first request."""
    modules = loaded_after(
        "import io, sys, contextlib\n"
        "import trafka\n"
        "from trafka.app.cli.main import main\n"
        "with trafka.Broker(topics={'t': 1}) as broker:\n"
        "    sys.stdin = io.StringIO('v\\n')\n"
        "    assert main(['produce', 't', '-b', broker.bootstrap_servers]) == 0\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        assert main(['consume', 't', '--from-beginning', '-n', '1', '-b', broker.bootstrap_servers]) == 0\n"
    )
    rooms = {m.removeprefix(ROOMS) for m in modules if m.startswith(ROOMS) and ".common" not in m}
    assert {"api_versions", "produce", "fetch"} <= rooms <= FIRST_ROOMS
    assert among(modules, LOG_DIR_STORES) == []
    # no streams coordinator before a streams group request (the package itself and its description are light)
    assert among(modules, STREAMS_COORDINATOR) == []


def test_the_broker_is_imported_without_collections_and_the_collector_left_as_found():
    """ADR 110: what `trafka.Broker`'s import builds lives as long as the process, so no collection walks
    it while it is built (about a hundred otherwise); the collector is on again after it (its first
    allocation may then collect once), or still off when the caller had turned it off."""
    probe = (
        "import gc, trafka\n"
        "def collections():\n"
        "    return sum(generation['collections'] for generation in gc.get_stats())\n"
        "before = collections()\n"
        "trafka.Broker\n"
        "assert collections() - before <= 1 and gc.isenabled(), (collections() - before, gc.isenabled())\n"
        "gc.disable()\n"
        "trafka.Cluster\n"
        "assert not gc.isenabled()\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=120)


def test_a_data_dir_broker_reads_and_writes_records_without_a_client_library(tmp_path):
    """ADR 101: the internal logs, `Broker.records()` and the share groups' copies use trafka's own record
    batch codec; kafka-python is the user's client only (it left the core install)."""
    modules = loaded_after(
        "import io, sys\n"
        "import trafka\n"
        "from trafka.app.cli.main import main\n"
        f"with trafka.Broker(data_dir={str(tmp_path)!r}, topics={{'t': 1}}) as broker:\n"
        "    sys.stdin = io.StringIO('k:v\\n')\n"
        "    assert main(['produce', 't', '-k', ':', '-H', 'h=1', '-b', broker.bootstrap_servers]) == 0\n"
        "    [record] = broker.records('t')\n"
        "    assert (record.key, record.value, record.headers) == (b'k', b'v', (('h', b'1'),)), record\n"
        "    broker.create_topic('u', 2)\n"
    )
    assert among(modules, ("kafka",)) == []


def test_the_operator_commands_run_without_a_client_library(tmp_path):
    """ADR 101: `trafka topic`, `produce`, `consume` (in a group too) and `dump-log` speak Kafka's protocol
    through their own client on trafka's schema codec, and read records with its record batch codec."""
    probe = f"""
import io, sys, glob, contextlib
import trafka
from trafka.app.cli.main import main

def run(*args, stdin=''):
    sys.stdin = io.StringIO(stdin)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(args)) == 0, args
    return out.getvalue()

with trafka.Broker(data_dir={str(tmp_path)!r}) as broker:
    b = ['-b', broker.bootstrap_servers]
    run('topic', 'create', 't', '-p', '2', *b)
    assert 't' in run('topic', 'list', *b)
    assert run('produce', 't', '-k', ':', *b, stdin='a:1\\nb:2\\n').startswith('produced 2 records to t')
    got = run('consume', 't', '--from-beginning', '-n', '2', '-f', '{{key}}={{value}}', *b)
    assert sorted(got.split()) == ['a=1', 'b=2'], got
    got = run('consume', 't', '-g', 'g', '--from-beginning', '-n', '2', '-f', '{{value}}', *b)
    assert sorted(got.split()) == ['1', '2'], got
    assert 'g' in run('group', 'list', *b)
    segments = glob.glob({str(tmp_path)!r} + '/t-*/*.log')
    dumped = run('dump-log', '--print-data-log', *segments)
    assert 'payload: 1' in dumped and 'payload: 2' in dumped, dumped
"""
    assert among(loaded_after(probe), ("kafka",)) == []


def test_the_cli_builds_its_parsers_without_the_broker():
    modules = loaded_after("from trafka.app.cli.main import build_parser\nbuild_parser()")
    assert among(modules, BROKER + FEATURES) == []


def test_the_user_commands_constants_are_the_domains():
    assert users.MECHANISMS == tuple(m.mechanism_name for m in ScramMechanism)
    assert users.ITERATIONS == (MIN_ITERATIONS, MAX_ITERATIONS)


def test_serve_builds_its_own_parser_alone():
    """ADR 118: `trafka serve ...` parses with serve's parser only: no other command's module is imported
    for a broker's start."""
    modules = loaded_after(
        "import sys\nfrom trafka.app.cli.main import build_parser\n"
        "args = build_parser(only_serve=True).parse_args(['serve', '--memory', '--port', '0'])\n"
        "assert (args.command, args.memory, args.port) == ('serve', True, 0)\n"
    )
    others = ("trafka.app.ops", "trafka.app.cli.export", "trafka.app.cli.users", "trafka.app.cli.config")
    assert among(modules, others) == []


def test_serves_parser_alone_names_every_command_in_its_usage():
    """ADR 124: `trafka serve --bogus` prints the whole CLI's usage line, not `{serve}` alone; the list of
    commands it names is the parsers' own."""
    whole = build_parser()
    [commands] = [action for action in whole._actions if isinstance(action, argparse._SubParsersAction)]
    assert tuple(commands.choices) == COMMANDS
    assert build_parser(only_serve=True).format_usage() == whole.format_usage()
    done = subprocess.run(
        [sys.executable, "-m", "trafka", "serve", "--bogus"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert ",".join(COMMANDS) in done.stderr and "unrecognized arguments: --bogus" in done.stderr, done.stderr


def test_the_consumer_groups_coordinator_is_built_at_its_first_use_and_its_settings_checked_at_start():
    """ADR 118: the KIP-848 coordinator is built at its first use (its regex task then started beside the
    timer), and a bad `group.consumer.*` setting still stops the start, as when it was built at start."""
    probe = (
        "import trafka, trio\n"
        "with trafka.Broker() as broker:\n"
        "    groups = broker._require().ctx.services.groups\n"
        "    assert groups._consumer is None\n"
        "    consumer = trio.from_thread.run_sync(lambda: groups.consumer, trio_token=broker._token)\n"
        "    assert consumer is not None and groups._consumer is consumer and groups.consumer is consumer\n"
        "    assert groups._nursery is not None, 'the runtime runs, so the regex task was started in it'\n"
        "try:\n"
        "    trafka.Broker(group_consumer_migration_policy='sideways').start()\n"
        "except trafka.app.embedded.BrokerError as exc:\n"
        "    assert 'sideways' in str(exc) or 'migration' in str(exc), exc\n"
        "else:\n"
        "    raise AssertionError('a bad group.consumer.migration.policy started a broker')\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=120)


def _after_first_broker_attribute(before: str) -> list[object]:
    probe = (
        f"import gc, json\n{before}\nfrozen = gc.get_freeze_count()\nimport trafka\ntrafka.Broker\n"
        "print(json.dumps([gc.isenabled(), gc.get_count()[0], frozen, gc.get_freeze_count()]))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    return list(json.loads(out.stdout.strip().splitlines()[-1]))


def test_the_broker_modules_import_leaves_no_young_generation_to_walk():
    """ADR 128: what the broker's import allocated is moved to the oldest generation unwalked, so the
    collector's first pass after it does not walk ~100,000 objects; the collector's own state is kept: left
    enabled or disabled as found, and objects a program froze stay frozen (no unfreeze then)."""
    enabled, young, frozen_before, frozen_after = _after_first_broker_attribute("")
    assert enabled and young < 1000 and frozen_before == frozen_after == 0
    enabled, _, _, _ = _after_first_broker_attribute("gc.disable()")
    assert not enabled
    enabled, _, frozen_before, frozen_after = _after_first_broker_attribute("gc.freeze()")
    assert enabled and frozen_before > 0 and frozen_after > frozen_before // 2  # (some die meanwhile)


def test_serves_configuration_reads_kafkas_key_names_without_importlib_resources():
    """Session 15: `serve` starts from Kafka's single-node configuration and checks its key names, read
    as a file beside their module (`importlib.resources` loaded its readers and zipfile for it)."""
    modules = loaded_after(
        "from trafka.app.config.settings import load_configuration\n"
        "from trafka.app.config.kafka_names import is_kafka_key\n"
        "load_configuration(None, {'KAFKA_NUM_PARTITIONS': '2'}, None, single_node=True)\n"
        "assert is_kafka_key('log.retention.ms') and not is_kafka_key('log.retention.mss')\n"
    )
    assert among(modules, ("zipfile", "importlib.resources", "importlib.readers")) == []


def test_a_broker_without_sasl_compiles_no_sasl_schema_at_start():
    """Issue 39: SASL's request and response classes are compiled from Kafka's schema files at a SASL
    listener's first connection; a broker with a PLAINTEXT listener compiles none of them at start."""
    probe = (
        "import json\n"
        "from trafka.schema_codec import messages\n"
        "compiled, names = messages.compiled, []\n"
        "def spy(name):\n"
        "    names.append(name)\n"
        "    return compiled(name)\n"
        "messages.compiled = spy\n"
        "import trafka\n"
        "with trafka.Broker(topics={'t': 1}):\n"
        "    pass\n"
        "print(json.dumps(names))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    names = json.loads(out.stdout.strip().splitlines()[-1])
    assert names and [name for name in names if name.startswith("Sasl")] == []
