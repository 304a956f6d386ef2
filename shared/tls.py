"""How every client reaches a server that speaks TLS: the ``tls://`` address, the context that verifies the server's
certificate, and the plain words for a certificate that cannot be trusted.

``quatro join tls://HOST[:PORT]``, ``quatro replay``, the network bots (``quatro-server bot``) and the doors read an
address here and connect with ``client_context``'s context; their I/O shells (asyncio, trio, a blocking socket) differ,
what is verified and what is said about a failure is decided once. The certificate is checked against the system's
trust store by default, or against ``--tls-ca FILE`` only (a private CA, or a self-signed certificate given to the
players by the operator); the name checked is the host as typed.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass

from quatro_shared.addresses import parse_address
from quatro_shared.protocol import DEFAULT_PORT

#: The scheme that asks for TLS: ``tls://HOST[:PORT]``. An address without it connects in the clear, as always.
SCHEME = "tls://"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A server as a client reaches it: where, and whether over TLS (``ca``: the only CA file trusted; None: the
    system's trust store)."""

    host: str
    port: int
    tls: bool = False
    ca: str | None = None

    def __str__(self) -> str:
        where = f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
        return SCHEME + where if self.tls else where


def parse_endpoint(text: str, default_port: int = DEFAULT_PORT, *, ca: str | None = None) -> Endpoint:
    """``HOST[:PORT]`` or ``tls://HOST[:PORT]``. ``ca`` (``--tls-ca``) asks for TLS whatever the address says: a
    CA given is never silently unused. Raises ``ValueError`` saying what is wrong."""
    tls = text.startswith(SCHEME)
    if tls:
        text = text[len(SCHEME) :]
    elif "://" in text:
        raise ValueError(f"not an address: {text!r} (HOST[:PORT], or tls://HOST[:PORT] for a server that speaks TLS)")
    host, port = parse_address(text, default_port)
    return Endpoint(host, port, tls or ca is not None, ca)


class SpeaksTls(ConnectionError):
    """A connection in the clear reached a port that speaks TLS: its words say so, and the command that joins."""


def speaks_tls_words(address: str) -> str:
    """What a player is told when ``address`` (as they typed it, without ``tls://``) turned out to speak TLS."""
    return (
        f"{address} speaks TLS, and this connection was in the clear. Join with: quatro join {SCHEME}{address} "
        "(and --tls-ca FILE if its operator gave you a certificate)."
    )


def client_context(endpoint: Endpoint) -> ssl.SSLContext | None:
    """The context that verifies ``endpoint``'s certificate (its chain and its name), or None for a plain
    connection. Raises ``OSError`` (a CA file that cannot be read) or ``ssl.SSLError`` (one that holds no certificate)."""
    if not endpoint.tls:
        return None
    context = ssl.create_default_context(cafile=endpoint.ca)  # with a CA file: that file alone is trusted
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


def certificate_refused(exc: BaseException) -> bool:
    """Whether ``exc`` is the server's certificate failing verification (as opposed to the network failing)."""
    return isinstance(exc, ssl.SSLCertVerificationError) or (
        isinstance(exc.__cause__, ssl.SSLCertVerificationError) if exc.__cause__ is not None else False
    )


def tls_trouble(exc: BaseException, endpoint: Endpoint) -> str | None:
    """What went wrong with TLS, in plain words and with what the player can do; None when ``exc`` is not about TLS."""
    cause = exc if isinstance(exc, ssl.SSLError) else exc.__cause__
    if isinstance(cause, ssl.SSLCertVerificationError):
        why = (cause.verify_message or cause.reason or "it could not be verified").rstrip(".")
        trusted = f"the CA in {endpoint.ca}" if endpoint.ca else "this computer's trusted authorities"
        return (
            f"The certificate of {endpoint} is not trusted: {why}. It was checked against {trusted}. "
            "Nothing was sent to it. If the server's operator gave you its certificate or CA, join with "
            "--tls-ca FILE; otherwise someone may be posing as the server: do not play there."
        )
    if isinstance(cause, ssl.SSLError):
        why = (cause.reason or str(cause)).replace("_", " ").lower()
        return (
            f"{endpoint} did not speak TLS ({why}). Does the server have TLS on (quatro-server --tls-cert)? "
            "If it speaks in the clear, join without tls://."
        )
    return None
