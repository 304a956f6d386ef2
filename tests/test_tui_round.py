"""Whole rounds through the screen against a real server: keys and mouse, channel and pulses, votes, calls, counters.

The app plays one seat; scripted players (the client's own connection, no screen) fill the others, so nothing
ends the round but the test itself: the server's timing is patient (``helpers.tui.PATIENT_TIMING``), so no sign
window, vote or round runs out under a test, however slow the machine.
"""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import Select

from quatro_shared import protocol as p
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.signs import EMOJI, SIGNS
from quatro_shared.games.quatro.views import Phase

from helpers.tui import PATIENT, Player, quatro_server, run, until  # noqa: F401 - quatro_server is a fixture
from quatro_tui.app import Join, QuatroApp
from quatro_tui.games.quatro.screens.dialogs import ConfirmCall, CounterTeam
from quatro_tui.games.quatro.screens.reveal import RevealScreen
from quatro_tui.games.quatro.screens.signing import SignChoice, SigningScreen
from quatro_tui.games.quatro.screens.table import TableScreen
from quatro_tui.games.quatro.widgets import SeatBox, SelfPanel, VotePrompt
from quatro_tui.games.quatro.widgets.cards import CARD_GAP, CARD_WIDTH, LABEL_WIDTH
from quatro_tui.games.quatro.widgets.signs import CELL, SignGrid
from quatro_tui.screens.lobby import LobbyScreen
from quatro_tui.screens.room import RoomScreen
from quatro_tui.widgets.status import RoundLabel

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(autouse=True)
def no_key_guard(monkeypatch):
    """These tests press keys the moment a screen appears; the guard against late keys has tests of its own."""
    from quatro_tui.guard import KeyGuard

    monkeypatch.setattr(KeyGuard, "guard", 0.0)


def shown(widget) -> str:
    """What a widget draws right now, as plain text."""
    return str(widget.render())


async def sit_down(app, pilot, port: int, players: int = 4, sign_by: str = "keys") -> tuple[list[Player], str]:
    """From the lobby: create a table with keys (patient timing: the server's default, picked in the lobby's list
    of the server's profiles), let scripted players fill it, start, sign, and open the round.
    Returns the other players and the team's sign.

    ``sign_by``: the team's sign is picked with the keys (space: the sign the cursor starts on), with the mouse (a click
    on the fourth, fox), or by the partner (owl), whose pick must then appear on our screen (R6).
    """
    await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
    await pilot.pause()  # let the lobby's widgets finish mounting
    app.screen.query_one("#timing", Select).value = PATIENT
    app.screen.query_one("#players", Select).value = players
    await pilot.press("c")
    await until(lambda: isinstance(app.screen, RoomScreen) and app.game.my_seat == 0, what="the room")
    assert app.game.seating.timing_name == PATIENT
    others = []
    for i in range(players - 1):
        player = await Player(port, f"p{i + 1}").start()
        await player.act(p.JOIN, table=app.game.seating.table)
        others.append(player)
    await until(lambda: all(s.taken for s in app.game.seating.seats), what="a full table")
    await pilot.press("s")
    await until(lambda: isinstance(app.screen, SigningScreen) and app.game.view is not None, what="the signing")
    if sign_by == "keys":
        await pilot.pause()
        expected = SIGNS[app.screen.query_one(SignGrid).cursor]  # where the cursor starts: a random sign
        await pilot.press("space")
    elif sign_by == "mouse":
        await pilot.click(SignGrid, offset=(3 * CELL + 3, 0))
        expected = "fox"
    else:
        partner = others[players // 2 - 1]  # seat players/2, across the table (R1)
        await partner.act("pick_sign", sign="owl")
        expected = "owl"
    await until(lambda: app.game.view.sign == expected, what="our team's sign")
    await until(lambda: EMOJI[expected] in shown(app.screen.query_one(SignChoice)), what="the sign on screen")
    for player in others:
        await player.act("ready")
    await pilot.press("enter")
    await until(lambda: isinstance(app.screen, TableScreen) and len(app.game.view.hand) == 4, what="the round")
    return others, expected


def my_swaps(app) -> list[e.Swapped]:
    return [ev for ev in app.game.events if isinstance(ev, e.Swapped) and ev.seat == app.game.me]


async def close_all(players: list[Player]) -> None:
    for player in players:
        await player.close()


def test_a_round_with_keys_swap_channel_pulses_vote_call_reveal_next_round(quatro_server):
    async def body():
        app = QuatroApp(Join("127.0.0.1", quatro_server, "ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            (bob, cid, dee), sign = await sit_down(app, pilot, quatro_server)

            # Swap: a (hand card 1) then q (center slot 1).
            give, take = app.game.view.hand[0], app.game.view.center[0]
            await pilot.press("a", "q")
            await until(lambda: my_swaps(app), what="the swap")
            assert my_swaps(app)[0] == e.Swapped(0, 0, give, take)
            await until(lambda: take in app.game.view.hand and app.game.view.center[0] == give, what="the cards moved")
            assert any(line.startswith("you put down") for line in app.game.feed)

            # Own channel: c takes it, 1 shows the team's sign; the pulse appears on our own panel.
            await pilot.press("c")
            await until(lambda: app.game.view.channel_held, what="the channel")
            await pilot.press("1")
            await until(lambda: app.game.view.channel_sign == sign, what="the emoji")
            await until(lambda: EMOJI[sign] in shown(app.screen.query_one(SelfPanel)), what="our pulse on screen")

            # Another seat's pulse shows on its seat, for a moment.
            await bob.act("take_channel")
            await bob.act("choose_emoji", sign="owl")
            bob_box = next(box for box in app.screen.query(SeatBox) if box.seat == 1)
            await until(lambda: EMOJI["owl"] in shown(bob_box), what="bob's pulse on screen")
            assert "CH" in shown(bob_box)  # the channel is held, in words as well as a symbol

            # A reshuffle vote: the prompt opens, y answers it.
            await bob.act("ask_reshuffle")
            prompt = app.screen.query_one(VotePrompt)
            await until(lambda: prompt.has_class("-open") and "RESHUFFLE" in shown(prompt), what="the vote prompt")
            await pilot.press("y")
            await until(lambda: app.game.view.vote is None or 0 in app.game.view.vote.yes, what="our yes")
            for player in (cid, dee):
                await player.request("vote", yes=True)
            await until(lambda: "Reshuffle agreed." in app.game.feed, what="the reshuffle")

            # The call ends the round: the reveal shows every hand and sign.
            await pilot.press("space")
            if isinstance(app.screen, ConfirmCall):
                await pilot.press("y")
            await until(lambda: isinstance(app.screen, RevealScreen), what="the reveal")
            text = shown(app.screen.query_one("Reveal"))
            assert "called Quatro!" in text and EMOJI[sign] in text
            summary = app.game.view.summary
            for hand in summary.hands:
                assert all(card[:-1] in text for card in hand)

            # n: the host starts the next round at once.
            await pilot.press("n")
            await until(lambda: app.game.view.round == 2 and isinstance(app.screen, SigningScreen), what="round 2")

            # Round 2: n answers a vote no, and one no ends it (R15).
            for player in (bob, cid, dee):
                await player.act("ready")
            await pilot.press("enter")
            await until(
                lambda: isinstance(app.screen, TableScreen) and app.game.view.round == 2, what="round 2's table"
            )
            # The vote gap must pass between two votes (R15), whatever the round: ask until allowed.
            for _ in range(100):
                reply = await bob.request("ask_reshuffle")
                if reply["kind"] == p.OK:
                    break
                assert reply["reason"] == "vote_cooldown", reply
                await asyncio.sleep(min(0.5, reply["wait_ms"] / 1000 + 0.05))
            await until(lambda: app.game.view.vote is not None, what="the second vote")
            await pilot.press("n")
            await until(lambda: "Reshuffle refused." in app.game.feed, what="the refusal")
            assert not app.screen.query_one(VotePrompt).has_class("-open")
            await close_all([bob, cid, dee])
            await pilot.press("ctrl+q")

    run(body)


def test_a_round_with_the_mouse_counter_and_a_dropped_connection(quatro_server):
    async def body():
        app = QuatroApp(Join("127.0.0.1", quatro_server, "ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            others, _ = await sit_down(app, pilot, quatro_server, sign_by="mouse")

            # Click hand card 2, then center slot 3.
            give, take = app.game.view.hand[1], app.game.view.center[2]
            x = lambda i: LABEL_WIDTH + i * (CARD_WIDTH + CARD_GAP) + 2  # noqa: E731
            await pilot.click("#hand", offset=(x(1), 2))
            assert app.screen.selected_hand == 1
            await pilot.click("#center", offset=(x(2), 2))
            await until(lambda: my_swaps(app), what="the swap")
            assert my_swaps(app)[0] == e.Swapped(0, 2, give, take)

            # The link drops: the screen says so, and the client comes back by itself to the same seat.
            app.conn.abort()
            status = app.screen.query_one(RoundLabel)
            await until(
                lambda: "reconnecting" in shown(status) or "Reconnected" in " ".join(app.game.feed),
                what="the drop on screen",
            )
            await until(lambda: "Reconnected: back in your seat." in app.game.feed, what="the reconnection")
            await until(lambda: "reconnecting" not in shown(status), what="the status line to clear")
            assert app.game.view.seat == 0 and take in app.game.view.hand

            # Counter! With 4 players there is one opposing team: no question asked.
            await pilot.press("x")
            await until(lambda: isinstance(app.screen, RevealScreen), what="the reveal")
            assert "countered team B" in shown(app.screen.query_one("Reveal"))
            await close_all(others)
            await pilot.press("ctrl+q")

    run(body)


def test_counter_with_six_players_asks_which_team(quatro_server):
    async def body():
        app = QuatroApp(Join("127.0.0.1", quatro_server, "ann"))
        async with app.run_test(size=(100, 30)) as pilot:
            others, _ = await sit_down(app, pilot, quatro_server, players=6, sign_by="partner")
            assert len(app.screen.query(SeatBox)) == 5
            # 1 without the channel: takes it and shows the team's sign, one key at the moment it matters.
            await pilot.press("1")
            await until(
                lambda: app.game.view.channel_held and app.game.view.channel_sign == "owl", what="the sign shown"
            )
            await pilot.press("x")
            await until(lambda: isinstance(app.screen, CounterTeam), what="the team question")
            await pilot.press("a")  # our own team: not an option (R14)
            assert isinstance(app.screen, CounterTeam)
            await pilot.press("c")
            await until(lambda: isinstance(app.screen, RevealScreen), what="the reveal")
            assert app.game.view.summary.accused == 2
            await close_all(others)
            await pilot.press("ctrl+q")

    run(body)


def test_r13_calling_on_ones_own_four_asks_first():
    """The reminder needs a hand of four: built by hand, no server (the dialog is the client's alone)."""
    from helpers.snapshot_games import round_game

    async def body():
        game = round_game(4, hand=("KS", "KH", "KD", "KC"))
        app = QuatroApp(game=game)
        sent = []
        app.send = lambda body: sent.append(body.kind)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, TableScreen), what="the table")
            await pilot.press("space")
            await until(lambda: isinstance(app.screen, ConfirmCall), what="the reminder")
            await pilot.press("n")
            await until(lambda: isinstance(app.screen, TableScreen), what="the table again")
            assert sent == []
            await pilot.press("space")
            await until(lambda: isinstance(app.screen, ConfirmCall), what="the reminder")
            await pilot.press("y")
            await until(lambda: sent == ["call"], what="the call")

    run(body)


def test_enter_at_signing_picks_a_fresh_random_sign_each_round():
    """The grid's cursor starts on a random sign each round, never last round's: Enter alone is not guessable."""
    from dataclasses import replace

    from helpers.snapshot_games import NOW, sent_fields, signing_game

    async def body():
        game = signing_game(4)
        game.signs.clear()
        signing = replace(game.view, sign=None, round=1)
        game.apply(signing, [], NOW)
        app = QuatroApp(game=game)
        sent = []
        app.send = lambda body: sent.append(sent_fields(body))
        starts = []
        async with app.run_test(size=(80, 24)) as pilot:
            for round_ in range(1, 17):
                game.apply(replace(signing, round=round_), [], NOW)
                app.route()
                app.game_changed()
                await until(lambda: isinstance(app.screen, SigningScreen), what=f"round {round_}'s signing")
                await pilot.pause()
                start = SIGNS[app.screen.query_one(SignGrid).cursor]
                assert start != game.signs.get(round_ - 1), f"round {round_} starts on last round's sign"
                starts.append(start)
                sent.clear()
                await pilot.press("enter")
                assert sent == [("pick_sign", {"sign": start}), ("ready", {})]
                # The server takes the pick, then the round opens (a new signing screen comes next round).
                game.apply(replace(signing, round=round_, sign=start), [], NOW)
                app.game_changed()
                if round_ % 2:
                    game.apply(replace(signing, round=round_, sign=start, phase=Phase.ROUND), [], NOW)
                    app.route()
                    await until(lambda: isinstance(app.screen, TableScreen), what=f"round {round_}'s table")
        assert len(set(starts)) > 5, starts  # not the same sign (🍍) every round
        assert game.signs == dict(enumerate(starts, start=1))

    run(body)


def test_keys_are_remapped_by_binding_id_and_the_help_follows():
    from helpers.snapshot_games import round_game, sent_fields
    from quatro_tui.screens.help import HelpScreen, key_lines

    async def body():
        app = QuatroApp(game=round_game(4))
        app.set_keymap({"call": "g", "hand-1": "z"})
        sent = []
        app.send = lambda body: sent.append(sent_fields(body))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, TableScreen), what="the table")
            table = app.screen
            await pilot.press("g")
            await until(lambda: sent and sent[-1][0] == "call", what="the call on g")
            await pilot.press("z", "w")
            await until(lambda: sent[-1][0] == "swap", what="the swap on z then w")
            view = app.game.view
            assert sent[-1][1] == {"give": view.hand[0], "slot": 1, "take": view.center[1]}
            lines = dict((what, keys) for keys, what in key_lines(table))
            assert lines["call: your partner holds four of a kind"] == "g"
            assert lines["hand card 1–4"].split()[0] == "z"
            await pilot.press("question_mark")
            await until(lambda: isinstance(app.screen, HelpScreen), what="the help")

    run(body)
