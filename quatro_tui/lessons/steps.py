"""A game's lesson as steps in order: what to do, the keys that do it, why, and the check that the player did it.

A check reads the client's own state (``quatro_tui.game.Game``: the view and the events its player was told), never
the server's: a step passes when the player really did the move. ``say`` names keys through ``keys``, which reads
them from the screen's bindings (as remapped), so the words never drift from the keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from quatro_tui.game import Game

#: A binding id to the keys that press it now, as the screen names them ("c", "space").
Keys = Callable[[str], str]


@dataclass(frozen=True)
class Step:
    """One move of a lesson: its title, what to do now (with the keys), why, and whether the player did it."""

    title: str
    say: Callable[[Game, Keys], str]
    why: str
    check: Callable[[Game], bool]


@dataclass(frozen=True)
class Lesson:
    """A game's lesson: its steps, and what the coach says outside them."""

    steps: tuple[Step, ...]
    between: Callable[[Game, Keys, Step | None], str]
    #: Once every step is done: why the last round went as it did ("" when there is nothing to explain).
    last_words: Callable[[Game], str] = lambda game: ""


def advance(lesson: Lesson, done: int, game: Game) -> int:
    """The steps passed, in order: ``done`` and every next one whose check now holds."""
    while done < len(lesson.steps) and lesson.steps[done].check(game):
        done += 1
    return done
