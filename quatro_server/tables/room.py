"""One table of the lobby (a room): its seats, names, secrets and bots, and what each of its connections is sent.

This layer is synchronous and owns no clock and no socket: the network shell (``quatro_server.server``) gives it
``now`` and ``Peer`` objects to send to. What a seat receives about the game is built from the game's views and
events (``Game.batch``, ``Game.view``), filtered for that seat (H3). Its watchers (protocol section 18) are one
audience, seat ``NO_SEAT`` of the game's batch: one frame a batch, the same bytes for every watcher.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import random
import secrets
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import count
from typing import Protocol

import msgpack

from quatro_shared import messages as m
from quatro_shared.framing import Outgoing, encode
from quatro_shared.tables import NO_SEAT, Disconnect, TablePhase
from quatro_shared.wire import to_wire

from quatro_server.game import AnyGame, UpdateBatch
from quatro_server.games import DEFAULT_GAME
from quatro_server.journal import Opening, Recorder
from quatro_server.records.match import MatchRecord
from quatro_server.rules import Outcome, Refusal, RulesTable, SeatBot
from quatro_server.tables.credentials import digest_secret, secret_matches
from quatro_server.timing import Timing

log = logging.getLogger("quatro.lobby")
_packer = msgpack.Packer(use_bin_type=True, autoreset=True)


def _packb(value: object) -> bytes:
    packed: bytes = _packer.pack(value)
    return packed


#: Bytes of randomness in a seat secret (R19): 128 bits, unguessable.
SECRET_BYTES = 16
#: Seconds a room lives on with nobody connected: long enough to come back from a dropped link (R19),
#: short enough that abandoned tables (and their bots) do not pile up.
ABANDON_AFTER = 600.0
#: Seconds a table whose match never started lives on with nobody connected: there is no score to keep, and
#: a table left behind by a dropped (or hostile) creator would otherwise hold a slot of ``limits.MAX_TABLES``.
UNSTARTED_ABANDON_AFTER = 90.0
#: Seconds between two ``table`` pushes told for a change of the watchers alone: a crowd arriving at once costs the
#: table one push a second, not one per watcher to every seat and watcher.
WATCH_COUNT_INTERVAL = 1.0


class Peer(Protocol):
    """A connection as the lobby sees it. ``send`` never blocks; a peer that cannot keep up is dropped by its owner."""

    name: str
    room: Room | None
    seat: int | None
    #: Its remote address, without the port: tables and password guesses are counted per origin. None: a caller the
    #: server trusts (in this process, or a trusted address), unlimited.
    origin: str | None
    #: Who the connection's player is across sessions (a key's digest, ``quatro_server.records.identity``); None:
    #: anonymous. Said in ``hello``.
    person: str | None

    def send(self, message: Outgoing | bytes) -> None: ...

    def close(self, reason: str) -> None: ...


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
    #: Who plays the seat across sessions (``quatro_server.records.identity``: a key's digest), None when anonymous.
    person: str | None = None

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
    view: object
    now: float
    #: The match it was asked in: a rematch is a new table, and an answer for the old one is stale.
    table: RulesTable

    def decide(self) -> list[object]:
        return list(self.bot.decide(self.view, self.now))


@dataclass
class Room:
    """One table: its seats before the match, then the engine's table during it. ``game`` says which game it plays
    (``quatro_server.games``): the room asks it for the engine, the views, the update frames and the bots."""

    id: int
    players: int
    timing_name: str
    timing: Timing
    password: str | None  # its salted hash (quatro_server.tables.credentials), never the password
    rng: random.Random
    seats: list[Seat]
    host: int | None = None
    table: RulesTable | None = None
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
    #: When the room was made (or restored after a restart), on the server's clock: its age for the operator.
    created: float = 0.0
    #: Where the room's seats and matches are journalled (None: in memory only). The room tells it every input it
    #: gives the table, with the events that came of it, before it tells anyone (``act``, ``advance``, ``start``).
    recorder: Recorder | None = None
    game: AnyGame = DEFAULT_GAME
    #: Where a slow bot's decision goes (``Game.slow_bot``): the network shell runs it in a worker thread and
    #: calls ``bot_decided`` when it is done. None: every bot decides at once, inline (the simulator, tests that
    #: drive a lobby directly, deterministic).
    think: Callable[[BotJob], None] | None = None
    #: The connections watching the table from no seat (in the order they came), and whether the host lets more
    #: watch. Every watcher is sent the same frames: numbered by ``watch_seq``, counted for the whole audience.
    watchers: dict[Peer, None] = field(default_factory=dict)
    watch_open: bool = True
    watch_seq: int = 0
    #: Every watcher has had a snapshot of the current match (a new match's first watchers' frame is one).
    watch_synced: bool = False
    #: When the watchers' count was last told (the ``table`` push), and when it is due to be told again (None: told).
    watch_told_at: float = -math.inf
    watch_count_due: float | None = None

    #: What the room did not tell yet, in order (each batch and who asked for a snapshot), while its recorder is
    #: ``held``: a point the disk has not taken yet, and everything after it (R20).
    _held: list[tuple[list[object], int | None]] = field(default_factory=list)

    #: Whether its matches count for the players' records and ratings (``create_table``'s ``rated``; False: friendly).
    rated: bool = True
    #: Told once when a match of the room ends (the lobby records it); the match's record is ``match_record()``.
    on_match_over: Callable[[Room], None] = lambda room: None
    #: Told whenever something the room's line of the lobby list shows may have changed (``listing_changed``): the
    #: lobby then pushes its list again, if the line did change.
    on_listing: Callable[[Room], None] = lambda room: None
    #: The room's line of the lobby list as last built (``listed``), its wire form, and its msgpack bytes once asked
    #: for; ``_listed_dirty``: it must be built again (something it shows changed since).
    _listed: m.TableSummary | None = field(default=None, repr=False, compare=False)
    _listed_wire: dict[str, object] | None = field(default=None, repr=False, compare=False)
    _listed_packed: bytes | None = field(default=None, repr=False, compare=False)
    _listed_dirty: bool = field(default=True, repr=False, compare=False)

    def __post_init__(self) -> None:
        # When each seat was taken, counted on from the seats the room is made with (a restored room's).
        self._orders = count(max((s.order for s in self.seats), default=0) + 1)
        #: The current match's events its record is counted from (``Game.record_kinds``), and whether its end was told.
        self.match_events: list[object] = []
        self.over_told = self.table is not None and self.game.over(self.table)
        #: The current match's latest events, hidden ones too (``Game.recent_kept``), for a rejoiner's ``recent`` push.
        self.history: deque[object] | None = deque(maxlen=self.game.recent_kept) if self.game.recent_kept else None

    # --- what the room tells people ------------------------------------------------------------

    @property
    def phase(self) -> TablePhase:
        """The table's phase in the lobby's words, as its game says (``Game.lobby_phase``)."""
        return TablePhase.LOBBY if self.table is None else self.game.lobby_phase(self.table)

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
            scores=self._scores_told() if self.table else self.game.no_scores(self.players),
            names=tuple(s.name or "" for s in self.seats),
            bot_seats=tuple(i for i, s in enumerate(self.seats) if s.bot is not None),
            idle_s=0 if now is None else max(0, int(now - self.last_active)),
            watchers=len(self.watchers),
            watching=self.watch_open,
            rated=self.rated,
        )

    def listing_changed(self) -> None:
        """Something the room's line of the lobby list shows may have changed (its seats or names, its phase or scores,
        its watchers): the line is built again when next listed, and the lobby is told (``on_listing``)."""
        self._listed_dirty = True
        self.on_listing(self)

    def listed(self, now: float | None) -> tuple[m.TableSummary, bool]:
        """The room's line of the lobby list at ``now``, and whether it shows more than its idle count changed since
        it was last built. Built again only after ``listing_changed``; otherwise the line kept, its idle count
        brought to ``now`` (whole seconds: it changes once a second at most)."""
        idle = 0 if now is None else int(now - self.last_active)
        if idle < 0:
            idle = 0
        cached = self._listed
        if cached is not None and not self._listed_dirty:
            if cached.idle_s == idle:
                return cached, False
            summary, changed = dataclasses.replace(cached, idle_s=idle), False
        else:
            summary = self.summary(now)
            changed = cached is None or dataclasses.replace(cached, idle_s=idle) != summary
            self._listed_dirty = False
        self._listed, self._listed_wire, self._listed_packed = summary, None, None
        return summary, changed

    def listed_wire(self, summary: m.TableSummary) -> dict[str, object]:
        """``to_wire(summary)``, kept while ``summary`` is the room's line as last built (``listed``)."""
        if summary is not self._listed:
            return to_wire(summary)
        wire = self._listed_wire
        if wire is None:
            wire = self._listed_wire = to_wire(summary)
        return wire

    def listed_packed(self, summary: m.TableSummary) -> bytes:
        """The msgpack bytes of ``listed_wire(summary)``, kept as it is."""
        if summary is not self._listed:
            return _packb(to_wire(summary))
        packed = self._listed_packed
        if packed is None:
            packed = self._listed_packed = _packb(self.listed_wire(summary))
        return packed

    def _scores_told(self) -> tuple[int, ...]:
        """The match's scores as its players were told them: a point the journal has not taken yet is not shown."""
        assert self.table is not None
        recorder = self.recorder
        if recorder is not None and recorder.held is not None:
            return recorder.told
        return tuple(self.table.scores)

    def host_now(self) -> int | None:
        """Who hosts now: the room's host while seats fill, the match's (its game's, R18) once it started."""
        return self.host if self.table is None else self.game.host(self)

    def seating(self) -> m.Seating:
        """The ``table`` message: who sits where, who hosts, the durations in force."""
        host = self.host_now()
        return m.Seating(
            table=self.id,
            players=self.players,
            phase=self.phase,
            host=host,
            timing=self.timing.values(),
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
            watchers=len(self.watchers),
            watching=self.watch_open,
        )

    def broadcast_seating(self) -> None:
        if self.recorder is not None:  # every change of seats, names or host passes here
            self.recorder.seating(
                self.host_now(),
                [(s.name, None if s.bot is None else s.bot.level, s.secret, s.order) for s in self.seats],
            )
        self.tell_seating()

    def tell_seating(self) -> None:
        """Send the ``table`` push to every seat and watcher (a change of the watchers alone is not journalled)."""
        self.listing_changed()  # the seats, names, phase or watchers the ``table`` push tells, the lobby list shows
        message = encode(to_wire(self.seating()))  # encoded once for the whole table and its watchers
        for s in self.seats:
            if s.peer is not None:
                s.peer.send(message)
        for watcher in self.watchers:
            watcher.send(message)

    # --- watchers --------------------------------------------------------------------------------

    def watch(self, peer: Peer, now: float) -> None:
        """``peer`` watches the table from now on: it is sent the ``table`` push, then, once the match has begun, a
        snapshot of the public table; the others are told the new count (``watchers_changed``)."""
        alone = not self.watchers
        self.watchers[peer] = None
        self.listing_changed()
        peer.send(encode(to_wire(self.seating())))
        self.watchers_changed(now)
        if self.table is not None:
            self.watch_snapshot(peer, now)
            self.watch_synced = self.watch_synced or alone

    def watch_snapshot(self, peer: Peer, now: float) -> None:
        """A snapshot of the public table for one watcher (watching, or asking to resync), numbered as the audience's
        last frame: the audience's next frame follows it."""
        if self.table is not None:
            peer.send(self.game.batch(self.id, self.table, [], now).update(NO_SEAT, self.watch_seq, (), True))

    def watchers_changed(self, now: float) -> None:
        """The count of watchers changed: the ``table`` push tells it now, or, if it was told less than
        ``WATCH_COUNT_INTERVAL`` ago, when the interval is over (the timer's ``tick``), once for every change since."""
        if self.watch_count_due is not None:
            return
        if now >= self.watch_told_at + WATCH_COUNT_INTERVAL:
            self.watch_told_at = now
            self.tell_seating()
            return
        self.watch_count_due = self.watch_told_at + WATCH_COUNT_INTERVAL
        self.on_change()

    def _tell_watch_count(self, now: float) -> None:
        due = self.watch_count_due
        if due is not None and due <= now:
            self.watch_count_due = None
            self.watch_told_at = now
            self.tell_seating()

    def unwatch(self, peer: Peer) -> bool:
        """``peer`` watches no more; whether it was watching."""
        if peer not in self.watchers:
            return False
        del self.watchers[peer]
        self.listing_changed()
        return True

    def _tell_watchers(self, batch: UpdateBatch) -> None:
        """The batch's public events, one frame for every watcher (a snapshot while a watcher has had none of this
        match). A batch with no public event is not even hinted at (H3)."""
        if not self.watchers:
            return
        seen = batch.seen_by(NO_SEAT, NO_SEAT)
        if not seen:
            return
        self.watch_seq += 1
        frame = batch.update(NO_SEAT, self.watch_seq, seen, not self.watch_synced)
        self.watch_synced = True
        for peer in self.watchers:
            peer.send(frame)

    def send_recent(self, seat: int) -> None:
        """To a rejoiner, before its snapshot: the latest events of the match it may see (protocol 7, ``recent``),
        for its feed; those of its time away too. Nothing for a game that keeps none, or a match with none yet."""
        peer = self.seats[seat].peer
        if self.history is None or peer is None:
            return
        events = self.game.recent(self.history, seat, self.game.team_of(seat, self.players))
        if events:
            peer.send(encode(to_wire(m.Recent(self.id, self.game.name, events))))

    def _update(self, batch: UpdateBatch, seat: int, seen: tuple[int, ...], snapshot: bool) -> bytes:
        """The frame of one seat's update in ``batch``, numbered by the seat's ``seq``."""
        s = self.seats[seat]
        s.seq += 1
        if snapshot:
            s.synced = True
        return batch.update(seat, s.seq, seen, snapshot)

    def publish(self, emits: list[object], now: float, snapshot_for: int | None = None) -> None:
        """Send one batch of engine events to the seats allowed to see them, each filtered for that seat (H1, H3).

        A seat that sees none of the batch is sent nothing: even an empty update would tell it *when* a
        private thing happened (another team's sign, an opponent's emoji change). ``snapshot_for`` gets
        its update whatever it sees, marked as a snapshot (joining, rejoining, asking to resync), as does a
        seat whose connection has had no snapshot yet; the others get what changed (protocol 2), the bytes
        of what several seats see built once. The frames are the game's (``Game.batch``): a game may send the
        seat's whole view in every update.
        """
        if self.table is None or not (emits or snapshot_for is not None):
            return
        recorder = self.recorder
        if recorder is not None and recorder.held is not None:
            self._held.append((emits, snapshot_for))  # R20: told once the journal holds the point (``tick``)
            return
        batch = self.game.batch(self.id, self.table, emits, now)
        delta = batch.public_deltas() if snapshot_for is None else None
        if delta is not None:
            # Every event public (a swap, a pulse): every seat sees all of them; a synced seat's frame is the shared
            # bytes with its seq and cooldowns, a seat without a snapshot yet gets one.
            everything = batch.seen_by(0, 0)  # the same for every seat
            observed: list[object] | None = None  # what a bot is told: the same for every seat, built for the first bot
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
            self._tell_watchers(batch)
            self._published(emits)
            return
        players = self.players
        for i, s in enumerate(self.seats):
            if s.peer is None and s.bot is None:
                continue
            seen = batch.seen_by(i, self.game.team_of(i, players))
            if s.peer is not None and (seen or i == snapshot_for):
                s.peer.send(self._update(batch, i, seen, snapshot=i == snapshot_for or not s.synced))
            if s.bot is not None and seen:
                s.bot.observe(self.game.observed(emits, seen))  # H2: a bot is told what a player there is told
        self._tell_watchers(batch)
        self._published(emits)

    def _published(self, emits: list[object]) -> None:
        """After a batch was told: the seating push if it changed, the timer woken if the batch brought the room's
        next deadline forward. Routine play (most batches) does neither."""
        if self.history is not None:
            self.history.extend(emits)
        if self.game.routine(emits):
            return
        self.listing_changed()  # the phase or the scores may have moved (routine play moves neither)
        kinds = self.game.record_kinds
        if kinds:
            events = self.game.observed(emits, tuple(range(len(emits))))
            self.match_events.extend(event for event in events if getattr(event, "kind", None) in kinds)
        table = self.table
        if not self.over_told and table is not None and self.game.over(table):
            self.over_told = True
            self.on_match_over(self)
        if self.game.seating_changed(emits):
            self.broadcast_seating()
        # Wake the timer task only when the batch brought the room's next deadline forward: waking it for every
        # batch (a swap moves no deadline of the table's) cost a task switch per batch for nothing.
        wake = self._next_wake()
        if wake is not None and (self._armed is None or wake < self._armed):
            self.on_change()

    # --- the table's two doors, journalled --------------------------------------------------------

    def act(self, seat: int, action: object, now: float) -> Outcome[object, Refusal]:
        """The table's ``act`` (its ``Outcome``), recorded in the journal before the caller tells anyone of it."""
        assert self.table is not None
        recorder = self.recorder
        if recorder is not None and recorder.held is not None:
            recorder.stand_still(now)  # a point waits for the disk: no time runs on the table meanwhile (R20)
        outcome = self.table.act(seat, action, now)
        if recorder is not None and outcome.events:
            recorder.acted(seat, action, now, outcome)
        return outcome

    def advance(self, now: float) -> list[object]:
        """The table's ``advance`` (the events due by ``now``), recorded as ``act`` is."""
        assert self.table is not None
        recorder = self.recorder
        if recorder is not None and recorder.held is not None:
            recorder.stand_still(now)
            return []
        emits: list[object] = list(self.table.advance(now))
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
        recorder = self.recorder
        if recorder is not None and recorder.held is not None:
            return recorder.look_at
        wake: float | None = None if self.idle_since is None else self.idle_since + self.abandon_limit()
        due = self.watch_count_due
        if due is not None and (wake is None or due < wake):
            wake = due
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
        (``bot_decided``); until then the seat's bot is not asked again. A count of watchers due is told."""
        self._tell_watch_count(now)
        if self.table is None:
            return
        recorder = self.recorder
        if recorder is not None and recorder.held is not None:
            if not recorder.released(now):
                return  # its point still waits for the disk: nothing more is told, no bot plays
            held, self._held = self._held, []
            for emits, snapshot_for in held:
                self.publish(emits, now, snapshot_for)
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

    def _play_bot(self, seat: int, actions: Sequence[object], now: float) -> list[object]:
        """Play a bot's actions in order, up to the first refusal; its next look comes after its thinking time."""
        assert self.table is not None
        emits: list[object] = []
        for action in actions:
            outcome = self.act(seat, action, now)
            emits.extend(outcome.events)
            if not outcome.ok:
                break
        bot = self.seats[seat].bot
        assert bot is not None
        self.seats[seat].bot_wake = now + bot.think_time()
        return emits

    def bot_decided(self, job: BotJob, actions: list[object], now: float) -> bool:
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
        fresh = not self.game.over(table) and self.game.decision_key(
            self.game.view(table, job.seat, now)
        ) == self.game.decision_key(job.view)
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
        s.person = None if peer is None else peer.person
        s.synced = False
        secret = None if bot is not None else secrets.token_urlsafe(SECRET_BYTES)
        s.secret = None if secret is None else digest_secret(secret)
        if bot is None and self.host is None:
            self.host = seat
        return secret

    def free_seat(self, team: int | None = None) -> int | None:
        for i, s in enumerate(self.seats):
            if s.empty and (team is None or self.game.team_of(i, self.players) == team):
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
        self.match_events, self.over_told = [], False
        if self.history is not None:
            self.history.clear()  # a rematch's feed starts afresh, as the match's first update does
        emits: list[object] = list(table.start(now))
        if recorder is not None:
            recorder.started(opening, table, now, emits)
        for s in self.seats:
            s.synced = (
                False  # a match's first update is a snapshot (a rematch's too: nothing of the last match carries over)
            )
        self.watch_synced = False  # the watchers' too
        for i, s in enumerate(self.seats):
            if s.bot is None and s.peer is None:
                emits.extend(self.act(i, Disconnect(), now).events)  # R19: the match starts without them
            if s.bot is not None:
                s.bot_wake = now + s.bot.think_time()
        self.broadcast_seating()
        self.publish(emits, now)  # every seat sees MatchStarted: everyone gets the first view

    def match_record(self) -> MatchRecord:
        """The record of the room's match (once it is over): its game's reading of the events kept."""
        assert self.table is not None
        return self.game.record(self.table, self.match_events)

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
