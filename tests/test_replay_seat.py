"""Replays from a seat: a journalled match, over real TCP, replayed as each seat saw it.

The frames of a seat's replay are the very updates a live client in that seat was sent (the same view gate); the
hidden-information audit holds on them; only a match that is over is replayed; a password table's match asks for
its password or a seat's secret; the replay comes over the protocol (``past_matches``, ``replay``, chunked) and
from the command line offline.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
from dataclasses import replace
from typing import Any

import msgpack
import pytest
import trio

from quatro_shared import framing
from quatro_shared import protocol as p
from quatro_shared.client import ClientCore
from quatro_shared.framing import MAX_FRAME_BYTES, encode
from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quatro import seating
from quatro_shared.games.quatro.views import Phase
from quatro_shared.wire import to_wire

from conftest import SHORT_MATCH
from helpers.netclient import TestClient
from quatro_server.games.quarto import bots as quarto_bots
from quatro_server.journal import FILE_NAME, Journal, read_journal
from quatro_server.replay import archive as archive_module
from quatro_server.replay.seat import NotReplayable, frames_of, seat_replay
from quatro_server.server import Server
from quatro_server.tables.lobby import Lobby
from quatro_server.timing import FAST
from quatro_server.tools.audit import update_leaks


@pytest.fixture
async def journalled(nursery, tmp_path):
    """A server on loopback journalling to ``tmp_path``: ``server.port``, ``server.journal``."""
    lobby = Lobby(timing_profiles={"short": SHORT_MATCH}, seed=random.randrange(2**32))
    lobby.default_timing = "short"
    journal = Journal.open(tmp_path)
    lobby.restore(journal, trio.current_time())
    srv = Server(lobby)
    listeners = await nursery.start(srv.serve, "127.0.0.1", 0)
    srv.port = listeners[0].socket.getsockname()[1]
    srv.journal = journal
    yield srv
    journal.close()


def updates(client: TestClient) -> list[dict[str, Any]]:
    return [frame for frame in client.frames if frame["kind"] == p.UPDATE]


async def quatro_match(server: Server, password: str | None = None) -> tuple[TestClient, TestClient]:
    """Ann (seat 0) and Bob (seat 2) with two bots play a match of two points to its end: Ann calls every round."""
    ann = await TestClient.connect(server.port, "ann")
    created = await ann.request(p.CREATE_TABLE, players=4, **({"password": password} if password else {}))
    assert created["kind"] == p.OK, created
    assert (await ann.request(p.ADD_BOT, level="normal"))["seat"] == 1
    bob = await TestClient.connect(server.port, "bob")
    joined = await bob.request(p.JOIN, table=ann.table, **({"password": password} if password else {}))
    assert joined["seat"] == 2, joined
    assert (await ann.request(p.ADD_BOT, level="normal"))["seat"] == 3
    assert (await ann.request(p.START))["kind"] == p.OK
    with trio.fail_after(60):
        while True:
            view = await ann.wait_view(lambda v: v.phase is not Phase.ROUND or len(v.hand) == 4)
            if view.phase is Phase.OVER:
                break
            if view.phase is Phase.SIGNING:
                for c in (ann, bob):
                    await c.request("ready")
                await ann.wait_view(lambda v: v.phase is not Phase.SIGNING)
            elif view.phase is Phase.ROUND:
                await ann.request("call")
                await ann.wait_view(lambda v: v.phase is not Phase.ROUND)
            elif view.phase is Phase.BREAK:
                await ann.request("next_round")
                await ann.wait_view(lambda v: v.phase is not Phase.BREAK)
    await bob.wait_view(lambda v: v.phase is Phase.OVER)
    await ann.drain(0.2)
    await bob.drain(0.2)
    return ann, bob


def decoded(frames: list[bytes]) -> list[dict[str, Any]]:
    return [msgpack.unpackb(frame, raw=False) for frame in frames]


def audited(frames: list[dict[str, Any]], seat: int, players: int) -> list[str]:
    """The hidden-information audit of ``quatro_server.tools.audit``, over a replay's frames, against the view a client
    core builds from them."""
    core = ClientCore("audit")
    leaks = []
    team = seating.team_of(seat, players)
    for frame in frames:
        core.receive_data(encode(frame), 0.0)
        leaks += update_leaks(frame, seat, team, known=None if core.view is None else to_wire(core.view))
    return leaks


async def test_a_seat_s_replay_is_what_its_live_client_was_sent(journalled):
    """The frames of seat 2's replay, and of seat 0's, are the updates their live clients got, one for one."""
    ann, bob = await quatro_match(journalled)
    assert journalled.journal.flush()
    (saved,) = [t for t in read_journal(journalled.journal.path) if t.id == ann.table]
    for client, seat in ((ann, 0), (bob, 2)):
        replay = seat_replay(saved, seat)
        live = updates(client)
        assert decoded(replay.frames) == live
        assert audited(live, seat, 4) == []
        assert replay.times == sorted(replay.times) and replay.times[0] == 0
    truth = [lines for _frame, lines in seat_replay(saved, 2).notes if lines]
    assert truth and all(lines[0].startswith("The truth of round") for lines in truth)
    assert any("signs: team A" in line for line in truth[0])


async def test_h1_a_replay_shows_a_seat_nothing_it_was_not_sent(journalled):
    """Seat 2's frames never hold seat 1's hand or team 1's sign before a reveal: the audit finds nothing."""
    ann, _bob = await quatro_match(journalled)
    assert journalled.journal.flush()
    (saved,) = [t for t in read_journal(journalled.journal.path) if t.id == ann.table]
    for seat in range(4):
        frames = decoded(seat_replay(saved, seat).frames)
        assert audited(frames, seat, 4) == []
        assert not any(ev["kind"] == "hand_dealt" and ev["seat"] != seat for f in frames for ev in f["events"])


async def test_replays_come_over_the_protocol_in_chunks(journalled, monkeypatch):
    """``past_matches`` lists the match; ``replay`` sends seat 2's frames in chunks that add up to the replay."""
    ann, bob = await quatro_match(journalled)
    assert journalled.journal.flush()
    (saved,) = [t for t in read_journal(journalled.journal.path) if t.id == ann.table]
    expected = seat_replay(saved, 2)
    eve = await TestClient.connect(journalled.port, "eve")
    listed = await eve.request(p.PAST_MATCHES)
    assert listed["kind"] == p.OK and listed["more"] is False
    (match,) = listed["matches"]
    assert match["table"] == ann.table and match["match"] == 0 and match["game"] == p.QUATRO
    assert match["names"][:3] == ["ann", "normal-bot-1", "bob"] and match["bot_seats"] == [1, 3]
    assert max(match["scores"]) == 2 and match["password"] is False
    monkeypatch.setattr(archive_module, "CHUNK_BYTES", 2000)  # many chunks of a short match
    frames: list[dict[str, Any]] = []
    times: list[int] = []
    while True:
        reply = await eve.request(p.REPLAY, table=ann.table, seat=2, start=len(frames))
        assert reply["kind"] == p.OK, reply
        assert len(encode(reply)) <= MAX_FRAME_BYTES
        if reply["start"] == 0:
            notes = reply["notes"]
        frames += reply["frames"]
        times += reply["times"]
        if len(frames) >= reply["total"]:
            break
    assert frames == decoded(expected.frames) and times == expected.times
    assert [(n["frame"], tuple(n["lines"])) for n in notes] == expected.notes
    assert frames == updates(bob)


async def test_a_match_under_way_is_never_replayed(journalled):
    ann = await TestClient.connect(journalled.port, "ann")
    await ann.request(p.CREATE_TABLE, players=4)
    for _ in range(3):
        await ann.request(p.ADD_BOT, level="normal")
    await ann.request(p.START)
    await ann.wait_view(lambda v: v.phase is Phase.SIGNING)
    assert journalled.journal.flush()
    eve = await TestClient.connect(journalled.port, "eve")
    assert (await eve.request(p.PAST_MATCHES))["matches"] == []
    reply = await eve.request(p.REPLAY, table=ann.table, seat=0)
    assert reply["kind"] == p.REFUSED and reply["reason"] == p.NOT_OVER, reply
    reply = await eve.request(p.REPLAY, table=ann.table + 50, seat=0)
    assert reply["reason"] == p.NO_SUCH_TABLE
    for wrong in (
        {"kind": p.REPLAY, "table": ann.table, "seat": 0, "start": -1},
        {"kind": p.PAST_MATCHES, "offset": -20},
    ):
        reply = await eve.request(wrong.pop("kind"), **wrong)
        assert reply["kind"] == p.ERROR and reply["code"] == p.BAD_REQUEST, reply
    for seat, match, reason in ((9, None, p.NO_SUCH_SEAT), (0, 3, p.NO_SUCH_MATCH), (-1, None, p.NO_SUCH_SEAT)):
        reply = await eve.request(p.REPLAY, table=ann.table, seat=seat, **({"match": match} if match else {}))
        assert reply["kind"] == p.REFUSED and reply["reason"] == reason, reply


async def test_a_password_table_s_match_asks_for_its_password_or_a_seat_s_secret(journalled):
    ann, bob = await quatro_match(journalled, password="hush")
    eve = await TestClient.connect(journalled.port, "eve")
    assert (await eve.request(p.PAST_MATCHES))["matches"][0]["password"] is True
    refused = await eve.request(p.REPLAY, table=ann.table, seat=0)
    assert refused["kind"] == p.REFUSED and refused["reason"] == p.BAD_PASSWORD
    wrong = await eve.request(p.REPLAY, table=ann.table, seat=0, password="loud")
    assert wrong["reason"] in (p.BAD_PASSWORD, p.RATE_LIMITED)
    by_secret = await bob.request(p.REPLAY, table=ann.table, seat=2, secret=bob.secret)
    assert by_secret["kind"] == p.OK and by_secret["total"] > 0
    await trio.sleep(0)  # the guess delay of the wrong password is the lobby's; a right one is never delayed by it
    journalled.lobby.guesses_by_address.forget(None)
    by_password = await TestClient.connect(journalled.port, "cid")
    ok = await by_password.request(p.REPLAY, table=ann.table, seat=0, password="hush")
    assert ok["kind"] == p.OK, ok


async def test_a_server_without_a_journal_has_no_past_matches(server):
    eve = await TestClient.connect(server.port, "eve")
    reply = await eve.request(p.PAST_MATCHES)
    assert reply["kind"] == p.REFUSED and reply["reason"] == p.NO_JOURNAL
    reply = await eve.request(p.REPLAY, table=1, seat=0)
    assert reply["kind"] == p.REFUSED and reply["reason"] == p.NO_JOURNAL


async def test_q_a_quarto_replay_is_what_the_seat_was_sent_with_the_solver_s_verdicts(journalled, monkeypatch):
    # The bot moves at once rather than at a person's pace (about a second a look): the replay is the same.
    monkeypatch.setattr(quarto_bots, "THINK_TIME", (0.0, 0.02))
    ann = await TestClient.connect(journalled.port, "ann")
    assert (await ann.request(p.CREATE_TABLE, game=q.NAME))["kind"] == p.OK
    assert (await ann.request(p.ADD_BOT, level="random"))["kind"] == p.OK
    assert (await ann.request(p.START))["kind"] == p.OK
    await ann.play_quarto(timeout=60)
    await ann.drain(0.2)
    assert journalled.journal.flush()
    (saved,) = [t for t in read_journal(journalled.journal.path) if t.id == ann.table]
    replay = seat_replay(saved, 0)
    assert decoded(replay.frames) == updates(ann)
    said = [line for _frame, lines in replay.notes for line in lines]
    assert any("position for them" in line for line in said), said  # judged where the solver can
    assert any("too deep" in line for line in said), said  # an early position is beyond a small budget, and says so
    # Players by name, as the table names them: never by the wire's seat index ("s0 ann placed: s0 ann to give").
    assert any(line.startswith(("ann placed: ", "ann gave: ")) for line in said), said
    assert not [line for line in said if re.search(r"\bs[01]\b", line)], said
    with pytest.raises(NotReplayable):
        seat_replay(saved, 5)


def test_quatro_replay_offline_from_a_journal_file(tmp_path):
    """``quatro replay FILE --seat N --print``: the seat's frames, read off the journal file with no server. Seats
    are numbered from 1, as the waiting room numbers them: ``--seat 3`` is the wire's seat 2."""
    from test_journal import play_to_the_end

    table_id = play_to_the_end(tmp_path)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "quatro_tui",
            "replay",
            str(tmp_path / FILE_NAME),
            "--table",
            str(table_id),
            "--seat",
            "3",
            "--print",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    (saved,) = [t for t in read_journal(tmp_path / FILE_NAME) if t.id == table_id]
    frames = seat_replay(saved, 2).frames
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"# table {table_id}, match 0, seat 3 (")
    assert len([line for line in lines if not line.startswith("#")]) == len(frames)
    assert "hand_dealt" in out.stdout and "The truth of round 1" in out.stdout
    by_id = subprocess.run(
        [
            sys.executable,
            "-m",
            "quatro_tui",
            "replay",
            str(table_id),
            "--seat",
            "3",
            "--print",
            "--data-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert by_id.returncode == 0 and by_id.stdout == out.stdout
    none = subprocess.run(
        [sys.executable, "-m", "quatro_tui", "replay", "999", "--seat", "2", "--print", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert none.returncode != 0 and "no table 999" in none.stderr
    zero = subprocess.run(
        [
            sys.executable,
            "-m",
            "quatro_tui",
            "replay",
            str(table_id),
            "--seat",
            "0",
            "--print",
            "--data-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert zero.returncode == 2 and "numbered from 1" in zero.stderr


def test_a_round_s_truth_is_kept_when_the_next_round_is_told_with_it():
    """A host who starts the next round at once: the reveal and the next signing in one batch; the truth shows."""
    from quatro_shared.games.quatro import events as e

    from quatro_server.games.quatro.commentary import QuatroCommentary
    from quatro_server.games.quatro.engine import Emit

    commentary = QuatroCommentary(["ann", "bob", "cid", None])
    assert commentary.note(None, [Emit(e.SigningStarted(1))]) == []
    commentary.note(None, [Emit(e.Pulse(2, "owl")), Emit(e.Pulse(1, "fox")), Emit(e.Pulse(2, "die"))])
    ended = e.RoundEnded(
        1,
        "call",
        0,
        None,
        True,
        (0,),
        (1, 0),
        (("AS", "AH", "AD", "AC"), ("KS",) * 4, ("AS",) * 4, ("QS",) * 4),
        ("JS",) * 4,
        ("owl", "crab"),
        (0,),
    )
    said = commentary.note(None, [Emit(ended), Emit(e.BreakStarted(1)), Emit(e.SigningStarted(2))])
    assert said is not None and said[0] == "The truth of round 1"
    # The table's words: players by name (a seat without one by its number, from 1), cards and signs as drawn.
    assert "ann held four: A♠ A♥ A♦ A♣" in said and "signs: team A 🦉, team B 🦀" in said
    assert "cid: 1 real sign, 1 decoy (🎲)" in said and "bob: 1 decoy (🦊)" in said
    assert "seat 4: no pulse" in said


def test_quatro_play_journals_its_player_s_matches_and_restores_none(tmp_path, monkeypatch):
    """The private server journals to the player's own directory, closes the last run's tables (kept for replays),
    and a second game under the same name while the first runs keeps no journal; another name has its own."""
    from quatro_tui.local_server import LocalServer
    from quatro_tui.replay.journals import free_play_data_dir, play_data_dir

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert play_data_dir("ann") == tmp_path / "quatro" / "play" / "ann"
    assert play_data_dir("a/b c") == tmp_path / "quatro" / "play" / "a_b_c"
    mine = free_play_data_dir("ann")
    assert mine == play_data_dir("ann")
    lobby = Lobby(timing_profiles={"short": SHORT_MATCH})
    journal = Journal.open(mine)
    lobby.restore(journal, 0.0)
    from helpers.lobby_peer import RecordingPeer
    from test_journal import ask

    ann = RecordingPeer("ann")
    left = ask(lobby, ann, 0.0, p.CREATE_TABLE, players=4, timing="short")["table"]
    for _ in range(3):
        ask(lobby, ann, 0.1, p.ADD_BOT, level="normal")
    ask(lobby, ann, 0.2, p.START)  # a game left midway when the last run ended
    journal.close()
    with LocalServer(timing="fast", data_dir=mine) as server:
        assert server.port is not None
        assert free_play_data_dir("ann") is None  # held: a second game under this name keeps no journal
        assert free_play_data_dir("bob") == play_data_dir("bob")
        (saved,) = [t for t in read_journal(mine / FILE_NAME) if t.id == left]
        assert saved.status == "closed"
    assert free_play_data_dir("ann") == mine


async def test_moves_of_one_instant_are_one_frame_as_the_room_told_them(journalled):
    """A seat gone before the start: the match's start and that seat's disconnection are one batch, one snapshot
    for Ann, live and in the replay."""
    ann = await TestClient.connect(journalled.port, "ann")
    await ann.request(p.CREATE_TABLE, players=4)
    bob = await TestClient.connect(journalled.port, "bob")
    assert (await bob.request(p.JOIN, table=ann.table))["kind"] == p.OK
    await bob.aclose()
    for _ in range(2):
        await ann.request(p.ADD_BOT, level="normal")
    await ann.drain(0.3)
    assert (await ann.request(p.START))["kind"] == p.OK
    await ann.wait_view(lambda v: v.phase is Phase.SIGNING)
    await ann.drain(0.3)
    assert journalled.journal.flush()
    (saved,) = [t for t in read_journal(journalled.journal.path) if t.id == ann.table]
    started = [m for m in saved.moves if m.at == saved.moves[0].at]
    assert [m.kind for m in started if m.kind != "checkpoint"][:2] == ["start", "act"]  # and the absent seat leaving
    live = updates(ann)
    assert live[0]["snapshot"] and any(ev["kind"] == "seat_disconnected" for ev in live[0]["events"])
    replayed = decoded(frames_of(saved, 0, 0, commentary=False).frames)
    assert replayed and replayed == live[: len(replayed)]
    with pytest.raises(NotReplayable) as refused:
        seat_replay(saved, 0)  # under way: never let out
    assert refused.value.reason == p.NOT_OVER


async def test_quatro_replay_from_a_server_reads_the_seat_s_frames_as_its_live_client_did(journalled, monkeypatch):
    """``quatro replay ID HOST --seat 2``'s fetch, chunk after chunk: the views its client core builds are the ones
    Bob's live client built, frame for frame; a password table's match opens with a seat's secret."""
    from quatro_tui.replay.tape import ReplayError, fetch

    ann, bob = await quatro_match(journalled, password="hush")
    assert journalled.journal.flush()
    monkeypatch.setattr(archive_module, "CHUNK_BYTES", 3000)
    tape = await trio.to_thread.run_sync(
        lambda: fetch("127.0.0.1", journalled.port, "eve", ann.table, 2, secret=bob.secret)
    )
    assert [step.view for step in tape.steps] == [bob.views[seq] for seq in sorted(bob.views)]
    assert tape.names[2] == "bob" and tape.bot_seats == (1, 3) and tape.seat == 2
    with pytest.raises(ReplayError, match="password"):
        await trio.to_thread.run_sync(lambda: fetch("127.0.0.1", journalled.port, "eve", ann.table, 2))


async def long_match(server: Server, players: int = 8, swaps_per_round: int = 120) -> TestClient:
    """Ann (seat 0) and ``players - 1`` hard bots play a match to its end at the fast pace, Ann waiting in every round
    until ``swaps_per_round`` swaps have been told before she calls: a match of many swaps per round, as long in
    frames as a standard-pace one (the sizes are what matter, not the clock)."""
    ann = await TestClient.connect(server.port, "ann")
    assert (await ann.request(p.CREATE_TABLE, players=players))["kind"] == p.OK
    for _ in range(players - 1):
        assert (await ann.request(p.ADD_BOT, level="hard"))["kind"] == p.OK
    assert (await ann.request(p.START))["kind"] == p.OK
    with trio.fail_after(240):
        while True:
            view = await ann.wait_view(lambda v: v.phase is not Phase.ROUND or len(v.hand) == 4)
            if view.phase is Phase.OVER:
                break
            if view.phase is Phase.SIGNING:
                await ann.request("ready")
                await ann.wait_view(lambda v: v.phase is not Phase.SIGNING)
            elif view.phase is Phase.ROUND:
                told = len(updates(ann))
                await ann.wait_view(lambda v: v.phase is not Phase.ROUND or len(updates(ann)) >= told + swaps_per_round)
                await ann.request("call")
                await ann.wait_view(lambda v: v.phase is not Phase.ROUND)
            elif view.phase is Phase.BREAK:
                await ann.request("next_round")
                await ann.wait_view(lambda v: v.phase is not Phase.BREAK)
    await ann.drain(0.2)
    return ann


@pytest.fixture
async def journalled_to_five(nursery, tmp_path):
    """A journalling server as ``journalled``, its matches to five points (R20's standard target) at the fast pace."""
    lobby = Lobby(timing_profiles={"fast5": replace(FAST, break_length=0.5)}, seed=random.randrange(2**32))
    lobby.default_timing = "fast5"
    journal = Journal.open(tmp_path)
    lobby.restore(journal, trio.current_time())
    srv = Server(lobby)
    listeners = await nursery.start(srv.serve, "127.0.0.1", 0)
    srv.port = listeners[0].socket.getsockname()[1]
    srv.journal = journal
    yield srv
    journal.close()


async def test_a_long_eight_seat_match_replays_whole_over_tcp(journalled_to_five):
    journalled = journalled_to_five
    """An 8-seat match of hundreds of frames (more than an array of the framing holds) comes whole, chunk after
    chunk, to ``quatro replay``'s fetch and to a client reading the replies: no reply breaks the framing's limits."""
    from quatro_tui.replay.tape import fetch

    ann = await long_match(journalled)
    assert journalled.journal.flush()
    (saved,) = [t for t in read_journal(journalled.journal.path) if t.id == ann.table]
    expected = seat_replay(saved, 0)
    assert len(expected.frames) > framing.MAX_ARRAY_LEN
    eve = await TestClient.connect(journalled.port, "eve")
    frames: list[dict[str, Any]] = []
    while True:
        reply = await eve.request(p.REPLAY, table=ann.table, seat=0, start=len(frames))
        assert reply["kind"] == p.OK, reply
        frames += reply["frames"]
        if len(frames) >= reply["total"]:
            break
    assert frames == decoded(expected.frames) == updates(ann)
    tape = await trio.to_thread.run_sync(lambda: fetch("127.0.0.1", journalled.port, "eve", ann.table, 0))
    assert [step.view for step in tape.steps] == [ann.views[seq] for seq in sorted(ann.views)]


async def test_a_table_s_first_match_under_way_is_not_over_before_the_journal_holds_it(journalled):
    """The first match of a table, still played (its table not yet written to the journal's file): ``not_over``, as
    for any match under way, never ``no_such_table``."""
    ann = await TestClient.connect(journalled.port, "ann")
    await ann.request(p.CREATE_TABLE, players=4)
    for _ in range(3):
        await ann.request(p.ADD_BOT, level="normal")
    await ann.request(p.START)
    await ann.wait_view(lambda v: v.phase is Phase.SIGNING)
    eve = await TestClient.connect(journalled.port, "eve")
    reply = await eve.request(p.REPLAY, table=ann.table, seat=0)
    assert reply["kind"] == p.REFUSED and reply["reason"] == p.NOT_OVER, reply
    reply = await eve.request(p.REPLAY, table=ann.table + 50, seat=0)
    assert reply["kind"] == p.REFUSED and reply["reason"] == p.NO_SUCH_TABLE, reply
