"""Authentication in the domain: SASL mechanisms (PLAIN, SCRAM) as pure state machines, SCRAM
credentials, principals. No I/O: tokens in, tokens out; nonces and credentials are injected.

Each name loads its module at its first use (PEP 562): a broker with no SASL listener imports neither
the JAAS parser nor PLAIN's server nor the HTTP listener's password checks (issue 39)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .credentials import ScramDeletion, ScramUpsertion, UserResult, UserScramCredentials
    from .jaas import JaasConfigError, parse_jaas_config
    from .passwords import PasswordCheck
    from .plain import PlainServer
    from .principal import ANONYMOUS, KafkaPrincipal
    from .sasl import SaslAuthenticationFailed, SaslException, SaslServer, client_message, client_text
    from .scram import ScramCredential, ScramMechanism, ScramServer

# Each exported name and the module that declares it.
_MODULES = {
    "ANONYMOUS": "principal",
    "JaasConfigError": "jaas",
    "KafkaPrincipal": "principal",
    "PasswordCheck": "passwords",
    "PlainServer": "plain",
    "SaslAuthenticationFailed": "sasl",
    "SaslException": "sasl",
    "SaslServer": "sasl",
    "ScramCredential": "scram",
    "ScramDeletion": "credentials",
    "ScramMechanism": "scram",
    "ScramServer": "scram",
    "ScramUpsertion": "credentials",
    "UserResult": "credentials",
    "UserScramCredentials": "credentials",
    "client_message": "sasl",
    "client_text": "sasl",
    "parse_jaas_config": "jaas",
}

__all__ = [
    "ANONYMOUS",
    "JaasConfigError",
    "KafkaPrincipal",
    "PasswordCheck",
    "PlainServer",
    "SaslAuthenticationFailed",
    "SaslException",
    "SaslServer",
    "ScramCredential",
    "ScramDeletion",
    "ScramMechanism",
    "ScramServer",
    "ScramUpsertion",
    "UserResult",
    "UserScramCredentials",
    "client_message",
    "client_text",
    "parse_jaas_config",
]


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # the next lookup finds it without this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
