"""Authentication settings turned into the wire adapter's `Authentication`, validated as Kafka does.

Each SASL listener (SASL_PLAINTEXT, SASL_SSL) takes `listener.name.<listener>.sasl.enabled.mechanisms`
or else the broker-wide `sasl.enabled.mechanisms`; PLAIN needs
`listener.name.<listener>.plain.sasl.jaas.config` for its users, as Kafka's broker needs a JAAS entry.
A mechanism trafka does not serve (GSSAPI, OAUTHBEARER: Kafka's default is GSSAPI) stops the broker
with a message naming the listener.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from trafka.adapters.kafka.security.authentication import Authentication, ListenerSasl
from trafka.adapters.kafka.security.authorization import AuthorizationGate
from trafka.adapters.kafka.services import BuiltOnFirstUse
from trafka.domain.listeners import Listener
from trafka.domain.ports import AclStore
from trafka.domain.security.acls import Authorizer
from trafka.domain.security.credentials import UserScramCredentials
from trafka.domain.security.principal import KafkaPrincipal

from ..config.settings import ConfigError, ListenerNameSettings, Settings

if TYPE_CHECKING:
    from trafka.domain.security.delegation_tokens import DelegationTokens, DelegationTokenStore
    from trafka.domain.security.scram import ScramCredential, ScramMechanism, TokenLookup

SERVED_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
# Kafka's authorizers, both served with StandardAuthorizer's semantics.
AUTHORIZERS = ("org.apache.kafka.metadata.authorizer.StandardAuthorizer", "kafka.security.authorizer.AclAuthorizer")


def authorization_from(settings: Settings, store: AclStore) -> AuthorizationGate | None:
    """The authorizer when `authorizer.class.name` names Kafka's, none when it is empty (as Kafka)."""
    security = settings.security
    if not security.authorizer_class_name:
        return None
    if security.authorizer_class_name not in AUTHORIZERS:
        raise ConfigError(
            f"invalid configuration: authorizer.class.name {security.authorizer_class_name} is not supported "
            f"(use {AUTHORIZERS[0]})"
        )
    super_users = [u.strip() for u in security.super_users.split(";") if u.strip()]
    for user in super_users:
        try:
            KafkaPrincipal.parse(user)
        except ValueError as exc:
            raise ConfigError(f"invalid configuration: super.users: {exc}") from exc
    authorizer = Authorizer(store, uuid.uuid4, super_users, security.allow_everyone_if_no_acl_found)
    return AuthorizationGate(authorizer)


def new_scram_nonce() -> str:
    import secrets  # at the first SCRAM handshake, not at start (issue 39)

    return secrets.token_urlsafe(24)


DEFAULT_PRINCIPAL_BUILDER = "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder"


def authentication_from(
    settings: Settings, listeners: Sequence[Listener], credentials: UserScramCredentials
) -> Authentication:
    security = settings.security
    if security.principal_builder_class not in ("", DEFAULT_PRINCIPAL_BUILDER):
        raise ConfigError(
            f"invalid configuration: principal.builder.class {security.principal_builder_class} is not supported "
            f"(trafka builds principals as {DEFAULT_PRINCIPAL_BUILDER})"
        )
    overrides = {name.upper(): value for name, value in security.listener_name.items()}
    configured = {listener.name for listener in listeners}
    for name in overrides:
        if name not in configured:
            raise ConfigError(f"invalid configuration: security.listener_name.{name.lower()} names no listener")
    sasl = {}
    for listener in listeners:
        if listener.security_protocol.uses_sasl:
            sasl[listener.name] = _listener_sasl(
                listener.name, overrides.get(listener.name), security.sasl_enabled_mechanisms
            )
    return Authentication(
        credentials=credentials,
        new_nonce=new_scram_nonce,
        listeners=sasl,
        failed_authentication_delay_ms=security.connection_failed_authentication_delay_ms,
        max_reauth_ms=security.connections_max_reauth_ms,
        max_receive_size=security.sasl_server_max_receive_size,
    )


def _listener_sasl(name: str, override: ListenerNameSettings | None, default_mechanisms: str) -> ListenerSasl:
    text = (override.sasl_enabled_mechanisms if override else None) or default_mechanisms
    mechanisms = tuple(m.strip() for m in text.split(",") if m.strip())
    if not mechanisms:
        raise ConfigError(f"invalid configuration: listener {name} has no sasl.enabled.mechanisms")
    unserved = [m for m in mechanisms if m not in SERVED_MECHANISMS]
    if unserved:
        raise ConfigError(
            f"invalid configuration: listener {name}: sasl.enabled.mechanisms {','.join(unserved)} is not supported "
            f"(trafka serves {', '.join(SERVED_MECHANISMS)})"
        )
    users: dict[str, str] = {}
    if "PLAIN" in mechanisms:
        jaas = override.plain_sasl_jaas_config if override else None
        if jaas is None:
            raise ConfigError(
                f"invalid configuration: listener {name} enables PLAIN but "
                f"listener.name.{name.lower()}.plain.sasl.jaas.config (security.listener_name.{name.lower()}"
                ".plain_sasl_jaas_config) is not set"
            )
        from trafka.domain.security.jaas import JaasConfigError, parse_jaas_config  # a PLAIN listener's only

        try:
            users = parse_jaas_config(jaas).plain_users()
        except JaasConfigError as exc:
            raise ConfigError(
                f"invalid configuration: listener.name.{name.lower()}.plain.sasl.jaas.config: {exc}"
            ) from exc
    return ListenerSasl(mechanisms, users)


DELEGATION_TOKEN_METADATA_VERSION = 14  # IBP_3_6_IV2: MetadataVersion.isDelegationTokenSupported


def delegation_tokens_from(
    settings: Settings, store: DelegationTokenStore, supported: Callable[[], bool]
) -> BuiltOnFirstUse[DelegationTokens]:
    """The delegation tokens (KIP-48, ADR 139), built at their first use: a token request or a token's
    SCRAM login (reading the tokens the metadata log holds then)."""
    security = settings.security

    def build() -> DelegationTokens:
        import base64
        import os

        from trafka.domain.security.delegation_tokens import DelegationTokens, TokenSettings
        from trafka.domain.topics import kafka_random_uuid

        def new_token_id() -> str:  # Kafka's Uuid.randomUuid().toString(): URL-safe base64, no padding
            return base64.urlsafe_b64encode(kafka_random_uuid(uuid.uuid4).bytes).decode().rstrip("=")

        return DelegationTokens(
            TokenSettings(
                security.delegation_token_secret_key,
                security.delegation_token_max_lifetime_ms,
                security.delegation_token_expiry_time_ms,
                security.delegation_token_expiry_check_interval_ms,
            ),
            store,
            new_token_id,
            lambda: os.urandom(32),
            supported,
        )

    return BuiltOnFirstUse(build)


def token_logins(tokens: BuiltOnFirstUse[DelegationTokens], clock_ms: Callable[[], int]) -> TokenLookup:
    """A token's SCRAM login (`tokenauth=true`): its owner and credential while it is not expired."""

    def lookup(token_id: str, mechanism: ScramMechanism) -> tuple[str, ScramCredential, int] | None:
        service = tokens.get()
        now = clock_ms()
        service.maybe_sweep(now)
        token = service.owner_of(token_id)
        credential = service.credential(token_id, mechanism) if token is not None else None
        if token is None or credential is None or token.expired(now):
            return None
        return token.owner.name, credential, token.expiry_ms

    return lookup
