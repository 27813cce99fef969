"""Type-check the package `trafka` with mypy.

    python scripts/typecheck.py [extra mypy arguments...]

The installed package maps `trafka` to `src/` (pyproject's `package-dir`), and setuptools' editable
install finds it through an import hook that mypy cannot see. So this makes a temporary directory
holding one symlink, `trafka -> <repo>/src`, puts it on MYPYPATH and runs `python -m mypy -p trafka`
from the repository root, where mypy reads its configuration from pyproject.toml ([tool.mypy]).
Extra arguments go to mypy as they are. The exit status is mypy's. mypy's file names under the
temporary directory are printed as the repository's (`src/...`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="trafka-mypy-") as tmp:
        (Path(tmp) / "trafka").symlink_to(REPO / "src", target_is_directory=True)
        env = dict(os.environ)
        env["MYPYPATH"] = os.pathsep.join(filter(None, [tmp, env.get("MYPYPATH")]))
        command = [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"), "-p", "trafka"]
        # mypy's cache records each module's path, which is new on every run: a shared cache would
        # report unchanged modules' errors under an old run's directory. So the cache lives and dies
        # with the directory (a full run takes seconds), unless the caller names one.
        if not any(arg == "--cache-dir" or arg.startswith("--cache-dir=") for arg in argv):
            command += ["--cache-dir", str(Path(tmp) / "cache")]
        # mypy names files by the path it found them at: under the temporary directory. Report them as
        # the repository's own paths (src/...), so editors and humans can follow them.
        prefix = str(Path(tmp) / "trafka") + os.sep
        with subprocess.Popen([*command, *argv], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True) as mypy:
            assert mypy.stdout is not None
            for line in mypy.stdout:
                sys.stdout.write(line.replace(prefix, "src" + os.sep))
                sys.stdout.flush()
        return mypy.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
