"""Finding Quatro servers on the LAN: the zeroconf (mDNS/DNS-SD) service ``_quatro._tcp``, what both sides agree on.

A server announces itself (``quatro_server.net.announce``); ``quatro join`` with no address looks for a moment
(``quatro_tui.discover``). Both use the zeroconf library, which speaks the same multicast DNS as Bonjour and
Avahi. The TXT record carries ``version`` (the protocol version) and ``ssh`` (the SSH door's port, 0 without).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zeroconf import Zeroconf

SERVICE_TYPE = "_quatro._tcp.local."
#: Seconds ``quatro join`` listens for announcements before it shows what it found.
LOOK_SECONDS = 2.0
#: Environment variable: set to 1 to keep a server from announcing itself (tests, a private box).
NO_ANNOUNCE_ENV = "QUATRO_NO_ANNOUNCE"


class NoMulticast(Exception):
    """Zeroconf cannot work here: no interface takes multicast (the message says what failed)."""


def open_zeroconf(host: str | None) -> Zeroconf:
    """The zeroconf engine to announce or look through: a server bound to one address uses that address's interface
    only, any other every interface; IPv4 only. Raises ``NoMulticast``. (The zeroconf library loads here, when it is
    needed: neither side pays for it otherwise.)"""
    from zeroconf import InterfaceChoice, IPVersion, Zeroconf

    interfaces: InterfaceChoice | list[str] = (
        InterfaceChoice.All if host is None or host in ("", "0.0.0.0", "::") else [host]
    )
    try:
        return Zeroconf(interfaces=interfaces, ip_version=IPVersion.V4Only)
    except OSError as exc:
        raise NoMulticast(f"no multicast on this network ({exc.strerror or exc})") from exc


@dataclass(frozen=True)
class Found:
    """A server that announced itself."""

    name: str
    host: str
    port: int
    #: The port of its SSH door, 0 without one.
    ssh_port: int = 0

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
