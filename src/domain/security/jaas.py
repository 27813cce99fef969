"""Kafka's `sasl.jaas.config` value: `<LoginModule class> <flag> key="value" ... ;`.

Kafka's broker reads PLAIN users from `listener.name.<listener>.plain.sasl.jaas.config`:
`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin"
password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";` where each
`user_<name>` option is a user and its password (PlainServerCallbackHandler). This parses one login
module entry the way Kafka's JaasConfig tokenizer does (quoted or bare values, `;` at the end).
"""

from __future__ import annotations

import re

import attrs

PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
_FLAGS = {"required", "requisite", "sufficient", "optional"}
_TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([^\s=;"]+)|(=)|(;))')


class JaasConfigError(ValueError):
    """A JAAS configuration Kafka would refuse."""


@attrs.frozen
class JaasEntry:
    login_module: str
    flag: str
    options: dict[str, str]

    def plain_users(self) -> dict[str, str]:
        if self.login_module != PLAIN_LOGIN_MODULE:
            raise JaasConfigError(f"expected {PLAIN_LOGIN_MODULE} for PLAIN, found {self.login_module}")
        return {key[len("user_") :]: value for key, value in self.options.items() if key.startswith("user_")}


def parse_jaas_config(text: str) -> JaasEntry:
    tokens = _tokens(text)
    if len(tokens) < 3 or tokens[-1] != (";", False):
        raise JaasConfigError("JAAS config entry not terminated by semi-colon")
    (module, _), (flag, _), *rest = tokens[:-1]
    if flag.lower() not in _FLAGS:
        raise JaasConfigError(f"Invalid JAAS config: login module control flag not specified: {flag}")
    options: dict[str, str] = {}
    while rest:
        if len(rest) < 3 or rest[1] != ("=", False) or rest[0][1]:
            raise JaasConfigError("Invalid JAAS config: options must be key=value pairs")
        (key, _), _, (value, _), *rest = rest
        options[key] = value
    if ";" in [t for t, quoted in tokens[:-1] if not quoted]:
        raise JaasConfigError("Invalid JAAS config: exactly one login module is expected")
    return JaasEntry(module, flag.lower(), options)


def _tokens(text: str) -> list[tuple[str, bool]]:
    """(token, quoted) pairs."""
    out: list[tuple[str, bool]] = []
    pos = 0
    while pos < len(text):
        if not text[pos:].strip():
            break
        match = _TOKEN.match(text, pos)
        if match is None:
            raise JaasConfigError(f"Invalid JAAS config near {text[pos : pos + 20]!r}")
        quoted, bare, equals, semicolon = match.groups()
        if quoted is not None:
            out.append((re.sub(r"\\(.)", r"\1", quoted), True))
        else:
            out.append((bare or equals or semicolon, False))
        pos = match.end()
    return out
