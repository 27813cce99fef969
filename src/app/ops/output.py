"""How operator commands print: aligned tables for people, JSON for scripts, one-line errors.

`print_rows` takes rows as dicts and the column names; `--output json` prints the rows as a JSON array,
otherwise an aligned table whose widest column is cut (with `…`) so that lines fit the terminal.
`fail` prints `trafka: <what failed>` on stderr and returns the exit status a command returns.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

# Exit statuses scripts can rely on.
OK = 0
ERROR = 1  # the operation failed (the broker answered with an error, a record could not be sent)
USAGE = 2  # bad arguments or configuration (as argparse's own)
UNREACHABLE = 3  # no broker answered at the bootstrap address


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return ",".join(_cell(v) for v in value)
    return str(value)


def format_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], width: int | None = None) -> str:
    """Aligned columns; with a `width`, the widest column is cut until lines fit it."""
    width = width or 1 << 30
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c.upper())] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    while sum(widths) + 2 * (len(widths) - 1) > width:
        widest = max(range(len(widths)), key=widths.__getitem__)
        if widths[widest] <= max(8, len(columns[widest])):
            break
        widths[widest] -= 1

    def line(values: Sequence[str]) -> str:
        fitted = [v if len(v) <= w else v[: w - 1] + "…" for v, w in zip(values, widths)]
        return "  ".join(v.ljust(w) for v, w in zip(fitted, widths)).rstrip()

    return "\n".join([line([c.upper() for c in columns])] + [line(r) for r in cells])


def print_rows(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str], output: str, out: TextIO | None = None
) -> None:
    out = out or sys.stdout
    if output == "json":
        json.dump(list(rows), out, indent=2, default=str)
        out.write("\n")
    else:
        # Cut to the terminal's width only on a terminal: piped, every value is printed whole.
        width = shutil.get_terminal_size().columns if out.isatty() else None
        out.write(format_table(rows, columns, width) + "\n")
    out.flush()


def print_json(value: Any, out: TextIO | None = None) -> None:
    out = out or sys.stdout
    json.dump(value, out, indent=2, default=str)
    out.write("\n")


def fail(message: str, status: int = ERROR) -> int:
    print(f"trafka: {message}", file=sys.stderr)
    return status
