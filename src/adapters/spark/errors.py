"""The two ways a read can fail before any row is produced, each with a one-line message."""

from __future__ import annotations


class OptionError(ValueError):
    """An option is missing, malformed or contradicts another (the message names the option)."""


class SourceError(Exception):
    """The topic cannot be read as asked: unknown topic, unusable data dir, unreachable broker,
    offsets outside the log, or stored data that does not decode (the message names which)."""
