"""The join addresses a server prints: read from the machine's interfaces, LAN addresses first, loopback last."""

from __future__ import annotations

import socket

from quatro_server.net.addresses import join_addresses, machine_interfaces, reachable_addresses

V4, V6, LINK = socket.AF_INET, socket.AF_INET6, getattr(socket, "AF_PACKET", 17)

#: A laptop on a home LAN, with a container bridge and a Wi-Fi card that has both families.
LAPTOP = {
    "lo": [(V4, "127.0.0.1"), (V6, "::1"), (LINK, "00:00:00:00:00:00")],
    "wlan0": [(V4, "192.168.1.20"), (V6, "2001:db8::20"), (V6, "fe80::1%wlan0"), (LINK, "aa:bb:cc:dd:ee:ff")],
    "eth0": [(V4, "10.0.0.5"), (V4, "169.254.3.3"), (V6, "fd00::5")],
    "docker0": [(V4, "172.17.0.1")],
    "tun0": [],
}


def test_lan_addresses_come_first_loopback_last_link_local_never():
    assert reachable_addresses(LAPTOP) == [
        "10.0.0.5",
        "192.168.1.20",
        "172.17.0.1",  # eth0, wlan0, then the container bridge
        "fd00::5",
        "2001:db8::20",
        "127.0.0.1",
        "::1",
    ]


def test_an_ipv4_only_listener_is_given_no_ipv6_address():
    assert reachable_addresses(LAPTOP, ipv6=False) == ["10.0.0.5", "192.168.1.20", "172.17.0.1", "127.0.0.1"]


def test_a_machine_without_a_lan_still_has_loopback():
    assert reachable_addresses({"lo": [(V4, "127.0.0.1")]}) == ["127.0.0.1"]
    assert reachable_addresses({}) == ["127.0.0.1"]
    assert reachable_addresses({"eth0": [(V4, "not an address"), (V4, "0.0.0.0")]}) == ["127.0.0.1"]


def test_join_lines_carry_the_port_and_bracket_ipv6():
    assert join_addresses(None, 7777, LAPTOP)[:3] == ["10.0.0.5:7777", "192.168.1.20:7777", "172.17.0.1:7777"]
    assert "[fd00::5]:7777" in join_addresses(None, 7777, LAPTOP)
    assert join_addresses("0.0.0.0", 7777, LAPTOP)[-1] == "127.0.0.1:7777"
    assert all("[" not in a for a in join_addresses("0.0.0.0", 7777, LAPTOP))
    assert join_addresses("127.0.0.1", 9000, LAPTOP) == ["127.0.0.1:9000"]  # a chosen address is the only one


def test_this_machines_interfaces_are_read():
    found = reachable_addresses(machine_interfaces())
    assert found[-1] in ("127.0.0.1", "::1") and "127.0.0.1" in found


def test_join_without_an_address_says_when_nothing_answers_on_this_machine(capsys):
    """``quatro join`` offers this machine's server only as what it is: one that answers, or marked as not answering."""
    from quatro_tui.cli import choose_server

    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        assert (
            choose_server(None, look=lambda: [], ask=lambda prompt: "", interactive=True, local=f"127.0.0.1:{port}")
            == f"127.0.0.1:{port}"
        )
        out = capsys.readouterr().out
        assert f"1. this machine (127.0.0.1:{port})\n" in out
    # The same port once nobody listens there: still offered (a server may be about to start), but said so.
    assert (
        choose_server(None, look=lambda: [], ask=lambda prompt: "", interactive=True, local=f"127.0.0.1:{port}")
        == f"127.0.0.1:{port}"
    )
    out = capsys.readouterr().out
    assert f"1. this machine (127.0.0.1:{port}): nothing answers there now\n" in out
