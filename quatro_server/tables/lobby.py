"""The lobby and its tables (rooms): seats, names, secrets, bots, and what each connection is sent.

This layer is synchronous and owns no clock and no socket: the network shell (``quatro_server.server``)
hands it requests with ``now`` and gives it ``Peer`` objects to send to. Everything a seated player
receives about the game is built here from the engine's ``view`` and ``events_for`` and nothing else (H3).
"""

from __future__ import annotations

import logging
import math
import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from itertools import count
from typing import Any, Protocol

from quatro_shared import actions as a
from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.profiles import STANDARD_PROFILE
from quatro_shared.views import Phase
from quatro_shared.framing import encode
from quatro_shared.wire import to_wire
from quatro_shared import seating

from quatro_server import games
from quatro_server.credentials import digest_secret, hash_password, password_matches, secret_matches
from quatro_server.games import DEFAULT_GAME, Game, GameTable, SeatBot
from quatro_server.journal import Journal, Opening, Recorder, RestoredTable
from quatro_server.journal import restore as restore_tables
from quatro_server.timing import PROFILES, Timing

log = logging.getLogger("quatro.lobby")

#: Tables one server holds at once; beyond it ``create_table`` is refused ``server_full``.
MAX_TABLES = 500
#: Bytes of randomness in a seat secret (R19): 128 bits, unguessable.
SECRET_BYTES = 16
#: Seconds a room lives on with nobody connected: long enough to come back from a dropped link (R19),
#: short enough that abandoned tables (and their bots) do not pile up.
ABANDON_AFTER = 600.0
#: Seconds a table whose match never started lives on with nobody connected: there is no score to keep, and
#: a table left behind by a dropped (or hostile) creator would otherwise hold a slot of ``MAX_TABLES``.
UNSTARTED_ABANDON_AFTER = 90.0
#: Open tables created from one remote address. A household or a LAN party behind one router runs a few
#: tables at once; one host cannot fill ``MAX_TABLES`` and lock everyone else out.
MAX_TABLES_PER_ADDRESS = 8
#: Password guessing (``join`` with a wrong password): each address may miss this many times freely, then waits
#: ``GUESS_DELAY`` seconds, doubled with every further miss up to ``GUESS_DELAY_CAP``; misses are forgotten
#: ``GUESS_MEMORY`` seconds after the last one, or at once on a right guess from that address.
GUESSES_PER_ADDRESS = 3
#: The same for one table, whoever guesses (many addresses): more free misses, so that a crowd of honest typos
#: is not slowed, and a shorter cap, so that an attack on a table delays its own players by at most that.
GUESSES_PER_TABLE = 10
GUESS_DELAY = 1.0
GUESS_DELAY_CAP = 60.0
GUESS_DELAY_CAP_TABLE = 30.0
GUESS_MEMORY = 900.0
#: Addresses whose misses are remembered at once; past it the longest-quiet ones are forgotten (bounded memory).
GUESS_RECORDS = 4096
#: Tables listed in one lobby message: open tables first. Stays under the codec's array limit.
MAX_LISTED = 200


class Peer(Protocol):
    """A connection as the lobby sees it. ``send`` never blocks; a peer that cannot keep up is dropped by its owner.

    A peer may also have an ``origin`` (its remote address, without the port): tables and password guesses are
    counted per origin. A peer without one (an in-process caller) is counted as origin ``None``, unlimited.
    """

    name: str
    room: Room | None
    seat: int | None

    def send(self, message: dict[str, Any] | bytes) -> None: ...

    def close(self, reason: str) -> None: ...


@dataclass(slots=True)
class _Misses:
    count: int = 0
    last: float = 0.0
    blocked_until: float = 0.0


class GuessLimiter:
    """Failed password attempts per key (an address, a table): free misses, then a growing delay."""

    def __init__(self, free: int, delay: float, cap: float, memory: float = GUESS_MEMORY, records: int = GUESS_RECORDS) -> None:
        self.free, self.delay, self.cap, self.memory, self.records = free, delay, cap, memory, records
        self._misses: dict[Any, _Misses] = {}

    def wait(self, key: Any, now: float) -> float:
        """Seconds before ``key`` may guess again; 0 when it may now."""
        misses = self._misses.get(key)
        if misses is None:
            return 0.0
        if now - misses.last >= self.memory:
            del self._misses[key]
            return 0.0
        return max(0.0, misses.blocked_until - now)

    def missed(self, key: Any, now: float) -> None:
        misses = self._misses.pop(key, None) or _Misses()
        if now - misses.last >= self.memory:
            misses = _Misses()
        misses.count += 1
        misses.last = now
        over = misses.count - self.free
        if over > 0:
            misses.blocked_until = now + min(self.cap, self.delay * 2 ** min(over - 1, 32))
        self._misses[key] = misses  # re-inserted: the dict's order is the order of last misses
        while len(self._misses) > self.records:
            del self._misses[next(iter(self._misses))]

    def forget(self, key: Any) -> None:
        self._misses.pop(key, None)


@dataclass(slots=True)
class Seat:
    """One seat of a room: empty, a bot, or a human (connected or not)."""

    name: str | None = None
    bot: SeatBot | None = None
    secret: str | None = None  # the digest of the seat's secret (R19): the secret itself is only in the join reply
    peer: Peer | None = None
    order: int = 0  # when the seat was taken: the host passes to the longest-seated (R18)
    bot_wake: float = 0.0
    #: Updates sent to this seat so far: its ``seq``, one per update, so the client can tell it missed nothing.
    #: Counted per seat, not per table batch: a batch this seat may not see is not even hinted at (H3).
    seq: int = 0
    #: The seat's connection has had a snapshot (protocol 2): it can apply what changed. A new connection at
    #: the seat has not.
    synced: bool = False
    #: The bot's decision being made away from the room (``BotJob``), until its result comes back.
    thinking: BotJob | None = None

    @property
    def empty(self) -> bool:
        return self.bot is None and self.secret is None


@dataclass(slots=True, eq=False)
class BotJob:
    """A slow bot's decision, handed out of the room (``Room.think``) so that it never holds up the server: the seat,
    the seat's view when it was asked (H2: all the bot may know) and the bot. Whoever runs it calls ``decide`` (in a
    worker thread: it touches nothing of the room) and gives the result back with ``Room.bot_decided``."""

    seat: int
    bot: SeatBot
    view: Any
    now: float
    #: The match it was asked in: a rematch is a new table, and an answer for the old one is stale.
    table: GameTable

    def decide(self) -> list[Any]:
        return list(self.bot.decide(self.view, self.now))


@dataclass
class Room:
    """One table: its seats before the match, then the engine's table during it. ``game`` says which game it plays
    (``quatro_server.games``): the room asks it for the engine, the views, the update frames and the bots."""

    id: int
    players: int
    timing_name: str
    timing: Timing
    password: str | None  # its salted hash (quatro_server.credentials), never the password
    rng: random.Random
    seats: list[Seat]
    host: int | None = None
    table: GameTable | None = None
    #: When the last connected human left (None while someone is here): the room closes ``ABANDON_AFTER`` later
    #: (``UNSTARTED_ABANDON_AFTER`` before its match starts).
    idle_since: float | None = None
    #: The remote address that created the room (None for an in-process creator): tables are counted per address.
    origin: str | None = None
    abandon_after: float = ABANDON_AFTER
    unstarted_abandon_after: float = UNSTARTED_ABANDON_AFTER
    on_change: Callable[[], None] = lambda: None  # the shell's wake-up for the room's timer task
    #: The wake-up the timer task last armed (``next_wake``'s latest answer; None: it sleeps until told).
    _armed: float | None = None
    #: When anyone at the table last sent anything (the lobby list tells how long ago: an abandoned table shows).
    last_active: float = 0.0
    #: Where the room's seats and matches are journalled (None: in memory only). The room tells it every input it
    #: gives the table, with the events that came of it, before it tells anyone (``act``, ``advance``, ``start``).
    recorder: Recorder | None = None
    game: Game = DEFAULT_GAME
    #: Where a slow bot's decision goes (``Game.slow_bot``): the network shell runs it in a worker thread and
    #: calls ``bot_decided`` when it is done. None: every bot decides at once, inline (the simulator, tests that
    #: drive a lobby directly, deterministic).
    think: Callable[[BotJob], None] | None = None

    def __post_init__(self) -> None:
        # When each seat was taken, counted on from the seats the room is made with (a restored room's).
        self._orders = count(max((s.order for s in self.seats), default=0) + 1)

    # --- what the room tells people ------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        """The table's phase in the lobby's words (a Quarto table's, ``games.QuartoGame.lobby_phase``)."""
        return Phase.LOBBY if self.table is None else self.game.lobby_phase(self.table)

    def summary(self, now: float | None = None) -> m.TableSummary:
        """One line of the lobby list: public facts only (who sits there is public: the room shows it too)."""
        return m.TableSummary(
            table=self.id,
            game=self.game.name,
            players=self.players,
            taken=sum(not s.empty for s in self.seats),
            bots=sum(s.bot is not None for s in self.seats),
            phase=self.phase,
            timing=self.timing_name,
            password=self.password is not None,
            scores=tuple(self.table.scores) if self.table else self.game.no_scores(self.players),
            names=tuple(s.name or "" for s in self.seats),
            bot_seats=tuple(i for i, s in enumerate(self.seats) if s.bot is not None),
            idle_s=0 if now is None else max(0, int(now - self.last_active)),
        )

    def seating(self) -> m.Seating:
        """The ``table`` message: who sits where, who hosts, the durations in force."""
        host = self.game.host(self) if self.table else self.host
        return m.Seating(
            table=self.id,
            players=self.players,
            phase=self.phase,
            host=host,
            timing={name: getattr(self.timing, name) for name in self.timing.__slots__},
            timing_name=self.timing_name,
            seats=tuple(
                m.SeatInfo(
                    seat=i,
                    name=s.name,
                    bot=None if s.bot is None else s.bot.level,
                    taken=not s.empty,
                    connected=s.bot is not None or s.peer is not None,
                )
                for i, s in enumerate(self.seats)
            ),
            game=self.game.name,
        )

    def broadcast_seating(self) -> None:
        if self.recorder is not None:  # every change of seats, names or host passes here
            self.recorder.seating(
                self.game.host(self) if self.table is not None else self.host,
                [(s.name, None if s.bot is None else s.bot.level, s.secret, s.order) for s in self.seats],
            )
        message = encode(to_wire(self.seating()))  # encoded once for the whole table
        for s in self.seats:
            if s.peer is not None:
                s.peer.send(message)

    def _update(self, batch: games.UpdateBatch, seat: int, seen: tuple[int, ...], snapshot: bool) -> bytes:
        """The frame of one seat's update in ``batch``, numbered by the seat's ``seq``."""
        s = self.seats[seat]
        s.seq += 1
        if snapshot:
            s.synced = True
        return batch.update(seat, s.seq, seen, snapshot)

    def publish(self, emits: list[Any], now: float, snapshot_for: int | None = None) -> None:
        """Send one batch of engine events to the seats allowed to see them, each filtered for that seat (H1, H3).

        A seat that sees none of the batch is sent nothing: even an empty update would tell it *when* a
        private thing happened (another team's sign, an opponent's emoji change). ``snapshot_for`` gets
        its update whatever it sees, marked as a snapshot (joining, rejoining, asking to resync), as does a
        seat whose connection has had no snapshot yet; the others get what changed (protocol 2), the bytes
        of what several seats see built once (``quatro_server.updates``). The frames are the game's (``Game.batch``):
        a Quarto update carries the seat's whole view every time.
        """
        if self.table is None or not (emits or snapshot_for is not None):
            return
        batch = self.game.batch(self.id, self.table, emits, now)
        delta = batch.public_deltas() if snapshot_for is None else None
        if delta is not None:
            # Every event public (a swap, a pulse): every seat sees all of them; a synced seat's frame is the shared
            # bytes with its seq and cooldowns, a seat without a snapshot yet gets one.
            everything = batch.seen_by(0, 0)  # the same for every seat
            observed: list[Any] | None = None  # what a bot is told: the same for every seat, built for the first bot
            for i, s in enumerate(self.seats):
                peer = s.peer
                if peer is not None:
                    if s.synced:
                        s.seq = seq = s.seq + 1
                        peer.send(delta(i, seq))
                    else:
                        peer.send(self._update(batch, i, everything, snapshot=True))
                if s.bot is not None:
                    if observed is None:
                        observed = self.game.observed(emits, everything)
                    s.bot.observe(observed)  # H2: a bot is told what a player there is told
            self._published(emits)
            return
        players = self.players
        for i, s in enumerate(self.seats):
            if s.peer is None and s.bot is None:
                continue
            seen = batch.seen_by(i, seating.team_of(i, players))
            if s.peer is not None and (seen or i == snapshot_for):
                s.peer.send(self._update(batch, i, seen, snapshot=i == snapshot_for or not s.synced))
            if s.bot is not None and seen:
                s.bot.observe(self.game.observed(emits, seen))  # H2: a bot is told what a player there is told
        self._published(emits)

    def _published(self, emits: list[Any]) -> None:
        """After a batch was told: the seating push if it changed, the timer woken if the batch brought the room's
        next deadline forward. Routine play (most batches) does neither."""
        if self.game.routine(emits):
            return
        if self.game.seating_changed(emits):
            self.broadcast_seating()
        # Wake the timer task only when the batch brought the room's next deadline forward: waking it for every
        # batch (a swap moves no deadline of the table's) cost a task switch per batch for nothing.
        wake = self._next_wake()
        if wake is not None and (self._armed is None or wake < self._armed):
            self.on_change()

    # --- the table's two doors, journalled --------------------------------------------------------

    def act(self, seat: int, action: Any, now: float) -> Any:
        """The table's ``act`` (its ``Outcome``), recorded in the journal before the caller tells anyone of it."""
        assert self.table is not None
        outcome = self.table.act(seat, action, now)
        recorder = self.recorder
        if recorder is not None and outcome.events:
            recorder.acted(seat, action, now, outcome)
        return outcome

    def advance(self, now: float) -> list[Any]:
        """The table's ``advance`` (the events due by ``now``), recorded as ``act`` is."""
        assert self.table is not None
        emits: list[Any] = list(self.table.advance(now))
        recorder = self.recorder
        if recorder is not None and emits:
            recorder.advanced(now, emits)
        return emits

    # --- time and bots -------------------------------------------------------------------------

    def next_wake(self) -> float | None:
        """When the room's timer task must call ``tick``: the engine's next deadline, a bot's next look,
        or the moment an empty room is given up. The timer task arms itself with this answer."""
        self._armed = self._next_wake()
        return self._armed

    def _next_wake(self) -> float | None:
        # The earliest of the wakes below, or None if there is none; asked after every batch, so it builds nothing.
        wake: float | None = None if self.idle_since is None else self.idle_since + self.abandon_limit()
        table = self.table
        if table is not None and not self.game.over(table):
            for s in self.seats:
                if s.bot is not None and s.thinking is None and (wake is None or s.bot_wake < wake):
                    wake = s.bot_wake
            deadline = table.next_deadline()
            if deadline is not None and (wake is None or deadline < wake):
                wake = deadline
        return wake

    def tick(self, now: float) -> None:
        """Let time pass: fire the engine's deadlines and let every bot whose time has come look and act. A slow
        bot's decision (``Game.slow_bot``) is handed to ``think`` when there is one, and played on its return
        (``bot_decided``); until then the seat's bot is not asked again."""
        if self.table is None:
            return
        emits = self.advance(now)
        for i, s in enumerate(self.seats):
            if s.bot is None or s.thinking is not None or s.bot_wake > now or self.game.over(self.table):
                continue
            view = self.game.view(self.table, i, now)  # H2: the seat's view, nothing more
            if self.think is not None and self.game.slow_bot(s.bot, view):
                s.thinking = BotJob(i, s.bot, view, now, self.table)
                s.bot_wake = math.inf
                self.think(s.thinking)
                continue
            emits.extend(self._play_bot(i, s.bot.decide(view, now), now))
        self.publish(emits, now)

    def _play_bot(self, seat: int, actions: list[Any], now: float) -> list[Any]:
        """Play a bot's actions in order, up to the first refusal; its next look comes after its thinking time."""
        assert self.table is not None
        emits: list[Any] = []
        for action in actions:
            outcome = self.act(seat, action, now)
            emits.extend(outcome.events)
            if not outcome.ok:
                break
        bot = self.seats[seat].bot
        assert bot is not None
        self.seats[seat].bot_wake = now + bot.think_time()
        return emits

    def bot_decided(self, job: BotJob, actions: list[Any], now: float) -> bool:
        """A slow bot's decision came back at ``now``: play it if it still fits, else drop it and ask the bot again
        at once. It no longer fits when the match moved on meanwhile (a move clock ran out, a rematch began), the
        seat holds another bot, or the match is over. Returns whether it was played."""
        s = self.seats[job.seat]
        if s.thinking is job:
            s.thinking = None
        table = self.table
        if table is None or table is not job.table or s.bot is not job.bot:
            self.on_change()  # the seat's bot (if any) may look again now
            return False
        emits = self.advance(now)
        fresh = not self.game.over(table) and self.game.decision_key(self.game.view(table, job.seat, now)) == self.game.decision_key(job.view)
        if fresh:
            emits.extend(self._play_bot(job.seat, actions, now))
        else:
            s.bot_wake = now
            log.debug("bot_decision_stale table=%d seat=%d", self.id, job.seat)
        self.publish(emits, now)
        self.on_change()
        return fresh

    # --- seats ---------------------------------------------------------------------------------

    def sit(self, seat: int, peer: Peer | None, name: str, bot: SeatBot | None = None) -> str | None:
        """Fill an empty seat; a human gets a fresh secret (R19), which is returned."""
        s = self.seats[seat]
        s.name, s.bot, s.peer, s.order = name, bot, peer, next(self._orders)
        s.synced = False
        secret = None if bot is not None else secrets.token_urlsafe(SECRET_BYTES)
        s.secret = None if secret is None else digest_secret(secret)
        if bot is None and self.host is None:
            self.host = seat
        return secret

    def free_seat(self, team: int | None = None) -> int | None:
        for i, s in enumerate(self.seats):
            if s.empty and (team is None or seating.team_of(i, self.players) == team):
                return i
        return None

    def seat_of_secret(self, secret: str) -> int | None:
        found = None
        for i, s in enumerate(self.seats):
            if s.secret is not None and secret_matches(s.secret, secret):
                found = i
        return found

    def lobby_host_leaves(self) -> None:
        humans = [(s.order, i) for i, s in enumerate(self.seats) if s.secret is not None and s.peer is not None]
        self.host = min(humans)[1] if humans else None

    def opening(self, seed: int | None = None) -> Opening:
        """What a match of this room starts from: its seats' bots, its host, the seating order (R18)."""
        return Opening(
            players=self.players,
            bots=frozenset(i for i, s in enumerate(self.seats) if s.bot is not None),
            host=self.host,
            order=tuple(i for _, i in sorted((s.order, i) for i, s in enumerate(self.seats))),
            seed=seed,
        )

    def start(self, now: float) -> None:
        """Every seat is filled: the match begins (the game's engine takes over). A journalled match's random source
        is seeded from the room's, and the seed recorded: the journal can replay it."""
        recorder = self.recorder
        opening = self.opening(None if recorder is None else recorder.seed(self.rng))
        self.table = table = self.game.new_table(opening, self.timing, self.rng)
        emits: list[Any] = list(table.start(now))
        if recorder is not None:
            recorder.started(opening, table, now, emits)
        for s in self.seats:
            s.synced = False  # a match's first update is a snapshot (a rematch's too: nothing of the last match carries over)
        for i, s in enumerate(self.seats):
            if s.bot is None and s.peer is None:
                emits.extend(self.act(i, a.Disconnect(), now).events)  # R19: the match starts without them
            if s.bot is not None:
                s.bot_wake = now + s.bot.think_time()
        self.broadcast_seating()
        self.publish(emits, now)  # every seat sees MatchStarted: everyone gets the first view

    def humans_connected(self) -> bool:
        return any(s.peer is not None for s in self.seats)

    def abandon_limit(self) -> float:
        """How long the room lives with nobody connected: shorter before the match, when there is no score to keep."""
        return self.unstarted_abandon_after if self.table is None else self.abandon_after

    def expired(self, now: float) -> bool:
        """Close the room? When no human seat is left at all, or nobody has been connected for ``ABANDON_AFTER``
        (``UNSTARTED_ABANDON_AFTER`` before the match), or the match is over and everyone has gone."""
        if self.humans_connected():
            return False
        if not any(s.secret is not None for s in self.seats):
            return True
        if self.table is not None and self.game.over(self.table):
            return True
        return self.idle_since is not None and now >= self.idle_since + self.abandon_limit()


class Lobby:
    """Every room of one server, and the requests that create, fill, start and play them."""

    def __init__(self, *, timing_profiles: dict[str, Timing] | None = None, seed: int | None = None) -> None:
        self.rooms: dict[int, Room] = {}
        self.profiles = dict(PROFILES if timing_profiles is None else timing_profiles)
        self.default_timing = STANDARD_PROFILE if STANDARD_PROFILE in self.profiles else next(iter(self.profiles))
        self._ids = count(1)
        # R3: the operating system's randomness, unless a seed was asked for (tests, replays).
        self._seed_source = random.Random(seed) if seed is not None else None
        self.watchers: set[Peer] = set()  # connections in the lobby, told when the list changes
        self.on_room_created: Callable[[Room], None] = lambda room: None
        # Limits, as attributes so that a server (or a test) can set its own before tables are made.
        self.max_tables = MAX_TABLES
        self.max_tables_per_address = MAX_TABLES_PER_ADDRESS
        self.abandon_after = ABANDON_AFTER
        self.unstarted_abandon_after = UNSTARTED_ABANDON_AFTER
        self.guesses_by_address = GuessLimiter(GUESSES_PER_ADDRESS, GUESS_DELAY, GUESS_DELAY_CAP)
        self.guesses_by_table = GuessLimiter(GUESSES_PER_TABLE, GUESS_DELAY, GUESS_DELAY_CAP_TABLE)
        self.journal: Journal | None = None  # set to journal every table (quatro_server.journal)
        #: The latest ``now`` a request brought: the lobby list's "idle for" counts to it.
        self.now: float | None = None
        #: When each connection last chatted (``CHAT_INTERVAL``).
        self._chatted: dict[Peer, float] = {}

    def _rng(self) -> random.Random:
        if self._seed_source is None:
            return random.SystemRandom()
        return random.Random(self._seed_source.getrandbits(64))

    def listing(self) -> tuple[m.TableSummary, ...]:
        """The tables to show in a lobby: the ones still seating players first, at most ``MAX_LISTED``."""
        rooms = sorted(self.rooms.values(), key=lambda room: (room.table is not None, room.id))
        return tuple(room.summary(self.now) for room in rooms[:MAX_LISTED])

    def announce(self) -> None:
        # One message for every watcher: the shell encodes it once, and a list still waiting for a watcher is
        # replaced by this one (a ``lobby`` push is state: the latest is all a watcher needs).
        message = to_wire(m.LobbyList(self.listing()))
        for peer in list(self.watchers):
            peer.send(message)

    # --- the journal ---------------------------------------------------------------------------

    def restore(self, journal: Journal, now: float) -> list[Room]:
        """Journal every table from now on in ``journal``, and put back the tables that were live when its last server
        stopped, as they were, on the clock's ``now``: seats, names, secrets, bots, host, password, and a match in
        progress where it stood, every countdown with the time it had left. A table that cannot be rebuilt is refused
        alone (``Journal.refuse``); the others are restored. New tables are numbered after every id the journal held."""
        rooms = []
        for saved in restore_tables(journal, games.journal_codec):
            try:
                room = self._restored_room(journal, saved, now)
            except ValueError as exc:
                journal.refuse(saved.id, str(exc))
                continue
            self.rooms[room.id] = room
            rooms.append(room)
            log.info("table_restored table=%d phase=%s", room.id, room.phase)
        self._ids = count(max([journal.last_id, *self.rooms]) + 1)
        self.journal = journal
        journal.flush()
        return rooms

    def _restored_room(self, journal: Journal, saved: RestoredTable, now: float) -> Room:
        game = games.DEFAULT_GAME if saved.game is None else games.GAMES[saved.game]
        for kept in saved.seats:
            if kept.bot is not None and kept.bot not in game.levels:  # never a class named by the file
                raise ValueError(f"seat {kept.seat} has an unknown bot level {kept.bot!r}")
        rng = self._rng()
        seats = [
            Seat(
                name=kept.name,
                bot=None if kept.bot is None else game.make_bot(kept.bot, random.Random(rng.getrandbits(64))),
                secret=kept.secret,
                order=kept.order,
            )
            for kept in saved.seats
        ]
        room = Room(
            id=saved.id, players=saved.players, timing_name=saved.timing_name, timing=saved.timing,
            password=saved.password, rng=rng, seats=seats, host=saved.host,
            abandon_after=self.abandon_after, unstarted_abandon_after=self.unstarted_abandon_after, game=game,
            last_active=now,  # the lobby list counts its quiet from the restart, not from the clock's zero
        )
        room.idle_since = now  # nobody is connected yet: the room closes if nobody comes back (ABANDON_AFTER)
        recorder = Recorder(journal, saved.id, game.journal, next_move=saved.next_move)
        if saved.table is not None:
            room.table = saved.table
            for emits in saved.replayed:  # the current round's: nobody is connected, so only the bots are told
                room.publish(list(emits), saved.table.now)  # what their seat saw (H2: nothing more)
            recorder.resumed(saved.table, now)
            for s in seats:
                if s.bot is not None:
                    s.bot_wake = now + s.bot.think_time()
        room.recorder = recorder
        return room

    def end_grace(self, rooms: list[Room], now: float) -> None:
        """A restart's grace is over: seats nobody came back to are disconnected (R19) and lose the host role (R18)."""
        for room in rooms:
            if self.rooms.get(room.id) is not room:
                continue
            if room.table is None:
                if room.host is not None and room.seats[room.host].peer is None:
                    room.lobby_host_leaves()
                    room.broadcast_seating()
                continue
            emits: list[Any] = []
            for i, s in enumerate(room.seats):
                if s.bot is None and s.peer is None:
                    emits.extend(room.act(i, a.Disconnect(), now).events)
            room.publish(emits, now)
        self.announce()

    # --- requests ------------------------------------------------------------------------------

    def handle(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        """Answer one request from ``peer``. Exactly one reply, always; the room's pushes go out on the side."""
        self.now = now
        if request.kind in games.ACTION_KINDS:
            reply = self._act(peer, request, now)
        else:
            handler: Callable[[Peer, m.Request, float], m.Reply] = getattr(self, f"_{request.kind}")
            reply = handler(peer, request, now)
        if peer.room is not None and request.kind != p.PING:
            peer.room.last_active = now
        return reply

    def _ping(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        return m.Ok(request.id)

    def _resync(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        """A snapshot of the seat's view, for a client that doubts its state (protocol 2). It comes before the ok."""
        room, seat = peer.room, peer.seat
        if room is None or seat is None:
            return m.refused(request.id, p.NOT_SEATED, "you are not at a table")
        if room.table is None:
            return m.refused(request.id, a.Reason.NOT_STARTED, "the match has not started")
        room.publish([], now, snapshot_for=seat)
        return m.Ok(request.id)

    def _list_tables(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        return m.Ok(request.id, m.Tables(self.listing()))

    def _create_table(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        f = request.body
        assert isinstance(f, m.CreateTable)
        if peer.room is not None:
            return m.refused(request.id, p.ALREADY_SEATED, "leave your table before creating another")
        game = games.GAMES.get(f.game or DEFAULT_GAME.name)
        if game is None:
            return m.refused(request.id, p.UNKNOWN_GAME, f"games here: {', '.join(games.GAMES)}")
        if f.players is None and game.players_required:  # a malformed request, as when players was required by all
            return m.Error(request.id, p.BAD_REQUEST, f"create_table: players: required for a {game.title} table")
        players = game.seats(f.players)
        if isinstance(players, str):
            return m.refused(request.id, p.BAD_REQUEST, players)
        timing_name = f.timing or self.default_timing
        if timing_name not in self.profiles:
            return m.refused(request.id, p.BAD_TIMING, f"timing profiles here: {', '.join(self.profiles)}")
        origin = getattr(peer, "origin", None)
        if origin is not None and sum(r.origin == origin for r in self.rooms.values()) >= self.max_tables_per_address:
            return m.refused(
                request.id, p.TOO_MANY_TABLES, f"your address already has {self.max_tables_per_address} open tables"
            )
        if len(self.rooms) >= self.max_tables:
            return m.refused(request.id, p.SERVER_FULL, "this server holds as many tables as it can")
        room = Room(
            id=next(self._ids),
            players=players,
            timing_name=timing_name,
            timing=self.profiles[timing_name],
            password=None if f.password is None else hash_password(f.password),
            rng=self._rng(),
            seats=[Seat() for _ in range(players)],
            origin=origin,
            abandon_after=self.abandon_after,
            unstarted_abandon_after=self.unstarted_abandon_after,
            game=game,
            last_active=now,  # its creator is active now: the list pushed as it is seated must not call it idle
        )
        if self.journal is not None:
            self.journal.add_table(
                room.id, game=game.name, players=room.players, timing_name=room.timing_name, timing=room.timing,
                password=room.password, host=room.host, scores=game.no_scores(room.players),
            )
            room.recorder = Recorder(self.journal, room.id, game.journal)
        self.rooms[room.id] = room
        self.on_room_created(room)
        secret = self._seat(peer, room, 0)
        log.info("table_created table=%d game=%s players=%d timing=%s", room.id, game.name, room.players, timing_name)
        return m.Ok(request.id, m.Seated(room.id, 0, secret))

    def _join(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        f = request.body
        assert isinstance(f, m.Join)
        if peer.room is not None:
            return m.refused(request.id, p.ALREADY_SEATED, "leave your table before joining another")
        room = self.rooms.get(f.table)
        if room is None:
            return m.refused(request.id, p.NO_SUCH_TABLE, f"no table {f.table}")
        # A started table says so before any password is checked: nothing to guess at, nothing to learn.
        if room.table is not None:
            return m.refused(request.id, p.MATCH_STARTED, "the match has started; only its players can come back")
        if room.password is not None:
            refusal = self._check_password(peer, room, f.password, now, request.id)
            if refusal is not None:
                return refusal
        seat = f.seat
        if seat is not None:
            if not 0 <= seat < room.players:
                return m.refused(request.id, p.BAD_REQUEST, f"seats are 0 to {room.players - 1}")
            if not room.seats[seat].empty:
                return m.refused(request.id, p.SEAT_TAKEN, f"seat {seat} is taken")
        else:
            team = f.team
            if team is not None and not 0 <= team < seating.team_count(room.players):
                return m.refused(request.id, p.BAD_REQUEST, f"teams are 0 to {seating.team_count(room.players) - 1}")
            seat = room.free_seat(team)
            if seat is None:
                return m.refused(request.id, p.TABLE_FULL, "no free seat" + ("" if team is None else " in that team"))
        secret = self._seat(peer, room, seat)
        return m.Ok(request.id, m.Seated(room.id, seat, secret))

    def _check_password(
        self, peer: Peer, room: Room, password: str | None, now: float, request_id: int
    ) -> m.Reply | None:
        """None when the password is right; otherwise the refusal: ``rate_limited`` while this address or this
        table must wait after too many misses (the guess is not even looked at), else ``bad_password``."""
        assert room.password is not None
        origin = getattr(peer, "origin", None)
        wait = max(self.guesses_by_address.wait(origin, now), self.guesses_by_table.wait(room.id, now))
        if wait > 0:
            return m.refused(request_id, p.RATE_LIMITED, "too many wrong passwords: wait before trying again", wait)
        if password_matches(room.password, password or ""):
            self.guesses_by_address.forget(origin)
            return None
        self.guesses_by_address.missed(origin, now)
        self.guesses_by_table.missed(room.id, now)
        log.debug("bad_password table=%d", room.id)
        return m.refused(request_id, p.BAD_PASSWORD, "wrong or missing password")

    def _seat(self, peer: Peer, room: Room, seat: int) -> str:
        secret = room.sit(seat, peer, peer.name)
        room.idle_since = None
        peer.room, peer.seat = room, seat
        self.watchers.discard(peer)
        log.debug("seat_taken table=%d seat=%d", room.id, seat)
        room.broadcast_seating()
        self.announce()
        assert secret is not None
        return secret

    def _rejoin(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        f = request.body
        assert isinstance(f, m.Rejoin)
        if peer.room is not None:
            return m.refused(request.id, p.ALREADY_SEATED, "leave your table first")
        room = self.rooms.get(f.table)
        seat = None if room is None else room.seat_of_secret(f.secret)
        if room is None or seat is None:
            # One answer for a wrong table and a wrong secret: nothing to learn by probing.
            return m.refused(request.id, p.BAD_SECRET, "no seat with that secret at that table")
        s = room.seats[seat]
        if s.peer is not None and s.peer is not peer:
            if not f.takeover:
                # The seat is in play from another connection: replace it only when the rejoiner says so,
                # so that a second terminal never throws the first out unasked.
                return m.refused(request.id, p.SEAT_IN_USE, "this seat is in play from another connection")
            old = s.peer
            old.room = old.seat = None
            old.send(to_wire(m.Bye(m.BYE_REPLACED, "this seat was taken over by a new connection")))
            old.close("replaced")
        s.peer, s.name, s.synced = peer, peer.name, False
        room.idle_since = None
        peer.room, peer.seat = room, seat
        self.watchers.discard(peer)
        log.debug("seat_rejoined table=%d seat=%d", room.id, seat)
        if room.table is not None:
            outcome = room.act(seat, a.Connect(), now)
            room.publish(outcome.events, now, snapshot_for=seat)  # also tells the seating (seat_connected)
            if not outcome.events:
                room.broadcast_seating()  # a replaced connection: the seat never looked disconnected
        else:
            if room.host is None:
                room.host = seat
            room.broadcast_seating()
        return m.Ok(request.id, m.Rejoined(room.id, seat))

    def detach(self, peer: Peer, now: float, leaving: bool) -> None:
        """``peer`` leaves its seat (``leaving``) or its connection dropped. In a match, the seat stays (R19)."""
        self.watchers.discard(peer)
        self._chatted.pop(peer, None)
        room, seat = peer.room, peer.seat
        if room is None or seat is None:
            return
        peer.room = peer.seat = None
        s = room.seats[seat]
        if s.peer is not peer:
            return
        s.peer, s.synced = None, False
        if room.table is None and leaving:
            room.seats[seat] = Seat()  # before the match, leaving frees the seat (and voids its secret)
        if room.table is None:
            if room.host == seat:
                room.lobby_host_leaves()
            room.broadcast_seating()
        else:
            room.publish(room.act(seat, a.Disconnect(), now).events, now)
        log.debug("seat_left table=%d seat=%d leaving=%s", room.id, seat, leaving)
        if not room.humans_connected():
            room.idle_since = now
            room.on_change()  # the timer task learns the room's new deadline
        if room.expired(now):
            self.close(room)  # tells the lobby
        else:
            self.announce()

    def close(self, room: Room) -> None:
        """Remove a room: its timer task sees it gone and stops."""
        if self.rooms.pop(room.id, None) is not None:
            log.info("table_closed table=%d", room.id)
            if room.recorder is not None:
                room.recorder.closed()
            room.on_change()
            self.announce()

    def _leave(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        if peer.room is None:
            return m.refused(request.id, p.NOT_SEATED, "you are not at a table")
        self.detach(peer, now, leaving=True)
        self.watchers.add(peer)
        return m.Ok(request.id)

    def _rename(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        assert isinstance(request.body, m.Rename)
        peer.name = request.body.name
        if peer.room is not None and peer.seat is not None:
            peer.room.seats[peer.seat].name = peer.name
            peer.room.broadcast_seating()
        return m.Ok(request.id, m.Renamed(peer.name))

    def _host_room(self, peer: Peer, request: m.Request) -> Room | m.Reply:
        room = peer.room
        if room is None:
            return m.refused(request.id, p.NOT_SEATED, "you are not at a table")
        if room.table is not None:
            return m.refused(request.id, p.MATCH_STARTED, "the match has started")
        if room.host != peer.seat:
            return m.refused(request.id, p.NOT_HOST, "only the host can do that")
        return room

    def _add_bot(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        f = request.body
        assert isinstance(f, m.AddBot)
        room = self._host_room(peer, request)
        if not isinstance(room, Room):
            return room
        game = room.game
        level = f.level or game.default_level
        if level not in game.levels:
            return m.refused(request.id, p.BAD_LEVEL, f"{game.title} bot levels: {', '.join(game.levels)}")
        seat = f.seat
        if seat is None:
            seat = room.free_seat()
            if seat is None:
                return m.refused(request.id, p.TABLE_FULL, "no free seat")
        elif not 0 <= seat < room.players:
            return m.refused(request.id, p.BAD_REQUEST, f"seats are 0 to {room.players - 1}")
        elif not room.seats[seat].empty:
            return m.refused(request.id, p.SEAT_TAKEN, f"seat {seat} is taken")
        room.sit(seat, None, f"{level}-bot-{seat}", bot=game.make_bot(level, random.Random(room.rng.getrandbits(64))))
        room.broadcast_seating()
        self.announce()
        return m.Ok(request.id, m.BotAdded(seat))

    def _remove_bot(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        assert isinstance(request.body, m.RemoveBot)
        room = self._host_room(peer, request)
        if not isinstance(room, Room):
            return room
        seat = request.body.seat
        if not 0 <= seat < room.players or room.seats[seat].bot is None:
            return m.refused(request.id, p.NOT_A_BOT, f"seat {seat} holds no bot")
        room.seats[seat] = Seat()
        room.broadcast_seating()
        self.announce()
        return m.Ok(request.id)

    def _start(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        room = self._host_room(peer, request)
        if not isinstance(room, Room):
            return room
        if any(s.empty for s in room.seats):
            return m.refused(request.id, p.SEATS_EMPTY, "every seat needs a player or a bot")
        room.start(now)
        log.info("match_started table=%d", room.id)
        self.announce()
        return m.Ok(request.id)

    def _move(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        """Before the match, to another free seat of the same table: friends choose to sit as partners (R1)."""
        f = request.body
        assert isinstance(f, m.Move)
        room, old = peer.room, peer.seat
        if room is None or old is None:
            return m.refused(request.id, p.NOT_SEATED, "you are not at a table")
        if room.table is not None:
            return m.refused(request.id, p.MATCH_STARTED, "the match has started: seats are fixed")
        if not 0 <= f.seat < room.players:
            return m.refused(request.id, p.BAD_REQUEST, f"seats are 0 to {room.players - 1}")
        if f.seat != old:
            if not room.seats[f.seat].empty:
                return m.refused(request.id, p.SEAT_TAKEN, f"seat {f.seat} is taken")
            room.seats[f.seat], room.seats[old] = room.seats[old], Seat()
            if room.host == old:
                room.host = f.seat
            peer.seat = f.seat
            room.broadcast_seating()
            self.announce()
        return m.Ok(request.id, m.Moved(f.seat))

    def _chat(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        """A line to the lobby, or to one's table in its waiting room, at a break or after the match; never
        while a team signs or plays, where it would carry signals (R11: the channel is the only one)."""
        f = request.body
        assert isinstance(f, m.Chat)
        room = peer.room
        if room is not None and room.table is not None and not room.game.chat_open(room.table):
            return m.refused(request.id, p.CHAT_CLOSED, "no chat during a round: it would carry signals")
        last = self._chatted.get(peer)
        if last is not None and now < last + p.CHAT_INTERVAL:
            return m.refused(request.id, p.RATE_LIMITED, "one chat line a second", last + p.CHAT_INTERVAL - now)
        self._chatted[peer] = now
        if room is None or peer.seat is None:
            line, listeners = m.ChatLine(None, None, peer.name, f.text), list(self.watchers)
        else:
            name = room.seats[peer.seat].name or peer.name
            line = m.ChatLine(room.id, peer.seat, name, f.text)
            listeners = [s.peer for s in room.seats if s.peer is not None]
        message = to_wire(line)
        for listener in listeners:
            listener.send(message)
        return m.Ok(request.id)

    def _rematch(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        """The match is over: the host plays it again with the same seats (bots, and players who are gone
        start disconnected, as at any start)."""
        room = peer.room
        if room is None or peer.seat is None:
            return m.refused(request.id, p.NOT_SEATED, "you are not at a table")
        if room.table is None or not room.game.over(room.table):
            return m.refused(request.id, p.NOT_OVER, "the match is not over")
        if room.game.host(room) != peer.seat:
            return m.refused(request.id, p.NOT_HOST, "only the host can do that")
        room.start(now)
        log.info("match_restarted table=%d", room.id)
        self.announce()
        return m.Ok(request.id)

    def _act(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        room, seat = peer.room, peer.seat
        if room is None or seat is None:
            return m.refused(request.id, p.NOT_SEATED, "take a seat first")
        if request.invalid is not None:  # the fields were judged at the edge; the seat comes first (protocol §7)
            code = getattr(request.invalid, "code", p.BAD_REQUEST)
            return m.Error(request.id, code, str(request.invalid))
        action = request.body
        game = games.game_of(action)
        assert game is not None
        if game is not room.game:
            # Another game's action: refused by the table's game, in its words (``unknown_action`` in both games).
            return m.refused(
                request.id,
                a.Reason.UNKNOWN_ACTION,
                f"{request.kind} is a {game.title} action; this table plays {room.game.title}",
            )
        if room.table is None:
            return m.refused(request.id, a.Reason.NOT_STARTED, "the match has not started")
        outcome = room.act(seat, action, now)
        room.publish(outcome.events, now)
        if outcome.refusal is not None:
            log.debug("refused table=%d seat=%d action=%s reason=%s", room.id, seat, request.kind, outcome.refusal.reason)
            return room.game.refused(request.id, action, outcome.refusal)
        return m.Ok(request.id)

