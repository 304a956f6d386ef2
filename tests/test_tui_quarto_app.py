"""The app with a Quarto table: its updates (a ``QuartoView`` in the client core's ``Updated``) reach the Quarto
screen, the screen's choices go out as requests, a refusal is told on the screen, the link's trouble too.

The server here is the engine in the test's process (``helpers.quarto_tui.LocalQuarto``) behind the app's
``request``; the whole match over real TCP is in ``test_tui_quarto_play.py``.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from quatro_shared import messages as m
from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quarto.contract import Phase

from helpers.quarto_tui import LocalQuarto
from helpers.tui import run, until
from quatro_tui.app import QuatroApp
from quatro_tui.connection import ServerUpdate
from quatro_tui.games.quarto.screen import QuartoScreen
from quatro_tui.games.quarto.widgets import QuartoTurn
from quatro_tui.screens.link import LinkScreen
from test_tui_ascii import screen_text

pytestmark = pytest.mark.timeout(120)


class EngineBehindTheApp:
    """Stands in for the server behind ``app.request``: Quarto actions go to the engine for seat 0 (the bot in seat 1
    answers), and the update comes back as the connection would deliver it."""

    def __init__(self, app: QuatroApp, local: LocalQuarto, refuse: bool = False) -> None:
        self.app, self.local, self.refuse = app, local, refuse
        self.seq = 0
        self.requests: list[object] = []

    def push(self, events: list[q.Event]) -> None:
        self.seq += 1
        loop_now = self.app.game.clock()
        self.app.post_message(
            ServerUpdate(1, self.seq, self.seq == 1, list(events), self.local.view(), loop_now, game="quarto")
        )

    async def request(self, body: object) -> m.Reply | None:
        self.requests.append(body)
        if self.refuse:
            return m.Refused(len(self.requests), "not_your_turn", "it is your opponent's turn")
        assert isinstance(body, q.Action)
        before = len(self.local.events)
        self.local.now += 1.0
        outcome = self.local.table.act(0, body, self.local.now)
        assert outcome.ok, outcome.refusal
        self.local.events += outcome.events + self.local.bot_moves()
        self.push(self.local.events[before:])
        return m.Ok(len(self.requests))


@asynccontextmanager
async def _on_the_quarto_screen(
    seed: int, refuse: bool = False
) -> AsyncIterator[tuple[QuatroApp, LocalQuarto, EngineBehindTheApp, Any, QuartoScreen]]:
    """An app at 80x24 whose server is the local engine, on the Quarto screen of a new match."""
    app = QuatroApp()
    local = LocalQuarto(seed=seed, games=1)
    server = EngineBehindTheApp(app, local, refuse=refuse)
    app.request = server.request  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        server.push(local.start())
        await until(lambda: isinstance(app.screen, QuartoScreen), what="the Quarto screen")
        screen = app.screen
        assert isinstance(screen, QuartoScreen)
        yield app, local, server, pilot, screen


def test_a_quarto_update_opens_the_quarto_screen_and_its_moves_go_out_as_requests():
    async def body():
        rng = random.Random(8)
        async with _on_the_quarto_screen(seed=8) as (app, local, server, pilot, screen):
            assert screen.view == local.view()
            while local.view().phase is Phase.PLAYING:
                action = rng.choice(q.legal(screen.view))
                count = len(server.requests)
                if isinstance(action, q.Place):
                    await pilot.press(*q.format_square(action.square), "enter")
                else:
                    assert isinstance(action, q.Give)
                    await pilot.press(*q.format_piece(action.piece).lower(), "enter")
                await until(lambda: len(server.requests) > count and screen.view == local.view(), what="the move")
                assert server.requests[-1] == action
            assert "Match over" in str(screen.query_one(QuartoTurn).render())
            assert not app.in_match()

    run(body)


def test_a_refusal_is_told_on_the_quarto_screen():
    async def body():
        async with _on_the_quarto_screen(seed=3, refuse=True) as (app, local, server, pilot, screen):
            await until(screen.armed, what="the keys")
            await pilot.press("enter")
            await until(lambda: "Not done: it is your opponent's turn" in screen.picture.news, what="the refusal")
            assert not screen.waiting  # the player may act again
            assert app.in_match()

    run(body)


def test_a_lost_connection_covers_the_quarto_screen_with_the_ways_on():
    async def body():
        async with _on_the_quarto_screen(seed=3) as (app, local, server, pilot, screen):
            from quatro_tui.connection import LinkDropped

            app.post_message(LinkDropped(1, 0.5, "the server closed the connection"))
            await until(lambda: isinstance(app.screen, LinkScreen), what="the link screen")
            assert "connection lost" in screen.picture.link
            await pilot.pause()
            assert "try again" in screen_text(app)

    run(body)
