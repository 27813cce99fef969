"""Java properties files (`server.properties`) read as `java.util.Properties.load` reads them.

A logical line is a natural line plus its continuations: a line ending in an odd number of backslashes
goes on with the next line, whose leading whitespace is dropped. Lines whose first non-blank character
is `#` or `!` are comments. The key ends at the first unescaped `=`, `:` or whitespace; whitespace and
then one `=` or `:` (with whitespace around it) separate it from the value. Escapes: `\\t \\n \\r \\f`,
`\\uXXXX`, and a backslash before any other character is that character. A later duplicate key wins,
as in Java. Only the file's text is parsed here; reading it is `read_properties`.
"""

from __future__ import annotations

_WHITESPACE = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


class PropertiesError(ValueError):
    """The text is not a valid properties file (a malformed `\\uXXXX` escape)."""


def _logical_lines(text: str) -> list[tuple[int, str]]:
    lines: list[tuple[int, str]] = []
    natural = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    index = 0
    while index < len(natural):
        number = index + 1
        line = natural[index].lstrip(_WHITESPACE)
        index += 1
        if not line or line[0] in "#!":
            continue
        while _continues(line) and index < len(natural):
            line = line[:-1] + natural[index].lstrip(_WHITESPACE)
            index += 1
        if _continues(line):  # a continuation at the end of the file
            line = line[:-1]
        lines.append((number, line))
    return lines


def _continues(line: str) -> bool:
    backslashes = len(line) - len(line.rstrip("\\"))
    return backslashes % 2 == 1


def _unescape(raw: str, line_number: int) -> str:
    out: list[str] = []
    i = 0
    while i < len(raw):
        char = raw[i]
        if char != "\\" or i + 1 == len(raw):
            out.append(char)
            i += 1
            continue
        escaped = raw[i + 1]
        if escaped == "u":
            digits = raw[i + 2 : i + 6]
            if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise PropertiesError(f"line {line_number}: malformed \\uxxxx encoding")
            out.append(chr(int(digits, 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(escaped, escaped))
        i += 2
    return "".join(out)


def _split(line: str) -> tuple[str, str]:
    i = 0
    while i < len(line):
        char = line[i]
        if char == "\\":
            i += 2
            continue
        if char in "=:" or char in _WHITESPACE:
            break
        i += 1
    key, rest = line[:i], line[i:]
    rest = rest.lstrip(_WHITESPACE)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_WHITESPACE)
    return key, rest


def parse_properties(text: str) -> dict[str, str]:
    """The key/value pairs of a properties file, in file order, later duplicates winning."""
    out: dict[str, str] = {}
    for number, line in _logical_lines(text):
        key, value = _split(line)
        out[_unescape(key, number)] = _unescape(value, number)
    return out


def read_properties(path: str) -> dict[str, str]:
    """Kafka reads its config as ISO-8859-1 with escapes, like `Properties.load(InputStream)`; UTF-8
    files are what people write today, so UTF-8 is tried first."""
    with open(path, "rb") as file:
        data = file.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return parse_properties(text)
