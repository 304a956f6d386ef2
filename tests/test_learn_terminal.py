"""``quatro learn`` in a real terminal (tmux, 80x24), walked by a scripted newcomer who reads the coach and presses
only the keys it names, in the order it names them, until the lesson is done; for each game."""

from __future__ import annotations

import os
import re
import shlex
import sys
import time
import uuid
from pathlib import Path

import pytest

from helpers.terminal import Tmux

pytestmark = pytest.mark.timeout(180)

#: A key as the coach names it, to tmux's name for it.
TMUX_KEYS = {
    "space": "Space",
    "enter": "Enter",
    "esc": "Escape",
    "←": "Left",
    "→": "Right",
    "↑": "Up",
    "↓": "Down",
    "left": "Left",
    "right": "Right",
    "up": "Up",
    "down": "Down",
    "ctrl+q": "C-q",
    "backspace": "BSpace",
}
#: Seconds the newcomer waits for the coach to change before reading it again and pressing again.
PATIENCE = 1.5
#: A lesson's pace for the test: the lesson's own rules, pulses and cooldowns a few tenths of a second.
LESSON_TOML = """\
sign_window = 60
swap_cooldown = 0.3
channel_cooldown = 0.3
pulse_interval = 0.6
pulse_shown = 0.5
round_length = 120
break_length = 60
target_score = 9
"""


def coach(text: str) -> str:
    """The coach's panel: from its heading to the key bar (the last line)."""
    lines = text.rstrip("\n").split("\n")
    for k in range(len(lines) - 1, -1, -1):
        if lines[k].startswith(" Lesson"):
            return "\n".join(lines[k:-1])
    return ""


def named_keys(panel: str) -> list[str]:
    """The keys the panel tells the player to press, in order: none after "Don't press" (a decoy's lesson)."""
    told = panel.split("Why:")[0]
    if "Don't press" in told:
        return []
    return [TMUX_KEYS.get(key, key) for key in re.findall(r"<([^<>\s]+)>", " ".join(told.split()))]


def walk(tmux: Tmux, session: str, budget: float) -> list[str]:
    """Do what the coach says until the lesson is done; the headings seen, in order."""
    headings: list[str] = []
    deadline = time.monotonic() + budget
    while time.monotonic() < deadline:
        text = tmux("capture-pane", "-p", "-t", session)
        panel = coach(text)
        if not panel:
            time.sleep(0.2)
            continue
        heading = re.split(r"\s{2,}", panel.split("\n")[0].strip())[0]  # not what the screen shows beside it
        if not headings or headings[-1] != heading:
            headings.append(heading)
        if heading.startswith("Lesson done"):
            return headings
        if "You hold" in panel and "Lesson 1/" in heading:
            # At 80x24 the coach lies over the bottom of the table: the feed's newest line still shows above it,
            # and the lesson's match claims no target it will not reach.
            until = time.monotonic() + 3
            while "opens: swap!" not in text.split(" Lesson 1/")[0] and time.monotonic() < until:
                time.sleep(0.1)
                text = tmux("capture-pane", "-p", "-t", session)
            above = text.split(" Lesson 1/")[0]
            assert "opens: swap!" in above and "(to " not in above and "first team to" not in above, text
        for key in named_keys(panel):
            tmux("send-keys", "-t", session, key)
            time.sleep(0.15)
        until = time.monotonic() + PATIENCE
        while time.monotonic() < until and coach(tmux("capture-pane", "-p", "-t", session)) == panel:
            time.sleep(0.1)
    raise AssertionError(
        f"the lesson was not done in {budget:g} s; headings {headings}; the screen:\n"
        f"{tmux('capture-pane', '-p', '-t', session)}"
    )


def learn(tmux: Tmux, tmp_path: Path, game: str, locale: tuple[str, ...] = ()) -> list[str]:
    timing = tmp_path / "lesson.toml"
    timing.write_text(LESSON_TOML)
    session = f"learn-{uuid.uuid4().hex[:8]}"
    command = " ".join(
        [
            "env",
            f"XDG_CONFIG_HOME={shlex.quote(str(tmp_path))}",
            *locale,
            shlex.quote(sys.executable),
            "-m",
            "quatro_tui",
            "learn",
            "--game",
            game,
            "--timing",
            shlex.quote(str(timing)),
            "--name",
            "newt",
        ]
    )
    tmux("new-session", "-d", "-s", session, "-x", "80", "-y", "24", "-c", os.getcwd(), command)
    try:
        started = time.monotonic()
        headings = walk(tmux, session, budget=120)
        took = time.monotonic() - started
        print(f"{game}: the lesson took {took:.1f} s: {headings}")
        # Done: the leaving key it names quits at once (nothing left to lose).
        panel = coach(tmux("capture-pane", "-p", "-t", session))
        for key in named_keys(panel):
            tmux("send-keys", "-t", session, key)
        end = time.monotonic() + 15
        while session in tmux("list-sessions", "-F", "#{session_name}") and time.monotonic() < end:
            time.sleep(0.1)
        assert session not in tmux("list-sessions", "-F", "#{session_name}"), "the leaving key did not quit"
        return headings
    finally:
        tmux("kill-session", "-t", session)


def steps_in(headings: list[str]) -> list[str]:
    return list(dict.fromkeys(h.split(": ", 1)[1] for h in headings if h.startswith("Lesson ") and "/" in h))


def test_a_newcomer_learns_quatro_by_the_keys_the_coach_names(tmux, tmp_path):
    headings = learn(tmux, tmp_path, "quatro")
    assert steps_in(headings) == [
        "Swap toward four",
        "Take the channel",
        "Show your team's sign",
        "Read your partner's sign, and call",
        "Spot their sign, and counter",
        "A decoy",
    ]


def test_a_newcomer_learns_quatro_in_a_plain_locale_where_keys_and_signs_go_by_their_names(tmux, tmp_path):
    """LANG=C: the coach names the arrows ("left") and the signs by name, as the rest of the screen does."""
    headings = learn(tmux, tmp_path, "quatro", ("LANG=C", "LC_ALL=C"))
    assert steps_in(headings)[-1] == "A decoy" and len(steps_in(headings)) == 6


def test_a_newcomer_learns_quarto_by_the_keys_the_coach_names(tmux, tmp_path):
    headings = learn(tmux, tmp_path, "quarto")
    assert steps_in(headings) == ["Place the piece you were given", "Give a piece", "This piece hands them a win"]


def test_a_first_quatro_play_offers_the_lesson_once_per_name_declined_or_taken_with_one_key(tmux, tmp_path):
    from helpers.terminal import quit_with_ctrl_q, wait_for

    def play(name: str) -> str:
        session = f"offer-{uuid.uuid4().hex[:8]}"
        command = " ".join(
            [
                "env",
                f"XDG_CONFIG_HOME={shlex.quote(str(tmp_path))}",
                "QUATRO_LEARN_OFFER=1",
                shlex.quote(sys.executable),
                "-m",
                "quatro_tui",
                "play",
                "--timing",
                "fast",
                "--name",
                name,
            ]
        )
        tmux("new-session", "-d", "-s", session, "-x", "80", "-y", "24", "-c", os.getcwd(), command)
        return session

    def shows_the_game(text: str) -> bool:
        return "pick this sign" in text or ("center" in text and "hand" in text)

    session = play("zoe")
    try:
        wait_for(tmux, session, lambda t: "Press l to learn it now" in t, "the offer")
        tmux("send-keys", "-t", session, "n")  # one key declines
        wait_for(tmux, session, shows_the_game, "the match, once declined")
        quit_with_ctrl_q(tmux, session)
    finally:
        tmux("kill-session", "-t", session)
    session = play("zoe")
    try:
        text = wait_for(tmux, session, lambda t: shows_the_game(t) or "Press l" in t, "the match again")
        assert "Press l" not in text  # answered: never again
        quit_with_ctrl_q(tmux, session)
    finally:
        tmux("kill-session", "-t", session)
    session = play("yan")  # another person under the same account is asked for themselves
    try:
        wait_for(tmux, session, lambda t: "Press l to learn it now" in t, "the offer to another name")
        tmux("send-keys", "-t", session, "l")
        wait_for(tmux, session, lambda t: "Lesson 1/6" in coach(t), "the lesson's coach")
        quit_with_ctrl_q(tmux, session)
    finally:
        tmux("kill-session", "-t", session)
