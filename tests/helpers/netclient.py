"""A small trio client for tests: real TCP and the shared client core (quatro_shared.client), every frame kept in order.

A thin shell: the core numbers requests, matches replies, checks ``seq`` and parses pushes; this shell moves bytes
and keeps each message's map as it came (``frames``), which is what the hidden-information and hostile-input
tests inspect. A request whose fields the contract refuses (a hostile test's) is still sent, as it is, under an id
of the shell's own. At a Quarto table ``view`` is a ``QuartoView`` (every Quarto update carries the whole view) and
``play_quarto`` plays the seat's turns with moves ``pick`` chooses among ``quatro_shared.games.quarto.contract.legal``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import trio

from quatro_shared import protocol as p
from quatro_shared.client import Answered, ClientCore, ClientEvent, Place, SeatingChanged, Updated
from quatro_shared.framing import encode
from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quatro.views import SeatView
from quatro_shared.messages import Ping, Refused
from quatro_shared.wire import request_from_wire, to_wire

#: Ids for requests sent around the core (fields the contract refuses): far from the core's own.
_RAW_IDS_FROM = 1_000_000


class TestClient:
    __test__ = False  # not a test class, whatever pytest thinks of the name

    def __init__(self, stream: trio.SocketStream, name: str) -> None:
        self.stream = stream
        self.name = name
        self.core = ClientCore(name)
        self.raw_ids = itertools.count(_RAW_IDS_FROM)
        self.frames: list[dict[str, Any]] = []  # every frame received, in order (for the H1–H3 checks)
        self.pending: list[dict[str, Any]] = []  # received, not yet consumed
        self.view: SeatView | q.QuartoView | None = None
        #: The seat's state after each update in order, by ``seq``, as the client core built it (protocol 3).
        self.views: dict[int, SeatView | q.QuartoView] = {}
        self.seq: int | None = None
        self.events: list[dict[str, Any]] = []
        self.seating: dict[str, Any] | None = None
        self._seen: dict[str, int] = {}  # events of each kind already returned by wait_event
        self._place: Place | None = None
        self._pings: set[int] = set()  # ids of the heartbeat's pings, whose replies are not kept
        #: The servers this client was sent to by ``moved`` replies, in order (host, port).
        self.moves: list[tuple[str, int]] = []

    # The seat this client was last given, kept even once the core forgets it (a "replaced" bye, a leave):
    # tests come back to it with another connection.

    @property
    def heartbeat_interval(self) -> float:
        return self.core.heartbeat_interval

    @heartbeat_interval.setter
    def heartbeat_interval(self, seconds: float) -> None:
        self.core.heartbeat_interval = seconds  # a test makes one client's heartbeat quick, or stops it

    @property
    def table(self) -> int | None:
        return None if self._place is None else self._place.table

    @property
    def seat(self) -> int | None:
        return None if self._place is None else self._place.seat

    @property
    def secret(self) -> str | None:
        return None if self._place is None else self._place.secret

    @classmethod
    async def connect(cls, port: int, name: str = "tester", hello: bool = True) -> TestClient:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        client = cls(stream, name)
        if hello:
            reply = await client.request(p.HELLO, version=p.PROTOCOL_VERSION, name=name)
            assert reply["kind"] == p.OK, reply
        return client

    async def send_raw(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def send(self, message: dict[str, Any]) -> None:
        await self.stream.send_all(encode(message))

    async def _read_frame(self) -> dict[str, Any] | None:
        while not self.pending:
            data = None
            due = self.core.ping_due()
            with trio.move_on_at(float("inf") if due is None else due):
                data = await self.stream.receive_some(65536)
            if data is None:
                await self._heartbeat()
                continue
            if not data:
                return None
            for event in self.core.receive_data(data, trio.current_time()):
                if isinstance(event, Answered) and event.id in self._pings:
                    self._pings.discard(event.id)  # the heartbeat's own pong: not the test's business
                    continue
                self.frames.append(event.frame)
                self._track(event)
                self.pending.append(self._answer(event))
        return self.pending.pop(0)

    @staticmethod
    def _answer(event: ClientEvent) -> dict[str, Any]:
        """The map a test reads for ``event``: the frame as it came, or, where the core answered otherwise (a
        ``moved`` past ``MAX_MOVES``, a ``prove`` that proved nothing: ``unproven_move``), the core's answer."""
        if isinstance(event, Answered) and event.reply.kind != event.frame.get("kind"):
            return to_wire(event.reply)
        if isinstance(event, Answered) and isinstance(event.reply, Refused) and event.reply.reason == p.UNPROVEN_MOVE:
            return to_wire(event.reply)
        return event.frame

    async def _heartbeat(self) -> None:
        """A ping when the core says one is due (a test client idle while others play is still heard from)."""
        due = self.core.ping_due()
        if due is not None and trio.current_time() >= due:
            request_id, data = self.core.send(Ping(), trio.current_time())
            self._pings.add(request_id)
            await self.send_raw(data)

    def _track(self, event: ClientEvent) -> None:
        self._place = self.core.place or self._place
        if isinstance(event, Updated):
            self.view = event.view
            self.views[event.update.seq] = event.view
            self.seq = event.update.seq
            self.events.extend(event.frame["events"])
        elif isinstance(event, SeatingChanged):
            self.seating = event.frame

    async def request(self, kind: str, timeout: float = 5, **fields: Any) -> dict[str, Any]:
        """Send a request and return its reply; pushes that arrive meanwhile are kept in order."""
        try:
            checked = request_from_wire({"kind": kind, "id": 0, **fields})
        except p.RequestError:
            checked = None
        if checked is not None and checked.body is not None:
            request_id, data = self.core.send(checked.body, trio.current_time())
            await self.send_raw(data)
        else:
            request_id = next(self.raw_ids)
            await self.send({"kind": kind, "id": request_id, **fields})
        kept = []
        with trio.fail_after(timeout):
            while True:
                frame = await self._read_frame()
                assert frame is not None, f"connection closed while waiting for the reply to {kind}"
                if frame.get("id") == request_id and frame["kind"] in p.SERVER_KINDS and self.core.redirect is not None:
                    # Another server holds the table (protocol section 21): the core follows it, as every client does
                    # (a ``moved``, or a right proof that the request's secret may be sent there).
                    request_id = await self._follow()
                    continue
                if frame.get("id") == request_id and frame["kind"] in (p.OK, p.REFUSED, p.ERROR):
                    self.pending[:0] = kept
                    return frame
                kept.append(frame)

    async def _follow(self) -> int:
        """Connect to the server a ``moved`` named, say hello there and send the moved request again (or, for one
        that carries a secret, the core's ``prove`` first; once proven, the request on the same link): its id."""
        redirect = self.core.redirect
        assert redirect is not None
        if not redirect.connect:
            request_id, data = self.core.repeat(trio.current_time())
            await self.send_raw(data)
            return request_id
        host, port = redirect.address(self.stream.socket.getpeername()[0])
        await self.stream.aclose()
        self.core.connection_lost()
        self.pending.clear()
        self.stream = await trio.open_tcp_stream(host, port)
        self.moves.append((host, port))
        hello_id, data = self.core.hello(trio.current_time())
        await self.send_raw(data)
        while True:
            frame = await self._read_frame()
            assert frame is not None, "the server a moved named closed the connection"
            if frame.get("id") == hello_id:
                assert frame["kind"] == p.OK, frame
                break
        request_id, data = self.core.repeat(trio.current_time())
        await self.send_raw(data)
        return request_id

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

    async def act(self, action: Any, timeout: float = 5) -> dict[str, Any]:
        """Send a game action (a ``quatro_shared`` action dataclass) and return its reply."""
        fields = {key: value for key, value in to_wire(action).items() if key != "kind"}
        return await self.request(action.kind, timeout=timeout, **fields)

    async def play_quarto(
        self, pick: Callable[[list[q.Action]], q.Action] | None = None, timeout: float = 120
    ) -> q.QuartoView:
        """Play this seat of a Quarto table to the end of its match: whenever the view says it is this seat's move,
        one of ``quatro_shared.games.quarto.contract.legal``'s moves (``pick``'s choice; by default the first). Returns the last view.
        Every move must be accepted."""
        pick = pick or (lambda moves: moves[0])
        with trio.fail_after(timeout):
            while True:
                view = self.view
                assert view is None or isinstance(view, q.QuartoView), view
                if view is not None and view.phase is q.Phase.OVER:
                    return view
                moves = q.legal(view) if view is not None else []
                if moves:
                    move = pick(moves)
                    reply = await self.act(move)
                    assert reply["kind"] == p.OK, (move, reply, view)
                    continue
                frame = await self._read_frame()
                assert frame is not None, "connection closed while playing"

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
