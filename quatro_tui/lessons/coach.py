"""The coach of ``quatro learn``: a panel over the real screens saying the lesson's step, the keys, and why.

``LessonApp`` is the client as ``quatro play`` runs it, against the private server's scripted lesson; after every
update it checks the step from the client's state, moves on when the player did it, and tells the panel. The keys
are read from the bindings of the screen that shows (and the app's), as remapped, never written out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.css.query import NoMatches
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Static

from quatro_tui.app import Play, QuatroApp
from quatro_tui.games import default
from quatro_tui.lessons.steps import Lesson, advance
from quatro_tui.screens.help import key_name
from quatro_tui.widgets import Feed


def bound_keys(node: DOMNode, binding_id: str, ascii_only: bool = False) -> list[str]:
    """The keys that press the binding ``binding_id`` of ``node``, as the key map in force has them."""
    bindings_map = node._bindings.copy()
    keymap = node.app._keymap
    if keymap:
        bindings_map.apply_keymap(keymap)
    return [
        key_name(key, ascii_only)
        for key, bindings in bindings_map.key_to_bindings.items()
        for binding in bindings
        if binding.id == binding_id
    ]


def keys_on(screen: Screen[Any], binding_id: str, ascii_only: bool = False) -> str:
    """``<key>`` for the binding ``binding_id`` of ``screen`` or of its app (the first of its keys)."""
    keys = bound_keys(screen, binding_id, ascii_only) or bound_keys(screen.app, binding_id, ascii_only)
    if not keys:
        raise KeyError(f"no binding {binding_id!r} on {type(screen).__name__}")
    return f"<{keys[0]}>"


#: The feed's first line in a lesson, in place of a match's target.
LESSON_STARTS = "The lesson starts: each round is dealt for one thing to learn, again until it is learnt."


class Coach(Static):
    """The lesson's panel, over the bottom of whatever screen shows."""

    #: What it says now, in Textual markup.
    said = ""

    def say(self, text: str) -> None:
        if text != self.said:
            self.said = text
            self.update(text)


class LessonApp(QuatroApp):
    """``quatro learn``: the client, its private server's lesson, and the coach."""

    CSS_PATH = str(Path(__file__).parent.parent / "quatro.tcss")  # the client's stylesheet, not one beside this
    TELLS_TARGET = False  # the lesson's match ends with its last step, never at a score

    def __init__(self, plan: Play, lesson: Lesson[Any], **kwargs: Any) -> None:
        super().__init__(plan, **kwargs)
        self.lesson = lesson
        #: The steps the player has done, in order.
        self.done = 0
        #: Taken from ``quatro play``'s offer: once the lesson is left, the match the player asked for follows.
        self.then_play = False

    @property
    def plan_game(self) -> str:
        return self.plan.game if isinstance(self.plan, Play) else ""

    @property
    def finished(self) -> bool:
        return self.done >= len(self.lesson.steps)

    def game_changed(self) -> None:
        feed, starts = self.game.feed, self.lesson.match_starts
        for k, line in enumerate(feed):
            if starts and line.startswith(starts):
                feed[k] = LESSON_STARTS  # its target is only there so that the match outlasts the lesson
        super().game_changed()
        self.coach()

    def route(self) -> None:
        super().route()
        self.call_after_refresh(self.coach)

    def in_match(self) -> bool:
        # A lesson done is a lesson left at will: quitting asks nothing.
        return not self.finished and super().in_match()

    def coach(self) -> None:
        """Check the step, then say the next one on the screen that shows."""
        self.done = advance(self.lesson, self.done, self.game)
        screen = self.base_screen()
        if screen is None or not screen.is_mounted:
            return
        try:
            panel = screen.query_one(Coach)
        except NoMatches:
            panel = Coach()
            screen.add_class("-coached")  # the panel lies over the screen: it adds nothing to scroll to
            screen.mount(panel)
        panel.say(self.coach_text(screen))
        # The panel lies over the bottom of the screen: the feed keeps its newest lines above it.
        self.call_after_refresh(self._feeds_above, screen)

    def _feeds_above(self, screen: Screen[Any]) -> None:
        if screen.is_mounted:
            for feed in screen.query(Feed):
                feed.redraw()

    def coach_text(self, screen: Screen[Any]) -> str:
        ascii_only = self.game.ascii_only

        def keys(binding_id: str) -> str:
            return keys_on(screen, binding_id, ascii_only)

        steps = self.lesson.steps
        if self.finished:
            why = self.lesson.last_words(self.game)
            if self.then_play:
                on = f"Press {keys('quit')}: your match against bots starts."
            else:
                command = (
                    "quatro play" if self.plan_game in ("", default().name) else f"quatro play --game {self.plan_game}"
                )
                on = f"[b]{command}[/b] starts a real match. Press {keys('quit')} to leave."
            return "\n".join(line for line in ("[b]Lesson done[/b]: you know every move.", why, on) if line)
        step = steps[self.done]
        head = f"[b]Lesson {self.done + 1}/{len(steps)}: {step.title}[/b]"
        between = self.lesson.between(self.game, keys, step)
        if between:
            return f"{head}\n{between}"
        return f"{head}\n{step.say(self.game, keys)}\n[i]Why:[/i] {step.why}"
