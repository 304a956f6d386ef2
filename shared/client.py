"""The client side of the Quatro protocol as a state machine with no I/O: bytes in, typed events out.

In the manner of h11's ``Connection``: the caller owns the socket and the clock. ``ClientCore.send(body, now)``
numbers a request and returns the bytes to write; ``ClientCore.receive_data(data, now)`` takes whatever bytes
arrived (cut anywhere) and returns what they meant, as events:

- ``Answered``: the reply to one of this client's requests, matched by ``id`` (in whatever order replies come),
  with the request it answers and an ``ok``'s payload read as that request kind defines it;
- ``Updated``: an ``update`` in order (``seq`` checked, protocol section 11), with its ``game`` and the seat's view
  as the server held it when it built the update. The update is read, and the seat's state built, through its
  game's contract (``quatro_shared.games``; ``GameContract.follow``): a snapshot starts the state, every later
  update advances it (Quatro: the update's events applied and its countdowns taken from it or run on to its
  ``at``, ``quatro_shared.games.quatro.apply.Tracker``, since protocol 3 sends a full view only in a snapshot). Each snapshot
  that follows in step is also a check of the state built so far; a mismatch is counted in ``drift`` (and the
  snapshot taken as the new base). A game whose every update carries the whole view (``whole_views``) takes each
  as a new base: a gap in its ``seq`` only means missed events, counted in ``drift``, never a resync;
- ``ResyncNeeded``: an update went missing (a gap or a repeat, or one that cannot be read): the state can no
  longer be trusted, the I/O shell must reconnect and rejoin (``rejoin()``), which brings a snapshot. Updates
  are dropped until then;
- ``SeatingChanged``, ``TablesListed``, ``ChatSaid``, ``ServerBye``, ``WatchStopped``, ``NoticeGiven``,
  ``Unseated``: the other pushes;
- ``ServerError``: an ``error`` with no request of this client's to match (the server's own ``id`` ``null``).

A request naming a table that another server holds is answered ``moved`` (protocol section 21): its ``Answered``
carries an ``m.MovedTo``, and the core keeps the request (``redirect``). The shell closes the link, connects to the
address it names, says hello and sends ``repeat()``: the same request again, whose reply is the one its caller
waits for. A request moved ``MAX_MOVES`` times in a row is answered as refused instead (servers that disagree).

A request that carries a secret (``rejoin``'s seat secret, ``join``'s or ``watch``'s password) is not sent to the
server a ``moved`` named before that server proved it holds the same secret (protocol 8): whoever can write to the
directory could name a listener of their own. ``repeat()`` then sends ``prove`` (a fresh nonce; what is proved:
``quatro_shared.proofs``) and keeps the request. A right proof leaves ``redirect`` set, with ``connect`` False:
the shell sends ``repeat()`` again on the same connection, and that is the request itself. Any other answer (a
wrong proof, a refusal, an error) is turned into the request's answer, refused ``unproven_move``, and nothing of the
secret was sent. So every shell follows a ``moved`` the same way::

    while core.redirect is not None:
        if core.redirect.connect:
            close; connect to core.redirect.address(host); hello
        reply = the reply to core.repeat(now)

It also keeps what a reconnection needs (``place``: table, seat, secret; R19), learnt from the replies to
``create_table``, ``join`` and ``rejoin`` and forgotten on ``leave`` or a ``bye`` ``replaced``, and the table it
watches from no seat (``watching``, protocol section 18: its updates are followed as a seat's are, the view being
one from ``NO_SEAT``), learnt from ``watch``'s reply and forgotten on ``leave``, a seat taken or ``watch_ended``, and says when a
heartbeat ``ping`` is due (``ping_due``: ``HEARTBEAT_INTERVAL`` after the last request sent) and when a silent
server must be given up (``silent_since`` + ``HEARTBEAT_TIMEOUT``). A framing error raises
``quatro_shared.framing.ProtocolError``: the connection must then be closed, and ``connection_lost`` called
before the next one.
"""

from __future__ import annotations

import itertools
import secrets
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from quatro_shared import games as g
from quatro_shared import messages as m
from quatro_shared import proofs
from quatro_shared import protocol as p
from quatro_shared.framing import FrameDecoder, Message, encode
from quatro_shared.game import Follower, FollowError, GameUpdate
from quatro_shared.wire import WireError, push_from_wire, reply_from_wire, request_to_wire

# --- what the core tells its shell ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClientEvent:
    """Something the server said. ``frame`` is the message as decoded, for logs and tests; read the typed fields."""

    frame: Message


@dataclass(frozen=True, slots=True)
class Answered(ClientEvent):
    """The reply to request ``id``: ``reply`` is ``Ok`` (its payload typed for ``request``), ``Refused`` or ``Error``."""

    id: int
    request: m.RequestBody
    reply: m.Reply

    @property
    def ok(self) -> bool:
        return isinstance(self.reply, m.Ok)


#: The update and the view of a table's game (its contract's ``update`` and ``view``).
UpdateT = TypeVar("UpdateT", bound=GameUpdate)
ViewT = TypeVar("ViewT")


@dataclass(frozen=True, slots=True)
class Updated(ClientEvent, Generic[UpdateT, ViewT]):
    """An update in order: draw ``view`` (the seat's state after it), tell its events. ``game`` is the table's game
    (``quatro_shared.games.CONTRACTS``); ``update`` and ``view`` are of its contract's ``update`` and ``view`` classes."""

    update: UpdateT
    view: ViewT
    game: str

    @property
    def events(self) -> tuple[object, ...]:
        """The update's events, of its game's ``events`` classes."""
        return self.update.events


@dataclass(frozen=True, slots=True)
class ResyncNeeded(ClientEvent):
    """An update went missing: ``got`` came where ``expected`` was due (``got`` None: it could not be read; ``why``
    says). Reconnect and ``rejoin()``: the snapshot that follows is the new base."""

    expected: int
    got: int | None
    why: str


@dataclass(frozen=True, slots=True)
class SeatingChanged(ClientEvent):
    seating: m.Seating


@dataclass(frozen=True, slots=True)
class TablesListed(ClientEvent):
    """The lobby's tables (the ``lobby`` push)."""

    tables: tuple[m.TableSummary, ...]


@dataclass(frozen=True, slots=True)
class ChatSaid(ClientEvent):
    """Someone said something where this connection is (the ``chat`` push). Its text is another player's:
    show it as plain text."""

    line: m.ChatLine


@dataclass(frozen=True, slots=True)
class ServerBye(ClientEvent):
    """The server lets this connection go. After ``replaced`` another connection holds the seat: never reconnect."""

    bye: m.Bye


@dataclass(frozen=True, slots=True)
class WatchStopped(ClientEvent):
    """This connection watches its table no more and is back in the lobby (the ``watch_ended`` push)."""

    ended: m.WatchEnded


@dataclass(frozen=True, slots=True)
class NoticeGiven(ClientEvent):
    """A line from the server's operator (the ``notice`` push): show it whatever the screen, as plain text."""

    notice: m.Notice


@dataclass(frozen=True, slots=True)
class Unseated(ClientEvent):
    """The operator closed this connection's table, or removed its player from the seat (the ``seat_ended`` push):
    the connection is back in the lobby, and the seat's secret is forgotten (it no longer works)."""

    ended: m.SeatEnded


@dataclass(frozen=True, slots=True)
class Recalled(ClientEvent):
    """What this seat saw of its match before it rejoined (the ``recent`` push, just before the snapshot): for a
    feed that has none of it (a new process); it changes no state."""

    recent: m.Recent


@dataclass(frozen=True, slots=True)
class ServerError(ClientEvent):
    """An ``error`` or ``refused`` that answers no request of this client (``id`` ``null``: the hello deadline, a
    framing error of this client's, a full server), or a push this client cannot read (``reply`` None then)."""

    reply: m.Reply | None
    why: str = ""


@dataclass(frozen=True, slots=True)
class Place:
    """Where this client sits: what a reconnection needs (R19)."""

    table: int
    seat: int
    secret: str


@dataclass(frozen=True, slots=True)
class Redirect:
    """A request answered ``moved``: to send again (``ClientCore.repeat``) once connected to ``host``:``port``.
    ``connect``: the shell connects there (and says hello) first; False once the server there proved it holds the
    secret the request carries (``proven``): ``repeat`` then sends the request itself, on that connection."""

    host: str
    port: int
    request: m.RequestBody
    connect: bool = True
    proven: bool = False

    def address(self, current_host: str) -> tuple[str, int]:
        """Where to connect: ``host`` "" is the host this client reached the server that said ``moved`` at."""
        return (self.host or current_host), self.port


#: ``moved`` answers in a row that a client follows for one request: a table is held by one server, so one hand-over
#: is the rule; a second can come when its server restarted elsewhere meanwhile. More means servers that disagree.
MAX_MOVES = 3

#: Requests that seat a connection, or make it watch a table: its updates are counted afresh from their reply on.
_SEATING = (m.CreateTable, m.Join, m.Rejoin, m.Watch)


def carried_secret(request: m.RequestBody) -> tuple[str, str] | None:
    """What secret a request carries, as ``prove`` names it (``of``) and its value; None for a request with none:
    ``rejoin``'s seat secret, ``join``'s and ``watch``'s password when they give one."""
    if isinstance(request, m.Rejoin):
        return proofs.OF_SECRET, request.secret
    if isinstance(request, (m.Join, m.Watch)) and request.password is not None:
        return proofs.OF_PASSWORD, request.password
    return None


@dataclass(frozen=True, slots=True)
class _Proving:
    """A ``prove`` sent for a moved request, and what its proof is checked against."""

    prove: m.Prove
    redirect: Redirect
    secret: str


def unproven(request_id: int | None, table: int, where: str, why: str) -> m.Refused:
    """The answer to a moved request whose secret was kept (refused ``unproven_move``, said by the core)."""
    return m.refused(
        request_id,
        p.UNPROVEN_MOVE,
        f"the lobby's directory sent table {table} to {where}, which could not prove it holds the table's "
        f"secret ({why}); a wrong secret or password cannot be proved either: nothing secret was sent there",
    )


class ClientCore:
    """One client's side of one server, across reconnections. Not thread-safe; no I/O, no clock."""

    def __init__(self, name: str, person: str | None = None) -> None:
        self.name = name
        #: The player's person key, said in every ``hello`` (None: anonymous, unrated; protocol section 20).
        self.person = person
        self._ids = itertools.count(1)
        self._decoder = FrameDecoder()
        #: Requests sent and not yet answered, by id.
        self.pending: dict[int, m.RequestBody] = {}
        #: The server's hello reply on this connection; None before it.
        self.welcome: m.Welcome | None = None
        self.place: Place | None = None
        #: The table this connection watches from no seat (protocol section 18); None when it watches none. The
        #: request that began it is kept, to watch again after a reconnection (``rewatch``).
        self.watching: int | None = None
        self._watch: m.Watch | None = None
        #: The ``seq`` of the seat's last update in order; None before the first on this seat.
        self.seq: int | None = None
        #: Why updates are being dropped until the next snapshot (an update went missing); None when in step.
        self.resyncing: str | None = None
        #: The seat's view as of its last update: a snapshot's, with every later update taken (its game's view class).
        self.view: object = None
        #: The game of the seat's state (None with no view), and that state, followed through the game's contract.
        self.contract: g.AnyContract | None = None
        # Any game's follower: the update it takes is of the game of the seat's table (known at run time only).
        self._follower: Follower[Any, object] | None = None
        #: Snapshots that came in step yet differed from the state built from events (each is then the new base).
        self.drift = 0
        #: The server replaced this connection at its seat: a shell must not reconnect to it.
        self.replaced = False
        #: Seconds without a request before a ``ping`` is due (the protocol's; tests shorten it).
        self.heartbeat_interval: float = p.HEARTBEAT_INTERVAL
        self._last_sent: float | None = None
        self._last_heard: float | None = None
        #: The door token this client was handed (``protocol.DOOR_TOKEN_ENV``), said in every ``hello``; None: none.
        self.door: str | None = None
        #: The server drains before a restart (protocol 5): it takes no new table and starts no new match. Learnt
        #: from ``hello``'s and ``list_tables``'s replies, the ``lobby`` push and a ``notice``.
        self.draining = False
        #: The request last answered ``moved``, to send again on the connection to the server it names; None: none.
        self.redirect: Redirect | None = None
        self._moves = 0
        #: The ``prove`` sent for a moved request (``repeat``), until its reply; None: none.
        self._proving: _Proving | None = None

    # --- requests out -----------------------------------------------------------------------------------

    def send(self, body: m.RequestBody, now: float) -> tuple[int, bytes]:
        """Number ``body`` and return its id and the bytes of its frame, to write as they are."""
        request_id = next(self._ids)
        if isinstance(body, _SEATING):
            # The seat's updates are counted afresh: a join starts at seq 1, a rejoin with a snapshot. Those come
            # before the reply, so the count restarts now.
            self.seq = None
            self.resyncing = None
            self._forget()
        data = encode(request_to_wire(request_id, body))
        self.pending[request_id] = body
        self._last_sent = now
        return request_id, data

    def hello(self, now: float) -> tuple[int, bytes]:
        return self.send(m.Hello(p.PROTOCOL_VERSION, self.name, door=self.door, person=self.person), now)

    def rejoin(self, now: float, takeover: bool = False) -> tuple[int, bytes]:
        """The request that takes this client's seat back (after a reconnection, or to resync). Needs a ``place``.
        ``takeover`` takes it even from a live connection (this client's own old link, not yet noticed dead)."""
        if self.place is None:
            raise ValueError("no seat to rejoin")
        return self.send(m.Rejoin(self.place.table, self.place.secret, True if takeover else None), now)

    def rewatch(self, now: float) -> tuple[int, bytes]:
        """The request that watches this client's table again (after a reconnection, or to resync); needs one
        watched."""
        if self._watch is None or self.watching is None:
            raise ValueError("no table to watch again")
        return self.send(self._watch, now)

    def repeat(self, now: float) -> tuple[int, bytes]:
        """The request that was answered ``moved``, sent again: on the connection to the server it named, after
        ``hello``. Its reply answers the request as the caller first sent it. A request that carries a secret is
        preceded by ``prove``: this sends the ``prove``, and its reply either leaves ``redirect`` set (the proof was
        right: call ``repeat`` again, on this connection) or answers the request ``unproven_move``."""
        redirect = self.redirect
        if redirect is None:
            raise ValueError("no request to repeat")
        self.redirect = None
        carried = carried_secret(redirect.request)
        if carried is None or redirect.proven:
            return self.send(redirect.request, now)
        of, secret = carried
        table = getattr(redirect.request, "table")
        seat = None
        place = self.place
        if isinstance(redirect.request, m.Rejoin) and place is not None:
            if place.table == table and place.secret == secret:
                seat = place.seat
        prove = m.Prove(table, secrets.token_hex(p.MIN_NONCE_BYTES), of, seat)
        self._proving = _Proving(prove, replace(redirect, connect=False), secret)
        return self.send(prove, now)

    def resync(self, now: float) -> tuple[int, bytes]:
        """Ask for a snapshot of the seat's view on this connection (its ``seq`` goes on; the snapshot is the new
        base). A lighter cure than reconnecting when the state is doubted and the link is fine."""
        return self.send(m.Resync(), now)

    # --- heartbeat --------------------------------------------------------------------------------------

    def ping_due(self) -> float | None:
        """When a ``ping`` is due: ``heartbeat_interval`` after the last request sent; None before ``hello`` is
        answered (a ping before it would be refused ``hello_first``)."""
        if self.welcome is None or self._last_sent is None:
            return None
        return self._last_sent + self.heartbeat_interval

    def ping_if_due(self, now: float) -> bytes | None:
        """The bytes of a ``ping`` if one is due at ``now``, else None."""
        due = self.ping_due()
        if due is None or now < due:
            return None
        return self.send(m.Ping(), now)[1]

    def silent_since(self) -> float | None:
        """When the server was last heard from on this connection (None before anything arrived)."""
        return self._last_heard

    def server_gone(self, now: float) -> bool:
        """True when nothing has come from the server for ``HEARTBEAT_TIMEOUT`` although pings were due: the link
        is dead without having said so. The shell closes it and reconnects."""
        heard = self._last_heard
        return heard is not None and self.welcome is not None and now - heard >= p.HEARTBEAT_TIMEOUT

    # --- the connection ---------------------------------------------------------------------------------

    def connection_lost(self) -> list[int]:
        """The link is gone: a fresh decoder for the next one. Returns the ids of requests that will never be
        answered. The seat, its secret and the ``seq`` are kept for the rejoin."""
        lost = list(self.pending)
        self.pending.clear()
        self._proving = None  # a ``prove`` lost with its link proves nothing: the request stays unsent
        self._decoder = FrameDecoder()
        self.welcome = None
        self._last_sent = self._last_heard = None
        return lost

    # --- bytes in -----------------------------------------------------------------------------------------

    def receive_data(self, data: bytes | bytearray, now: float) -> list[ClientEvent]:
        """Every event completed by ``data``. Raises ``ProtocolError`` if the server broke framing."""
        frames = self._decoder.feed(data)
        if data:
            self._last_heard = now
        out: list[ClientEvent] = []
        for frame in frames:
            event = self._event(frame)
            if event is not None:
                out.append(event)
        return out

    def _event(self, frame: Message) -> ClientEvent | None:
        kind = frame["kind"]
        if kind in (p.OK, p.REFUSED, p.ERROR, p.MOVED):
            return self._reply(frame)
        try:
            push = push_from_wire(frame)
        except WireError as exc:
            if kind == p.UPDATE:
                return self._lost_update(frame, None, f"an update this client cannot read ({exc.code})")
            return ServerError(frame, None, f"a {kind!r} this client cannot read: {exc}")
        contract = g.of_update(push)
        if contract is not None:
            return self._update(frame, push, contract)  # type: ignore[arg-type]
        if isinstance(push, m.Seating):
            return SeatingChanged(frame, push)
        if isinstance(push, m.LobbyList):
            self.draining = push.draining
            return TablesListed(frame, push.tables)
        if isinstance(push, m.Notice):
            self.draining = self.draining or push.draining
            return NoticeGiven(frame, push)
        if isinstance(push, m.SeatEnded):
            if self.place is not None and self.place.table == push.table:
                self.place = None  # the secret no longer works: nothing to come back to
                self.seq = None
                self._forget()
            return Unseated(frame, push)
        if isinstance(push, m.ChatLine):
            return ChatSaid(frame, push)
        if isinstance(push, m.Recent):
            return Recalled(frame, push)
        if isinstance(push, m.WatchEnded):
            self.watching = self.seq = None
            self._forget()
            return WatchStopped(frame, push)
        assert isinstance(push, m.Bye)
        if push.reason == m.BYE_REPLACED:
            # Another connection holds the seat now: coming back would only fight it.
            self.replaced = True
            self.place = None
        return ServerBye(frame, push)

    def _reply(self, frame: Message) -> ClientEvent:
        request_id = frame.get("id")
        request = self.pending.pop(request_id, None) if type(request_id) is int else None
        payload = m.REPLY_PAYLOADS.get(request.kind, m.Done) if request is not None else m.Done
        try:
            reply = reply_from_wire(frame, payload)
        except WireError as exc:
            reply = m.Error(request_id if type(request_id) is int else None, exc.code, f"an unreadable reply: {exc}")
        if request is None:
            return ServerError(frame, reply, "a reply to no request of this client's")
        proving = self._proving
        if proving is not None and request is proving.prove:
            self._proving = None
            if not isinstance(reply, m.MovedTo):
                assert type(request_id) is int  # the id it was pending under
                return self._proved(frame, request_id, proving, reply)
            request = proving.redirect.request  # the table moved on: it is asked (and proved) there
        if isinstance(reply, m.MovedTo):
            self._moves += 1
            if self._moves > MAX_MOVES:
                self._moves = 0
                reply = m.refused(
                    reply.id,
                    p.NO_SUCH_TABLE,
                    f"table {reply.table} moved {MAX_MOVES} times: the servers disagree on who holds it",
                )
            else:
                self.redirect = Redirect(reply.host, reply.port, request)
            return Answered(frame, request_id, request, reply)  # type: ignore[arg-type]
        if request.kind != p.HELLO:
            self._moves = 0
        if isinstance(reply, m.Ok):
            self._learn(request, reply.payload)
        return Answered(frame, request_id, request, reply)  # type: ignore[arg-type]

    def _proved(self, frame: Message, request_id: int, proving: _Proving, reply: m.Reply) -> ClientEvent:
        """The reply to a ``prove``: a right proof keeps the request to send (``redirect``, on this connection); any
        other answer is the request's, refused ``unproven_move`` (its secret never sent)."""
        redirect, prove = proving.redirect, proving.prove
        where = f"{redirect.host or 'this host'}:{redirect.port}"
        why = self._wrong_proof(proving, reply)
        if why is None:
            self.redirect = replace(redirect, connect=False, proven=True)
            return Answered(frame, request_id, prove, reply)
        self._moves = 0
        refusal = unproven(request_id, prove.table, where, why)
        return Answered(frame, request_id, redirect.request, refusal)

    @staticmethod
    def _wrong_proof(proving: _Proving, reply: m.Reply) -> str | None:
        """Why ``reply`` does not prove the secret ``proving`` is for; None when it does."""
        if isinstance(reply, (m.Refused, m.Error)):
            said = reply.reason if isinstance(reply, m.Refused) else reply.code
            return f"it answered {said[:40]!r}: {reply.message[:80]!r}"  # words of a server not trusted: quoted
        if not isinstance(reply, m.Ok) or not isinstance(reply.payload, m.Proof):
            return "it answered something else"
        redirect, prove, payload = proving.redirect, proving.prove, reply.payload
        if prove.of == proofs.OF_PASSWORD:
            key = None if payload.salt is None else proofs.password_key(payload.salt, proving.secret)
            if key is None:
                return "its password proof came without a salt this client can use"
        else:
            key = proofs.secret_key(proving.secret)
        expected = proofs.proof(key, prove.nonce, redirect.host, redirect.port)
        if not proofs.matches(expected, payload.proofs):
            return "its proof was wrong"
        return None

    def _learn(self, request: m.RequestBody, payload: m.Payload) -> None:
        """What a successful request changes in what the client knows of its seat."""
        if isinstance(request, m.Rename):
            self.name = request.name  # a reconnection says hello with the new name
        if isinstance(payload, m.Welcome):
            self.welcome = payload
            self.draining = payload.draining
        elif isinstance(payload, m.Tables):
            self.draining = payload.draining
        elif isinstance(payload, m.Watching) and isinstance(request, m.Watch):
            self.watching, self._watch = payload.table, request
        elif isinstance(payload, m.Seated):
            self.place = Place(payload.table, payload.seat, payload.secret)
            self.watching = None
            self.replaced = False
        elif isinstance(payload, m.Rejoined) and isinstance(request, m.Rejoin):
            self.place = Place(payload.table, payload.seat, request.secret)
            self.replaced = False
        elif isinstance(request, m.Leave):
            self.place = self.watching = None
            self.seq = None
            self._forget()

    @property
    def _followed(self) -> bool:
        """Whether this connection's updates are numbered for it: it holds a seat or watches a table."""
        return self.place is not None or self.watching is not None

    def _forget(self) -> None:
        self.view = self._follower = self.contract = None

    def _update(self, frame: Message, update: GameUpdate, contract: g.AnyContract) -> ClientEvent | None:
        """Check ``seq`` (section 11) and build the seat's view through the game's contract. A snapshot is the new
        base whatever its number: the seat's count went on while it was away (updates written to a socket already
        dropped still count), so a skip there is no gap; it is also the base after a gap (``resync``). At a game
        whose updates carry the whole view, every update is a new base: a gap there is counted in ``drift``."""
        expected = None if self.seq is None else self.seq + 1
        if update.snapshot or contract.whole_views:
            try:
                follower = contract.follow(update)
            except FollowError as exc:
                return self._lost_update(frame, update.seq, str(exc))
            in_step = update.seq == expected and self.resyncing is None
            if update.snapshot and in_step and self._follower is not None and self.contract is contract:
                if not self._follower.agrees(update):
                    self.drift += 1
            elif not update.snapshot and expected is not None and update.seq != expected and self._followed:
                self.drift += 1  # events missed; the view beside them is whole
            self.seq, self.resyncing = update.seq, None
            self.contract, self._follower, self.view = contract, follower, follower.view
            return Updated(frame, update, follower.view, contract.name)
        if self.resyncing is not None:
            return None  # stale until a snapshot
        if self.contract is not None and self.contract is not contract:
            return self._lost_update(
                frame, update.seq, f"an update of {contract.title} at a table of {self.contract.title}"
            )
        expected = 1 if expected is None else expected
        if update.seq != expected and self._followed:
            return self._lost_update(frame, update.seq, f"update {update.seq} came where {expected} was due")
        if self._follower is None:
            return self._lost_update(frame, update.seq, "an update with no snapshot before it")
        try:
            view = self._follower.advance(update)
        except FollowError as exc:
            return self._lost_update(frame, update.seq, str(exc))
        self.seq, self.view = update.seq, view
        return Updated(frame, update, view, contract.name)

    def _lost_update(self, frame: Message, got: int | None, why: str) -> ClientEvent | None:
        if self.resyncing is not None:
            return None
        expected = 1 if self.seq is None else self.seq + 1
        self.resyncing = why
        return ResyncNeeded(frame, expected, got, why)
