"""The packages whose names load on first use (ADR 118): every name of each table comes from its module,
and a name in no table is an AttributeError, as for any module."""

from __future__ import annotations

import importlib
import json.decoder

import pytest

from trafka.domain.lazy_exports import lazy_exports

PACKAGES = (
    "trafka.domain.groups.modern",
    "trafka.domain.groups.share",
    "trafka.domain.groups.streams",
    "trafka.adapters.filesystem",
)


def test_a_name_comes_from_its_module_and_an_unknown_one_is_an_attribute_error() -> None:
    getattr_ = lazy_exports("json", {"JSONDecoder": "decoder"})
    assert getattr_("JSONDecoder") is json.decoder.JSONDecoder
    with pytest.raises(AttributeError, match="module 'json' has no attribute 'nothing'"):
        getattr_("nothing")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_lazy_name_of_a_package_resolves_to_its_modules_own(package: str) -> None:
    module = importlib.import_module(package)
    table = vars(module)["_EXPORTS"]
    assert set(table) <= set(module.__all__)
    for name, home in table.items():
        assert getattr(module, name) is getattr(importlib.import_module(f"{package}.{home}"), name)
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018
