"""Words that fit: at 80x24, with 4, 6 and 8 players, no screen cuts a line that was not meant to be shortened.

A cut shows as a word run into an ellipsis ("tea…") or as a sentence missing its end. Every screen is drawn
from the hand-made games (no server) and read back cell by cell; sentences may wrap, but must be whole.
"""

from __future__ import annotations

import re

import pytest

from helpers.snapshot_games import over_game, reveal_game, room_game, round_game, signing_game
from helpers.tui import quatro_server, run  # noqa: F401 - quatro_server is a fixture
from quatro_tui.app import QuatroApp
from test_tui_ascii import screen_text

pytestmark = pytest.mark.timeout(60)

GAMES = {"room": room_game, "signing": signing_game, "table": round_game, "reveal": reveal_game, "over": over_game}

#: Sentences each screen says, which must show whole (wrapped or not).
WHOLE = {
    "signing": ["Show it on your channel at four of a kind; call when your partner's shows it."],
    "table": ["Round 3 opens: swap!", "too slow — 10♥ was taken", "bob dropped out."],
    "reveal": ["n starts the next round now; otherwise it starts in", "you called Quatro! — right: team A scores."],
    "over": ["p plays again (same seats) l back to the lobby", "you called Quatro! — right: team A scores."],
    "room": ["Table 7:", "You host:"],
}
#: A word run into an ellipsis: something was cut.
CUT = re.compile(r"\w…|\w\.\.\.(?!\S)")


def flat(text: str) -> str:
    """The screen's text with borders and wrapping undone: words separated by single spaces."""
    text = re.sub(r"[│┃║|▏▎▊]", " ", text)
    return " ".join(text.split())


@pytest.mark.parametrize("players", [4, 6, 8])
@pytest.mark.parametrize("screen", GAMES)
def test_nothing_is_cut_at_80x24(screen, players):
    async def body():
        app = QuatroApp(game=GAMES[screen](players))
        app.send = lambda body: None
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.pause()
            text = screen_text(app)
            cut = CUT.findall(text)
            assert not cut, f"cut text {cut} on the {screen} screen with {players} players:\n{text}"
            for sentence in WHOLE[screen]:
                assert " ".join(sentence.split()) in flat(text), f"{sentence!r} is not whole:\n{text}"

    run(body)


def test_the_connection_screen_says_it_whole_at_80x24():
    async def body():
        app = QuatroApp(game=round_game(8))
        async with app.run_test(size=(80, 24)) as pilot:
            detail = "Nobody is serving at 127.0.0.1:7777. Is the server running?\nTrying again in 5.0s (attempt 12)."
            app.show_link("The connection to the server was lost.", detail, retrying=True)
            await pilot.pause()
            text = screen_text(app)
            assert not CUT.findall(text), text
            for sentence in [*detail.split("\n"), "r try again now l back to the lobby j another server q quit"]:
                assert sentence in flat(text), f"{sentence!r} is not whole:\n{text}"

    run(body)


def test_the_lobby_shows_every_column_and_its_whole_key_bar_at_80x24(quatro_server):
    """A table in play, long names at it: the list's last column (its scores) and the key bar's last key (? help)
    still show at 80x24."""
    from quatro_shared import protocol as p

    from helpers.tui import Player, until
    from quatro_tui.app import Join
    from quatro_tui.screens.lobby import LobbyScreen

    async def body():
        host = await Player(quatro_server, "bartholomew-the-long").start()
        created = await host.act(p.CREATE_TABLE, players=4)
        for _ in range(3):
            await host.act(p.ADD_BOT, level="easy")
        await host.act(p.START)
        app = QuatroApp(Join("127.0.0.1", quatro_server, "wes"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            await until(lambda: any(t.table == created["table"] for t in app.tables), what="the table listed")
            await pilot.pause()
            await pilot.pause()
            lines = screen_text(app).rstrip("\n").split("\n")
            assert lines[-1].rstrip().endswith("? help"), lines[-1]
            header = next(line for line in lines if "table" in line and "game" in line)
            assert header.rstrip().endswith("scores") or "scores" in header, header
            assert "who sits there" in header
        await host.close()

    run(body)


@pytest.mark.parametrize(
    "link",
    [
        "connection lost, retry in 12.5s",
        "seat played elsewhere",
        "server shutting down",
        "a server's own long words about why the link is down, longer than any line",
    ],
)
def test_the_scores_stay_whole_on_the_top_line_while_the_link_is_down_at_80x24(link):
    """While the link is down the top line says so beside the stopped clock; its words pushed the scores off the
    line ("A:0 B:0 (to"). They are short, and any longer ones are shortened, never the scores."""

    async def body():
        app = QuatroApp(game=round_game(8))
        app.send = lambda body: None
        async with app.run_test(size=(80, 24)) as pilot:
            app.game.link = link
            app.game.stop_clocks()
            app.game_changed()
            await pilot.pause()
            await pilot.pause()
            top = screen_text(app).split("\n")[0]
            assert top.rstrip().endswith("(to 5)"), top
            assert "stopped" in top, top
            shown = link if len(link) < 30 else link[:10]
            assert shown in top, top

    run(body)


def test_the_create_row_s_friendly_choice_shows_whole_at_80x24(quatro_server):
    """The rated/friendly choice read "friend" over "ly" at 80x24: its box was narrower than its word."""
    from textual.widgets import Select

    from helpers.tui import until
    from quatro_tui.app import Join
    from quatro_tui.screens.lobby import LobbyScreen

    async def body():
        app = QuatroApp(Join("127.0.0.1", quatro_server, "wes"))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), what="the lobby")
            rated = app.screen.query_one("#rated", Select)
            # As a person meets it: the choice is drawn (its label mounted) before anyone can change it.
            await until(lambda: bool(rated.query("#label")), what="the rated choice drawn")
            rated.value = "friendly"
            await pilot.pause()
            await pilot.pause()
            text = screen_text(app)
            assert "friendly ▼" in text or "friendly v" in text, text

    run(body)


@pytest.mark.parametrize("players", [6, 8])
def test_the_sign_screen_s_ready_line_breaks_between_seats_never_inside_one_at_80x24(players):
    """With 8 players the ready line wrapped inside a seat: "A" at a line's end, "normal-bot-4: ready" below."""

    async def body():
        app = QuatroApp(game=signing_game(players))
        app.send = lambda body: None
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.pause()
            lines = screen_text(app).split("\n")
            for seat in range(1, players):
                team = "ABCD"[seat % (players // 2)]
                name = "bob" if seat == 1 else f"normal-bot-{seat}"
                assert any(f"{team} {name}: ready" in line for line in lines), (seat, "\n".join(lines))
            assert any("A you: " in line for line in lines)

    run(body)
