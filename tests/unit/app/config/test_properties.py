"""The Java properties reader, against the cases java.util.Properties.load documents."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trafka.app.config.properties import PropertiesError, parse_properties, read_properties


def test_separators_comments_and_whitespace():
    text = "# a comment\n! another comment\n   \na=1\nb: 2\nc 3\n  d   =   4  \ne\t:\tfive words\nf\ng=\n"
    assert parse_properties(text) == {"a": "1", "b": "2", "c": "3", "d": "4  ", "e": "five words", "f": "", "g": ""}


def test_continuations_drop_the_next_lines_leading_whitespace():
    text = "fruits = apple, banana, \\\n        pear, \\\n   cantaloupe\nnext=1\n"
    assert parse_properties(text) == {"fruits": "apple, banana, pear, cantaloupe", "next": "1"}


def test_an_even_number_of_backslashes_does_not_continue():
    assert parse_properties("path=c:\\\\\nnext=1") == {"path": "c:\\", "next": "1"}


def test_a_comment_line_does_not_continue_but_a_continued_line_may_start_with_hash():
    assert parse_properties("# comment \\\nkey=value\n") == {"key": "value"}
    assert parse_properties("key=a\\\n#b\n") == {"key": "a#b"}


def test_escapes_in_keys_and_values():
    text = "key\\ with\\ spaces=tab\\there\nk\\:colon=\\u00e9t\\u00E9\nnew\\=line=a\\nb\nplain\\q=\\\\x\n"
    assert parse_properties(text) == {
        "key with spaces": "tab\there",
        "k:colon": "été",
        "new=line": "a\nb",
        "plainq": "\\x",
    }


def test_a_later_duplicate_wins_and_line_endings_are_any_of_three():
    assert parse_properties("a=1\r\nb=2\ra=3\n") == {"a": "3", "b": "2"}


def test_a_malformed_unicode_escape_names_its_line():
    with pytest.raises(PropertiesError, match="line 2"):
        parse_properties("ok=1\nbad=\\u12x4\n")


def test_a_continuation_at_the_end_of_the_file_ends_the_value():
    assert parse_properties("a=1\\") == {"a": "1"}


def test_read_properties_reads_utf8_and_latin1(tmp_path):
    utf8 = tmp_path / "utf8.properties"
    utf8.write_bytes("name=é\n".encode())
    latin1 = tmp_path / "latin1.properties"
    latin1.write_bytes("name=é\n".encode("latin-1"))
    assert read_properties(str(utf8)) == read_properties(str(latin1)) == {"name": "é"}


_keys = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\\=: \t\f#!"), min_size=1
)
_values = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\\"))


@given(st.dictionaries(_keys, _values))
def test_what_java_would_write_reads_back(pairs):
    # Properties.store escapes a value's leading whitespace; these values keep theirs by escaping it.
    def escape_value(value: str) -> str:
        stripped = value.lstrip(" \t\f")
        return (
            "".join(
                "\\" + c if c == " " else ("\\t" if c == "\t" else "\\f") for c in value[: len(value) - len(stripped)]
            )
            + stripped
        )

    text = "".join(f"{key}={escape_value(value)}\n" for key, value in pairs.items())
    assert parse_properties(text) == pairs
