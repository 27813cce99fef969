"""CRC32C, the record batch checksum (the domain's `Checksum`): the `crc32c` package's C function, loaded
without the package's `__init__`, which looks its own version up among the installed distributions
(`importlib.metadata`, and with it `email`, `zipfile`, `csv`...): about a tenth of a broker's start for a
function the broker calls from its first Produce on (ADR 118). Should the package's layout change, the
package is imported as usual."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from functools import cache
from types import ModuleType

from trafka.domain.batch import Checksum

_EXTENSION = "crc32c._crc32c"


@cache
def crc32c_function() -> Checksum:
    try:
        module = sys.modules.get(_EXTENSION) or _load_extension()
        function: Checksum = module.crc32c
    except (ImportError, AttributeError, OSError):
        import crc32c

        function = crc32c.crc32c
    return function


def _load_extension() -> ModuleType:
    package = importlib.util.find_spec("crc32c")  # found, not executed
    if package is None or not package.submodule_search_locations:
        raise ImportError("crc32c is not installed")
    found = importlib.machinery.PathFinder.find_spec("_crc32c", list(package.submodule_search_locations))
    if found is None or found.origin is None:
        raise ImportError("crc32c has no _crc32c extension")
    spec = importlib.util.spec_from_file_location(_EXTENSION, found.origin)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {found.origin}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[_EXTENSION] = module  # `import crc32c` later (the CLI's produce) reuses it
    return module
