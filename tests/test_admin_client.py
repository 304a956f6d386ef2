"""What the client core makes of the operator's pushes (protocol 5), fed bytes directly; and the admin socket's
answer to a caller that sends it junk, in process."""

from __future__ import annotations

import socket

import trio

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.client import NoticeGiven, TablesListed, Unseated
from quatro_shared.framing import FrameDecoder, encode

from quatro_server.server import Server
from quatro_server.tables.lobby import Lobby
from quatro_server.workers import admin
from test_client_core import SECRET, frame, seated, welcomed


def test_a_notice_is_an_event_of_its_own_and_draining_is_learnt_from_it_and_the_lobby():
    core = welcomed()
    assert core.draining is False
    (event,) = core.receive_data(frame(m.Notice("back in five minutes")), 0.0)
    assert isinstance(event, NoticeGiven) and event.notice.text == "back in five minutes" and not core.draining
    (event,) = core.receive_data(frame(m.Notice("restarting soon", draining=True)), 0.0)
    assert core.draining is True
    (listed,) = core.receive_data(frame(m.LobbyList((), draining=True)), 0.0)
    assert isinstance(listed, TablesListed) and core.draining is True
    request_id, _ = core.send(m.ListTables(), 0.0)
    core.receive_data(frame(m.Ok(request_id, m.Tables(()))), 0.0)
    assert core.draining is False  # a server that came back without draining


def test_seat_ended_forgets_the_seat_and_its_secret():
    core = seated()
    (event,) = core.receive_data(frame(m.SeatEnded(1, p.REMOVED_BY_OPERATOR, "be nice")), 0.0)
    assert isinstance(event, Unseated) and event.ended.message == "be nice"
    assert core.place is None and core.seq is None and core.view is None
    other = seated()
    other.receive_data(frame(m.SeatEnded(7, p.CLOSED_BY_OPERATOR, "another table's")), 0.0)
    assert other.place is not None and other.place.secret == SECRET  # not this seat's table: kept


async def test_the_admin_socket_answers_junk_with_an_error_and_serves_on(tmp_path, nursery):
    server = Server(Lobby(seed=1))
    await nursery.start(server.serve, "127.0.0.1", 0)
    listener = admin.AdminListener(tmp_path / "admin.sock")
    nursery.start_soon(listener.serve, server)

    def exchange(data: bytes) -> list[dict]:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(str(listener.path))
            sock.sendall(data)
            decoder, frames = FrameDecoder(), []
            while not frames:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                frames = decoder.feed(chunk)
            return frames

    for junk, code in (
        (encode({"kind": "explode"}), p.UNKNOWN_KIND),
        (encode({"kind": "close", "table": "one"}), admin.BAD_REQUEST),
        (encode({"kind": "drain", "timeout": -1}), admin.BAD_REQUEST),
        (encode({"kind": "drain", "timeout": float("inf")}), admin.BAD_REQUEST),
        (encode({"kind": "drain", "timeout": float("nan")}), admin.BAD_REQUEST),
        (encode({"kind": "notice", "text": "x" * (p.MAX_NOTICE_LEN + 1)}), admin.BAD_REQUEST),
        (b"\x00\x00\x00\x03\xc1\xc1\xc1", "malformed"),
    ):
        (reply,) = await trio.to_thread.run_sync(exchange, junk)
        assert (reply["kind"], reply["code"]) == (p.ERROR, code), reply
    (reply,) = await trio.to_thread.run_sync(exchange, encode({"kind": "tables"}))
    assert reply == {"kind": "ok", "tables": [], "draining": False, "connections": 0}
    listener.remove()
    assert not listener.path.exists()


async def test_a_peers_kind_is_logged_escaped_and_idle_admin_connections_are_capped(tmp_path, nursery, caplog):
    """A kind holding a newline cannot forge a log line of its own; connections beyond MAX_CONNECTIONS are told
    ``busy`` and closed at once, with one log line, and the socket serves again once one has gone."""
    import logging

    server = Server(Lobby(seed=1))
    await nursery.start(server.serve, "127.0.0.1", 0)
    listener = admin.AdminListener(tmp_path / "admin.sock")
    nursery.start_soon(listener.serve, server)
    forged = "tables\n2026-12-06 03:00:00,000 CRITICAL quatro.server all secrets leaked"

    def ask(frame: dict) -> dict:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(str(listener.path))
            sock.sendall(encode(frame))
            decoder, frames = FrameDecoder(), []
            while not frames:
                chunk = sock.recv(65536)
                assert chunk, "closed without an answer"
                frames = decoder.feed(chunk)
            return frames[0]

    with caplog.at_level(logging.INFO, logger="quatro.admin"):
        reply = await trio.to_thread.run_sync(ask, {"kind": forged})
    assert reply["code"] == p.UNKNOWN_KIND
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("admin request=")]
    assert "\n" not in line and "\\n" in line and len(line) < 120, line

    idle = []
    for _ in range(admin.MAX_CONNECTIONS):
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(str(listener.path))
        idle.append(sock)
    with trio.fail_after(5):
        while listener.open < admin.MAX_CONNECTIONS:
            await trio.sleep(0.01)
    with caplog.at_level(logging.INFO, logger="quatro.admin"):
        for _ in range(3):
            busy = await trio.to_thread.run_sync(ask, {"kind": "tables"})
            assert (busy["kind"], busy["code"]) == (p.ERROR, admin.BUSY), busy
    assert sum("admin_refused reason=full" in r.getMessage() for r in caplog.records) == 1
    idle.pop().close()
    with trio.fail_after(5):
        while listener.open >= admin.MAX_CONNECTIONS:
            await trio.sleep(0.01)
    assert (await trio.to_thread.run_sync(ask, {"kind": "tables"}))["kind"] == p.OK
    for sock in idle:
        sock.close()
    listener.remove()
