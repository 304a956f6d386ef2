"""A small trio client for tests: real TCP, the real codec, requests with ids, pushes collected in order."""

from __future__ import annotations

import itertools
from typing import Any

import trio

from quatro_shared import protocol as p
from quatro_shared.framing import FrameDecoder, encode
from quatro_shared.views import SeatView
from quatro_shared.wire import view_from_wire


class TestClient:
    __test__ = False  # not a test class, whatever pytest thinks of the name

    def __init__(self, stream: trio.SocketStream, name: str) -> None:
        self.stream = stream
        self.name = name
        self.decoder = FrameDecoder()
        self.ids = itertools.count(1)
        self.frames: list[dict[str, Any]] = []  # every frame received, in order (for the H1–H3 checks)
        self.pending: list[dict[str, Any]] = []  # received, not yet consumed
        self.view: SeatView | None = None
        self.seq: int | None = None
        self.events: list[dict[str, Any]] = []
        self.seating: dict[str, Any] | None = None
        self.table: int | None = None
        self.seat: int | None = None
        self.secret: str | None = None
        self._seen: dict[str, int] = {}  # events of each kind already returned by wait_event
        # Heartbeat (protocol: ping when nothing was sent for HEARTBEAT_INTERVAL); its replies are not kept.
        self.sent_at = trio.current_time()
        self.heartbeat_interval = p.HEARTBEAT_INTERVAL
        self._heartbeats: set[int] = set()

    @classmethod
    async def connect(cls, port: int, name: str = "tester", hello: bool = True) -> TestClient:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        client = cls(stream, name)
        if hello:
            reply = await client.request(p.HELLO, version=p.PROTOCOL_VERSION, name=name)
            assert reply["kind"] == p.OK, reply
        return client

    async def send_raw(self, data: bytes) -> None:
        self.sent_at = trio.current_time()
        await self.stream.send_all(data)

    async def send(self, message: dict[str, Any]) -> None:
        self.sent_at = trio.current_time()
        await self.stream.send_all(encode(message))

    async def _read_frame(self) -> dict[str, Any] | None:
        while not self.pending:
            with trio.move_on_at(self.sent_at + self.heartbeat_interval) as beat:  # heartbeat: see __init__
                data = await self.stream.receive_some(65536)
            if beat.cancelled_caught:
                request_id = next(self.ids)
                self._heartbeats.add(request_id)
                await self.send({"kind": p.PING, "id": request_id})
                continue
            if not data:
                return None
            for frame in self.decoder.feed(data):
                if frame.get("kind") == p.OK and frame.get("id") in self._heartbeats:
                    self._heartbeats.discard(frame["id"])
                    continue
                self.frames.append(frame)
                self._track(frame)
                self.pending.append(frame)
        return self.pending.pop(0)

    def _track(self, frame: dict[str, Any]) -> None:
        if frame.get("kind") == p.UPDATE:
            self.view = view_from_wire(frame["view"])
            self.seq = frame["seq"]
            self.events.extend(frame["events"])
        elif frame.get("kind") == p.TABLE:
            self.seating = frame

    async def request(self, kind: str, timeout: float = 5, **fields: Any) -> dict[str, Any]:
        """Send a request and return its reply; pushes that arrive meanwhile are kept in order."""
        request_id = next(self.ids)
        await self.send({"kind": kind, "id": request_id, **fields})
        kept = []
        with trio.fail_after(timeout):
            while True:
                frame = await self._read_frame()
                assert frame is not None, f"connection closed while waiting for the reply to {kind}"
                if frame.get("id") == request_id and frame["kind"] in (p.OK, p.REFUSED, p.ERROR):
                    self.pending[:0] = kept
                    if kind in (p.CREATE_TABLE, p.JOIN) and frame["kind"] == p.OK:
                        self.table, self.seat, self.secret = frame["table"], frame["seat"], frame["secret"]
                    return frame
                kept.append(frame)

    async def next_frame(self, timeout: float = 5) -> dict[str, Any] | None:
        with trio.fail_after(timeout):
            return await self._read_frame()

    async def wait_view(self, predicate, timeout: float = 10) -> SeatView:
        """Read until the latest view satisfies ``predicate``."""
        with trio.fail_after(timeout):
            while self.view is None or not predicate(self.view):
                frame = await self._read_frame()
                assert frame is not None, "connection closed while waiting"
        return self.view

    async def wait_event(self, kind: str, timeout: float = 10) -> dict[str, Any]:
        """Read until an update carries an event of ``kind`` (one not seen by an earlier wait)."""
        with trio.fail_after(timeout):
            while True:
                matching = [event for event in self.events if event["kind"] == kind]
                seen = self._seen.get(kind, 0)
                if len(matching) > seen:
                    self._seen[kind] = seen + 1
                    return matching[seen]
                frame = await self._read_frame()
                assert frame is not None, "connection closed while waiting"

    async def drain(self, seconds: float = 0.05) -> None:
        """Read whatever arrives within ``seconds``."""
        with trio.move_on_after(seconds):
            while await self._read_frame() is not None:
                pass

    async def closed(self, timeout: float = 5) -> bool:
        """True once the server closes the connection."""
        with trio.fail_after(timeout):
            while True:
                try:
                    frame = await self._read_frame()
                except trio.BrokenResourceError:
                    return True
                if frame is None:
                    return True

    async def aclose(self) -> None:
        await self.stream.aclose()
