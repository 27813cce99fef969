"""The HTTP listener in the broker's own nursery: configuration, health endpoints, shutdown with the broker."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import trio

from trafka.adapters.http import BrokerView, build_app, serve_http
from trafka.app.cli.main import _overrides, build_parser
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.app.wiring.runtime import request_shutdown, run_broker


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_http_is_off_by_default_and_loopback_when_on(tmp_path):
    assert load_settings().http.port is None
    assert load_settings().http.host == "127.0.0.1"
    path = tmp_path / "trafka.toml"
    path.write_text("[http]\nport = 8080\n")
    assert load_settings(str(path)).http.port == 8080
    assert load_settings(None, {"TRAFKA_HTTP_PORT": "8081"}).http.port == 8081
    args = build_parser().parse_args(["serve", "--http-port", "0", "--http-host", "0.0.0.0"])
    settings = load_settings(None, {}, _overrides(args))
    assert (settings.http.host, settings.http.port) == ("0.0.0.0", 0)


async def test_health_endpoints_and_shutdown_with_the_broker():
    settings = load_settings(
        None, {}, {"server": {"host": "127.0.0.1", "port": 0}, "storage": {"kind": "memory"}, "http": {"port": 0}}
    )
    adapters = default_adapters(settings)
    ctx = bootstrap(settings, adapters)
    bound: list[tuple[str, int]] = []
    async with trio.open_nursery() as nursery:
        await nursery.start(
            lambda task_status: run_broker(
                settings, ctx, adapters, http_started=lambda h, p: bound.append((h, p)), task_status=task_status
            )
        )
        host, port = bound[0]
        assert host == "127.0.0.1" and port > 0
        status, body = await trio.to_thread.run_sync(get, f"http://{host}:{port}/healthz")
        assert (status, body) == (200, b"ok\n")
        status, body = await trio.to_thread.run_sync(get, f"http://{host}:{port}/readyz")
        assert status == 200 and json.loads(body)["ready"] is True
        request_shutdown(ctx)
    # run_broker returned: the HTTP listener is closed too.
    try:
        await trio.to_thread.run_sync(get, f"http://{host}:{port}/healthz")
    except urllib.error.URLError:
        pass
    else:
        raise AssertionError("the HTTP listener outlived the broker")


async def test_readyz_is_503_until_the_kafka_listener_accepts():
    settings = load_settings(None, {}, {"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    view = BrokerView(
        ctx.services.catalog,
        ctx.services.replicas,
        ctx.services.groups.coordinator,
        ctx.services.groups.offsets,
        ctx.services.clock_ms,
        info=lambda: None,
    )
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        host, port = await nursery.start(serve_http, build_app(view), "127.0.0.1", 0, stop.wait)
        status, body = await trio.to_thread.run_sync(get, f"http://{host}:{port}/readyz")
        assert status == 503 and json.loads(body)["listeners_accepting"] is False
        view.readiness.log_dir_recovered = view.readiness.listeners_accepting = True
        status, _ = await trio.to_thread.run_sync(get, f"http://{host}:{port}/readyz")
        assert status == 200
        view.readiness.shutting_down = True
        status, _ = await trio.to_thread.run_sync(get, f"http://{host}:{port}/readyz")
        assert status == 503
        stop.set()


def test_the_kafka_and_http_adapters_do_not_import_each_other():
    from pathlib import Path

    adapters = Path(__file__).resolve().parents[2] / "src" / "adapters"
    for name, other in (("kafka", "http"), ("http", "kafka")):
        for module in (adapters / name).rglob("*.py"):
            text = module.read_text()
            assert f"adapters.{other}" not in text and f"..{other}" not in text, module


def test_an_http_port_in_use_is_one_clear_error_and_exit_1():
    import socket
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "trafka",
                "serve",
                "--memory",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--http-port",
                str(port),
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        f"trafka: cannot listen on 127.0.0.1:{port} (HTTP): [Errno 98] Address already in use"
    ]


def test_http_allowed_hosts_are_names_domains_or_any():
    from trafka.app.config.settings import ConfigError

    settings = load_settings(None, {"TRAFKA_HTTP_ALLOWED_HOSTS": "localhost, *.example.com,[::1]"})
    assert settings.http.allowed_hosts == "localhost, *.example.com,[::1]"
    for bad in ("a*b", "x.*", "*example.com"):
        try:
            load_settings(None, {"TRAFKA_HTTP_ALLOWED_HOSTS": bad})
        except ConfigError as error:
            assert "http.allowed_hosts" in str(error) and repr(bad) in str(error)
        else:
            raise AssertionError(bad)
