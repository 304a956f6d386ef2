"""A game's lesson as steps in order: what to do, the keys that do it, why, and the check that the player did it.

A check reads the client's own state (the game's table, ``quatro_tui.table.Table``: the view and what its player was
told), never the server's: a step passes when the player really did the move. ``say`` names keys through ``keys``, which reads
them from the screen's bindings (as remapped), so the words never drift from the keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from quatro_tui.table import AnyTable

#: The table of the lesson's game, as its checks read it.
T = TypeVar("T", bound=AnyTable)

#: A binding id to the keys that press it now, as the screen names them ("c", "space").
Keys = Callable[[str], str]


@dataclass(frozen=True)
class Step(Generic[T]):
    """One move of a lesson: its title, what to do now (with the keys), why, and whether the player did it."""

    title: str
    say: Callable[[T, Keys], str]
    why: str
    check: Callable[[T], bool]


@dataclass(frozen=True)
class Lesson(Generic[T]):
    """A game's lesson: its steps, and what the coach says outside them."""

    steps: tuple[Step[T], ...]
    between: Callable[[T, Keys, Step[T] | None], str]
    #: Once every step is done: why the last round went as it did ("" when there is nothing to explain).
    last_words: Callable[[T], str] = lambda game: ""
    #: The start of the feed's first line of a match, which the coach says in its own words (a lesson's match has a
    #: target only so that it outlasts the lesson); "" for a game whose feed has none.
    match_starts: str = ""


def advance(lesson: Lesson[T], done: int, game: T) -> int:
    """The steps passed, in order: ``done`` and every next one whose check now holds."""
    while done < len(lesson.steps) and lesson.steps[done].check(game):
        done += 1
    return done
