"""Server addresses, read one way by the client and the network bots."""

from __future__ import annotations

import pytest

from quatro_shared import protocol as p
from quatro_shared import tls
from quatro_shared.addresses import parse_address

from quatro_server.bots import netbot
from quatro_tui import cli


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("example.org", ("example.org", p.DEFAULT_PORT)),
        ("example.org:9000", ("example.org", 9000)),
        ("10.0.0.2:9000", ("10.0.0.2", 9000)),
        ("[::1]:9000", ("::1", 9000)),
        ("[::1]", ("::1", p.DEFAULT_PORT)),
        ("::1", ("::1", p.DEFAULT_PORT)),
        ("fe80::1:2", ("fe80::1:2", p.DEFAULT_PORT)),
    ],
)
def test_addresses_with_and_without_a_port(text: str, expected: tuple[str, int]) -> None:
    assert parse_address(text) == expected


def test_a_default_port_of_the_callers_choice() -> None:
    assert parse_address("host", default_port=1234) == ("host", 1234)
    assert parse_address("host:80", default_port=1234) == ("host", 80)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "no host"),
        (":80", "no host"),
        ("[]:80", "no host"),
        ("host:0", "out of range"),
        ("host:65536", "out of range"),
        ("host:port", "not a number"),
        ("host:-1", "not a number"),
        ("[::1]x", "not an address"),
        ("[::1", "not an address"),
    ],
)
def test_a_bad_address_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_address(text)


def test_the_client_and_the_network_bots_read_addresses_with_the_one_parser() -> None:
    assert cli.parse_address is parse_address
    # The network bot reads an endpoint (tls:// or not) with the contract's parser, which reads the address with it.
    assert netbot.parse_endpoint is tls.parse_endpoint
    assert tls.parse_address is parse_address


def test_quatro_join_with_a_bad_address_says_so(capsys: pytest.CaptureFixture[str], tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert cli.main(["join", "host:port"]) == 2
    assert "quatro: the port in 'host:port' is not a number" in capsys.readouterr().err
