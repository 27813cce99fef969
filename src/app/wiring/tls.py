"""Kafka's `ssl.*` settings turned into one `ssl.SSLContext` per SSL or SASL_SSL listener.

Each key is read from `listener.name.<listener>.<key>` first, then the broker-wide key, as Kafka
resolves listener-prefixed configs. Only PEM stores are read (`ssl.keystore.type=PEM`), from a file
(`ssl.keystore.location`: private key and certificate chain in one file, as Kafka's PEM keystore) or
inline (`ssl.keystore.key` + `ssl.keystore.certificate.chain`); inline PEM goes through a private
temporary file, because Python's ssl module loads a chain from files only. `ssl.client.auth` maps to
CERT_REQUIRED / CERT_OPTIONAL / CERT_NONE against `ssl.truststore.*`.
"""

from __future__ import annotations

import os
import re
import ssl
import tempfile
from collections.abc import Sequence

from trafka.adapters.kafka.connection.tls import ListenerTls
from trafka.domain.listeners import Listener
from trafka.domain.security.ssl_mapping import SslPrincipalMapper

from ..config.settings import ConfigError, HttpSettings, ListenerNameSettings, SecuritySettings, Settings

_CLIENT_AUTH = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL, "none": ssl.CERT_NONE}


def tls_from(settings: Settings, listeners: Sequence[Listener]) -> dict[str, ListenerTls]:
    security = settings.security
    overrides = {name.upper(): value for name, value in security.listener_name.items()}
    return {
        listener.name: ListenerTls(
            _context(listener.name, _Resolved(security, overrides.get(listener.name))),
            security.ssl_handshake_timeout_ms / 1000,
            _principal_mapper(security.ssl_principal_mapping_rules),
        )
        for listener in listeners
        if listener.security_protocol.uses_tls
    }


_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


def _principal_mapper(rules: str) -> SslPrincipalMapper:
    try:
        return SslPrincipalMapper.from_rules(rules)
    except ValueError as exc:
        raise ConfigError(f"invalid configuration: ssl.principal.mapping.rules: {exc}") from exc


def _enabled_protocols(context: ssl.SSLContext, text: str, fail) -> None:
    """ssl.enabled.protocols: the TLS versions offered, from the lowest listed to the highest."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in _PROTOCOLS]
    if not names or unknown:
        raise fail(f"ssl.enabled.protocols {text!r}: trafka serves {', '.join(_PROTOCOLS)}")
    versions = sorted(_PROTOCOLS[n] for n in names)
    context.minimum_version, context.maximum_version = versions[0], versions[-1]


_TLS13_SUITES = frozenset({"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"})
_KEY_EXCHANGES = {"ECDHE_ECDSA": "ECDHE-ECDSA-", "ECDHE_RSA": "ECDHE-RSA-", "DHE_RSA": "DHE-RSA-", "RSA": ""}
_IANA_SUITE = r"TLS_(ECDHE_ECDSA|ECDHE_RSA|DHE_RSA|RSA)_WITH_(AES_(?:128|256))_(GCM|CBC)_(SHA|SHA256|SHA384)"


def _openssl_name(suite: str) -> str | None:
    """A TLS 1.2 suite's IANA name (Kafka's, as JSSE names them) as OpenSSL's; an OpenSSL name as is."""
    if suite.startswith("TLS_") and "_WITH_CHACHA20_POLY1305_SHA256" in suite:
        exchange = _KEY_EXCHANGES.get(suite[4 : suite.index("_WITH_")])
        return None if exchange is None else exchange + "CHACHA20-POLY1305"
    parsed = re.fullmatch(_IANA_SUITE, suite)  # compiled at the first TLS listener, then re's cache
    if parsed is None:
        return None if suite.startswith("TLS_") else suite
    exchange, cipher, mode, mac = parsed.groups()
    cipher = cipher.replace("_", "")
    if mode == "GCM":
        return f"{_KEY_EXCHANGES[exchange]}{cipher}-GCM-{mac}"
    return f"{_KEY_EXCHANGES[exchange]}{cipher}-{mac}"


def _cipher_suites(context: ssl.SSLContext, text: str | None, fail) -> None:
    """ssl.cipher.suites: the TLS 1.2 suites by Kafka's (IANA) or OpenSSL's names. TLS 1.3 suites cannot be
    chosen one by one here (Python's ssl has no call for it): all three listed keep TLS 1.3, none listed
    turns it off (as JSSE could not negotiate it), some of them is refused."""
    if not text or not text.strip():
        return
    suites = [n.strip() for n in text.split(",") if n.strip()]
    tls13 = [n for n in suites if n in _TLS13_SUITES]
    if tls13 and set(tls13) != _TLS13_SUITES:
        raise fail(
            f"ssl.cipher.suites: TLS 1.3 suites can be listed all ({', '.join(sorted(_TLS13_SUITES))}) or none, "
            f"not {', '.join(tls13)}"
        )
    if not tls13:
        if context.minimum_version >= ssl.TLSVersion.TLSv1_3:
            raise fail("ssl.cipher.suites lists no TLS 1.3 suite while ssl.enabled.protocols allows TLS 1.3 only")
        context.maximum_version = ssl.TLSVersion.TLSv1_2
    named: list[tuple[str, str]] = []  # (as configured, OpenSSL's name)
    for suite in (n for n in suites if n not in _TLS13_SUITES):
        name = _openssl_name(suite)
        if name is None:
            raise fail(f"ssl.cipher.suites: {suite} is not a suite trafka can offer")
        named.append((suite, name))
    names = [name for _, name in named]
    if not names:
        context.minimum_version = ssl.TLSVersion.TLSv1_3
        return
    try:
        context.set_ciphers(":".join(names))
    except ssl.SSLError as exc:
        raise fail(f"ssl.cipher.suites {text!r}: no suite OpenSSL offers ({exc.reason or exc})") from exc
    offered = {c["name"] for c in context.get_ciphers()}
    missing = [suite for suite, name in named if name not in offered]
    if missing:
        raise fail(f"ssl.cipher.suites: {', '.join(missing)} is not offered by this OpenSSL")


def http_ssl_context(settings: Settings) -> ssl.SSLContext | None:
    """The HTTP listener's context when `http.ssl_enabled`: `http.ssl_*` keys over the broker-wide `ssl.*`
    ones, checked as a Kafka listener's (PEM stores, ssl.client.auth)."""
    if not settings.http.ssl_enabled:
        return None
    return _context("HTTP", _Resolved(settings.security, settings.http))


class _Resolved:
    """A key from the listener's overrides, else the broker-wide one."""

    def __init__(self, security: SecuritySettings, override: ListenerNameSettings | HttpSettings | None) -> None:
        self._security = security
        self._override = override

    def __getattr__(self, key: str):
        value = getattr(self._override, key, None) if self._override is not None else None
        return value if value is not None else getattr(self._security, key)


def _context(name: str, ssl_settings: _Resolved) -> ssl.SSLContext:
    def fail(message: str) -> ConfigError:
        return ConfigError(f"invalid configuration: listener {name}: {message}")

    if ssl_settings.ssl_keystore_type.upper() != "PEM":
        raise fail(
            f"ssl.keystore.type {ssl_settings.ssl_keystore_type} is not supported; trafka reads PEM (ssl.keystore.type=PEM)"
        )
    client_auth = _CLIENT_AUTH.get(ssl_settings.ssl_client_auth.lower())
    if client_auth is None:
        raise fail(f"ssl.client.auth must be required, requested or none, not {ssl_settings.ssl_client_auth}")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)  # no system CAs: clients are verified against the truststore only
    _enabled_protocols(context, ssl_settings.ssl_enabled_protocols, fail)
    _cipher_suites(context, ssl_settings.ssl_cipher_suites, fail)
    try:
        _load_keystore(context, ssl_settings, fail)
        if client_auth != ssl.CERT_NONE:
            _load_truststore(context, ssl_settings, fail)
    except ssl.SSLError as exc:
        raise fail(f"cannot load the TLS key and certificates: {exc.reason or exc}") from exc
    except OSError as exc:
        raise fail(f"cannot read the TLS files: {exc}") from exc
    context.verify_mode = client_auth
    return context


def _load_keystore(context: ssl.SSLContext, s: _Resolved, fail) -> None:
    password = s.ssl_key_password
    if s.ssl_keystore_location is not None:
        if s.ssl_keystore_key is not None or s.ssl_keystore_certificate_chain is not None:
            raise fail("set ssl.keystore.location or ssl.keystore.key with ssl.keystore.certificate.chain, not both")
        try:
            context.load_cert_chain(s.ssl_keystore_location, password=password)
        except FileNotFoundError as exc:
            raise fail(f"cannot read ssl.keystore.location {s.ssl_keystore_location}: {exc.strerror}") from exc
        return
    if s.ssl_keystore_key is None or s.ssl_keystore_certificate_chain is None:
        raise fail("a TLS listener needs ssl.keystore.location, or ssl.keystore.key and ssl.keystore.certificate.chain")
    descriptor, path = tempfile.mkstemp(suffix=".pem")
    try:
        with os.fdopen(descriptor, "w") as pem:
            pem.write(s.ssl_keystore_key.strip() + "\n" + s.ssl_keystore_certificate_chain.strip() + "\n")
        context.load_cert_chain(path, password=password)
    finally:
        os.unlink(path)


def _load_truststore(context: ssl.SSLContext, s: _Resolved, fail) -> None:
    if s.ssl_truststore_location is not None:
        if s.ssl_truststore_type.upper() != "PEM":
            raise fail(f"ssl.truststore.type {s.ssl_truststore_type} is not supported; trafka reads PEM")
        try:
            context.load_verify_locations(cafile=s.ssl_truststore_location)
        except FileNotFoundError as exc:
            raise fail(f"cannot read ssl.truststore.location {s.ssl_truststore_location}: {exc.strerror}") from exc
    elif s.ssl_truststore_certificates is not None:
        context.load_verify_locations(cadata=s.ssl_truststore_certificates)
    else:
        raise fail("ssl.client.auth needs ssl.truststore.location or ssl.truststore.certificates")
