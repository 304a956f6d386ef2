"""Reading the client's screen in tmux (the ``tmux`` fixture, in conftest.py, runs tmux on a private socket)."""

from __future__ import annotations

import time
from collections.abc import Callable

Tmux = Callable[..., str]

#: Seconds to wait for something to show on screen.
WAIT = 30.0


def wait_for(tmux: Tmux, session: str, predicate: Callable[[str], bool], what: str, timeout: float = WAIT) -> str:
    """The screen once ``predicate`` holds for it; fails showing the screen after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        text = tmux("capture-pane", "-p", "-t", session)
        if predicate(text):
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; the screen was:\n{text}")
        time.sleep(0.1)


def on_the_table(text: str) -> bool:
    """The table screen of a round: the center cards above one's hand."""
    return "center" in text and "hand" in text


def quit_with_ctrl_q(tmux: Tmux, session: str, timeout: float = WAIT) -> None:
    """ctrl+q (answering yes when the client asks first, as it does mid-match), then the session must end (the
    client quit, and with it the command tmux ran)."""
    tmux("send-keys", "-t", session, "C-q")
    deadline = time.monotonic() + timeout
    answered = False
    while session in tmux("list-sessions", "-F", "#{session_name}") and time.monotonic() < deadline:
        if not answered and "Leave the match?" in tmux("capture-pane", "-p", "-t", session):
            tmux("send-keys", "-t", session, "y")
            answered = True
        time.sleep(0.1)
    assert session not in tmux("list-sessions", "-F", "#{session_name}"), "ctrl+q did not quit"


def to_the_table(tmux: Tmux, session: str) -> None:
    """From wherever the match is to a round's table: ready at signing, and as host, start the next round at
    the reveal (a bot may have ended the round; the test's timing never ends a break by itself)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        text = tmux("capture-pane", "-p", "-t", session)
        if on_the_table(text):
            return
        if "starts the next round now" in text:
            tmux("send-keys", "-t", session, "n")
        elif "pick this sign" in text:
            tmux("send-keys", "-t", session, "Enter")  # ready (and pick the highlighted sign)
        time.sleep(0.3)
    raise AssertionError(f"never got to the table:\n{tmux('capture-pane', '-p', '-t', session)}")
