"""Finding a server on the LAN: the server announces itself with zeroconf (here on loopback only), and
``quatro join`` without an address offers what it found, this machine's and the last one used."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from quatro_shared.discovery import Found, NoMulticast

from quatro_tui.cli import choose_server
from quatro_tui.discover import discover

pytestmark = pytest.mark.timeout(60)


def test_a_server_announces_itself_and_is_found_with_its_ssh_door(tmp_path):
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "quatro_server",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--announce",
            "--ssh",
            "0",
            "--data-dir",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out = ""
        while "ssh -p" not in out:
            line = process.stdout.readline()
            assert line, out
            out += line
        port = int(out.split("quatro join 127.0.0.1:")[1].split()[0])
        ssh_port = int(out.split("ssh -p ")[1].split()[0])
        deadline = time.monotonic() + 20
        while True:
            found = [f for f in discover(1.0, host="127.0.0.1") if f.port == port]
            if found or time.monotonic() > deadline:
                break
        assert found and found[0].host == "127.0.0.1" and found[0].ssh_port == ssh_port
        assert found[0].name.startswith("Quatro on ")
    finally:
        process.terminate()
        process.wait(10)


def test_a_server_on_loopback_does_not_announce_unless_asked(tmp_path, monkeypatch):
    monkeypatch.delenv("QUATRO_NO_ANNOUNCE", raising=False)
    from quatro_server.cli import _announces, _parser

    def announces(*args: str) -> bool:
        return _announces(_parser().parse_args(["serve", *args]))

    assert not announces("--host", "127.0.0.1")
    assert announces("--host", "127.0.0.1", "--announce")
    assert announces()  # every interface: the LAN can reach it
    assert not announces("--no-announce")
    monkeypatch.setenv("QUATRO_NO_ANNOUNCE", "1")
    assert not announces()


LAN = [
    Found("Quatro on box", "192.168.1.20", 7777, 2222),
    Found("Quatro on box", "192.168.1.20", 7777, 2222),
    Found("Quatro on den", "192.168.1.30", 7000),
]


def test_join_without_an_address_lists_what_it_found_beside_localhost_and_joins_the_choice(capsys):
    answers = iter(["9", "nonsense:port", "2"])
    chosen = choose_server("10.0.0.9:7777", look=lambda: LAN, ask=lambda prompt: next(answers), interactive=True)
    assert chosen == "192.168.1.30:7000"
    out = capsys.readouterr().out
    assert "Looking for Quatro servers on the network (2 s)" in out
    assert "1. Quatro on box (192.168.1.20:7777, or ssh -p 2222 NAME@192.168.1.20)" in out
    assert "2. Quatro on den (192.168.1.30:7000)" in out
    assert "3. the last one used (10.0.0.9:7777)" in out
    assert "4. this machine (127.0.0.1:7777)" in out
    assert "5." not in out  # the same server announced twice is listed once
    assert choose_server(None, look=lambda: LAN, ask=lambda prompt: "", interactive=True) == "192.168.1.20:7777"
    assert choose_server(None, look=lambda: [], ask=lambda prompt: "host.lan:9", interactive=True) == "host.lan:9"


def test_no_multicast_is_one_line_and_the_rest_is_still_offered(capsys):
    def no_multicast() -> list[Found]:
        raise NoMulticast("no multicast on this network (Network is unreachable)")

    assert choose_server(None, look=no_multicast, ask=lambda prompt: "", interactive=True) == "127.0.0.1:7777"
    out = capsys.readouterr().out
    assert out.count("no multicast") == 1 and "Carrying on" in out


def test_without_a_terminal_the_last_server_or_the_first_found_is_joined():
    assert choose_server("10.0.0.9:7777", look=lambda: LAN, interactive=False) == "10.0.0.9:7777"
    assert choose_server(None, look=lambda: LAN, interactive=False) == "192.168.1.20:7777"
    assert choose_server(None, look=lambda: [], interactive=False) is None


def test_the_last_server_used_is_marked_where_it_is_listed_and_enter_takes_it(capsys):
    """The picker said "the last one used" only for a server it had not found otherwise: the one announced on the
    LAN or this machine's never showed it, and enter took the first line. Marked wherever it is, enter takes it."""
    prompts = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return ""

    assert choose_server("192.168.1.30:7000", look=lambda: LAN, ask=ask, interactive=True) == "192.168.1.30:7000"
    out = capsys.readouterr().out
    assert "2. Quatro on den (192.168.1.30:7000): the last one used" in out
    assert "1. Quatro on box (192.168.1.20:7777, or ssh -p 2222 NAME@192.168.1.20)\n" in out
    assert prompts == ["Join which (1-3, or HOST[:PORT])? [2] "]
    local = "127.0.0.1:7777"
    assert choose_server(local, look=lambda: LAN, ask=ask, interactive=True, local=local) == local
    out = capsys.readouterr().out
    assert f"3. the last one used ({local})" in out and "4." not in out  # this machine's, listed once
    assert prompts[-1] == "Join which (1-3, or HOST[:PORT])? [3] "
