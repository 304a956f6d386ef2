"""Quarto's picture of its table: the platform's (``quatro_tui.table.Table``) with Quarto's view. Every update carries
the whole board, so nothing more is kept here: the screen draws the view."""

from __future__ import annotations

from dataclasses import dataclass

from quatro_shared.games.quarto.contract import QuartoView

from quatro_tui.table import Table


@dataclass
class QuartoTable(Table[QuartoView]):
    """A Quarto table: its view, typed (a class of its own, so that the app knows which game's table it holds)."""
