"""An unexpected error in the client: its traceback kept in a file, and the ways on after it.

Textual ends an app on an error nothing handled; that ends the app, not the person's session. The app writes
the traceback to a file of its own (one per process and moment, so that several people under one Unix account
never write over each other's), and ``quatro_tui.cli.run_app`` opens a new app on ``CrashScreen``: what
happened, the file's path, and the ways on this session has (back to the seat, the lobby, quit).

The files are under ``$XDG_STATE_HOME/quatro/crashes`` (``~/.local/state/quatro/crashes`` by default), or the
system's temporary directory when that cannot be written.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from quatro_tui import words

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp

#: Crash screens one run of the program shows at most: an error that comes back at once on every way on ends the
#: program (with the last log named) rather than loop.
MAX_CRASHES = 3


def crash_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "quatro" / "crashes"


def write_log(error: BaseException, about: str, directory: Path | None = None) -> Path | None:
    """Write ``error``'s traceback, and ``about`` (what the client was doing), to a new file; its path (None: no
    directory could be written)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    text = "".join(
        [
            f"Quatro client {_version()} stopped on an unexpected error at {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}\n",
            f"Python {platform.python_version()} on {platform.platform()}; textual {_version('textual')}\n",
            f"{about}\n\n",
            *traceback.format_exception(error),
        ]
    )
    for folder in (
        [directory] if directory is not None else [crash_dir(), Path(tempfile.gettempdir()) / "quatro-crashes"]
    ):
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            for n in range(100):
                path = folder / f"crash-{stamp}-{os.getpid()}{f'-{n}' if n else ''}.log"
                try:
                    with open(path, "x", encoding="utf-8") as file:
                        file.write(text)
                except FileExistsError:
                    continue
                return path
        except OSError:
            continue
    return None


def _version(package: str = "quatro") -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "(version unknown)"


@dataclass(frozen=True)
class Crash:
    """What a crashed app leaves its successor: the error's one line, its log, and the ways on."""

    #: The error in one line (``KeyError: 'x'``), for the screen.
    summary: str
    #: The file with the traceback (None: none could be written).
    log: Path | None
    #: The table and player's seat to go back to (None: the person held none).
    seat: tuple[int, int] | None
    #: A server's lobby to go back to.
    lobby: bool
    #: How many crash screens this run has shown, this one included.
    count: int = 1
    #: The seat's secret, to go back to it (never shown).
    secret: str | None = None

    @staticmethod
    def of(
        error: BaseException,
        log: Path | None,
        seat: tuple[int, int] | None,
        lobby: bool,
        count: int,
        secret: str | None = None,
    ) -> Crash:
        line = traceback.format_exception_only(error)[-1].strip()
        return Crash(line, log, seat, lobby, count, secret)


def crash_words(crash: Crash) -> str:
    """What the crash screen says: what happened, where its details are, what is kept."""
    where = (
        f"The details are written to\n  {crash.log}\n(on the machine that runs this game; whoever looks after "
        "the game can read them there)."
        if crash.log is not None
        else "Its details could not be written to a file (no writable folder)."
    )
    kept = ""
    if crash.seat is not None:
        table, seat = crash.seat
        kept = f"\n\nYour seat (table {table}, seat {seat + 1}) is kept for a while: r takes you back to it."
    last = (
        "\n\nThis is its third time this session: quitting and starting again may help."
        if crash.count >= MAX_CRASHES
        else ""
    )
    return f"It was a fault in this program, not anything you did ({crash.summary}).\n{where}{kept}{last}"


class CrashScreen(Screen[None]):
    """The first screen of the app that follows one which stopped on an unexpected error."""

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    BINDINGS = [
        Binding("r", "seat", "back to your seat", id="crash-seat"),
        Binding("l", "lobby", "to the lobby", id="crash-lobby"),
        Binding("q,escape", "app.quit_now", "quit", id="crash-quit"),
    ]

    def __init__(self, crash: Crash) -> None:
        super().__init__()
        self.crash = crash

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "seat":
            return self.crash.seat is not None
        if action == "lobby":
            return self.crash.lobby
        return True

    def action_seat(self) -> None:
        self.app.after_crash(seat=True)

    def action_lobby(self) -> None:
        self.app.after_crash(seat=False)

    def compose(self) -> ComposeResult:
        ascii_only = self.app.game.ascii_only
        with Vertical(classes="dialog wide"):
            yield Static(Content.from_markup("[b]Quatro stopped on an unexpected error.[/b]"), id="crash-title")
            yield Static(Content(words.plain(crash_words(self.crash), ascii_only)), id="crash-detail")
            yield Static(Content.from_markup(self.choices()), id="crash-choices")

    def choices(self) -> str:
        options = []
        if self.crash.seat is not None:
            options.append("[b]r[/b] back to your seat")
        if self.crash.lobby:
            options.append("[b]l[/b] to the lobby")
        options.append("[b]q[/b] quit")
        return "\n" + "    ".join(options)


def log_to_stderr(crash: Crash) -> None:
    """The last word when the program ends after a crash without a screen to say it on."""
    where = f"; details in {crash.log}" if crash.log is not None else ""
    print(f"quatro: stopped on an unexpected error ({crash.summary}){where}", file=sys.stderr)
