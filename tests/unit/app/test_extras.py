"""A feature whose extra is not installed says which extra to install, in one line (ADR 70). A missing
package is simulated the way Python spells it: its name set to None in sys.modules (import fails)."""

from __future__ import annotations

import sys

import pytest

from trafka.app import extras
from trafka.app.cli.main import main
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import _registry, bootstrap, default_adapters

PUSH_TELEMETRY = 72


def without(monkeypatch, *modules: str) -> None:
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


def test_every_extra_is_installed_in_the_test_environment():
    assert [extra for extra in extras.EXTRAS if not extras.installed(extra)] == []


def test_the_http_listener_without_the_console_extra_names_it(monkeypatch):
    without(monkeypatch, "hypercorn")
    assert extras.missing("console") == ["hypercorn"]
    settings = load_settings(None, {}, {"storage": {"kind": "memory"}, "http": {"port": 0}})
    with pytest.raises(extras.MissingExtra, match=r"pip install 'trafka\[console\]' \(missing: hypercorn\)"):
        bootstrap(settings, default_adapters(settings))


def test_serve_http_port_without_the_console_extra_is_one_line_and_exit_2(monkeypatch, capsys):
    # (an installed core without the extra caught it first in default_adapters: /metrics' registry)
    without(monkeypatch, "starlette", "prometheus_client", "jinja2")
    assert main(["serve", "--memory", "--port", "0", "--http-port", "0"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "trafka: the HTTP listener (--http-port, http.port) needs trafka's console extra: "
        "pip install 'trafka[console]' (missing: starlette, prometheus_client, jinja2)"
    ]


def test_without_the_telemetry_extra_the_telemetry_apis_are_not_advertised(monkeypatch):
    settings = load_settings(None, {}, {"storage": {"kind": "memory"}, "http": {"port": 0}})
    assert _registry(settings).get(PUSH_TELEMETRY) is not None
    without(monkeypatch, "opentelemetry.proto")
    assert _registry(settings).get(PUSH_TELEMETRY) is None  # as Kafka without a ClientTelemetry receiver


def test_the_registry_paths_without_the_registry_extra_answer_501_naming_it(monkeypatch):
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from trafka.app.wiring.http import schema_registry_routes

    settings = load_settings(None, {}, {"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    without(monkeypatch, "fastavro")
    client = TestClient(Starlette(routes=schema_registry_routes(ctx)))
    for path in ("/subjects", "/subjects/orders-value/versions", "/schemas/ids/1", "/config"):
        answer = client.get(path)
        assert answer.status_code == 501
        assert answer.json() == {
            "error_code": 50101,
            "message": "the Schema Registry needs trafka's registry extra: "
            "pip install 'trafka[registry]' (missing: fastavro)",
        }
