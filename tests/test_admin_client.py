"""What the client core makes of the operator's pushes (protocol 5), fed bytes directly; and the admin socket's
answer to a caller that sends it junk, in process."""

from __future__ import annotations

import socket

import trio

from quatro_server import admin
from quatro_server.server import Server
from quatro_server.tables.lobby import Lobby
from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.client import NoticeGiven, TablesListed, Unseated
from quatro_shared.framing import FrameDecoder, encode

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

    for junk, code in ((encode({"kind": "explode"}), p.UNKNOWN_KIND),
                       (encode({"kind": "close", "table": "one"}), admin.BAD_REQUEST),
                       (encode({"kind": "drain", "timeout": -1}), admin.BAD_REQUEST),
                       (encode({"kind": "notice", "text": "x" * (p.MAX_NOTICE_LEN + 1)}), admin.BAD_REQUEST),
                       (b"\x00\x00\x00\x03\xc1\xc1\xc1", "malformed")):
        (reply,) = await trio.to_thread.run_sync(exchange, junk)
        assert (reply["kind"], reply["code"]) == (p.ERROR, code), reply
    (reply,) = await trio.to_thread.run_sync(exchange, encode({"kind": "tables"}))
    assert reply == {"kind": "ok", "tables": [], "draining": False, "connections": 0}
    listener.remove()
    assert not listener.path.exists()
