"""The guided first match through the whole client over real TCP (``run_test``): a wrong move is explained by the
coach and its round dealt again, the Quarto lesson's winning give is shown for what it was, and the coach's keys
follow a remapped binding."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quatro.views import Phase

from helpers.tui import armed, run, until
from quatro_server.games.quatro.lesson import SCENES
from quatro_tui.app import Play
from quatro_tui.games import client_game
from quatro_tui.games.quarto.screen import QuartoScreen
from quatro_tui.games.quatro.screens.signing import SigningScreen
from quatro_tui.games.quatro.screens.table import TableScreen
from quatro_tui.lessons.coach import Coach, LessonApp

pytestmark = pytest.mark.timeout(120)

LESSON_TOML = """\
sign_window = 60
swap_cooldown = 0.2
channel_cooldown = 0.2
pulse_interval = 0.5
pulse_shown = 0.4
round_length = 120
break_length = 60
target_score = 9
"""


def lesson_app(tmp_path: Path, game: str) -> LessonApp:
    timing = tmp_path / "lesson.toml"
    timing.write_text(LESSON_TOML)
    from quatro_tui.local_server import LocalServer

    contract = client_game(game).contract
    lesson = client_game(game).lesson
    assert lesson is not None
    return LessonApp(
        Play(contract.seats[0], "lesson", str(timing), "ann", 0, game),
        lesson,
        server=LocalServer(str(timing), lesson=True),
    )


async def ready(app: LessonApp, pilot) -> None:
    """Ready at signing: enter, again until the round opens (a key may land before the screen takes keys)."""
    for _ in range(20):
        await until(lambda: isinstance(app.screen, SigningScreen), what="signing")
        await armed(app)
        await pilot.press("enter")
        try:
            await until(lambda: app.game.view is not None and app.game.view.phase is Phase.ROUND, timeout=1.0)
            return
        except AssertionError:
            continue
    raise AssertionError("the round never opened")


def coach_text(app: LessonApp) -> str:
    panels = app.screen.query(Coach)
    return panels.first().said if panels else ""


def test_a_wrong_counter_is_explained_and_its_round_dealt_again(tmp_path):
    async def body():
        app = lesson_app(tmp_path, "quatro")
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(app, pilot)  # with the highlighted sign
            await until(
                lambda: isinstance(app.screen, TableScreen) and "Swap toward four" in coach_text(app),
                what="the first step at the table",
            )
            await armed(app)
            await pilot.pause(0.3)
            await pilot.press("x")  # nobody holds four: a wrong counter
            await until(lambda: "Wrong counter" in coach_text(app), what="the coach's why")
            assert app.done == 0 and "This round again" in coach_text(app)
            assert "<n>" in coach_text(app)  # the next round's key, from the reveal's bindings
            await armed(app)
            await pilot.press("n")
            await ready(app, pilot)
            await until(
                lambda: app.game.view is not None and app.game.view.phase is Phase.ROUND and app.game.view.hand,
                what="the deal",
            )
            assert sorted(app.game.view.hand) == sorted(SCENES[0].hands[0])  # the same scene again
            await app._quit()

    run(body)


def test_the_coach_names_a_remapped_key(tmp_path):
    async def body():
        app = lesson_app(tmp_path, "quatro")
        app.set_keymap({"channel": "k"})
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(app, pilot)
            await until(lambda: isinstance(app.screen, TableScreen) and app.screen.query(Coach), what="the table")
            app.done = 1  # the channel's step
            text = app.coach_text(app.screen)
            assert "Press <k> to take your channel" in text
            await app._quit()

    run(body)


def test_giving_the_piece_that_wins_is_shown_as_handing_them_the_win(tmp_path):
    async def body():
        app = lesson_app(tmp_path, "quarto")
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, QuartoScreen) and app.screen.view is not None, what="the board")
            await armed(app)
            # Play what the coach says until a piece in the pool would win; then give that one.
            for _ in range(100):
                view = app.game.view
                assert isinstance(view, q.QuartoView)
                if view.phase is not q.Phase.PLAYING or view.turn != view.seat:
                    await pilot.pause(0.2)
                    continue
                losing = [p for p in view.pool if q.winning_squares(view.board, p)]
                if view.step is q.Step.GIVE and losing and app.done == 2:
                    await pilot.press(*q.format_piece(losing[0]).lower(), "enter")
                    await until(lambda: app.game.view.phase is q.Phase.BETWEEN, what="their win")
                    break
                told = coach_text(app).split("Why")[0]
                await pilot.press(*[key.strip("<>") for key in re.findall(r"<[^<>\s]+>", told)])
                try:
                    await until(lambda: app.game.view is not view, timeout=2.0)
                except AssertionError:
                    pass  # a key before the screen took keys: read the coach again
            else:
                raise AssertionError("no position where a piece in the pool would win")
            await until(lambda: "handed them the win" in coach_text(app), what="the coach's why")
            assert app.done == 2  # the step is still to do
            await app._quit()

    run(body)
