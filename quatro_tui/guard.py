"""Keys that cannot betray a player: a screen's consequential keys do nothing for a moment after it appears.

A key pressed for one screen can land on the next one when the screen changes under the finger: ``enter``
readies at signing, the round opens, and a ``space`` meant to pick a sign would call "Quatro!" at the table.
A guarded screen ignores its ``GUARDED`` actions for ``guard`` seconds after it appears (the footer shows
them dimmed until then) and redraws its footer the moment they are armed.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from textual.screen import Screen

    _Base = Screen[Any]
else:
    _Base = object

#: Seconds after a screen appears during which its consequential keys (calls, counters, votes, swaps, the
#: next round, readying) do nothing. Longer than a late key press, shorter than anyone's reaction to a new screen.
KEY_GUARD = 0.6


class KeyGuard(_Base):
    """Mixed into a screen (before ``Screen``): its ``GUARDED`` actions wait ``guard`` seconds after it mounts.

    ``guard`` is set before the screen is shown: the app guards a screen that replaces another one under the
    player's fingers, not the first screen of a run.
    """

    #: Action names (without parameters) that wait out the guard.
    GUARDED: ClassVar[frozenset[str]] = frozenset()
    #: Seconds of guard from mounting (0: none).
    guard: float = KEY_GUARD
    _armed_at: float = 0.0

    def on_mount(self) -> None:
        if self.guard > 0:
            self._armed_at = time.monotonic() + self.guard
            self.set_timer(self.guard, self.refresh_bindings)

    def armed(self) -> bool:
        """Whether the guarded keys work yet: never before the screen has mounted (and so set its guard)."""
        return self.is_mounted and time.monotonic() >= self._armed_at

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.GUARDED and not self.armed():
            return None  # shown dimmed, and not run
        return True
