"""What `pip install trafka` puts into site-packages: the one package `trafka` and its dist-info."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).parent.parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    [built] = out.glob("trafka-*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_installs_only_the_trafka_package(wheel):
    top = {name.split("/")[0] for name in wheel.namelist()}
    [dist_info] = [t for t in top if t.endswith(".dist-info")]
    assert top == {"trafka", dist_info}
    names = set(wheel.namelist())
    for module in (
        "trafka/__init__.py",
        "trafka/__main__.py",
        "trafka/testing.py",
        "trafka/spark.py",
        "trafka/py.typed",
        "trafka/domain/__init__.py",
        "trafka/adapters/kafka/connection/server.py",
        "trafka/adapters/kafka/apis/produce.py",
        "trafka/app/cli/main.py",
        "trafka/app/embedded/pytest_plugin.py",
        "trafka/kafka_schemas/TopicRecord.json",
    ):
        assert module in names, module


def test_the_wheel_declares_the_console_script_and_the_pytest_plugin(wheel):
    [entry_points] = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points).decode()
    assert "[console_scripts]\ntrafka = trafka.app.cli.main:main" in text
    assert "[pytest11]\ntrafka = trafka.app.embedded.pytest_plugin" in text


def test_importing_trafka_starts_nothing_and_names_its_public_api():
    code = (
        "import sys, threading, trafka; "
        "assert threading.active_count() == 1; "
        "assert 'trio' not in sys.modules and 'kafka' not in sys.modules, 'import trafka stays light'; "
        "print(trafka.__version__, sorted(trafka.__all__)); "
        "assert trafka.Broker is trafka.testing.Broker and trafka.Cluster is trafka.testing.Cluster"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    version, api = run.stdout.split(" ", 1)
    assert version.count(".") == 2
    assert api.strip() == "['Broker', 'Cluster', '__version__', 'open_broker', 'testing']"


def test_python_dash_m_trafka_is_the_command():
    run = subprocess.run([sys.executable, "-m", "trafka", "--help"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "serve" in run.stdout


def test_a_broker_that_serves_no_registry_imports_none_of_its_libraries():
    # The registry's libraries (Avro, JSON Schema, protoc) and the HTTP stack cost tens of MiB of
    # memory: a broker without --http-port or a schema-validated topic never imports them.
    code = (
        "import sys; "
        "from trafka.app.wiring.bootstrap import bootstrap, default_adapters; "
        "from trafka.app.config.settings import load_settings; "
        "settings = load_settings(overrides={'storage': {'kind': 'memory'}}); "
        "bootstrap(settings, default_adapters(settings)); "
        "heavy = {'fastavro', 'jsonschema', 'grpc_tools', 'google', 'starlette', 'hypercorn', 'jinja2'}; "
        "print(sorted(heavy & {name.split('.')[0] for name in sys.modules}))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
