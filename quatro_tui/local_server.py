"""A private Quatro server for ``quatro play``: started as a separate process, its port read from its output.

The client never imports the server (the architecture keeps them apart): it runs the ``quatro_server`` module
with the same interpreter, on a free port (``--port 0``), and reads the ``quatro join HOST:PORT`` lines the
server prints once it listens.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from quatro_shared.profiles import STANDARD_PROFILE

#: Seconds to wait for the server to print where it listens. Start-up takes well under a second.
START_TIMEOUT = 15.0
#: Seconds the server gets to say goodbye to its clients after SIGTERM before it is killed.
STOP_TIMEOUT = 3.0

_JOIN_LINE = re.compile(r"quatro join (\S+):(\d+)")

#: Seconds a private server that runs on without its opener (``quatro play --open N``) waits with nobody
#: connected before it stops by itself: long enough to come back after a closed window or a dropped link,
#: short enough that nothing lingers once the evening is over. It stops at once when its tables have closed
#: (the match over and everyone gone).
QUIET_STOP = 180.0

#: The first argument of ``_BOOT`` when the server is to outlive a client that goes without a word.
_OUTLIVE = "--outlive"

#: Runs the server, stopping it (SIGTERM: it says goodbye) when its stdin closes, which happens when the
#: client exits in any way, even killed. The client's ``detach`` first, or the client's end without a word
#: for a server started to outlive it (its terminal closed while others play at its tables), leave it
#: running by itself instead, its output to /dev/null (nobody reads it), until ``--stop-when-idle`` stops it.
_BOOT = f"""
import os, runpy, signal, sys, threading
outlive = sys.argv[1:2] == ["{_OUTLIVE}"]
if outlive:
    del sys.argv[1]
def watch():
    said = sys.stdin.buffer.readline().strip()
    if said == b"detach" or (outlive and not said):
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)
        os.dup2(quiet, 2)
        return
    os.kill(os.getpid(), signal.SIGTERM)
threading.Thread(target=watch, daemon=True).start()
runpy.run_module("quatro_server", run_name="__main__")
"""


def minutes(seconds: float) -> str:
    """A quiet time in words: "3 minutes", "1 minute", "45 s"."""
    if seconds < 60 or seconds % 60:
        return f"{seconds:g} s"
    count = int(seconds // 60)
    return "1 minute" if count == 1 else f"{count} minutes"


class ServerFailed(Exception):
    """The private server did not start; the message holds what it printed."""


class LocalServer:
    """One ``quatro-server`` child process. Use ``start()`` and ``stop()``, or ``with LocalServer(...)``."""

    def __init__(
        self,
        timing: str = STANDARD_PROFILE,
        public: bool = False,
        idle_stop: float = QUIET_STOP,
        lesson: bool = False,
        data_dir: Path | None = None,
        opener: str | None = None,
    ) -> None:
        self.timing = timing
        #: Whose game this is: its stop is final, and its guests are told who ended it (``--final-goodbye``).
        self.opener = opener
        #: Host the guided first match (``quatro learn``): the server's tables are each game's scripted lesson.
        self.lesson = lesson
        #: Where the server journals its matches, for replays (``quatro_tui.replay.journals``); None: it keeps none.
        self.data_dir = data_dir
        #: Seconds with nobody connected before the server stops by itself (it matters once detached).
        self.idle_stop = idle_stop
        #: Listen on every interface so others on the LAN can join (``quatro play --open N``). Such a server
        #: also outlives a client that ends without a word (its terminal closed, the process killed): the
        #: others' match goes on, and the opener can come back to her seat.
        self.public = public
        self.port: int | None = None
        #: Where others join: the addresses the server printed.
        self.addresses: list[str] = []
        self.process: subprocess.Popen[str] | None = None
        self._errors: list[str] = []

    def command(self) -> list[str]:
        host = "0.0.0.0" if self.public else "127.0.0.1"
        # A private game's matches are journalled in the player's own directory, for replays, and the last run's
        # tables are never played on again; without a directory it stays in memory only.
        outlive = [_OUTLIVE] if self.public else []
        journal = ["--no-journal"] if self.data_dir is None else ["--data-dir", str(self.data_dir), "--no-restore"]
        return [
            sys.executable,
            "-c",
            _BOOT,
            *outlive,
            "--host",
            host,
            "--port",
            "0",
            "--timing",
            self.timing,
            *journal,
            "--log-level",
            "warning",
            "--stop-when-idle",
            str(self.idle_stop),
            # A private game is not restarted: its guests are told so, not to wait for it.
            "--final-goodbye",
            f"{self.opener} ended the game" if self.opener else "the game's opener ended it",
            *(["--lesson"] if self.lesson else []),
        ]

    def launch(self) -> None:
        """Start the process without waiting for it: it boots while the client loads (``wait`` collects the port)."""
        # A session of its own: a terminal's hang-up or ctrl+c reaches the client, never the server, whose fate
        # the client decides (or, if the client is gone without a word, ``_BOOT``).
        self.process = subprocess.Popen(
            self.command(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        # Keep draining stderr so a chatty server never blocks on a full pipe.
        threading.Thread(target=self._drain, args=(self.process.stderr, self._errors), daemon=True).start()
        self._found: list[tuple[str, int]] = []
        self._listening = threading.Event()
        process = self.process

        def read_stdout() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                match = _JOIN_LINE.search(line)
                if match:
                    self._found.append((match.group(1), int(match.group(2))))
                    self.addresses.append(f"{match.group(1)}:{match.group(2)}")
                    self._listening.set()
            self._listening.set()

        threading.Thread(target=read_stdout, daemon=True).start()

    def wait(self) -> int:
        """The port, once the launched process listens. Raises ``ServerFailed``."""
        if self.port is not None:
            return self.port
        if self.process is None:
            self.launch()
        if not self._listening.wait(START_TIMEOUT) or not self._found:
            self.stop()
            raise ServerFailed("the private server did not start: " + " ".join(self._errors[-5:]).strip())
        time.sleep(0.05)  # the other address lines follow at once; let them arrive for --open
        self.port = self._found[0][1]
        return self.port

    def start(self) -> int:
        """Start the process and return its port once it listens. Raises ``ServerFailed``."""
        self.launch()
        return self.wait()

    @staticmethod
    def _drain(stream: IO[str], into: list[str]) -> None:
        for line in stream:
            into.append(line.strip())
            del into[:-20]

    def stop(self, wait: bool = True) -> None:
        """Ask the server to stop (it says goodbye to its clients, which takes it about a second).

        ``wait=False`` returns at once: the player who quit should not wait for the goodbye, and the process
        ends by itself (its stdin closes with ours as a last resort).
        """
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        if not wait:
            return
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def detach(self) -> None:
        """Leave the server running without this client, for the others at its tables: it stops by itself once
        nobody has been connected for ``idle_stop`` seconds, or its tables have closed."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None or process.stdin is None:
            return
        try:
            process.stdin.write("detach\n")
            process.stdin.flush()
        except OSError:
            pass  # it has just stopped: nothing to leave running

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
