"""Regex subscriptions (KIP-848) compiled and matched by RE2, off the event loop (ADR 68).

Kafka compiles a member's `SubscribedTopicRegex` with RE2/J (linear time in the subject, no
backtracking) and refuses what RE2 cannot express with INVALID_REGULAR_EXPRESSION; it resolves the
patterns against the topic names in a background executor, never on the request path. Here the
pattern is compiled in a worker thread the first time it is seen (a large pattern takes RE2 seconds
to refuse), kept in a bounded cache, and matched against every topic name in a worker thread when the
coordinator asks (`ConsumerGroupCoordinator.take_regex_work`). A limiter keeps at most two compiles or
resolutions running at once, so RE2's memory (`max_mem`, 8 MiB a pattern) stays bounded too.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

import trio

_CACHED = 1024  # compiled patterns kept (each member of a group usually sends the same one)
_SHOWN = 200  # how much of a refused pattern the error message repeats


def _re2() -> Any:
    """google-re2, imported when the first regex subscription arrives (a broker without one never loads it)."""
    import re2

    return re2


class TopicRegexes:
    def __init__(self) -> None:
        self._compiled: OrderedDict[str, Any] = OrderedDict()
        self._limiter = trio.CapacityLimiter(2)

    def known(self, pattern: str) -> bool:
        return pattern in self._compiled

    async def check(self, pattern: str) -> str | None:
        """None if RE2 compiles `pattern` (then cached), else Kafka's message for the refusal."""
        if pattern in self._compiled:
            return None
        try:
            compiled = await trio.to_thread.run_sync(_compile, pattern, limiter=self._limiter)
        except _re2().error as exc:
            reason = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else exc
            shown = pattern if len(pattern) <= _SHOWN else pattern[:_SHOWN] + "..."
            return f"SubscribedTopicRegex `{shown}` is not a valid regular expression: {reason}."
        self._remember(pattern, compiled)
        return None

    async def resolve(self, patterns: Iterable[str], names: tuple[str, ...]) -> dict[str, frozenset[str]]:
        """Each pattern's matches among `names` (a pattern RE2 refuses matches nothing)."""
        wanted = list(patterns)
        compiled = {p: self._compiled.get(p) for p in wanted}
        return await trio.to_thread.run_sync(_match_all, compiled, names, limiter=self._limiter)

    def _remember(self, pattern: str, compiled: Any) -> None:
        self._compiled[pattern] = compiled
        self._compiled.move_to_end(pattern)
        while len(self._compiled) > _CACHED:
            self._compiled.popitem(last=False)


def _compile(pattern: str) -> Any:
    re2 = _re2()
    options = re2.Options()
    options.log_errors = False  # a client's bad pattern is its error, not the broker's log line
    return re2.compile(pattern, options)


def _match_all(compiled: dict[str, Any | None], names: tuple[str, ...]) -> dict[str, frozenset[str]]:
    matches: dict[str, frozenset[str]] = {}
    for pattern, regexp in compiled.items():
        if regexp is None:
            try:
                regexp = _compile(pattern)
            except _re2().error:
                matches[pattern] = frozenset()
                continue
        matches[pattern] = frozenset(n for n in names if regexp.fullmatch(n) is not None)
    return matches
