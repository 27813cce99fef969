"""The README's first screen (what shows before scrolling: its first 40 lines) says how a test suite in
Python, Node or Java gets a broker and how to install trafka from this repository (issue 39), and keeps
the test command block that `.ci/run` runs."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
FIRST_SCREEN = 40


def test_the_first_screen_says_how_each_language_gets_a_broker():
    screen = "\n".join(README.read_text().splitlines()[:FIRST_SCREEN])
    assert "kafka_broker" in screen and "trafka.Broker()" in screen  # Python
    assert "Node" in screen and "Java" in screen
    assert "--memory --port 0 --ready-file" in screen and "bootstrap_servers" in screen  # any language
    assert "pip install /path/to/trafka" in screen or "pip install ." in screen  # from the repository


def test_the_test_command_block_is_intact():
    text = README.read_text()
    block = text[text.index("<!-- test-command -->") :].split("```")[1]
    assert "pip install -e '.[test,spark]'" in block and "python -m pytest" in block
