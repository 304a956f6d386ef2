"""SVG snapshots of the Quarto screen at 80×24, in Unicode and in ASCII, over positions played on the real engine.

The positions are reached by seeded play (``helpers.quarto_tui.PICTURES``) and drawn with a frozen clock, so the
pictures change only when the drawing does. After a deliberate change: ``--snapshot-update``.
"""

from __future__ import annotations

import pytest

from helpers.quarto_tui import PICTURE_KEYS, PICTURES, show_picture
from quatro_tui.app import QuatroApp


@pytest.mark.parametrize("ascii_only", [False, True], ids=["unicode", "ascii"])
@pytest.mark.parametrize("name", PICTURES)
def test_quarto_screen(snap_compare, name, ascii_only):
    async def open_it(pilot):
        await show_picture(pilot.app, name)
        await pilot.pause()
        if PICTURE_KEYS.get(name):
            await pilot.press(*PICTURE_KEYS[name])
        await pilot.pause()

    assert snap_compare(QuatroApp(ascii_only=ascii_only), run_before=open_it, terminal_size=(80, 24))


def test_quarto_screen_on_a_larger_terminal(snap_compare):
    """The board and its column sit in the middle of a larger terminal."""

    async def open_it(pilot):
        await show_picture(pilot.app, "won")
        await pilot.pause()

    assert snap_compare(QuatroApp(), run_before=open_it, terminal_size=(120, 36))
