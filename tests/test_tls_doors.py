"""With TLS on the game port, the doors still let people in: their clients join over the doors' own loopback
listener (the door token required), and the metrics count their sessions."""

from __future__ import annotations

import re
import urllib.request

import pytest

from helpers.certs import self_signed
from helpers.ssh import start_door
from helpers.tui import run
from test_ssh_door import LOBBY, Terminal

pytestmark = pytest.mark.timeout(90)


def _scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as answer:
        return answer.read().decode()


def test_an_ssh_session_reaches_the_lobby_of_a_tls_server_and_is_counted(tmp_path):
    cert = self_signed(tmp_path / "tls")
    server = start_door(tmp_path, "--tls-cert", str(cert.cert), "--tls-key", str(cert.key), "--metrics", "0")
    try:
        assert f"quatro join tls://127.0.0.1:{server.port}" in server.out
        url = re.search(r"Metrics: (http://127\.0\.0\.1:\d+/metrics)", server.out).group(1)  # type: ignore[union-attr]

        async def body():
            ann = await Terminal.open(server.ssh_port, "ann")
            await ann.wait_for(LOBBY)
            text = _scrape(url)
            assert 'quatro_door_sessions{door="ssh"} 1.0' in text, text
            assert 'quatro_connections{state="lobby"} 1.0' in text, text
            assert "tls_handshake" not in text  # the door's client did not come through the TLS port
            ann.process.stdin.write(b"\x11")  # ctrl+q
            assert await ann.ended() == 0
            ann.close()

        run(body)
    finally:
        server.stop()
