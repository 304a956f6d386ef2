"""Each game's guided first match (``quatro learn``), by the game's name: the one place that lists them. A server
started with ``--lesson`` hosts them in place of the games (``quatro_server.games.host_instead``)."""

from __future__ import annotations

from quatro_server import games
from quatro_server.game import AnyGame
from quatro_server.games.quarto.lesson import QuartoLesson
from quatro_server.games.quatro.lesson import QuatroLesson

#: Every game's lesson, by the game's name.
LESSONS: dict[str, AnyGame] = {lesson.name: lesson for lesson in (QuatroLesson(), QuartoLesson())}


def host() -> None:
    """Host every game's lesson in place of the game (``quatro-server --lesson``)."""
    for lesson in LESSONS.values():
        games.host_instead(lesson)
