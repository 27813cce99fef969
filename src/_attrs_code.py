"""A cache of the code attrs generates for trafka's own classes, as Python caches a module's bytecode (ADR 128).

attrs writes each class's methods (`__init__`, `__eq__`, `__repr__`, ...) as Python source and compiles it
when the class is created: about 0.5 ms a class, most of a memory broker's start above the floor (it builds
~110 of trafka's classes). The source depends on the class alone, so the code compiled from it can be kept
as `.pyc` files keep a module's: `install()` binds a `compile` in `attr._make`'s namespace (attrs calls
`compile(script, filename, "exec")` by name there) that, for the file names attrs gives trafka's classes
(`<attrs generated methods trafka.…>`), returns the code compiled for the same (file name, source) by an
earlier process, read from one marshal file, and compiles and remembers it otherwise; every other call
goes to the builtin unchanged. What a process compiled is added to the file at its exit.

- Keyed by the whole source and file name, so a class whose fields or options change compiles afresh;
  the file is named by the interpreter's cache tag and starts with its bytecode magic number.
- The file lives in the package's `__pycache__` when writable, else the user's cache directory. Under
  `PYTHONDONTWRITEBYTECODE` it is read, not written, as `.pyc` files are (pip compiles those at install:
  `python -m trafka._attrs_code` writes this one, e.g. in an image's build, or `TRAFKA_ATTRS_CODE_CACHE=write`
  lets every process add to it); `TRAFKA_ATTRS_CODE_CACHE=0` turns the whole cache off.
- An attrs that does not call `compile` by name in `attr._make` never calls this: its classes compile
  as before. Anything unexpected (a corrupt file, no `attr._make`) leaves attrs as it is.
"""

from __future__ import annotations

import builtins
import marshal
import os
import sys
from types import CodeType
from typing import Any

PREFIX = "<attrs generated "  # attrs' `_generate_unique_filename`: "<attrs generated {what} {module}.{qualname}>"
OURS = "trafka."  # the classes whose code is cached: trafka's modules'
# The lengths of `str(hash(...))` on a 64-bit build but for about one in 2,000 (16 characters or fewer)
HASH_LENGTHS = (17, 18, 19, 20)
_HASH = "<type hash>"  # stands for the seeded hash in an entry's key
_MAX_ENTRIES = 4000
FORMAT = b"trafka attrs code 1\n"  # after the interpreter's magic number: a file of another layout is not read  # a file grown past this (sources edited many times) starts again

_state: dict[str, Any] = {}


def _switch() -> str:
    return os.environ.get("TRAFKA_ATTRS_CODE_CACHE", "1").strip().lower()


def enabled() -> bool:
    return _switch() not in ("0", "false", "no", "off")


def cache_path() -> str:
    """Where the file is read and written: the package's `__pycache__` when it can be written, else the
    user's cache directory."""
    name = f"attrs-code.{sys.implementation.cache_tag}.marshal"
    package_cache = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")
    if sys.pycache_prefix:
        return os.path.join(sys.pycache_prefix, package_cache.lstrip(os.sep), name)
    if os.access(package_cache, os.W_OK) or (
        not os.path.exists(package_cache) and os.access(os.path.dirname(package_cache), os.W_OK)
    ):
        return os.path.join(package_cache, name)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "trafka", name)


def _magic() -> bytes:
    from importlib.util import MAGIC_NUMBER

    return MAGIC_NUMBER


def _read(path: str) -> dict[tuple[str, str], dict[int, bytes]]:
    """(file name, source) -> {length of the type hash (0: none) -> the marshalled code}: each code object
    is unmarshalled when a class asks for it, so a process pays for the classes it builds, not for every
    class the file holds."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return {}
    magic = _magic() + FORMAT
    if not data.startswith(magic):
        return {}
    try:
        table = marshal.loads(data[len(magic) :])
    except (EOFError, ValueError, TypeError):
        return {}
    return table if isinstance(table, dict) else {}


def _with_constant(code: CodeType, old: int, new: int) -> CodeType:
    """The script's code with the constant `old` made `new` in its `__hash__` (the one function that holds
    it, directly or in a tuple of constants)."""

    def swap(value: Any) -> Any:
        if type(value) is int and value == old:
            return new
        if type(value) is tuple:
            return tuple(swap(item) for item in value)
        return value

    consts = tuple(
        item.replace(co_consts=swap(item.co_consts))
        if isinstance(item, CodeType) and item.co_name == "__hash__"
        else item
        for item in code.co_consts
    )
    return code.replace(co_consts=consts)


def install() -> bool:
    """Bind the caching `compile` in attrs' namespace (once a process); False when off or not possible."""
    if "compile" in _state:
        return _state["compile"] is not None
    _state["compile"] = None
    if not enabled():
        return False
    try:
        import __future__

        import attr._make as make
    except ImportError:
        return False
    if make.__dict__.get("compile", builtins.compile) is not builtins.compile:
        return False  # someone else's hook is there: leave it
    # The builtin inherits the calling code's `from __future__` flags: attrs' module's, when it calls it
    inherited = 0
    for value in vars(make).values():
        if isinstance(value, __future__._Feature):
            inherited |= value.compiler_flag
    path = cache_path()
    table = _read(path)
    fresh: dict[tuple[str, str], dict[int, bytes]] = {}
    builtin_compile = builtins.compile

    def compile(  # bound in attrs' namespace under the builtin's name, which attrs calls
        source: Any, filename: Any, mode: str, flags: int = 0, dont_inherit: bool = False, optimize: int = -1
    ) -> Any:
        if not dont_inherit:
            flags |= inherited
        if (
            flags == inherited
            and optimize == -1
            and mode == "exec"
            and type(source) is str
            and type(filename) is str
            and filename.startswith(PREFIX)
        ):
            dotted = filename[len(PREFIX) : -1].partition(" ")[2]
            if dotted.startswith(OURS):
                try:
                    return _cached(source, filename, dotted, flags)
                except Exception:  # an entry not as written (a damaged file): compiled as attrs would
                    pass
        return builtin_compile(source, filename, mode, flags, True, optimize)

    def _cached(source: str, filename: str, dotted: str, flags: int) -> Any:
        # A generated `__hash__` starts its tuple with the hash of the class's name, which differs from
        # one process to the next (PYTHONHASHSEED). The entry is keyed by the source with that number left
        # out, and holds the code compiled with a stand-in of each length it can have (the code's column
        # positions depend on the length; a minus sign is folded into the constant), put back when read
        base, dash, count = dotted.rpartition("-")
        type_hash = hash(f"{PREFIX}hash {base if dash and count.isdigit() else dotted}>")
        seeded = f" {type_hash},\n"
        length = 0
        key_source = source
        if seeded in source:
            length = len(str(type_hash))
            if "9" * min(length, *HASH_LENGTHS) in source:
                return builtin_compile(source, filename, "exec", flags, True)  # a stand-in would be ambiguous
            key_source = source.replace(seeded, f" {_HASH},\n")
        key = (filename, key_source)
        entry = table.get(key)
        stored = entry.get(length) if entry else None
        if stored is not None:
            _state["hits"] = _state.get("hits", 0) + 1
            code = marshal.loads(stored)
        else:
            _state["misses"] = _state.get("misses", 0) + 1
            entry = table[key] = fresh[key] = dict(entry or {})
            # A process that writes the file compiles every length, so the next ones find theirs
            for each in {length, *HASH_LENGTHS} if length and _state.get("writes") else (length,):
                compiled = builtin_compile(key_source.replace(_HASH, "9" * each), filename, "exec", flags, True)
                entry[each] = marshal.dumps(compiled)
                if each == length:
                    code = compiled
        return _with_constant(code, int("9" * length), type_hash) if length else code

    make.compile = compile  # type: ignore[attr-defined]
    writes = not sys.dont_write_bytecode or _switch() == "write"
    _state.update(compile=compile, module=make, path=path, fresh=fresh, writes=writes)
    if writes:
        import atexit

        atexit.register(save)
    return True


def uninstall() -> None:
    """Give attrs its builtin back (tests)."""
    make = _state.get("module")
    if make is not None and make.__dict__.get("compile") is _state.get("compile"):
        del make.compile
    _state.clear()


def save() -> None:
    """Add what this process compiled to the file (merged with what other processes wrote meanwhile);
    written to a temporary file and renamed, so a reader never sees half of one."""
    fresh = _state.get("fresh")
    path = _state.get("path")
    if not fresh or path is None:
        return
    table = _read(path)
    if len(table) + len(fresh) > _MAX_ENTRIES:
        table = {}
    for key, entry in fresh.items():
        table[key] = {**table.get(key, {}), **entry}
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "wb") as file:
            file.write(_magic() + FORMAT + marshal.dumps(table))
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return
    fresh.clear()


def statistics() -> dict[str, int]:
    """Classes' methods found in the file (`hits`) and compiled (`misses`) by this process."""
    return {"hits": _state.get("hits", 0), "misses": _state.get("misses", 0)}


def warm() -> dict[str, int]:
    """Build every class a broker's start and its rooms create, and write the file (whatever
    `PYTHONDONTWRITEBYTECODE` says): `python -m trafka._attrs_code`."""
    if not install():
        return statistics()
    _state["writes"] = True  # every length of a hash, as a process that writes the file compiles
    from trafka.adapters.kafka.apis import import_rooms
    from trafka.app.embedded import Broker

    with Broker():
        import_rooms(telemetry=False)
    save()
    return statistics()


if __name__ == "__main__":  # one module, not a second copy as __main__: the hook is trafka._attrs_code's
    from trafka._attrs_code import cache_path as path
    from trafka._attrs_code import warm as warm_cache

    print(f"trafka: attrs' code cache {path()}: {warm_cache()}")
