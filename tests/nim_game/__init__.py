"""Nim, a game that lives in the tests alone: its contract (``nim_game.contract``, the shared side) and its server
side (``nim_game.server``), registered on both sides by ``registered()``, as a game of the product is by its
registry lines. It follows ``docs/adding-a-game.md`` step by step and touches no file of the product."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from quatro_shared import games as known

from nim_game.contract import CONTRACT
from nim_game.server import GAME
from quatro_server import games as hosted


def register() -> None:
    """The game's two registry lines: the contract's, then the server's."""
    known.register(CONTRACT)
    hosted.register_game(GAME)


def unregister() -> None:
    hosted.unregister_game(GAME.name)
    known.unregister(CONTRACT.name)


@contextmanager
def registered() -> Iterator[None]:
    register()
    try:
        yield
    finally:
        unregister()
