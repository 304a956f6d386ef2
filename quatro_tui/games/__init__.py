"""The games as this client plays them, by name: the one place in the client that lists them (``CLIENT_GAMES``).

Each game's client part (``quatro_tui.games.base.ClientGame``) lives in a package of its own here, with its screens,
its state and its words; the app, the lobby, the room, the help and the command line look a game up here and never
name one. Adding a game to the client is its package and one line below. Every game of the contract's registry
(``quatro_shared.games``) has its line: the server may host any of them.
"""

from __future__ import annotations

from typing import Any

from quatro_shared import games

from quatro_tui.games.base import ClientGame, MarkRow, WayOn
from quatro_tui.games.quarto import client as quarto
from quatro_tui.games.quatro import client as quatro

__all__ = ["CLIENT_GAMES", "ClientGame", "MarkRow", "WayOn", "client_game", "default"]

#: Every game this client plays, by name, the default first.
CLIENT_GAMES: dict[str, ClientGame[Any]] = {}


def register(client: ClientGame[Any]) -> None:
    """Add a game's client part; its contract is registered already (``quatro_shared.games.register``)."""
    if client.name in CLIENT_GAMES:
        raise ValueError(f"the client has a game named {client.name!r} already")
    if games.CONTRACTS.get(client.name) is not client.contract:
        raise ValueError(f"{client.name}: not the contract registered under that name")
    CLIENT_GAMES[client.name] = client


def client_game(name: str) -> ClientGame[Any]:
    """The game called ``name``. Raises ``KeyError`` naming the games there are."""
    try:
        return CLIENT_GAMES[name]
    except KeyError:
        raise KeyError(f"the client plays no game {name!r}: it plays {', '.join(CLIENT_GAMES)}") from None


def default() -> ClientGame[Any]:
    """The game of a table created with none named."""
    return CLIENT_GAMES[games.DEFAULT.name]


register(quatro.CLIENT)
register(quarto.CLIENT)
