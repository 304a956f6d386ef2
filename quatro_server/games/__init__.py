"""The games this server hosts (``GAMES``), each in its own folder (``quatro_server/games/<game>/``), and the
registry's operations. What a game is to the server is ``quatro_server.game.Game``."""

from __future__ import annotations

from quatro_server.game import AnyGame
from quatro_server.games.quarto.game import QUARTO
from quatro_server.games.quatro.game import QUATRO
from quatro_server.journal import AnyCodec

#: Every game this server hosts, by name; the first is the default (``create_table`` without ``game``).
GAMES: dict[str, AnyGame] = {game.name: game for game in (QUATRO, QUARTO)}
DEFAULT_GAME: AnyGame = QUATRO


#: The request kinds that are game actions, of any game: the lobby routes each to the table's game.
ACTION_KINDS: frozenset[str] = frozenset().union(*(game.action_kinds for game in GAMES.values()))


def journal_codec(name: str | None) -> AnyCodec | None:
    """The journal encoding of the game the journal names ``name``; None for a game this server does not host. A table
    of a journal of version 1 names none: that version hosted the default game alone."""
    game = DEFAULT_GAME if name is None else GAMES.get(name)
    return None if game is None else game.journal


def game_of(action: object) -> AnyGame | None:
    """The game whose action ``action`` is."""
    known = _GAME_OF.get(type(action))
    if known is not None:
        return known
    for game in GAMES.values():
        if type(action) in game.actions:
            _GAME_OF[type(action)] = game  # asked for every action: the answer is remembered by type
            return game
    return None


_GAME_OF: dict[type, AnyGame] = {}


def register_game(game: AnyGame) -> None:
    """Host one more game (its contract registered in ``quatro_shared.games`` first): its name and its action kinds
    must be new. A lobby made after this routes the game's actions (a test registers a game of its own this way)."""
    global ACTION_KINDS
    if game.name in GAMES:
        raise ValueError(f"a game named {game.name!r} is hosted already")
    if game.action_kinds & ACTION_KINDS:
        raise ValueError(f"{game.name}: action kinds {sorted(game.action_kinds & ACTION_KINDS)} are taken")
    GAMES[game.name] = game
    ACTION_KINDS = ACTION_KINDS | game.action_kinds


def host_instead(game: AnyGame) -> None:
    """Host ``game`` in place of the hosted game of the same name and actions (``quatro_server.games.quatro.lesson``: a game's
    scripted lesson). A lobby made after this creates its tables of that name with ``game``."""
    global DEFAULT_GAME
    hosted = GAMES.get(game.name)
    if hosted is None or hosted.action_kinds != game.action_kinds:
        raise ValueError(f"{game.name}: no hosted game of that name and actions to replace")
    GAMES[game.name] = game
    if DEFAULT_GAME is hosted:
        DEFAULT_GAME = game
    for cls in game.actions:
        _GAME_OF.pop(cls, None)


def unregister_game(name: str) -> None:
    """Stop hosting the game called ``name`` (a test's own, once the test is done). The default game stays."""
    global ACTION_KINDS
    if name == DEFAULT_GAME.name:
        raise ValueError("the default game stays hosted")
    game = GAMES.pop(name)
    ACTION_KINDS = frozenset().union(*(other.action_kinds for other in GAMES.values()))
    for cls in game.actions:
        _GAME_OF.pop(cls, None)
