"""The replay player on the table's own screens (App.run_test): stepping, going back, jumping to the next call, the
truth beside the reveal, speeds and the virtual clock; the lobby's past matches (key p) against a real server."""

from __future__ import annotations

import os
import random
import re
import shlex
import sys
import time
import uuid
from pathlib import Path

import pytest

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.games.quarto import contract as q
from quatro_shared.wire import reply_from_wire, request_from_wire, to_wire

from conftest import STEADY
from helpers.lobby_peer import RecordingPeer as Peer
from helpers.terminal import on_the_table, wait_for
from helpers.tui import run, until
from quatro_server import journal as j
from quatro_server.replay.archive import chunk
from quatro_server.replay.seat import seat_replay
from quatro_server.tables.lobby import Lobby
from quatro_tui.app import Join, QuatroApp
from quatro_tui.games.quarto.screen import QuartoScreen
from quatro_tui.games.quatro.screens.reveal import MatchEndScreen, RevealScreen
from quatro_tui.games.quatro.screens.signing import SigningScreen
from quatro_tui.games.quatro.screens.table import TableScreen
from quatro_tui.local_server import LocalServer
from quatro_tui.replay.past import PastMatchesScreen
from quatro_tui.replay.player import ReplayBar, ReplayNotes, ReplayPlayer
from quatro_tui.replay.tape import Tape
from test_journal import ask, play_to_the_end
from test_tui_ascii import screen_text


def tape_of(data_dir: Path, table: int, seat: int) -> Tape:
    """The tape the client gets for ``seat``: the server's frames, through the wire, read by the client core."""
    (saved,) = [t for t in j.read_journal(data_dir / j.FILE_NAME) if t.id == table]
    reply = reply_from_wire(to_wire(m.Ok(1, chunk(seat_replay(saved, seat), 0))), m.ReplayFrames)
    assert isinstance(reply, m.Ok) and isinstance(reply.payload, m.ReplayFrames)
    return Tape.from_chunks([reply.payload])


def bar_text(app: QuatroApp) -> str:
    return str(app.screen.query_one("#replay-status").render())


def replay_keys(app: QuatroApp) -> str:
    """The replay bar's line of keys, once it is drawn ("" before)."""
    keys = app.screen.query("#replay-keys")
    return str(keys.first().render()) if keys else ""


def notes_of(app: QuatroApp) -> str:
    panels = app.screen.query(ReplayNotes)
    return str(panels.first().render()) if panels and panels.first().display else ""


def test_stepping_through_a_quatro_replay_on_the_table_s_own_screens(tmp_path):
    table = play_to_the_end(tmp_path)
    tape = tape_of(tmp_path, table, 2)

    async def body() -> None:
        player = ReplayPlayer(tape, autoplay=False)
        app = QuatroApp(replay=player)
        async with app.run_test(size=(100, 32)) as pilot:
            await until(lambda: app.screen.query(ReplayBar) and "frame 1/" in bar_text(app), what="the bar")
            assert isinstance(app.screen, SigningScreen) and app.game.me == 2
            assert "paused" in bar_text(app) and notes_of(app) == ""
            await pilot.press("right")
            await until(lambda: isinstance(app.screen, TableScreen), what="the round")
            assert player.index == 1 and app.game.view == tape.steps[1].view
            await pilot.press("left")
            await until(lambda: isinstance(app.screen, SigningScreen), what="back to the signing")
            assert player.index == 0 and app.game.view == tape.steps[0].view
            await pilot.press("n")  # the next call, and its reveal
            await until(lambda: isinstance(app.screen, RevealScreen), what="the reveal")
            assert any(ev.kind == "round_ended" for ev in tape.steps[player.index].events)
            await until(lambda: "The truth of round 1" in notes_of(app), what="the truth beside the reveal")
            assert "signs: team A" in notes_of(app)
            await pilot.press("s", "s")
            await until(lambda: "x4" in bar_text(app), what="speed x4")
            # Playing: the virtual clock moves, frames come at their match times; nobody waits for real.
            await pilot.press("space")
            assert player.playing
            player.advance(0.001)
            assert player.index < len(tape.steps) - 1
            player.advance(10_000.0)
            await until(lambda: isinstance(app.screen, MatchEndScreen), what="the end of the match")
            assert player.index == len(tape.steps) - 1 and not player.playing
            await pilot.press("home")
            await until(lambda: player.index == 0 and isinstance(app.screen, SigningScreen), what="the start")
            await pilot.press("q")
            await until(lambda: not app.is_running, what="the app closing")

    run(body)


def test_a_replay_s_countdowns_run_on_the_match_s_clock(tmp_path):
    """The screens count on the replay's clock: the time shown is the frame's match time, paused or not."""
    table = play_to_the_end(tmp_path)
    tape = tape_of(tmp_path, table, 0)

    async def body() -> None:
        player = ReplayPlayer(tape, autoplay=False)
        app = QuatroApp(replay=player)
        async with app.run_test(size=(100, 32)) as pilot:
            await until(lambda: app.screen.query(ReplayBar), what="the bar")
            await pilot.press("end")
            await until(lambda: player.index == len(tape.steps) - 1, what="the end")
            assert app.game.clock() == tape.steps[-1].at_ms / 1000
            assert "the end" in bar_text(app)

    run(body)


def reveal_frame(tape: Tape) -> int:
    """The first frame with a round's reveal (the break after it)."""
    return next(i for i, step in enumerate(tape.steps) if any(ev.kind == "round_ended" for ev in step.events))


@pytest.mark.parametrize("ascii_only", [False, True], ids=["unicode", "ascii"])
def test_the_truth_beside_a_replay_speaks_as_the_table_does_at_80x24(tmp_path, ascii_only):
    """The truth names players as the table does (by name; seats from 1, never "s0") and draws cards and signs as
    the table draws them: ``A♠`` and the sign's emoji, or ``AS`` and its name in ASCII."""
    from quatro_shared.games.quatro import events as e

    from quatro_server.games.quatro.commentary import QuatroCommentary

    table = play_to_the_end(tmp_path)
    tape = tape_of(tmp_path, table, 0)
    at = reveal_frame(tape)
    ann_four = e.RoundEnded(
        1,
        "call",
        0,
        None,
        True,
        (0,),
        (1, 0),
        (("AS", "AH", "AD", "AC"),) + (("KS",) * 4,) * 3,
        ("JS",) * 4,
        ("owl", "crab"),
        (0,),
    )
    tape.notes = [(at, tuple(QuatroCommentary(tape.names).truth(ann_four)))]

    async def body() -> None:
        player = ReplayPlayer(tape, autoplay=False)
        app = QuatroApp(ascii_only=ascii_only, replay=player)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: app.screen.query(ReplayBar), what="the bar")
            player.goto(at)
            await until(lambda: "The truth of round 1" in screen_text(app), what="the truth beside the reveal")
            await pilot.pause()
            text = screen_text(app)
            if ascii_only:
                assert "ann held four: AS AH AD AC" in text and "signs: team A owl, team B crab" in text, text
                assert text.isascii(), text
            else:
                assert "ann held four: A♠ A♥ A♦ A♣" in text and "signs: team A 🦉, team B 🦀" in text, text
            assert "normal-bot-1: no pulse" in text, text
            assert not re.search(r"\bs[0-3]\b", text), text
            assert "as seat 1 (ann)" in text, text

    run(body)


def test_a_quatro_replay_tells_its_breaks_and_offers_no_host_s_keys_at_80x24(tmp_path):
    """Ann hosted the match, but a replay is no live seat: the break and the match's end are told, and neither
    "n starts the next round" nor "plays again" (nor the non-host's "The host may play again") shows."""
    table = play_to_the_end(tmp_path)
    tape = tape_of(tmp_path, table, 0)
    live_words = ("starts the next round now", "if the host says so", "plays again", "The host may play again")

    async def body() -> None:
        player = ReplayPlayer(tape, autoplay=False)
        app = QuatroApp(replay=player)
        async with app.run_test(size=(80, 24)):
            await until(lambda: app.screen.query(ReplayBar), what="the bar")
            player.goto(reveal_frame(tape))
            await until(lambda: isinstance(app.screen, RevealScreen), what="the break")
            await until(lambda: "The next round starts in" in screen_text(app), what="the break told")
            assert not [said for said in live_words if said in screen_text(app)], screen_text(app)
            player.goto(len(tape.steps) - 1)
            await until(lambda: isinstance(app.screen, MatchEndScreen), what="the end of the match")
            await until(lambda: "The match ended here." in screen_text(app), what="the end told")
            assert not [said for said in live_words if said in screen_text(app)], screen_text(app)

    run(body)


def quarto_match(data_dir: Path) -> int:
    """A whole Quarto match of one game between a caller and a bot, in process, journalled."""
    lobby = Lobby(timing_profiles={"steady": STEADY}, seed=5)
    journal = j.Journal.open(data_dir)
    lobby.restore(journal, 0.0)
    ann = Peer("ann")
    table_id = ask(lobby, ann, 0.0, p.CREATE_TABLE, game=q.NAME, timing="steady")["table"]
    ask(lobby, ann, 0.1, p.ADD_BOT, level="random")
    ask(lobby, ann, 0.2, p.START)
    room = lobby.rooms[table_id]
    rng = random.Random(3)
    now = 0.3
    while room.table.phase is not q.Phase.OVER:
        view = room.game.view(room.table, 0, now)
        moves = q.legal(view)
        if moves:
            lobby.handle(ann, request_from_wire({**to_wire(rng.choice(moves)), "id": 1}), now)
        elif view.phase is q.Phase.BETWEEN:
            lobby.handle(ann, request_from_wire({"kind": "next_game", "id": 1}), now)
        now += 1.0
        room.tick(now)
    journal.close()
    return table_id


def test_q_a_quarto_replay_jumps_move_by_move_with_the_solver_s_verdict(tmp_path):
    table = quarto_match(tmp_path)
    tape = tape_of(tmp_path, table, 0)

    async def body() -> None:
        player = ReplayPlayer(tape, autoplay=False)
        app = QuatroApp(replay=player)
        async with app.run_test(size=(100, 32)) as pilot:
            await until(
                lambda: isinstance(app.screen, QuartoScreen) and "next move" in replay_keys(app),
                what="the board, and the replay's keys naming the next move",
            )
            said = []
            for _ in range(40):
                await pilot.press("n")
                await pilot.pause()
                said.append(notes_of(app))
                if player.index == len(tape.steps) - 1:
                    break
            assert any("position for them" in note for note in said), said
            assert any("game is over" in note for note in said), said

    run(body)


def test_a_quarto_replay_never_asks_the_seat_to_move_at_80x24(tmp_path):
    """Frame after frame, the seat's own turns are told ("You place TDQF.") and no live prompt shows: no "Your
    turn", no move keys, no cursor's "choose one to give", no "n starts the next game"."""
    table = quarto_match(tmp_path)
    tape = tape_of(tmp_path, table, 0)
    live_words = (
        "Your turn",
        "You start: choose",
        "enter or a second click",
        "choose one to give",
        "n starts the next game",
        "ready: the next game starts",
    )

    async def body() -> None:
        player = ReplayPlayer(tape, autoplay=False)
        app = QuatroApp(replay=player)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, QuartoScreen), what="the board")
            told = []
            for index in range(len(tape.steps)):
                player.goto(index)
                await pilot.pause()
                text = screen_text(app)
                assert not [said for said in live_words if said in text], (index, text)
                told += re.findall(r"You (?:place \w+|choose the piece)", text)
            assert told, "the seat's own turns are told"

    run(body)


def test_past_matches_from_the_lobby_open_the_replay_player(tmp_path):
    """Against a real server on its journal: the lobby's p lists the match, enter replays it, q comes back."""
    table = play_to_the_end(tmp_path)
    server = LocalServer("fast", data_dir=tmp_path)
    server.start()
    try:

        async def body() -> None:
            app = QuatroApp(Join("127.0.0.1", server.port, "eve"))
            async with app.run_test(size=(100, 32)) as pilot:
                from quatro_tui.screens.lobby import LobbyScreen

                await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
                await pilot.press("p")
                await until(lambda: isinstance(app.screen, PastMatchesScreen) and app.screen.matches, what="the list")
                listed = app.screen.matches
                assert listed[0].table == table and listed[0].names[0] == "ann"
                await pilot.press("enter")
                await until(lambda: app.player is not None and app.screen.query(ReplayBar), what="the replay")
                assert app.player.tape.table == table and app.player.tape.seat == 0
                await pilot.press("q")
                await until(lambda: isinstance(app.screen, LobbyScreen) and app.player is None, what="the lobby again")

        run(body)
    finally:
        server.stop()


@pytest.mark.timeout(120)
def test_quatro_replay_id_seat_2_in_tmux_at_80x24(tmp_path, tmux):
    """``quatro replay ID --seat 3``, a match of the player's own (their ``quatro play`` journal): the screens of seat
    3 (the wire's 2: people count seats from 1), step by step, then the reveal and the truth beside it; q closes."""
    from quatro_tui.replay.journals import play_data_dir

    data_home = tmp_path / "data"
    journal_dir = data_home / play_data_dir("ann").relative_to(play_data_dir("ann").parents[2])
    journal_dir.mkdir(parents=True)
    table = play_to_the_end(journal_dir)
    tape = tape_of(journal_dir, table, 2)
    session = f"quatro-replay-{uuid.uuid4().hex[:8]}"
    command = " ".join(
        [
            "env",
            f"XDG_DATA_HOME={shlex.quote(str(data_home))}",
            f"XDG_CONFIG_HOME={shlex.quote(str(tmp_path))}",
            "LANG=C.UTF-8",
            shlex.quote(sys.executable),
            "-m",
            "quatro_tui",
            "replay",
            str(table),
            "--seat",
            "3",
            "--name",
            "ann",
        ]
    )
    tmux("-u", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", "-c", os.getcwd(), command)
    try:
        wait_for(tmux, session, lambda t: f"replay of table {table} as seat 3 (" in t, "the replay")
        tmux("send-keys", "-t", session, "Home")  # to the start, paused: the steps are the keys'
        wait_for(tmux, session, lambda t: "paused x1 · 00:00.0" in t and "frame 1/" in t, "the first frame")
        tmux("send-keys", "-t", session, "Right")
        hand = tape.steps[1].view.hand
        wait_for(tmux, session, lambda t: "frame 2/" in t and on_the_table(t), "seat 2's table")
        tmux("send-keys", "-t", session, "n")
        text = wait_for(tmux, session, lambda t: "The truth of round 1" in t, "the reveal and its truth")
        assert "signs: team A" in text
        assert hand and tape.steps[1].view.seat == 2
        tmux("send-keys", "-t", session, "q")
        deadline = time.monotonic() + 20
        while session in tmux("list-sessions", "-F", "#{session_name}") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert session not in tmux("list-sessions", "-F", "#{session_name}"), "q did not close the replay"
    finally:
        tmux("kill-session", "-t", session)


def test_the_help_lists_the_replay_s_keys_only_during_a_replay(tmp_path):
    from quatro_tui.screens.help import key_lines

    table = play_to_the_end(tmp_path)
    tape = tape_of(tmp_path, table, 0)

    async def body() -> None:
        app = QuatroApp(replay=ReplayPlayer(tape, autoplay=False))
        async with app.run_test(size=(100, 32)):
            await until(lambda: app.screen.query(ReplayBar), what="the replay")
            assert any(what == "step forward" for _keys, what in key_lines(app.screen))
            app.player.close()
            app.player = None
            assert not any(what == "step forward" for _keys, what in key_lines(app.screen))

    run(body)


def test_a_replay_in_ascii_mode_shows_ascii_and_names_as_plain_text(tmp_path):
    """--ascii: the bar and the truth in ASCII; a name that looks like markup is shown as it is."""
    table = play_to_the_end(tmp_path)
    tape = tape_of(tmp_path, table, 0)
    tape.names = ("[b]ann[/b]", *tape.names[1:])

    async def body() -> None:
        player = ReplayPlayer(tape, autoplay=False)
        app = QuatroApp(ascii_only=True, replay=player)
        async with app.run_test(size=(100, 32)) as pilot:
            await until(lambda: app.screen.query(ReplayBar) and "frame 1/" in bar_text(app), what="the bar")
            await pilot.press("n")
            await until(lambda: "The truth of round" in notes_of(app), what="the truth")
            assert bar_text(app).isascii() and notes_of(app).isascii()
            assert replay_keys(app) and replay_keys(app).isascii()
            assert "[b]ann[/b]" in bar_text(app)

    run(body)


def test_past_matches_at_80x24_show_when_each_ended_and_count_seats_from_1(tmp_path):
    """At 80x24 the list cut "ended" to "2026-12-0" (the names came before it), and the seat chooser began at
    "seat 0" where the waiting room counts from 1. The names run off last, the date shows whole."""
    from test_tui_ascii import screen_text

    play_to_the_end(tmp_path)
    server = LocalServer("fast", data_dir=tmp_path)
    server.start()
    try:

        async def body() -> None:
            app = QuatroApp(Join("127.0.0.1", server.port, "eve"))
            async with app.run_test(size=(80, 24)) as pilot:
                from quatro_tui.screens.lobby import LobbyScreen

                await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
                await pilot.press("p")
                await until(lambda: isinstance(app.screen, PastMatchesScreen) and app.screen.matches, what="the list")
                await pilot.pause()
                await pilot.pause()
                shown = screen_text(app)
                ended = time.strftime("%Y-%m-%d", time.localtime(app.screen.matches[0].ended))
                row = next(line for line in shown.split("\n") if line.lstrip().startswith("1 "))
                assert ended in row and "Quatro" in row and "ann" in row, shown
                assert "seat 0" not in shown and "seat 1" in shown, shown

        run(body)
    finally:
        server.stop()
