"""The games the contract knows, by name: the one place that lists them (``CONTRACTS``).

Each game's own modules make its ``quatro_shared.game.GameContract``; this registry holds them, and everything that
serves every game (the wire, the client core, a client's screens, a network bot) looks a game up here. Adding a
game is its own modules and one ``register`` line; a test may register a game of its own the same way.
"""

from __future__ import annotations

from typing import Any

from quatro_shared import protocol as p
from quatro_shared.game import GameContract, QuickRequest
from quatro_shared.games.quarto import contract as quarto
from quatro_shared.games.quatro import contract as quatro

#: Any game's contract, whatever its types.
AnyContract = GameContract[Any, Any, Any, Any]

#: Every game, by name, the default first.
CONTRACTS: dict[str, AnyContract] = {}
#: The games' quick readers of their busiest requests, by kind (``GameContract.quick_requests``).
QUICK_REQUESTS: dict[str, QuickRequest] = {}


def register(contract: AnyContract) -> None:
    """Add a game. Its name, its action kinds and its event kinds must be new: a request or an event is read by its
    kind alone, and a game action's kind must not be a lobby request's."""
    if contract.name in CONTRACTS:
        raise ValueError(f"a game named {contract.name!r} is registered already")
    taken = set(p.LOBBY_KINDS)
    events: set[str] = set()
    for other in CONTRACTS.values():
        taken |= other.action_kinds
        events |= other.event_kinds
    if contract.action_kinds & taken:
        raise ValueError(f"{contract.name}: action kinds {sorted(contract.action_kinds & taken)} are taken")
    if contract.event_kinds & events:
        raise ValueError(f"{contract.name}: event kinds {sorted(contract.event_kinds & events)} are taken")
    CONTRACTS[contract.name] = contract
    QUICK_REQUESTS.update(contract.quick_requests)


def unregister(name: str) -> None:
    """Forget a game (a test's own, once the test is done). The default game stays."""
    if name == DEFAULT.name:
        raise ValueError("the default game stays registered")
    gone = CONTRACTS.pop(name)
    for kind in gone.quick_requests:
        QUICK_REQUESTS.pop(kind, None)


register(quatro.CONTRACT)
register(quarto.CONTRACT)

#: The game of a table created with no ``game`` named (``protocol.QUATRO``).
DEFAULT: AnyContract = CONTRACTS[p.QUATRO]


def names() -> tuple[str, ...]:
    """Every game's name, the default first."""
    return tuple(CONTRACTS)


def contract(name: str) -> AnyContract:
    """The game called ``name``. Raises ``KeyError`` naming the games there are."""
    try:
        return CONTRACTS[name]
    except KeyError:
        raise KeyError(f"no game {name!r}: the games are {', '.join(CONTRACTS)}") from None


def of_update(update: object) -> AnyContract | None:
    """The game whose ``update`` push this is (None: no game's)."""
    for game in CONTRACTS.values():
        if type(update) is game.update:
            return game
    return None


def request_kinds() -> frozenset[str]:
    """Every request kind a client may send: the lobby's and each game's player actions."""
    kinds = frozenset(p.LOBBY_KINDS)
    for game in CONTRACTS.values():
        kinds |= game.action_kinds
    return kinds
