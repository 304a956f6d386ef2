"""Looking for Quatro servers on the LAN (zeroconf, ``_quatro._tcp``): what ``quatro join`` offers without an address."""

from __future__ import annotations

import socket
import time
from typing import TYPE_CHECKING

from quatro_shared.discovery import LOOK_SECONDS, SERVICE_TYPE, Found, NoMulticast, open_zeroconf

if TYPE_CHECKING:
    from zeroconf import Zeroconf

#: Seconds to wait for a server to accept a connection before saying nothing answers there.
ANSWER_SECONDS = 0.5


def answers(host: str, port: int, seconds: float = ANSWER_SECONDS) -> bool:
    """Whether something accepts a TCP connection at ``host``:``port`` (opened and closed at once, nothing sent)."""
    try:
        with socket.create_connection((host, port), timeout=seconds):
            return True
    except OSError:
        return False


def discover(seconds: float = LOOK_SECONDS, host: str | None = None) -> list[Found]:
    """The Quatro servers that answer within ``seconds`` (``host``: look through that address's interface
    only). Raises ``NoMulticast``."""
    from zeroconf import ServiceBrowser, ServiceListener

    zeroconf = open_zeroconf(host)
    names: list[str] = []

    class Listener(ServiceListener):
        def add_service(self, zc: Zeroconf, type_: str, name: str) -> None:
            if name not in names:
                names.append(name)

        def update_service(self, zc: Zeroconf, type_: str, name: str) -> None:
            self.add_service(zc, type_, name)

        def remove_service(self, zc: Zeroconf, type_: str, name: str) -> None:
            pass

    try:
        browser = ServiceBrowser(zeroconf, SERVICE_TYPE, Listener())
        time.sleep(seconds)
        browser.cancel()
        found: list[Found] = []
        for name in list(names):
            info = zeroconf.get_service_info(SERVICE_TYPE, name, timeout=500)
            if info is None or not info.port:
                continue
            try:
                ssh_port = int((info.properties or {}).get(b"ssh") or 0)
            except ValueError:
                ssh_port = 0
            label = name[: -len(SERVICE_TYPE) - 1] if name.endswith("." + SERVICE_TYPE) else name
            for address in info.parsed_addresses():
                found.append(Found(label, address, info.port, ssh_port))
        return found
    except OSError as exc:
        raise NoMulticast(f"no multicast on this network ({exc.strerror or exc})") from exc
    finally:
        zeroconf.close()
