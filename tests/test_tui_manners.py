"""A table that treats its players well: late keys that do nothing, signals written down, bells, plain words."""

from __future__ import annotations

from dataclasses import replace

import pytest

from quatro_shared.views import Phase

from quatro_tui.app import QuatroApp
from quatro_tui.guard import KEY_GUARD, KeyGuard
from quatro_tui.screens.dialogs import ConfirmCall
from quatro_tui.screens.reveal import RevealScreen
from quatro_tui.screens.signing import SigningScreen
from quatro_tui.screens.table import TableScreen
from snapshot_games import NOW, round_game, sent_fields, signing_game
from tui_helpers import run, until

pytestmark = pytest.mark.timeout(60)


def footer_key_disabled(screen, action: str) -> bool:
    """Whether the footer shows ``action``'s key dimmed (Textual marks it ``-disabled``)."""
    from textual.widgets._footer import FooterKey

    return any(key.action == action and key.has_class("-disabled") for key in screen.query(FooterKey))


def test_a_late_space_after_the_round_opens_calls_nothing():
    """``enter`` readies at signing; the round opens; a ``space`` a moment later lands on the table: no call."""

    async def body():
        game = signing_game(4)
        app = QuatroApp(game=game)
        sent: list[tuple[str, dict]] = []
        app.send = lambda body: sent.append(sent_fields(body))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, SigningScreen), what="signing")
            await pilot.press("enter")
            assert [kind for kind, _ in sent] == ["ready"]  # the team already has its sign
            game.apply(round_game(4).view, [], NOW)
            app.route()
            await until(lambda: isinstance(app.screen, TableScreen), what="the table")
            await pilot.pause()
            assert not app.screen.armed()
            assert footer_key_disabled(app.screen, "call"), "the call key looks armed while it is not"
            await pilot.press("space", "x", "a", "q", "c", "1", "v", "y")
            assert [kind for kind, _ in sent] == ["ready"]
            await until(lambda: app.screen.armed(), timeout=KEY_GUARD + 2, what="the keys armed")
            await pilot.pause()
            assert not footer_key_disabled(app.screen, "call"), "the call key still looks disarmed"
            await pilot.press("space")
            await until(lambda: [kind for kind, _ in sent] == ["ready", "call"], what="the call")

    run(body)


def test_a_late_n_at_the_reveal_starts_no_round_and_a_double_space_confirms_no_call():
    async def body():
        game = round_game(4, hand=("KS", "KH", "KD", "KC"))
        app = QuatroApp(game=game)
        sent: list[str] = []
        app.send = lambda body: sent.append(body.kind)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, TableScreen), what="the table")
            await pilot.press("space", "space")  # one press too many on one's own four (R13's reminder)
            await until(lambda: isinstance(app.screen, ConfirmCall), what="the reminder")
            await pilot.pause()
            assert sent == [] and isinstance(app.screen, ConfirmCall)
            await pilot.press("escape")
            game.apply(replace(game.view, phase=Phase.BREAK), [], NOW)
            app.route()
            await until(lambda: isinstance(app.screen, RevealScreen), what="the reveal")
            await pilot.press("n")  # a vote's "no", pressed late
            await pilot.pause()
            assert sent == []

    run(body)


def test_the_first_screen_of_a_run_is_not_guarded():
    async def body():
        app = QuatroApp(game=round_game(4))
        async with app.run_test(size=(80, 24)):
            await until(lambda: isinstance(app.screen, TableScreen), what="the table")
            assert isinstance(app.screen, KeyGuard) and app.screen.armed()

    run(body)
