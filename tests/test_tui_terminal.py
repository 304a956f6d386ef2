"""End to end in a real terminal: ``quatro play --timing FILE`` in tmux, keys sent, the screen read back.

tmux runs on a socket of its own (``tmux -L``), never the user's or another test's server, and only that
server is killed at the end. Without tmux the test is skipped on a developer's machine, but fails in CI
(``CI`` set), where a silently skipped end-to-end test would look like a passing one.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
import uuid

import pytest

from helpers.terminal import on_the_table, quit_with_ctrl_q, to_the_table, wait_for
from helpers.tui import timing_file

pytestmark = pytest.mark.timeout(90)


def test_quatro_play_in_tmux_a_swap_is_made_and_seen(tmp_path, tmux):
    session = f"quatro-e2e-{uuid.uuid4().hex[:8]}"
    timing = timing_file(tmp_path)
    command = " ".join(
        [
            "env",
            f"XDG_CONFIG_HOME={shlex.quote(str(tmp_path))}",
            "LANG=C.UTF-8",
            shlex.quote(sys.executable),
            "-m",
            "quatro_tui",
            "play",
            "--timing",
            shlex.quote(str(timing)),
            "--name",
            "tess",
        ]
    )
    tmux("-u", "new-session", "-d", "-s", session, "-x", "100", "-y", "30", "-c", os.getcwd(), command)
    try:
        wait_for(tmux, session, lambda t: "pick this sign" in t or on_the_table(t), "the match to begin")
        for _ in range(10):
            to_the_table(tmux, session)
            tmux("send-keys", "-t", session, "a")
            tmux("send-keys", "-t", session, "q")
            try:
                text = wait_for(tmux, session, lambda t: "you put down" in t, "our swap in the feed", timeout=3)
                break
            except AssertionError:
                continue  # a bot took the card first (R10), or a bot's call just ended the round: try again
        else:
            raise AssertionError(f"no swap seen on screen:\n{tmux('capture-pane', '-p', '-t', session)}")
        assert "you put down" in text
        tmux("send-keys", "-t", session, "C-q")  # mid-match: asks first
        wait_for(tmux, session, lambda t: "Leave the match?" in t, "the question before quitting")
        quit_with_ctrl_q(tmux, session)
    finally:
        tmux("kill-session", "-t", session)
    assert (tmp_path / "quatro" / "client.toml").read_text().count('name = "tess"') == 1  # the name is remembered


def test_enter_then_a_late_space_at_signing_calls_nothing_in_tmux(tmp_path, tmux):
    """At 80x24: ``enter`` readies (the bots are ready: the round opens at once) and a ``space`` 0.1 s later lands
    on the table; the guard (quatro_tui/guard.py) keeps it from calling, and the feed shows no call."""
    session = f"quatro-e2e-{uuid.uuid4().hex[:8]}"
    timing = timing_file(tmp_path)
    command = " ".join(
        [
            "env",
            f"XDG_CONFIG_HOME={shlex.quote(str(tmp_path))}",
            "LANG=C.UTF-8",
            shlex.quote(sys.executable),
            "-m",
            "quatro_tui",
            "play",
            "--timing",
            shlex.quote(str(timing)),
            "--name",
            "tess",
        ]
    )
    tmux("-u", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", "-c", os.getcwd(), command)
    try:
        wait_for(tmux, session, lambda t: "pick this sign" in t, "the sign screen")
        time.sleep(1.0)  # the sign screen's own keys armed
        tmux("send-keys", "-t", session, "Enter")
        time.sleep(0.1)
        tmux("send-keys", "-t", session, "Space")
        wait_for(tmux, session, on_the_table, "the table")
        time.sleep(1.5)
        text = tmux("capture-pane", "-p", "-t", session)
        assert "you called" not in text and "Quatro!  —" not in text, text
        assert "called Quatro" not in text, text
    finally:
        tmux("kill-session", "-t", session)
