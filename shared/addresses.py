"""A server's address as a person types it: ``HOST``, ``HOST:PORT``, ``[IPv6]:PORT`` or a bare IPv6 address.

The client (``quatro join``) and the network bots (``quatro-server bot``) read addresses the same way.
"""

from __future__ import annotations

from quatro_shared.protocol import DEFAULT_PORT


def format_address(host: str, port: int) -> str:
    """(host, port) as ``HOST:PORT``, an IPv6 host in brackets; ``:PORT`` for the host "" (a directory's "the host
    this connection reached"). The one way the product writes an address with its port."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def parse_address(text: str, default_port: int = DEFAULT_PORT) -> tuple[str, int]:
    """``(host, port)``, the port ``default_port`` where the text names none. Raises ``ValueError`` saying what is wrong."""
    if text.startswith("["):
        host, closed, rest = text[1:].partition("]")
        if not closed or (rest and not rest.startswith(":")):
            raise ValueError(f"not an address: {text!r} (an IPv6 address with a port is written [ADDRESS]:PORT)")
        port_text = rest[1:]
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
    else:
        host, port_text = text, ""  # a plain host, or a bare IPv6 address (its colons are not a port)
    if not host:
        raise ValueError(f"no host in {text!r}")
    if not port_text:
        return host, default_port
    if not port_text.isdigit():
        raise ValueError(f"the port in {text!r} is not a number")
    port = int(port_text)
    if not 0 < port < 65536:
        raise ValueError(f"port {port} is out of range (1 to 65535)")
    return host, port
