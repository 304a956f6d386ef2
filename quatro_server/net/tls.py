"""TLS on the game port (``quatro-server --tls-cert FILE --tls-key FILE``): the server's context.

Each accepted TCP connection is wrapped in a ``trio.SSLStream`` (``quatro_server.server``); its handshake runs inside
the connection's hello window, so that a peer that never finishes it holds its slot no longer than one that never
says hello, and is refused (``tls_handshake``) like any other. Seat secrets, table passwords and person keys then
cross the network only encrypted. The doors' own clients join over a plain listener on loopback that admits the
door token alone (``docs/operating.md``, "TLS").
"""

from __future__ import annotations

import ssl
from pathlib import Path


class TlsConfigError(ValueError):
    """The certificate or key cannot be used: said in the operator's words, before the server listens."""


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server context for ``cert`` (PEM, the chain after the leaf) and its private ``key``: TLS 1.2 at least,
    Python's default ciphers, no client certificates asked for."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except FileNotFoundError as exc:
        raise TlsConfigError(f"{exc.filename}: no such file") from None
    except PermissionError as exc:
        raise TlsConfigError(f"{exc.filename}: not readable by this user") from None
    except ssl.SSLError as exc:
        what = (exc.reason or str(exc)).replace("_", " ").lower()
        raise TlsConfigError(f"{cert} and {key} are not a certificate and its key in PEM ({what})") from None
    return context
