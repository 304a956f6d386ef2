"""The key bar while the terminal is not focused: a browser page's client starts unfocused (Textual's web driver
says so until a key is pressed), and a seat that comes back after a reload lands straight on the round."""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Footer

from quatro_shared import protocol as p

from helpers.tui import Player, quatro_server, run, until  # noqa: F401 - fixtures
from quatro_tui.app import Join, QuatroApp
from quatro_tui.games.quatro.screens.signing import SigningScreen
from quatro_tui.games.quatro.screens.table import TableScreen

pytestmark = pytest.mark.timeout(60)


def footer_keys(app: QuatroApp) -> list[str]:
    return [str(key.description) for key in app.screen.query_one(Footer).children]


def test_a_seat_back_mid_round_in_an_unfocused_page_shows_its_keys(quatro_server):
    async def body():
        ann = await Player(quatro_server, "ann").start()
        created = await ann.act(p.CREATE_TABLE, players=4)
        remembered = []
        app = QuatroApp(
            Join("127.0.0.1", quatro_server, "bob", table=created["table"]),
            remember_seat=lambda table, secret, name: remembered.append((table, secret)),
        )
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: remembered and app.game.my_seat == 1, what="the seat")
            await ann.act(p.ADD_BOT)
            await ann.act(p.ADD_BOT)
            await ann.act(p.START)
            await until(lambda: isinstance(app.screen, SigningScreen), what="signing")
            await ann.act("ready")
            for _ in range(50):  # ready once the screen's keys are armed: the round opens
                if isinstance(app.screen, TableScreen):
                    break
                await pilot.press("enter")
                await pilot.pause(0.2)
            await until(lambda: isinstance(app.screen, TableScreen), what="the round")
            await pilot.press("ctrl+q", "ctrl+q")
        table, secret = remembered[0]
        # A new client for the same person, unfocused from the start as a page's client is: back in the round.
        again = QuatroApp(Join("127.0.0.1", quatro_server, "bob", rejoin_table=table, rejoin_secret=secret))
        async with again.run_test(size=(80, 24)) as pilot:
            again.post_message(events.AppBlur())
            await until(lambda: isinstance(again.screen, TableScreen), what="the seat, mid-round")
            await until(lambda: "quit" in footer_keys(again), what=f"the round's keys, not {footer_keys(again)}")
            assert "Counter!" in footer_keys(again)
            await pilot.press("ctrl+q", "ctrl+q")
        await ann.close()

    run(body)
