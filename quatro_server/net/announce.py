"""This server in the LAN's zeroconf (``_quatro._tcp``), so that ``quatro join`` finds it without an address."""

from __future__ import annotations

import ipaddress
import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zeroconf import Zeroconf

from quatro_shared.discovery import SERVICE_TYPE, NoMulticast, open_zeroconf


class Announcement:
    """This server in the LAN's zeroconf: registered by ``start`` (it takes a second or two), withdrawn by ``stop``."""

    def __init__(
        self, name: str, host: str | None, port: int, addresses: list[str], ssh_port: int = 0, version: int = 0
    ) -> None:
        from zeroconf import ServiceInfo

        self.host = host
        packed = []
        for address in addresses:
            try:
                ip = ipaddress.ip_address(address)
            except ValueError:
                continue
            if ip.version == 4:
                packed.append(ip.packed)
        label = name.encode()[:63].decode(errors="ignore")  # a DNS label's limit
        self.info = ServiceInfo(
            SERVICE_TYPE,
            f"{label}.{SERVICE_TYPE}",
            port=port,
            addresses=packed,
            properties={"version": str(version), "ssh": str(ssh_port)},
            server=f"{socket.gethostname().split('.')[0] or 'quatro'}-quatro.local.",
        )
        self.zeroconf: Zeroconf | None = None

    def start(self) -> None:
        """Announce; raises ``NoMulticast``."""
        self.zeroconf = open_zeroconf(self.host)
        try:
            self.zeroconf.register_service(self.info, allow_name_change=True)
        except OSError as exc:
            self.stop()
            raise NoMulticast(f"no multicast on this network ({exc.strerror or exc})") from exc

    def stop(self) -> None:
        zeroconf, self.zeroconf = self.zeroconf, None
        if zeroconf is None:
            return
        try:
            zeroconf.unregister_service(self.info)
        except Exception:  # noqa: BLE001 - going away anyway: the announcement expires by itself
            pass
        zeroconf.close()
