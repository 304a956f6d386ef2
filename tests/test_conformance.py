"""Every registered game, held to the one interface (in the manner of OpenSpiel's ``games_sim_test``): random
playouts through a real lobby and its rooms, every request passing through the client core as a client's does.

For each game the product hosts, and for Nim, a game that lives in the tests alone (``nim_game``):

- every move ``legal`` lists for a seat's view is accepted; every other move tried (another seat's, an earlier
  one's, a field out of range) is refused with the table's own reason and words, and changes nothing;
- every frame a seat receives passes the hidden-information audit (no other seat's secret, nothing private in a
  seating, lobby or reply frame, an update holds its contract's fields and its own seat's view; and the game's
  own check where it hides something);
- the journal replays to the same table at any moment, and a restart restores every seat's view;
- the view the client core builds from the updates agrees with a snapshot asked at any moment (``resync``).
"""

from __future__ import annotations

import copy
import dataclasses
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from quatro_shared import games as known
from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.client import ClientCore
from quatro_shared.framing import FrameDecoder, encode
from quatro_shared.game import GameContract
from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import seating
from quatro_shared.wire import request_from_wire, to_wire

import nim_game
from quatro_server import games as hosted
from quatro_server.journal import FILE_NAME, Journal, read_journal, replay_table
from quatro_server.tables.lobby import Lobby
from quatro_server.tables.room import Room
from quatro_server.timing import FAST, FAST_PROFILE
from quatro_server.tools.audit import PRIVATE_KEYS, frame_leaks, keys, update_leaks

#: The games registered by the tests alone, beside the product's.
TEST_GAMES = {nim_game.GAME.name: nim_game.registered}
GAME_NAMES = [*hosted.GAMES, *TEST_GAMES]
#: Moves tried per playout, and how often a seat tries a move its view does not allow.
MOVES = 400
ILLEGAL_SHARE = 0.3
SEEDS = (1, 2, 3)


@pytest.fixture(params=GAME_NAMES)
def game(request: pytest.FixtureRequest) -> Iterator[hosted.Game]:
    name = request.param
    if name in TEST_GAMES:
        with TEST_GAMES[name]():
            yield hosted.GAMES[name]
    else:
        yield hosted.GAMES[name]


class CorePeer:
    """A connection as the lobby sees it, whose every byte goes through a client core: requests out, replies and
    pushes in, in the order a socket would carry them. Keeps every frame, and the core's view after each."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.room: Room | None = None
        self.seat: int | None = None
        self.person: str | None = None
        self.origin: str | None = None
        self.core = ClientCore(name)
        self.frames: list[tuple[dict[str, Any], Any]] = []  # each frame, and the core's view once it was taken
        self.now = 0.0

    def send(self, message: dict[str, Any] | bytes) -> None:
        data = message if isinstance(message, bytes) else encode(message)
        (frame,) = FrameDecoder().feed(data)
        self.core.receive_data(data, self.now)
        self.frames.append((frame, self.core.view))

    def close(self, reason: str) -> None:
        pass


class Playout:
    """One table of ``game`` in a real lobby that journals to ``data_dir``, a client core at every seat."""

    def __init__(self, game: hosted.Game, data_dir: Any, seed: int) -> None:
        self.game = game
        self.contract: GameContract[Any, Any, Any, Any] = known.contract(game.name)
        self.rng = random.Random(seed)
        self.data_dir = data_dir
        self.lobby = Lobby(timing_profiles={FAST_PROFILE: FAST}, seed=seed)
        self.journal = Journal.open(data_dir)
        self.lobby.restore(self.journal, 0.0)
        self.now = 0.0
        self.peers = [CorePeer(f"p{i}") for i in range(self.contract.seats[0])]
        for peer in self.peers:
            self.ok(peer, m.Hello(p.PROTOCOL_VERSION, peer.name))
        self.ok(self.peers[0], m.CreateTable(players=len(self.peers), game=game.name))
        room = self.peers[0].room
        assert room is not None
        self.room = room
        for peer in self.peers[1:]:
            self.ok(peer, m.Join(room.id))
        self.ok(self.peers[0], m.Start())
        self.secrets = [peer.core.place.secret for peer in self.peers if peer.core.place is not None]
        #: Every move any seat was ever allowed: the moves a seat tries when it is not allowed them.
        self.seen: list[Any] = []

    def request(self, peer: CorePeer, body: m.RequestBody) -> dict[str, Any]:
        """``body`` sent by ``peer``'s core, read off the wire as the server reads it, and answered."""
        peer.now = self.now
        request_id, data = peer.core.send(body, self.now)
        (frame,) = FrameDecoder().feed(data)
        greeted = peer.core.welcome is not None
        reply = self.lobby.handle(peer, request_from_wire(frame), self.now, greeted=greeted)
        wire = to_wire(reply)
        peer.send(wire)
        assert wire["id"] == request_id
        return wire

    def ok(self, peer: CorePeer, body: m.RequestBody) -> dict[str, Any]:
        reply = self.request(peer, body)
        assert reply["kind"] == p.OK, (body, reply)
        return reply

    @property
    def table(self) -> Any:
        assert self.room.table is not None
        return self.room.table

    def truth(self, seat: int) -> Any:
        return self.game.view(self.table, seat, self.now)

    def views(self) -> list[Any]:
        return [self.truth(seat) for seat in range(len(self.peers))]

    def over(self) -> bool:
        return self.game.over(self.table)

    def wait(self) -> None:
        """Time passes: up to the table's next deadline at most, as the room's timer task would wake it."""
        self.now += self.rng.uniform(0.0, 0.4)
        deadline = self.room.next_wake()
        if deadline is not None and deadline < self.now:
            self.now = deadline
        for peer in self.peers:
            peer.now = self.now
        self.room.tick(self.now)

    # --- the checks ----------------------------------------------------------------------------

    def play_legal(self, seat: int, moves: list[Any]) -> None:
        move = self.rng.choice(moves)
        reply = self.request(self.peers[seat], move)
        assert reply["kind"] == p.OK, (move, reply, self.truth(seat))

    def play_illegal(self, seat: int, allowed: list[Any]) -> None:
        """A move the seat's view does not allow: refused as the table refuses it, and nothing changes."""
        tried = [move for move in self.candidates() if move not in allowed]
        if not tried:
            return
        move = self.rng.choice(tried)
        before = self.views()
        table = copy.deepcopy(self.table)
        refusal = table.act(seat, move, self.now).refusal
        reply = self.request(self.peers[seat], move)
        if reply["kind"] == p.ERROR:  # a field the wire itself refuses: judged at the edge, before any table
            assert request_from_wire({**to_wire(move), "id": 1}).invalid is not None, (move, reply)
        elif refusal is None:  # only a repeat the game takes as done already, which changes nothing
            assert move.kind in REPEATS.get(self.game.name, ()), (move, reply, self.truth(seat))
            assert reply["kind"] == p.OK and self.table.act(seat, move, self.now).events == []
        else:
            assert reply == to_wire(self.game.refused(reply["id"], move, refusal)), (move, reply)
            assert reply["kind"] == p.REFUSED and reply["message"]
        assert self.views() == before, move

    def candidates(self) -> list[Any]:
        """Moves once allowed to some seat, and the same with a number field out of any range."""
        out = list(self.seen)
        for move in self.seen[-20:]:
            for f in dataclasses.fields(move):
                value = getattr(move, f.name)
                if isinstance(value, int) and not isinstance(value, bool):
                    out += [dataclasses.replace(move, **{f.name: -1}), dataclasses.replace(move, **{f.name: 10**6})]
        return out

    def check_snapshots(self) -> None:
        """Each seat asks for a snapshot: it agrees with the state its core built from the updates."""
        for peer in self.peers:
            drift = peer.core.drift
            self.ok(peer, m.Resync())
            assert peer.core.drift == drift, f"seat {peer.seat}: the rebuilt view differs from its snapshot"
            assert peer.core.view == self.truth(peer.seat)

    def check_journal(self) -> None:
        """Right after a move: the journal, read back and replayed, gives the very same table."""
        assert self.journal.flush()
        (saved,) = [s for s in read_journal(self.data_dir / FILE_NAME) if s.id == self.room.id]
        table, _ = replay_table(saved, self.game.journal, self.room.timing)
        assert [self.game.view(table, seat, self.now) for seat in range(len(self.peers))] == self.views()
        assert list(table.scores) == list(self.table.scores)

    def audit(self) -> None:
        """Every frame each seat received, held to the hidden-information contract."""
        hidden = HIDDEN.get(self.game.name)
        update_fields = {f.name for f in dataclasses.fields(self.contract.update)} | {"kind"}
        for peer in self.peers:
            seat, secret = peer.core.place.seat, peer.core.place.secret
            team = seating.team_of(seat, len(self.peers))
            for frame, view in peer.frames:
                if frame["kind"] != p.UPDATE:
                    assert not frame_leaks(frame, seat, team, own_secret=secret, secrets=self.secrets), frame
                    continue
                assert not [s for s in self.secrets if s in map(str, _values(frame))], frame
                assert set(frame) <= update_fields, sorted(set(frame) - update_fields)
                if "view" in frame and frame["view"] is not None:
                    assert frame["view"]["seat"] == seat, frame
                assert not PRIVATE_KEYS & set(keys(frame["events"])) or hidden is not None, frame
                if hidden is not None:
                    assert not hidden(frame, seat, team, view), frame


def _values(obj: Any) -> Iterator[Any]:
    if isinstance(obj, dict):
        for value in obj.values():
            yield from _values(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _values(value)
    else:
        yield obj


def _quatro_hidden(frame: dict[str, Any], seat: int, team: int, view: Any) -> list[str]:
    """Quatro hides hands and signs (H1): the audit of ``quatro_server.tools.audit`` against the view the core built."""
    return update_leaks(frame, seat, team, known=None if view is None else to_wire(view))


#: Moves outside ``legal`` that a game's table accepts as a repeat of what is done already: nothing is emitted,
#: nothing changes. Quatro's ``ready`` from a seat that is ready (its engine's ``_ready``) is the one there is.
REPEATS: dict[str, frozenset[str]] = {p.QUATRO: frozenset({a.Ready.kind})}

#: The games that hide something, and the check of what they hide; a game not listed hides nothing.
HIDDEN: dict[str, Callable[[dict[str, Any], int, int, Any], list[str]]] = {p.QUATRO: _quatro_hidden}


@pytest.mark.parametrize("seed", SEEDS)
def test_random_playouts_hold_to_the_game_interface(game, tmp_path, seed):
    playout = Playout(game, tmp_path / "data", seed)
    rng = playout.rng
    journal_at = set(rng.sample(range(MOVES), 4))
    for step in range(MOVES):
        if playout.over():
            break
        playout.wait()
        seat = rng.randrange(len(playout.peers))
        allowed = playout.contract.legal(playout.truth(seat))
        playout.seen.extend(move for move in allowed if move not in playout.seen)
        if allowed and rng.random() > ILLEGAL_SHARE:
            playout.play_legal(seat, allowed)
            if step in journal_at:
                playout.check_journal()
        else:
            playout.play_illegal(seat, allowed)
        if step % 50 == 0:
            playout.check_snapshots()
    playout.check_snapshots()
    playout.audit()
    assert playout.seen, "no seat was ever allowed a move"


@pytest.mark.parametrize("seed", SEEDS[:1])
def test_a_restart_restores_every_seat_where_the_playout_left_it(game, tmp_path, seed):
    playout = Playout(game, tmp_path / "data", seed)
    played = 0
    while played < 12:  # a few moves into the match, well before its end (an ended table is not restored)
        playout.wait()
        moves = [(seat, playout.contract.legal(playout.truth(seat))) for seat in range(len(playout.peers))]
        moves = [(seat, allowed) for seat, allowed in moves if allowed]
        if moves:
            seat, allowed = playout.rng.choice(moves)
            playout.play_legal(seat, allowed)
            played += 1
    assert not playout.over()
    views = playout.views()
    playout.journal.close()  # what a kill leaves: everything committed
    lobby = Lobby(timing_profiles={FAST_PROFILE: FAST})
    journal = Journal.open(tmp_path / "data")
    try:
        (room,) = lobby.restore(journal, playout.table.now)
        assert room.game is game and room.table is not None
        assert [game.view(room.table, seat, playout.table.now) for seat in range(len(views))] == views
    finally:
        journal.close()
