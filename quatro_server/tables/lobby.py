"""The lobby: every room of one server, and the requests that create, fill, start and play them.

This layer is synchronous and owns no clock and no socket: the network shell (``quatro_server.server``) hands it
requests with ``now`` and gives it ``Peer`` objects to send to. What a connection may ask in its state is one table
(``quatro_server.tables.accepts``), read once per request before the request's handler runs.
"""

from __future__ import annotations

import logging
import operator
import random
import secrets
import time
from collections.abc import Callable
from itertools import count

import msgpack

from quatro_shared import messages as m
from quatro_shared import proofs
from quatro_shared import protocol as p
from quatro_shared.addresses import format_address
from quatro_shared.framing import frame
from quatro_shared.profiles import STANDARD_PROFILE
from quatro_shared.tables import Connect, Disconnect, TablePhase
from quatro_shared.wire import to_wire

from quatro_server import games
from quatro_server.directory import DirectoryError, TableDirectory, parse_address
from quatro_server.games import DEFAULT_GAME
from quatro_server.journal import Journal, Recorder, RestoredTable
from quatro_server.journal import restore as restore_tables
from quatro_server.records import identity
from quatro_server.records.store import Player, Records
from quatro_server.replay.archive import Archive
from quatro_server.tables import accepts
from quatro_server.tables.credentials import (
    digest_secret,
    hash_password,
    password_matches,
    password_proof_key,
    secret_proof_key,
)
from quatro_server.tables.limits import (
    GUESS_DELAY,
    GUESS_DELAY_CAP,
    GUESS_DELAY_CAP_TABLE,
    GUESSES_PER_ADDRESS,
    GUESSES_PER_TABLE,
    MAX_TABLES,
    MAX_TABLES_PER_ADDRESS,
    GuessLimiter,
)
from quatro_server.tables.room import ABANDON_AFTER, SECRET_BYTES, UNSTARTED_ABANDON_AFTER, Peer, Room, Seat
from quatro_server.timing import PROFILES, Timing

log = logging.getLogger("quatro.lobby")

#: Tables listed in one lobby message: open tables first. Stays under the codec's array limit.
MAX_LISTED = 200
_packb = msgpack.Packer(use_bin_type=True, autoreset=True).pack
_array_header = msgpack.Packer(autoreset=True).pack_array_header
#: The head of a ``list_tables`` reply's map, without and with ``draining``: its size and ``kind``.
_MAP_OK_TABLES = {False: b"\x83" + _packb("kind"), True: b"\x84" + _packb("kind")}


def _not_free(room: Room, seat: int, request_id: int) -> m.Reply | None:
    """Why ``seat`` cannot be taken at ``room`` (no such seat, or someone or a bot holds it), or None: the one check
    of a seat a request names (``join``, ``add_bot``, ``move``)."""
    if not 0 <= seat < room.players:
        return m.refused(request_id, p.BAD_REQUEST, f"seats are 0 to {room.players - 1}")
    if not room.seats[seat].empty:
        return m.refused(request_id, p.SEAT_TAKEN, f"seat {seat} is taken")
    return None


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
        #: Set by a network shell that pushes the lobby's list on its own beat (``push_stale_listing``): a change
        #: then only marks the list stale and calls this. None: every change pushes at once.
        self.on_listing_stale: Callable[[], None] | None = None
        #: A push is due: the tables listed, or one of them, changed (``announce``), or the directory's did.
        self._listing_stale = False
        #: A push may be due: something a listed table's line shows may have changed (``Room.listing_changed``); it
        #: is, if its line built again differs (``_listing_moved``).
        self._lines_stale = False
        self._listing_moved = False
        #: The rooms listed, in the list's order (``_listed_rooms``), and how many rooms there were then; None: sorted
        #: again when next listed (a room came, went, or started its match). Each room keeps its own line, built
        #: again only after it changed: at a thousand tables, building every line costs milliseconds.
        self._order: list[Room] | None = None
        self._order_of = 0
        #: The lines of the last ``list_tables`` reply framed, and their packed array: the same lines, the same bytes.
        self._framed: tuple[tuple[m.TableSummary, ...], bytes] | None = None
        # Limits, as attributes so that a server (or a test) can set its own before tables are made.
        self.max_tables = MAX_TABLES
        self.max_tables_per_address = MAX_TABLES_PER_ADDRESS
        self.abandon_after = ABANDON_AFTER
        self.unstarted_abandon_after = UNSTARTED_ABANDON_AFTER
        self.guesses_by_address = GuessLimiter(GUESSES_PER_ADDRESS, GUESS_DELAY, GUESS_DELAY_CAP)
        self.guesses_by_table = GuessLimiter(GUESSES_PER_TABLE, GUESS_DELAY, GUESS_DELAY_CAP_TABLE)
        self.journal: Journal | None = None  # set to journal every table (quatro_server.journal)
        self._archive: Archive | None = None
        #: The players' records and ratings (``quatro_server.records``): in memory unless the server gives its own
        #: (beside the journal).
        self.records = Records.memory()
        #: The directory shared with other servers (``quatro_server.directory``): None, the tables are this server's
        #: alone. With one, table ids are global, the lobby lists every server's tables, and a request naming a
        #: table another server holds is answered ``moved`` (protocol section 21).
        self.directory: TableDirectory | None = None
        #: Seconds since the epoch, for the records' "last played" (a clock the lobby does not otherwise read).
        self.wall_clock: Callable[[], float] = time.time
        #: The latest ``now`` a request brought: the lobby list's "idle for" counts to it.
        self.now: float | None = None
        #: When each connection last chatted (``CHAT_INTERVAL``).
        self._chatted: dict[Peer, float] = {}
        #: The table each watching connection watches (protocol section 18); the room keeps its own audience.
        self.watching: dict[Peer, Room] = {}
        #: The server drains before a restart (``quatro-server admin drain``): no new table, no new match.
        self.draining = False
        #: The handler of each request kind, reached once the acceptance table took the request.
        self._handlers: dict[str, Callable[[Peer, m.Request, float], m.Reply]] = {
            p.HELLO: self._hello,
            p.PING: self._ping,
            p.LIST_TABLES: self._list_tables,
            p.RENAME: self._rename,
            p.CHAT: self._chat,
            p.CREATE_TABLE: self._create_table,
            p.JOIN: self._join,
            p.REJOIN: self._rejoin,
            p.LEAVE: self._leave,
            p.MOVE: self._move,
            p.ADD_BOT: self._add_bot,
            p.REMOVE_BOT: self._remove_bot,
            p.START: self._start,
            p.REMATCH: self._rematch,
            p.RESYNC: self._resync,
            p.PAST_MATCHES: self._from_archive,
            p.REPLAY: self._from_archive,
            p.WATCH: self._watch,
            p.WATCHERS: self._watchers,
            p.LEADERBOARD: self._leaderboard,
            p.PLAYER_CARD: self._player_card,
            p.PROVE: self._prove,
            **dict.fromkeys(games.ACTION_KINDS, self._act),
        }

    def _rng(self) -> random.Random:
        if self._seed_source is None:
            return random.SystemRandom()
        return random.Random(self._seed_source.getrandbits(64))

    def listing(self) -> tuple[m.TableSummary, ...]:
        """The tables to show in a lobby: the ones still seating players first, at most ``MAX_LISTED``. With a
        directory, every server's."""
        if self.directory is not None:
            every = [*self.local_listing(), *self.directory.others()]
            every.sort(key=lambda summary: (summary.phase is not TablePhase.LOBBY, summary.table))
            return tuple(every[:MAX_LISTED])
        now, moved = self.now, False
        listed = []
        for room in self._listed_rooms():
            summary, changed = room.listed(now)
            listed.append(summary)
            moved = moved or changed
        if moved:
            self._listing_moved = True
        return tuple(listed)

    def _listed_rooms(self) -> list[Room]:
        """The rooms the list shows, in its order: the ones still seating players first, by id, at most
        ``MAX_LISTED``."""
        order = self._order
        if order is None or self._order_of != len(self.rooms):
            rooms = sorted(self.rooms.values(), key=lambda room: (room.table is not None, room.id))
            order = self._order = rooms[:MAX_LISTED]
            self._order_of = len(self.rooms)
            self._listing_moved = True
        return order

    def local_listing(self) -> list[m.TableSummary]:
        """This server's own tables, as the lobby lists them (what a directory tells the other servers)."""
        now, listed, moved = self.now, [], False
        for room in self.rooms.values():
            summary, changed = room.listed(now)
            listed.append(summary)
            moved = moved or changed
        if moved:
            self._listing_moved = True
        return listed

    def _wire_listing(self, tables: tuple[m.TableSummary, ...]) -> list[dict[str, object]]:
        """``tables`` as ``to_wire`` writes them, each room's line converted once while it is unchanged."""
        rooms = self.rooms
        wired = []
        for summary in tables:
            room = rooms.get(summary.table)
            wired.append(to_wire(summary) if room is None else room.listed_wire(summary))
        return wired

    def tables_frame(self, reply: m.Ok) -> bytes:
        """The frame of a ``list_tables`` reply (an ``ok`` holding ``Tables``), as ``encode(to_wire(reply))`` would
        write it, from each room's line packed once while it is unchanged: a list asked again and again costs what
        changed, not every table's conversion and encoding."""
        tables = reply.payload
        assert isinstance(tables, m.Tables)
        listed = tables.tables
        framed = self._framed
        if framed is not None and len(framed[0]) == len(listed) and all(map(operator.is_, framed[0], listed)):
            packed = framed[1]  # the very lines of the last list: its bytes
        else:
            rooms = self.rooms
            parts = [_array_header(len(listed))]
            for summary in listed:
                room = rooms.get(summary.table)
                parts.append(_packb(to_wire(summary)) if room is None else room.listed_packed(summary))
            packed = b"".join(parts)
            self._framed = (listed, packed)
        head = _MAP_OK_TABLES[tables.draining] + _packb(p.OK) + _packb("id") + _packb(reply.id) + _packb("tables")
        return frame(head + packed + (_packb("draining") + _packb(True) if tables.draining else b""))

    def _room_listing_changed(self, room: Room) -> None:
        """``room``'s line of the list may have changed (``Room.on_listing``): the list is pushed again if it did."""
        self._lines_stale = True
        if self.on_listing_stale is None:
            self.push_stale_listing()
        else:
            self.on_listing_stale()

    def announce(self) -> None:
        """This server's tables changed: tell the lobby's watchers, and the directory (the other servers).

        Building the list costs in proportion to the tables (a sort, up to ``MAX_LISTED`` lines, their encoding:
        milliseconds at a thousand tables), and seating one table changes it a dozen times; with a shell that
        pushes on its own beat (``on_listing_stale``) the changes of a beat cost one list."""
        self.listing_changed()
        if self.directory is not None:
            self.directory.changed()

    def listing_changed(self) -> None:
        """The lobby's list changed (this server's tables, or another's through the directory): push it now, or
        mark it stale for the shell's next beat."""
        self._order = None
        if self.on_listing_stale is None:
            self.push_listing()
        else:
            self._listing_stale = True
            self.on_listing_stale()

    def push_stale_listing(self, now: float | None = None) -> None:
        """Push the lobby's list if it changed since the last push (``on_listing_stale``): a table came, went or
        changed its seats (``announce``), or the line of a listed table shows something new. ``now``: the shell's
        clock, for the idle counts (else the latest request's)."""
        if now is not None:
            self.now = max(now, self.now or now)
        if self._listing_stale:
            self.push_listing()
        elif self._lines_stale:
            self._lines_stale = False
            if not self.watchers:
                return  # the lines are built when next asked for
            tables = self.listing()
            if self._listing_moved:
                self._push(tables)

    def push_listing(self) -> None:
        """The lobby's list to every connection in the lobby."""
        self._listing_stale = self._lines_stale = False
        if self.watchers:
            self._push(self.listing())

    def _push(self, tables: tuple[m.TableSummary, ...]) -> None:
        self._listing_moved = False
        # One message for every watcher: the shell encodes it once, and a list still waiting for a watcher is
        # replaced by this one (a ``lobby`` push is state: the latest is all a watcher needs). It is
        # ``to_wire(m.LobbyList(tables, draining=...))``, each table's line converted once while it is unchanged.
        message: dict[str, object] = {"kind": p.LOBBY, "tables": self._wire_listing(tables)}
        if self.draining:
            message["draining"] = True
        for peer in list(self.watchers):
            peer.send(message)

    def _new_id(self) -> int:
        return next(self._ids) if self.directory is None else self.directory.new_id()

    def highest_id(self) -> int:
        """The highest table id this server gave, the journal's included: a directory never gives one up to it."""
        return max([0, *self.rooms, *([] if self.journal is None else [self.journal.last_id])])

    def unknown_table(self, request: m.Request) -> int | None:
        """With a directory: the table a ``join``, ``rejoin``, ``watch`` or ``prove`` names when neither this server nor, as
        far as it was told, another holds it (the network shell looks it up in the directory before answering)."""
        if self.directory is None or not isinstance(request.body, (m.Join, m.Rejoin, m.Watch, m.Prove)):
            return None
        table = request.body.table
        if table in self.rooms or self.directory.holder(table) is not None:
            return None
        return table

    def _moved(self, request_id: int, table: int) -> m.Reply | None:
        """``moved``, when another server of the directory holds ``table``."""
        where = None if self.directory is None else self.directory.holder(table)
        if where is None:
            return None
        return m.MovedTo(request_id, table, where[0], where[1])

    def own_address(self) -> str:
        """This server's address as the directory gives it to the other servers, and so as a ``moved`` to it says it,
        written as a proof binds it (``quatro_shared.addresses.format_address``); "" without a directory."""
        told = "" if self.directory is None else self.directory.address
        try:
            host, port = parse_address(told)
        except ValueError:
            return ""
        return format_address(host, port)

    def _prove(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        """Protocol 8 (section 21): a proof that this server holds the table's seat secrets or its password, made
        from what it keeps of them (digests) and bound to the client's nonce and this server's address. Another
        server's table is ``moved`` (a proof is asked where the table is); a table nobody holds, ``no_such_table``.
        A password proof can be checked offline against guesses (at scrypt's cost): it counts as a guess from the
        address, and waits as a wrong password does."""
        f = request.body
        assert isinstance(f, m.Prove)
        room = self.rooms.get(f.table)
        if room is None:
            return self._moved(request.id, f.table) or m.refused(request.id, p.NO_SUCH_TABLE, f"no table {f.table}")
        address = self.own_address()
        if f.of == proofs.OF_PASSWORD:
            made = None if room.password is None else password_proof_key(room.password)
            if made is None:
                return m.refused(request.id, p.BAD_PASSWORD, f"table {f.table} has no password to prove")
            origin = peer.origin
            wait = self.guesses_by_address.wait(origin, now)
            if wait > 0:
                return m.refused(request.id, p.RATE_LIMITED, "too many wrong passwords: wait before trying again", wait)
            self.guesses_by_address.missed(origin, now)
            public, key = made
            return m.Ok(request.id, m.Proof((proofs.proof_for(key, f.nonce, address),), public))
        if f.seat is not None and not 0 <= f.seat < len(room.seats):
            return m.refused(request.id, p.NO_SUCH_SEAT, f"table {f.table} has no seat {f.seat}")
        asked = room.seats if f.seat is None else [room.seats[f.seat]]
        keys = [key for key in (secret_proof_key(s.secret) for s in asked if s.secret is not None) if key is not None]
        if not keys:
            return m.refused(request.id, p.NO_SUCH_SEAT, f"no seat with a secret there at table {f.table}")
        return m.Ok(request.id, m.Proof(tuple(proofs.proof_for(key, f.nonce, address) for key in keys)))

    # --- the journal ---------------------------------------------------------------------------

    @property
    def archive(self) -> Archive | None:
        """The past matches of the journal (None: tables in memory only, nothing to replay)."""
        if self.journal is None:
            return None
        if self._archive is None or self._archive.path != self.journal.path:
            self._archive = Archive(self.journal.path)
        return self._archive

    # A request answered from the journal (``past_matches``, ``replay``) goes one way, in three steps: what is refused
    # before the journal is read (``archive_refusal``), the read (``read_archive``: it touches the journal alone, so
    # the network shell runs it in a worker thread, off its event loop), and the answer (``archived``: a wrong
    # password counted, a live first match said ``not_over``). A caller in this process takes all three at once.

    def _from_archive(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        """``past_matches`` and ``replay`` for a caller in this process (the network shell's: ``Server``)."""
        refusal = self.archive_refusal(peer, request, now)
        if refusal is not None:
            return refusal
        answer, missed = self.read_archive(request)
        return self.archived(peer, request, answer, missed, now)

    def archive_refusal(self, peer: Peer, request: m.Request, now: float) -> m.Reply | None:
        """Why ``past_matches`` or ``replay`` is refused before the journal is read: no journal, a count below 0, or
        (``replay``) too many wrong passwords lately from this address."""
        if self.archive is None:
            return m.refused(request.id, p.NO_JOURNAL, "this server keeps no journal: it has no past matches")
        body = request.body
        if isinstance(body, m.PastMatches) and (body.offset or 0) < 0:
            return m.Error(request.id, p.BAD_REQUEST, "offset: counts from 0")
        if isinstance(body, m.Replay):
            if (body.start or 0) < 0:
                return m.Error(request.id, p.BAD_REQUEST, "start: counts from 0")
            wait = self.guesses_by_address.wait(peer.origin, now)
            if wait > 0:
                return m.refused(request.id, p.RATE_LIMITED, "too many wrong passwords: wait before trying again", wait)
        return None

    def read_archive(self, request: m.Request) -> tuple[m.Reply, bool]:
        """The journal's answer to a ``past_matches`` or ``replay`` that ``archive_refusal`` let through, and whether
        it was refused for a wrong password or secret. It reads the journal and nothing of the lobby's: safe in a
        worker thread."""
        archive, body = self.archive, request.body
        assert archive is not None
        if isinstance(body, m.Replay):
            return archive.replay(request.id, body)
        assert isinstance(body, m.PastMatches)
        return m.Ok(request.id, archive.past_matches(body.offset or 0)), False

    def archived(self, peer: Peer, request: m.Request, reply: m.Reply, missed: bool, now: float) -> m.Reply:
        """The reply to send for the journal's answer ``reply`` (``read_archive``); ``missed``: refused for a wrong
        password or secret, counted as a guess. A table the journal's file does not hold yet but that is live here is
        a first match under way: ``not_over``, as any match under way."""
        if missed:
            self.guesses_by_address.missed(peer.origin, now)
        body = request.body
        if (
            isinstance(reply, m.Refused)
            and reply.reason == p.NO_SUCH_TABLE
            and isinstance(body, m.Replay)
            and body.table in self.rooms
        ):
            return m.refused(
                request.id, p.NOT_OVER, f"table {body.table}'s first match is not over: it cannot be replayed yet"
            )
        return reply

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
            room.on_listing = self._room_listing_changed
            self.rooms[room.id] = room
            rooms.append(room)
            log.info("table_restored table=%d phase=%s", room.id, room.phase)
        self._ids = count(max([journal.last_id, *self.rooms]) + 1)
        self._order = None
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
            id=saved.id,
            players=saved.players,
            timing_name=saved.timing_name,
            timing=saved.timing,
            password=saved.password,
            rng=rng,
            seats=seats,
            host=saved.host,
            abandon_after=self.abandon_after,
            unstarted_abandon_after=self.unstarted_abandon_after,
            game=game,
            last_active=now,  # the lobby list counts its quiet from the restart, not from the clock's zero
            created=now,
        )
        room.idle_since = now  # nobody is connected yet: the room closes if nobody comes back (ABANDON_AFTER)
        room.rated = not self.records.is_friendly(saved.id)
        room.on_match_over = self._match_over
        recorder = Recorder(journal, saved.id, game.journal, next_move=saved.next_move)
        if saved.table is not None:
            room.table = saved.table
            for emits in saved.replayed:  # the current round's: nobody is connected, so only the bots are told
                room.publish(list(emits), saved.table.now)  # what their seat saw (H2: nothing more)
            recorder.resumed(saved.table, now)
            room.over_told = game.over(saved.table)  # a match that ended before the restart was recorded then
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
            emits: list[object] = []
            for i, s in enumerate(room.seats):
                if s.bot is None and s.peer is None:
                    emits.extend(room.act(i, Disconnect(), now).events)
            room.publish(emits, now)
        self.announce()

    # --- requests ------------------------------------------------------------------------------

    def handle(self, peer: Peer, request: m.Request, now: float, *, greeted: bool = True) -> m.Reply:
        """Answer one request from ``peer``. Exactly one reply, always; the room's pushes go out on the side.

        ``greeted``: whether the connection said hello (the network shell's connections say it first; a caller in
        the same process is greeted). What the peer's state takes is read once from the acceptance table
        (``accepts.ACCEPTS``); a seated peer's game action is judged for its own form first (protocol section 7:
        the seat, then the fields, then the state)."""
        self.now = now
        kind = request.kind
        state = accepts.state_of(peer, greeted, peer in self.watching)
        verdict = accepts.verdict(state, kind, hosts=self._hosts(peer), draining=self.draining)
        unfit = self._unfit(peer, request) if kind in games.ACTION_KINDS and state in accepts.SEATED else None
        if unfit is not None:
            reply = unfit
        elif verdict is accepts.TAKE:
            reply = self._handlers[kind](peer, request, now)
        else:
            assert isinstance(verdict, accepts.Refusal)
            reply = verdict.reply(request.id)
        if peer.room is not None and kind != p.PING:
            peer.room.last_active = now
        return reply

    @staticmethod
    def _hosts(peer: Peer) -> bool:
        room = peer.room
        return room is not None and room.host_now() == peer.seat

    @staticmethod
    def _unfit(peer: Peer, request: m.Request) -> m.Reply | None:
        """Why a seated peer's game action does not fit its table, whatever the table's state: fields that do not
        fit the action (judged at the edge, ``request.invalid``), or another game's action."""
        if request.invalid is not None:
            code = getattr(request.invalid, "code", p.BAD_REQUEST)
            return m.Error(request.id, code, str(request.invalid))
        room = peer.room
        assert room is not None
        game = games.game_of(request.body)
        assert game is not None
        if game is not room.game:
            # Another game's action: refused by the table's game, in its words (``unknown_action`` in both games).
            return m.refused(
                request.id,
                p.UNKNOWN_ACTION,
                f"{request.kind} is a {game.title} action; this table plays {room.game.title}",
            )
        return None

    def _hello(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        """The connection's first request: the protocol's version agreed on, the player's name, the lobby's list."""
        hello = request.body
        assert isinstance(hello, m.Hello)
        if hello.version != p.PROTOCOL_VERSION:
            return m.refused(
                request.id,
                p.INCOMPATIBLE_VERSION,
                f"this server speaks protocol {p.PROTOCOL_VERSION}; the client speaks {hello.version}",
            )
        peer.name = hello.name
        peer.person = None if hello.person is None else identity.person_of(hello.person)
        self.watchers.add(peer)
        return m.Ok(
            request.id,
            m.Welcome(
                version=p.PROTOCOL_VERSION,
                server="quatro",
                profiles=tuple(sorted(self.profiles)),
                tables=self.listing(),
                games=tuple(games.GAMES),
                draining=self.draining,
            ),
        )

    def _ping(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        return m.Ok(request.id)

    def _resync(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        """A snapshot of the seat's view, for a client that doubts its state (protocol 2). It comes before the ok.
        A watcher's is the public table's."""
        watched = self.watching.get(peer)
        if watched is not None:
            watched.watch_snapshot(peer, now)
            return m.Ok(request.id)
        room, seat = peer.room, peer.seat
        assert room is not None and seat is not None
        room.publish([], now, snapshot_for=seat)
        return m.Ok(request.id)

    def _list_tables(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        """The list as it is at ``now``: every table's latest line (the network shell frames it: ``tables_frame``)."""
        return m.Ok(request.id, m.Tables(self.listing(), draining=self.draining))

    def _create_table(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        f = request.body
        assert isinstance(f, m.CreateTable)
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
        origin = peer.origin
        if origin is not None and sum(r.origin == origin for r in self.rooms.values()) >= self.max_tables_per_address:
            return m.refused(
                request.id, p.TOO_MANY_TABLES, f"your address already has {self.max_tables_per_address} open tables"
            )
        if len(self.rooms) >= self.max_tables:
            return m.refused(request.id, p.SERVER_FULL, "this server holds as many tables as it can")
        try:
            table_id = self._new_id()
        except DirectoryError as exc:
            log.warning("table_refused reason=directory error=%s", exc)
            return m.refused(
                request.id,
                p.SERVER_FULL,
                "no table number to give just now (the table directory is slow to answer): try again in a moment",
            )
        room = Room(
            id=table_id,
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
            created=now,
            rated=f.rated is not False,
            on_match_over=self._match_over,
        )
        if not room.rated:
            self.records.friendly(room.id)
        if self.journal is not None:
            row = self.journal.table_row(
                room.id,
                game=game.name,
                players=room.players,
                timing_name=room.timing_name,
                timing=room.timing,
                password=room.password,
                host=room.host,
                scores=game.no_scores(room.players),
            )
            room.recorder = Recorder(self.journal, room.id, game.journal, row=row)
        room.on_listing = self._room_listing_changed
        self.rooms[room.id] = room
        self.on_room_created(room)
        secret = self._seat(peer, room, 0)
        log.info("table_created table=%d game=%s players=%d timing=%s", room.id, game.name, room.players, timing_name)
        return m.Ok(request.id, m.Seated(room.id, 0, secret))

    def _join(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        f = request.body
        assert isinstance(f, m.Join)
        room = self.rooms.get(f.table)
        if room is None:
            return self._moved(request.id, f.table) or m.refused(request.id, p.NO_SUCH_TABLE, f"no table {f.table}")
        # A started table says so before any password is checked: nothing to guess at, nothing to learn.
        if room.table is not None:
            return accepts.MATCH_STARTED.reply(request.id)
        if room.password is not None:
            refusal = self._check_password(peer, room, f.password, now, request.id)
            if refusal is not None:
                return refusal
        seat = f.seat
        if seat is not None:
            refusal = _not_free(room, seat, request.id)
            if refusal is not None:
                return refusal
        else:
            team = f.team
            if team is not None and not 0 <= team < room.game.team_count(room.players):
                return m.refused(request.id, p.BAD_REQUEST, f"teams are 0 to {room.game.team_count(room.players) - 1}")
            seat = room.free_seat(team)
            if seat is None:
                return m.refused(request.id, p.TABLE_FULL, "no free seat" + ("" if team is None else " in that team"))
        watched = self._stop_watching(peer)  # a watcher takes a free seat between matches
        secret = self._seat(peer, room, seat)
        if watched is not None and watched is not room:
            watched.watchers_changed(now)
        return m.Ok(request.id, m.Seated(room.id, seat, secret))

    def _watch(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        """From the lobby: watch a table from no seat. The ``table`` push, then (once its match has begun) a snapshot
        of the public table, come before the ok."""
        f = request.body
        assert isinstance(f, m.Watch)
        room = self.rooms.get(f.table)
        if room is None:
            return self._moved(request.id, f.table) or m.refused(request.id, p.NO_SUCH_TABLE, f"no table {f.table}")
        if not room.watch_open:
            return m.refused(request.id, p.NOT_WATCHABLE, "the host has closed this table to watchers")
        if room.password is not None:
            refusal = self._check_password(peer, room, f.password, now, request.id)
            if refusal is not None:
                return refusal
        self.watchers.discard(peer)
        self.watching[peer] = room
        room.watch(peer, now)
        self.announce()
        log.debug("watching table=%d watchers=%d", room.id, len(room.watchers))
        return m.Ok(request.id, m.Watching(room.id, len(room.watchers)))

    def _watchers(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        """The host opens its table to watchers, or closes it: every watcher then goes back to the lobby, told why."""
        f = request.body
        assert isinstance(f, m.Watchers)
        room = peer.room
        assert room is not None
        if room.watch_open != f.open:
            room.watch_open = f.open
            if not f.open:
                self._end_watching(room, p.CLOSED_TO_WATCHERS, "the host closed this table to watchers")
            room.tell_seating()
            self.announce()
        return m.Ok(request.id)

    def _end_watching(self, room: Room, reason: str, message: str) -> None:
        """Send every watcher of ``room`` back to the lobby, told why."""
        ended = to_wire(m.WatchEnded(room.id, reason, message))
        for watcher in list(room.watchers):
            self._stop_watching(watcher)
            watcher.send(ended)
            self.watchers.add(watcher)

    def _stop_watching(self, peer: Peer) -> Room | None:
        """``peer`` watches nothing any more; the table it watched, if any."""
        room = self.watching.pop(peer, None)
        if room is not None:
            room.unwatch(peer)
        return room

    def _check_password(
        self, peer: Peer, room: Room, password: str | None, now: float, request_id: int
    ) -> m.Reply | None:
        """None when the password is right; otherwise the refusal: ``rate_limited`` while this address or this
        table must wait after too many misses (the guess is not even looked at), else ``bad_password``."""
        assert room.password is not None
        origin = peer.origin
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
        room = self.rooms.get(f.table)
        if room is None:
            moved = self._moved(request.id, f.table)  # the secret is checked where the table is
            if moved is not None:
                return moved
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
        if s.person is None:
            s.person = peer.person  # a restored seat learns who plays it again; a known seat keeps its person
        room.idle_since = None
        peer.room, peer.seat = room, seat
        self.watchers.discard(peer)
        log.debug("seat_rejoined table=%d seat=%d", room.id, seat)
        if room.table is not None:
            room.send_recent(seat)  # the feed's history first, for a client that comes back with none
            outcome = room.act(seat, Connect(), now)
            room.publish(outcome.events, now, snapshot_for=seat)  # also tells the seating (seat_connected)
            if not outcome.events:
                room.broadcast_seating()  # a replaced connection: the seat never looked disconnected
        else:
            if room.host is None:
                room.host = seat
            room.broadcast_seating()
        return m.Ok(request.id, m.Rejoined(room.id, seat))

    def detach(self, peer: Peer, now: float, leaving: bool) -> None:
        """``peer`` leaves its seat (``leaving``) or its connection dropped. In a match, the seat stays (R19). A
        watcher leaves its table's audience."""
        self.watchers.discard(peer)
        self._chatted.pop(peer, None)
        watched = self._stop_watching(peer)
        if watched is not None and self.rooms.get(watched.id) is watched:
            watched.watchers_changed(now)
            self.announce()
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
            room.publish(room.act(seat, Disconnect(), now).events, now)
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
            self._end_watching(room, p.TABLE_CLOSED, f"table {room.id} has closed")
            if room.recorder is not None:
                room.recorder.closed()
            room.on_change()
            self.announce()

    # --- the operator's hand (``quatro-server admin``) ----------------------------------------------------

    def _unseat(self, room: Room, seat: int, ended: dict[str, object]) -> Peer | None:
        """The connection at ``seat`` of ``room``, if any, is told ``ended`` (a ``seat_ended``) and is in the lobby
        from now on (sent the ``lobby`` push); the seat itself is left as it is."""
        s = room.seats[seat]
        peer, s.peer, s.synced = s.peer, None, False
        if peer is not None:
            peer.room = peer.seat = None
            peer.send(ended)
            self.watchers.add(peer)
        return peer

    def close_by_operator(self, room: Room, message: str) -> None:
        """The operator closes ``room``: its players and watchers are told why and are back in the lobby, and the
        journal records the table's end (a restart does not bring it back)."""
        ended = to_wire(m.SeatEnded(room.id, p.CLOSED_BY_OPERATOR, message))
        for seat in range(room.players):
            self._unseat(room, seat, ended)
        self._end_watching(room, p.CLOSED_BY_OPERATOR, message)
        log.info("table_closed_by_operator table=%d", room.id)
        self.close(room)

    def remove_by_operator(self, room: Room, seat: int, message: str, now: float) -> bool:
        """The operator removes the player of ``seat``: the connection there is told why and sent to the lobby, and
        the seat's secret stops working. As for a player who leaves: before the match the seat is free again; in a
        match it stays, disconnected, and nobody plays in the player's place (R19), the host role passing (R18).
        Returns whether the seat was freed."""
        s = room.seats[seat]
        assert s.bot is None and s.secret is not None
        peer = self._unseat(room, seat, to_wire(m.SeatEnded(room.id, p.REMOVED_BY_OPERATOR, message)))
        freed = room.table is None
        if freed:
            room.seats[seat] = Seat()
            if room.host == seat:
                room.lobby_host_leaves()
        else:
            s.secret = digest_secret(secrets.token_urlsafe(SECRET_BYTES))  # known to nobody: the old one is void
            if peer is not None:
                room.publish(room.act(seat, Disconnect(), now).events, now)
        room.broadcast_seating()  # journals the seat as it is now: a restart does not revive the old secret
        log.info("seat_removed_by_operator table=%d seat=%d freed=%s", room.id, seat, freed)
        if not room.humans_connected() and room.idle_since is None:
            room.idle_since = now
            room.on_change()
        if room.expired(now):
            self.close(room)
        else:
            self.announce()
        return freed

    def _leave(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
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

    def _add_bot(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        f = request.body
        assert isinstance(f, m.AddBot)
        room = peer.room
        assert room is not None
        game = room.game
        level = f.level or game.default_level
        if level not in game.levels:
            return m.refused(request.id, p.BAD_LEVEL, f"{game.title} bot levels: {', '.join(game.levels)}")
        seat = f.seat
        if seat is None:
            seat = room.free_seat()
            if seat is None:
                return m.refused(request.id, p.TABLE_FULL, "no free seat")
        else:
            refusal = _not_free(room, seat, request.id)
            if refusal is not None:
                return refusal
        room.sit(seat, None, f"{level}-bot-{seat}", bot=game.make_bot(level, random.Random(room.rng.getrandbits(64))))
        room.broadcast_seating()
        self.announce()
        return m.Ok(request.id, m.BotAdded(seat))

    def _remove_bot(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        assert isinstance(request.body, m.RemoveBot)
        room = peer.room
        assert room is not None
        seat = request.body.seat
        if not 0 <= seat < room.players or room.seats[seat].bot is None:
            return m.refused(request.id, p.NOT_A_BOT, f"seat {seat} holds no bot")
        room.seats[seat] = Seat()
        room.broadcast_seating()
        self.announce()
        return m.Ok(request.id)

    def _start(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        room = peer.room
        assert room is not None
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
        assert room is not None and old is not None
        if f.seat != old:
            refusal = _not_free(room, f.seat, request.id)
            if refusal is not None:
                return refusal
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
        assert room is not None
        room.start(now)
        log.info("match_restarted table=%d", room.id)
        self.announce()
        return m.Ok(request.id)

    # --- records and ratings ------------------------------------------------------------------------

    def _match_over(self, room: Room) -> None:
        """A match ended at ``room``: count it for everyone who played it and rate it, unless the table is friendly or
        no identified person played (bots are rated against people, not against each other alone). A seat whose
        player is anonymous is rated as a newcomer for the others' sake and keeps nothing."""
        if not room.rated:
            return
        players: list[Player | None] = []
        seen: set[str] = set()
        for s in room.seats:
            if s.bot is not None:
                players.append(Player(identity.bot_person(s.bot.level), f"{s.bot.level} bot"))
            elif s.person is not None:
                players.append(Player(s.person, s.name or "player"))
                seen.add(s.person)
            else:
                players.append(None)
        if not seen:
            return
        try:
            start = time.perf_counter()
            self.records.match_ended(room.game.name, room.match_record(), players, self.wall_clock())
            log.info(
                "match_recorded table=%d game=%s ms=%.2f", room.id, room.game.name, (time.perf_counter() - start) * 1000
            )
        except Exception:
            log.exception("match_record_failed table=%d", room.id)  # the records miss a match; the table goes on

    def _leaderboard(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        f = request.body
        assert isinstance(f, m.Leaderboard)
        game = games.GAMES.get(f.game or DEFAULT_GAME.name)
        if game is None:
            return m.refused(request.id, p.UNKNOWN_GAME, f"games here: {', '.join(games.GAMES)}")
        offset = f.offset or 0
        if offset < 0:
            return m.refused(request.id, p.BAD_REQUEST, "offset: 0 or more")
        total, entries = self.records.leaderboard(game.name, offset, p.LEADERBOARD_PAGE)
        standings = tuple(
            m.Standing(offset + i + 1, e.person, e.name, e.bot, round(e.rating.shown, 2), e.matches, e.wins)
            for i, e in enumerate(entries)
        )
        return m.Ok(request.id, m.Standings(game.name, offset, total, standings))

    def _player_card(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        f = request.body
        assert isinstance(f, m.PlayerCard)
        if f.person is not None:
            person: str | None = f.person
        elif f.name is not None:
            person = self.records.person_named(f.name)
        else:
            person = peer.person
            if person is None:
                return m.refused(request.id, p.NO_SUCH_PLAYER, "you play anonymously: your client sent no person key")
        found = [] if person is None else self.records.card(person)
        if person is None or (not found and person != peer.person):
            return m.refused(request.id, p.NO_SUCH_PLAYER, "no record of that player")
        records = tuple(
            m.GameRecord(
                e.game,
                place,
                round(e.rating.shown, 2),
                round(e.rating.mu, 2),
                round(e.rating.sigma, 2),
                e.matches,
                e.wins,
                tuple(m.Tally(k, v) for k, v in sorted(e.counts.items())),
            )
            for e, place in found
        )
        name = (self.records.name_of(person) if found else None) or peer.name
        return m.Ok(request.id, m.Card(person, name, identity.is_bot(person), records))

    def _act(self, peer: Peer, request: m.Request, now: float) -> m.Reply:
        """A game action from a seat of a table whose match has started (its form was judged: ``_unfit``)."""
        room, seat = peer.room, peer.seat
        assert room is not None and seat is not None
        action = request.body
        outcome = room.act(seat, action, now)
        room.publish(outcome.events, now)
        if outcome.refusal is not None:
            log.debug(
                "refused table=%d seat=%d action=%s reason=%s",
                room.id,
                seat,
                request.kind,
                outcome.refusal.reason,
            )
            return room.game.refused(request.id, action, outcome.refusal)
        return m.Ok(request.id)
