"""End to end in a real terminal: ``quatro play --timing fast`` in tmux, keys sent, the screen read back."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid

import pytest

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"),
    pytest.mark.timeout(90),
]

WAIT = 30.0


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=False).stdout


def screen(session: str) -> str:
    return tmux("capture-pane", "-p", "-t", session)


def wait_for(session: str, predicate, what: str, timeout: float = WAIT) -> str:
    deadline = time.monotonic() + timeout
    while True:
        text = screen(session)
        if predicate(text):
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; the screen was:\n{text}")
        time.sleep(0.1)


def test_quatro_play_in_tmux_a_swap_is_made_and_seen(tmp_path):
    session = f"quatro-e2e-{uuid.uuid4().hex[:8]}"
    command = " ".join(
        [
            "env", f"XDG_CONFIG_HOME={shlex.quote(str(tmp_path))}", "LANG=C.UTF-8",
            shlex.quote(sys.executable), "-m", "quatro_tui", "play", "--timing", "fast", "--name", "tess",
        ]
    )
    tmux("-u", "new-session", "-d", "-s", session, "-x", "100", "-y", "30", "-c", os.getcwd(), command)
    try:
        text = wait_for(session, lambda t: "pick your team's sign" in t or "center" in t, "the match to begin")
        if "center" not in text:
            tmux("send-keys", "-t", session, "Enter")  # ready
        wait_for(session, lambda t: "center" in t and "hand" in t, "the table")
        for _ in range(10):
            tmux("send-keys", "-t", session, "a")
            tmux("send-keys", "-t", session, "q")
            try:
                text = wait_for(session, lambda t: "you put down" in t, "our swap in the feed", timeout=3)
                break
            except AssertionError:
                continue  # a bot took the card first (R10), or the round just ended: try again
        else:
            raise AssertionError(f"no swap seen on screen:\n{screen(session)}")
        assert "you put down" in text
        tmux("send-keys", "-t", session, "C-q")
        deadline = time.monotonic() + WAIT
        while session in tmux("list-sessions", "-F", "#{session_name}") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert session not in tmux("list-sessions", "-F", "#{session_name}"), "ctrl+q did not quit"
    finally:
        tmux("kill-session", "-t", session)
    assert (tmp_path / "quatro" / "client.toml").read_text().count("tess") == 1  # the name is remembered
