"""What every test folder shares: the `integration` marker, given by where a test lives.

A test under `tests/integration/` or `tests/browser/` starts the real server and drives it with real
clients: it is marked `integration` here, so `pytest -m "not integration"` runs the fast suites and no
module has to remember to mark itself.
"""

from __future__ import annotations

import pathlib

import pytest

_HERE = pathlib.Path(__file__).parent
_INTEGRATION = (_HERE / "integration", _HERE / "browser")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(folder in item.path.parents for folder in _INTEGRATION):
            item.add_marker(pytest.mark.integration)
