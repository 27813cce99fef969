"""docs/COVERAGE.md is what the code covers: regenerate it with `python scripts/coverage_page.py`."""

from __future__ import annotations

import pathlib

from trafka.adapters.kafka.apis import build_registry
from trafka.app.coverage import render
from trafka.domain.configs import HONOURED_TOPIC_CONFIGS, TOPIC_CONFIG_DEFAULTS

PAGE = pathlib.Path(__file__).resolve().parents[3] / "docs" / "COVERAGE.md"


def test_the_coverage_page_matches_the_code():
    assert PAGE.read_text() == render(), "docs/COVERAGE.md drifted: run python scripts/coverage_page.py"


def test_the_page_lists_every_served_api_with_its_versions():
    page = render()
    for api in build_registry().apis():
        low, high = api.versions
        served = f"{low}" if low == high else f"{low}–{high}"
        assert f"| {api.api_key} | {api.name} | {served} |" in page


def test_every_honoured_topic_config_is_one_the_broker_knows():
    assert HONOURED_TOPIC_CONFIGS <= set(TOPIC_CONFIG_DEFAULTS)


def test_every_testing_endpoint_is_on_the_page():
    from trafka.app.embedded.testing_http import testing_routes

    page = render()
    for route in testing_routes(None):  # type: ignore[arg-type]
        for method in route.methods - {"HEAD"}:
            path = route.path.replace(":int", "")
            assert any(line.startswith(method) and path in line for line in page.splitlines()), (method, path)
