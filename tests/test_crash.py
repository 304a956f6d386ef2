"""Crash tests: the real server process, journalling to a data directory, killed with SIGKILL at random moments of
random matches (network players and server bots) and restarted on the same directory. No won point is lost (R20),
every seat secret still opens its seat (R19), the tables, names, teams and host come back, and the match goes on to
its end. A Quarto game comes back the same way, both players to the same position."""

from __future__ import annotations

import random
import signal
import sys

import pytest
import trio

from quatro_shared import protocol as p
from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quatro.signs import SIGNS
from quatro_shared.games.quatro.views import Phase

from helpers.disk import mounted
from helpers.netclient import TestClient
from test_server_cli import read_stderr, start_server

#: The fast profile with a match of three points, so that a test sees a whole match in seconds.
CRASH_TIMING = """
sign_window = 3.0
swap_cooldown = 0.2
channel_cooldown = 0.2
pulse_interval = 0.5
pulse_shown = 0.4
vote_window = 2.0
vote_gap = 3.0
round_length = 18.0
break_length = 3.0
target_score = 3
"""


async def play(c: TestClient, rng: random.Random, host: bool, calls: float = 0.012) -> None:
    """A player acting at random, as fast as a person at most: ready, swap, channel, call (``calls`` of the time),
    counter, next round."""
    while True:
        await c.drain(rng.uniform(0.02, 0.08))
        v = c.view
        if v is None:
            continue
        if v.phase is Phase.OVER:
            return
        request: tuple[str, dict] | None = None
        if v.phase is Phase.SIGNING and not v.seats[v.seat].ready:
            request = ("ready", {})
        elif v.phase is Phase.ROUND:
            roll = rng.random()
            if roll < calls:
                request = ("call", {})
            elif roll < calls + 0.004:
                request = ("counter", {})
            elif roll < 0.6 and v.hand and v.center:
                slot = rng.randrange(len(v.center))
                request = ("swap", {"give": rng.choice(v.hand), "slot": slot, "take": v.center[slot]})
            elif roll < 0.8:
                request = ("release_channel", {}) if v.channel_held else ("take_channel", {})
            else:
                request = ("choose_emoji", {"sign": rng.choice(SIGNS)}) if v.channel_held else None
        elif v.phase is Phase.BREAK and host:
            request = ("next_round", {})
        if request is not None:
            reply = await c.request(request[0], **request[1])
            assert reply["kind"] in (p.OK, p.REFUSED), reply


def scores_seen(c: TestClient) -> list[int]:
    """The highest score of each team this client was ever told (snapshots' views, round ends, the match's end;
    protocol 2 sends a full view only in a snapshot)."""
    best: list[int] = []
    for frame in c.frames:
        if frame.get("kind") != p.UPDATE:
            continue
        told = [frame["view"]["scores"]] if "view" in frame else []
        told += [ev["scores"] for ev in frame["events"] if ev["kind"] in ("round_ended", "match_over")]
        for scores in told:
            best = [max(a, b) for a, b in zip(best, scores)] if best else list(scores)
    return best


async def read_what_is_left(c: TestClient) -> None:
    """Whatever reached the client before the server died counts as told."""
    with trio.move_on_after(0.5):
        try:
            while await c._read_frame() is not None:
                pass
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass


@pytest.mark.parametrize("seed", [11, 29])
async def test_r20_kill_9_at_random_moments_loses_no_point_and_no_seat(tmp_path, seed):
    rng = random.Random(seed)
    timing = tmp_path / "crash.toml"
    timing.write_text(CRASH_TIMING)
    data = tmp_path / "data"
    args = ("--data-dir", str(data), "--timing", str(timing), "--seed", str(seed))
    proc, port, _ = await start_server(*args)
    try:
        # A match of two network players and two server bots, and a table still seating players, with a password.
        ann = await TestClient.connect(port, "ann")
        assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
        bob = await TestClient.connect(port, "bob")
        assert (await bob.request(p.JOIN, table=ann.table))["kind"] == p.OK
        for _ in range(2):
            assert (await ann.request(p.ADD_BOT, level=rng.choice(["normal", "hard"])))["kind"] == p.OK
        zed = await TestClient.connect(port, "zed")
        assert (await zed.request(p.CREATE_TABLE, players=6, password="sesame"))["kind"] == p.OK
        assert (await ann.request(p.START))["kind"] == p.OK
        players = {"ann": ann, "bob": bob}
        secrets = {name: (c.table, c.seat, c.secret) for name, c in {**players, "zed": zed}.items()}
        tables = sorted(entry["table"] for entry in (await zed.request(p.LIST_TABLES))["tables"])
        await ann.wait_view(lambda v: v.phase is not Phase.LOBBY)
        seating = ann.seating
        seen = [0, 0]
        over = False

        for crash in range(3):
            with trio.move_on_after(rng.uniform(0.2, 1.2)):
                async with trio.open_nursery() as nursery:
                    for name, c in players.items():
                        nursery.start_soon(play, c, random.Random(rng.random()), name == "ann")
            proc.kill()  # SIGKILL: no goodbye, no flush
            await proc.wait()
            for c in (*players.values(), zed):
                await read_what_is_left(c)
                seen = [max(a, b) for a, b in zip(seen, scores_seen(c) or seen)]
            if max(seen) >= 3:
                over = True  # the match ended before this kill
                break

            proc, port, out = await start_server(*args)
            if "1 table restored" in out:  # the last point was won (and committed) just before the kill, unseen
                replay = await trio.run_process(
                    [sys.executable, "-m", "quatro_server", "replay", str(secrets["ann"][0]), "--data-dir", str(data)],
                    capture_stdout=True,
                )
                assert "match over" in replay.stdout.decode().splitlines()[-1]
                over = True
                break
            assert "2 tables restored" in out, out
            players = {}
            for name, (table, seat, secret) in secrets.items():
                c = await TestClient.connect(port, name)
                reply = await c.request(p.REJOIN, table=table, secret=secret)
                assert reply["kind"] == p.OK and reply["seat"] == seat, (name, reply)  # R19: every secret holds
                if name != "zed":
                    players[name] = c
                else:
                    zed = c
            ann = players["ann"]
            view = await ann.wait_view(lambda v: True)
            assert all(now >= before for now, before in zip(view.scores, seen)), (crash, view.scores, seen)  # R20
            await ann.drain(0.05)
            assert [(s["name"], s["bot"], s["taken"]) for s in ann.seating["seats"]] == [
                (s["name"], s["bot"], s["taken"]) for s in seating["seats"]
            ]
            assert ann.seating["host"] == seating["host"] == 0
            listing = await zed.request(p.LIST_TABLES)
            assert sorted(entry["table"] for entry in listing["tables"]) == tables
            wrong = await TestClient.connect(port, "eve")
            refused = await wrong.request(p.JOIN, table=secrets["zed"][0], password="open")
            assert refused["kind"] == p.REFUSED and refused["reason"] == p.BAD_PASSWORD

        if not over:  # the journal's match goes on to its end
            with trio.fail_after(40):
                async with trio.open_nursery() as nursery:
                    for name, c in players.items():
                        nursery.start_soon(play, c, random.Random(rng.random()), name == "ann", 0.1)
            end = await ann.wait_event("match_over")
            assert max(end["scores"]) == 3
            assert all(final >= before for final, before in zip(end["scores"], seen))
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGKILL)
            await proc.wait()


#: Long phases: nothing but the players' own moves and the pulses happens during the test.
STILL_TIMING = CRASH_TIMING.replace("sign_window = 3.0", "sign_window = 30.0").replace(
    "round_length = 18.0", "round_length = 60.0"
)


async def test_r19_after_kill_9_the_round_comes_back_exactly_and_the_downtime_is_not_counted(tmp_path):
    """Four players mid-round; once every move is committed (a few milliseconds), a SIGKILL and a restart two seconds
    later give each the same hand, center, team sign, channels and emoji, and the round's clock where it stood."""
    timing = tmp_path / "still.toml"
    timing.write_text(STILL_TIMING)
    args = ("--data-dir", str(tmp_path / "data"), "--timing", str(timing))
    proc, port, _ = await start_server(*args)
    try:
        names = ("ann", "bob", "cid", "dee")
        clients = [await TestClient.connect(port, name) for name in names]
        ann, bob = clients[0], clients[1]
        await ann.request(p.CREATE_TABLE, players=4)
        for c in clients[1:]:
            assert (await c.request(p.JOIN, table=ann.table))["kind"] == p.OK
        await ann.request(p.START)
        await ann.wait_view(lambda v: v.phase is Phase.SIGNING)
        assert (await ann.request("pick_sign", sign="fox"))["kind"] == p.OK
        assert (await bob.request("pick_sign", sign="owl"))["kind"] == p.OK
        for c in clients:
            await c.request("ready")
        for c in clients:
            await c.wait_view(lambda v: v.phase is Phase.ROUND and len(v.hand) == 4)
        view = ann.view
        assert (await ann.request("swap", give=view.hand[0], slot=2, take=view.center[2]))["kind"] == p.OK
        assert (await bob.request("take_channel"))["kind"] == p.OK
        assert (await bob.request("choose_emoji", sign="rocket"))["kind"] == p.OK
        for c in clients:
            await c.wait_event("pulse")
            await c.drain(0.2)
        before = {c.name: c.view for c in clients}
        proc.kill()
        await proc.wait()
        await trio.sleep(2.0)  # the server is down for a while: that time is nobody's

        proc, port, _ = await start_server(*args)
        returned = []  # kept open: a dropped connection would be a disconnection
        for c in clients:
            back = await TestClient.connect(port, c.name)
            returned.append(back)
            assert (await back.request(p.REJOIN, table=c.table, secret=c.secret))["kind"] == p.OK
            after = await back.wait_view(lambda v: True)
            was = before[c.name]
            assert (after.hand, after.center, after.sign, after.scores, after.round, after.phase) == (
                was.hand,
                was.center,
                was.sign,
                was.scores,
                was.round,
                was.phase,
            )
            assert after.channel_held == was.channel_held and after.channel_sign == was.channel_sign
            assert (
                [s.channel_held for s in after.seats]
                == [s.channel_held for s in was.seats]
                == [False, True, False, False]
            )
            assert after.host == 0
            assert 0 <= was.phase_ms - after.phase_ms < 1200, (was.phase_ms, after.phase_ms)  # not 2 s less
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


#: Quarto with a move clock that does not run out during the test, so that its countdown is there to carry over.
QUARTO_TIMING = STILL_TIMING + "quarto_move_clock = 30.0\n"


async def play_quarto_until(clients: list[TestClient], rng: random.Random, done) -> None:
    """Both seats play legal moves at random (``quatro_shared.games.quarto.contract.legal``), ready for each next game, until
    ``done(view)`` holds for the first client's view."""
    with trio.fail_after(60):
        while not done(clients[0].view):
            for c in clients:
                moves = q.legal(c.view) if isinstance(c.view, q.QuartoView) else []
                if moves:
                    reply = await c.act(rng.choice(moves))
                    assert reply["kind"] == p.OK, reply
            for c in clients:
                await c.drain(0.02)


async def test_q_a_quarto_game_survives_kill_9_with_both_seats_and_its_position(tmp_path):
    """A Quarto game in its second game, a few turns in: SIGKILL, a restart two seconds later on the same data
    directory, and both players rejoin with their seats' secrets to the same board, pool, piece in hand, turn and
    step, scores and moves, the move clock where it stood; then they play the match to its end."""
    timing = tmp_path / "quarto.toml"
    timing.write_text(QUARTO_TIMING)
    args = ("--data-dir", str(tmp_path / "data"), "--timing", str(timing))
    proc, port, _ = await start_server(*args)
    rng = random.Random(23)
    try:
        ann = await TestClient.connect(port, "ann")
        assert (await ann.request(p.CREATE_TABLE, game="quarto"))["kind"] == p.OK
        bob = await TestClient.connect(port, "bob")
        assert (await bob.request(p.JOIN, table=ann.table))["kind"] == p.OK
        assert (await ann.request(p.START))["kind"] == p.OK
        for c in (ann, bob):
            await c.wait_view(lambda v: isinstance(v, q.QuartoView) and v.phase is q.Phase.PLAYING)
        await play_quarto_until(
            [ann, bob], rng, lambda v: v.phase is q.Phase.PLAYING and v.game == 2 and len(v.moves) >= 3
        )
        await trio.sleep(0.3)  # every move committed (the writer gathers for a tenth of a second)
        for c in (ann, bob):
            await c.drain(0.05)
        before = {c.name: c.view for c in (ann, bob)}
        assert sum(before["ann"].scores) + before["ann"].draws == 1  # the first game is over and counted
        proc.kill()  # SIGKILL: no goodbye, no flush
        await proc.wait()
        await trio.sleep(2.0)  # the server is down for a while: that time is nobody's

        proc, port, out = await start_server(*args)
        assert "1 table restored" in out, out
        returned = []  # kept open: a dropped connection would be a disconnection
        for c in (ann, bob):
            back = await TestClient.connect(port, c.name)
            returned.append(back)
            reply = await back.request(p.REJOIN, table=c.table, secret=c.secret)
            assert reply["kind"] == p.OK and reply["seat"] == c.seat, reply
            after = await back.wait_view(lambda v: isinstance(v, q.QuartoView))
            was = before[c.name]
            assert (after.board, after.pool, after.in_hand, after.turn, after.step, after.game, after.starter) == (
                was.board,
                was.pool,
                was.in_hand,
                was.turn,
                was.step,
                was.game,
                was.starter,
            )
            assert (after.scores, after.draws, after.moves, after.phase) == (
                was.scores,
                was.draws,
                was.moves,
                was.phase,
            )
            assert [(s.bot, s.connected) for s in after.seats] == [(False, True), (False, True)]
            assert 0 <= was.clock_ms - after.clock_ms < 1500, (was.clock_ms, after.clock_ms)  # not 2 s less
        await play_quarto_until(returned, rng, lambda v: v.phase is q.Phase.OVER)
        final = returned[0].view
        assert sum(final.scores) + final.draws == final.games
        assert all(end >= was for end, was in zip(final.scores, before["ann"].scores))
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


#: Short rounds, a match out of reach: points come every few seconds for as long as the test watches.
FULL_DISK_TIMING = (
    CRASH_TIMING.replace("sign_window = 3.0", "sign_window = 0.5")
    .replace("round_length = 18.0", "round_length = 2.5")
    .replace("break_length = 3.0", "break_length = 0.5")
    .replace("target_score = 3", "target_score = 99")
)


@pytest.fixture
def small_disk(tmp_path):
    yield from mounted(tmp_path / "disk", "8m")


async def test_r20_a_disk_that_fills_and_frees_loses_no_announced_point(tmp_path, small_disk):
    """The data directory on its own small file system, filled while two tables of players and bots play, then
    freed: every point told is kept (the server holds a point it could not commit, and tells it once it can).
    Then filled again and the server killed while it is full: the restart says its journal missed writes and still
    restores every point that was told, since none was told that the disk had not taken."""
    timing = tmp_path / "full.toml"
    timing.write_text(FULL_DISK_TIMING)
    data = small_disk.root / "data"
    args = ("--data-dir", str(data), "--timing", str(timing), "--seed", "5")
    proc, port, _ = await start_server(*args)
    errors = ""
    try:
        players: dict[str, TestClient] = {}
        for name in ("ann", "bob"):
            c = await TestClient.connect(port, name)
            assert (await c.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
            for _ in range(3):
                assert (await c.request(p.ADD_BOT, level="hard"))["kind"] == p.OK
            assert (await c.request(p.START))["kind"] == p.OK
            players[name] = c
        secrets = {name: (c.table, c.seat, c.secret) for name, c in players.items()}

        async def watch(seconds: float) -> None:
            with trio.move_on_after(seconds):
                async with trio.open_nursery() as nursery:
                    for i, c in enumerate(players.values()):
                        nursery.start_soon(play, c, random.Random(i), True, 0.05)  # calls: points, right or wrong

        def told() -> dict[str, list[int]]:
            return {name: scores_seen(c) or [0, 0] for name, c in players.items()}

        def rounds_told() -> int:
            return sum(
                ev["kind"] == "round_ended"
                for c in players.values()
                for f in c.frames
                if f.get("kind") == p.UPDATE
                for ev in f["events"]
            )

        await watch(3.0)
        before_full = rounds_told()
        assert before_full > 0
        small_disk.fill()
        await watch(6.0)  # the journal's file grows past what was left: its commits fail, its points are held
        assert (await players["ann"].request(p.PING))["kind"] == p.OK  # the server serves on meanwhile
        during_full = rounds_told()
        small_disk.free()
        await watch(5.0)
        assert rounds_told() > during_full  # the held points are told once the disk takes them, and play goes on
        announced = told()

        async def restart(announced: dict[str, list[int]]) -> str:
            nonlocal proc, port, players, errors
            proc.kill()
            await proc.wait()
            errors += await read_stderr(proc)
            for c in players.values():
                await read_what_is_left(c)
            announced.update(told())
            small_disk.free()
            proc, port, out = await start_server(*args)
            assert "2 tables restored" in out, out
            players = {}
            for name, (table, seat, secret) in secrets.items():
                c = await TestClient.connect(port, name)
                reply = await c.request(p.REJOIN, table=table, secret=secret)
                assert reply["kind"] == p.OK and reply["seat"] == seat, (name, reply)
                view = await c.wait_view(lambda v: True)
                assert all(kept >= seen for kept, seen in zip(view.scores, announced[name])), (
                    name,
                    view.scores,
                    announced,
                )
                players[name] = c
            return out

        await restart(announced)
        assert sum(map(sum, announced.values())) > 0
        assert "journal_failed" in errors and "journal_not_durable" in errors and "journal_resumed" in errors
        assert "journal_missed_writes" not in errors

        small_disk.fill()
        await watch(6.0)
        await restart(told())  # killed while the disk is full (freed before the restart)
        await watch(1.0)
        proc.kill()
        await proc.wait()
        errors += await read_stderr(proc)
        assert "journal_missed_writes" in errors and "table_restored_behind" in errors
    finally:
        small_disk.free()
        if proc.returncode is None:
            proc.send_signal(signal.SIGKILL)
            await proc.wait()


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
async def test_a_restored_table_is_listed_idle_from_the_restart_not_from_another_clock(tmp_path, signum):
    """The lobby list's ``idle_s`` of a restored table counts from the restart (server time), whatever clock the
    last server ran on and however it stopped."""
    args = ("--data-dir", str(tmp_path / "data"), "--timing", "fast")
    proc, port, _ = await start_server(*args)
    try:
        ann = await TestClient.connect(port, "ann")
        assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
        for _ in range(3):
            assert (await ann.request(p.ADD_BOT, level="normal"))["kind"] == p.OK
        assert (await ann.request(p.START))["kind"] == p.OK
        await trio.sleep(0.5)
        proc.send_signal(signum)
        await proc.wait()
        proc, port, out = await start_server(*args)
        assert "1 table restored" in out, out
        zed = await TestClient.connect(port, "zed")
        (entry,) = (await zed.request(p.LIST_TABLES))["tables"]
        assert 0 <= entry["idle_s"] <= 5, entry
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
