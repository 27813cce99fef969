"""`ssl.principal.mapping.rules`: a client certificate's distinguished name to a principal name, with
the syntax and semantics of Kafka's SslPrincipalMapper.

Rules are comma-separated, tried in order; the first that applies gives the name:

- `DEFAULT`: the distinguished name unchanged (Kafka's default rules are just `DEFAULT`);
- `RULE:pattern/replacement/` with an optional `L` or `U` after the last slash (lower or upper case):
  applies when the pattern matches the whole name, which is then rewritten by replacing every match
  of the pattern (Java's replaceAll), `$1`... naming groups; a `$n` beyond the groups is literal.

A name no rule applies to fails the connection (Kafka's NoMatchingRule). Patterns are Java regular
expressions, compiled here by Python's `re`, which reads the usual ones alike.
"""

from __future__ import annotations

import re

import attrs

_RULE_PATTERN = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
# Compiled at the first mapping rules parsed or applied, not at a broker's start (re's own cache keeps them)
_RULE_SPLITTER = r"\s*(" + _RULE_PATTERN + r")\s*(,\s*|$)"
_BACK_REFERENCE = r"\$(\d+)"


class NoMatchingRule(ValueError):
    """No mapping rule applies to the distinguished name."""


@attrs.frozen
class _Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT
    replacement: str = ""
    case: str = ""  # "L", "U" or ""

    def apply(self, name: str) -> str | None:
        if self.pattern is None:
            return name
        if self.pattern.fullmatch(name) is None:
            return None
        groups = self.pattern.groups
        result = self.pattern.sub(lambda m: _expand(self.replacement, m, groups), name)
        return result.lower() if self.case == "L" else result.upper() if self.case == "U" else result


def _expand(template: str, match: re.Match[str], groups: int) -> str:
    """Java's Matcher.appendReplacement: `\\c` is `c`, `$n` group n (the longest prefix of the digits
    that names a group, as Kafka's escapeLiteralBackReferences leaves it; none: literal)."""
    out: list[str] = []
    i = 0
    while i < len(template):
        char = template[i]
        if char == "\\" and i + 1 < len(template):
            out.append(template[i + 1])
            i += 2
            continue
        reference = re.compile(_BACK_REFERENCE).match(template, i) if char == "$" else None
        if reference is None:
            out.append(char)
            i += 1
            continue
        digits = reference.group(1)
        number = int(digits)
        if not digits.startswith("0"):
            while number > groups and number >= 10:
                number //= 10
            if number > groups:  # Kafka escapes it: a literal `$n`
                out.append("$" + digits)
                i = reference.end()
                continue
        used = len(str(number)) if not digits.startswith("0") else 1
        out.append(match.group(number) or "")
        out.append(digits[used:])
        i = reference.end()
    return "".join(out)


@attrs.frozen
class SslPrincipalMapper:
    rules: tuple[_Rule, ...]

    @classmethod
    def from_rules(cls, text: str | None) -> SslPrincipalMapper:
        """Parse the rules; ValueError ("Invalid rule: ...") as Kafka's IllegalArgumentException."""
        text = "DEFAULT" if text is None else text
        rules: list[_Rule] = []
        for found in re.finditer(_RULE_SPLITTER, text.strip()):
            rule = found.group(1)
            parsed = re.match(_RULE_PATTERN, rule)
            if parsed is None:
                raise ValueError(f"Invalid rule: {rule}")
            if parsed.end() != len(rule):
                raise ValueError(f"Invalid rule: `{rule}`, unmatched substring: `{rule[parsed.end() :]}`")
            if parsed.group(1) is not None:
                rules.append(_Rule(None))
            elif parsed.group(2) is not None:
                try:
                    pattern = re.compile(parsed.group(2))
                except re.error as exc:
                    raise ValueError(f"Invalid rule: {rule}: {exc}") from exc
                rules.append(_Rule(pattern, parsed.group(4), parsed.group(6)))
            if found.end() == len(text.strip()):
                break
        return cls(tuple(rules))

    def name(self, distinguished_name: str) -> str:
        for rule in self.rules:
            mapped = rule.apply(distinguished_name)
            if mapped is not None:
                return mapped
        raise NoMatchingRule(f"No rules apply to {distinguished_name}")
