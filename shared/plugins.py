"""Games from outside the product: a package that adds a game names its registration in the ``quatro.games`` entry
point group, and ``quatro-server`` (serving, its workers, its network bot and its simulator) loads them as it
starts (``load``). The terminal client plays the games it has a client part for (``quatro_tui.games``).

An entry point's object is called with no argument and registers the game on each side it has, as the product's
own games are by their registry lines (``docs/adding-a-game.md``)::

    [project.entry-points."quatro.games"]
    nim = "nim_game:register"

A game that does not load (an import error, a name or an action kind already taken) is said on standard error, with
what to do, and left out: the other games are served as before.
"""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint, entry_points
from typing import TextIO

#: The entry point group a game's package registers itself in.
GROUP = "quatro.games"

_loaded: dict[str, bool] = {}


def load(err: TextIO | None = None) -> list[str]:
    """Call every ``quatro.games`` entry point not called yet in this process; the names of those that loaded now.
    Each is called once whatever happens (a second ``load`` says nothing again)."""
    loaded = []
    for point in sorted(entry_points(group=GROUP), key=lambda point: point.name):
        if point.value in _loaded:
            continue
        _loaded[point.value] = False
        try:
            point.load()()
        except Exception as exc:  # an outside package's failure of any kind: said, and the product goes on
            _say(point, exc, err or sys.stderr)
            continue
        _loaded[point.value] = True
        loaded.append(point.name)
    return loaded


def _say(point: EntryPoint, exc: Exception, err: TextIO) -> None:
    package = point.dist.name if point.dist is not None else point.module
    print(
        f"quatro: the game {point.name!r} ({point.value}, from {package}) did not load and is left out: "
        f"{type(exc).__name__}: {exc}. Update or uninstall {package}; the other games are served as before.",
        file=err,
        flush=True,
    )
