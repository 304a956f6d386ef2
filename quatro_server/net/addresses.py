"""Where players on the LAN reach this server: the machine's addresses, read from its network interfaces.

The host name is no guide (it often resolves to 127.0.1.1, or to nothing); the interfaces are what
another machine can actually reach. psutil reads them the same way on Linux, macOS and Windows.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Mapping

from quatro_shared.addresses import format_address

#: Interfaces of containers and virtual machines on this host: reachable from here, rarely from the LAN.
VIRTUAL_PREFIXES = ("docker", "br-", "veth", "virbr", "lxc", "lxd", "vmnet", "vboxnet", "cni", "flannel", "podman")

#: One interface's addresses as (family, address) pairs, as ``psutil.net_if_addrs()`` gives them.
InterfaceTable = Mapping[str, Iterable[tuple[int, str]]]


def reachable_addresses(interfaces: InterfaceTable, *, ipv6: bool = True) -> list[str]:
    """The addresses worth telling players, best first: IPv4 LAN addresses, then global or unique-local IPv6
    ones (``ipv6``: the server listens on IPv6 too), loopback last. Within each, real interfaces come before
    container bridges and virtual machines' networks. Link-local addresses need an interface name to be
    used, so they are left out; each address appears once."""
    outside: list[str] = []
    outside_v6: list[str] = []
    loopback: list[str] = []
    for _name, addresses in sorted(
        interfaces.items(), key=lambda item: (item[0].startswith(VIRTUAL_PREFIXES), item[0])
    ):
        for family, text in addresses:
            if family == socket.AF_INET:
                bucket = outside
            elif family == socket.AF_INET6 and ipv6:
                bucket = outside_v6
            else:
                continue
            try:
                address = ipaddress.ip_address(text.split("%", 1)[0])
            except ValueError:
                continue
            if address.is_link_local or address.is_unspecified or address.is_multicast:
                continue
            bucket = loopback if address.is_loopback else bucket
            if str(address) not in bucket:
                bucket.append(str(address))
    loopback.sort(key=lambda a: ipaddress.ip_address(a).version)  # 127.0.0.1 before ::1
    return outside + outside_v6 + (loopback or ["127.0.0.1"])


def machine_interfaces() -> dict[str, list[tuple[int, str]]]:
    """This machine's interfaces and their addresses, now."""
    import psutil  # imported here: only serving needs it

    return {name: [(int(a.family), a.address) for a in found] for name, found in psutil.net_if_addrs().items()}


def join_addresses(host: str | None, port: int, interfaces: InterfaceTable | None = None) -> list[str]:
    """Where players can reach a server listening on ``host`` (None, ``0.0.0.0`` or ``::``: every interface)."""
    if host not in (None, "", "0.0.0.0", "::"):
        return [format_address(host, port)]
    try:
        table = machine_interfaces() if interfaces is None else interfaces
    except OSError:
        table = {}
    return [format_address(address, port) for address in reachable_addresses(table, ipv6=host != "0.0.0.0")]
