"""The SSH door end to end, as players use it: a real OpenSSH client in tmux, nothing of Quatro on their side.

ann and ben reach the lobby, sit at one table with two bots and swap cards; ann's window is resized and her
screen follows; ben's ssh is killed mid-round and ann plays on; ben, who logged in with a key, comes back to
his seat. Without ssh or tmux the test is skipped on a developer's machine but fails in CI (.ci/run installs both).
"""

from __future__ import annotations

import os
import shlex
import shutil
import time
from pathlib import Path

import pytest

from helpers.ssh import DoorServer, player_key, start_door
from helpers.terminal import WAIT, on_the_table, to_the_table, wait_for

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def ssh_client():
    if shutil.which("ssh") is None:
        if os.environ.get("CI"):
            pytest.fail(
                "ssh is not installed, and CI must run the SSH end-to-end test (.ci/run installs openssh-client)"
            )
        pytest.skip("ssh is not installed (.ci/run installs openssh-client)")
    return shutil.which("ssh")


def ssh_command(ssh: str, door: DoorServer, user: str, key: Path | None = None) -> str:
    """OpenSSH as a player types it, minus the questions: no known_hosts, no agent, no user config."""
    options = [
        "-F",
        "/dev/null",
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "LogLevel=ERROR",
        "-p",
        str(door.ssh_port),
        "-t",
    ]
    if key is None:
        options += ["-o", "PubkeyAuthentication=no"]
    else:
        options += ["-i", str(key), "-o", "IdentitiesOnly=yes"]
    return " ".join(
        [
            "env",
            "-u",
            "SSH_AUTH_SOCK",
            "LANG=C.UTF-8",
            shlex.quote(ssh),
            *map(shlex.quote, options),
            f"{user}@127.0.0.1",
        ]
    )


def swap(tmux, session: str, seen_by: str | None = None) -> None:
    """Swap the first card with the center's first until the feed shows it (a bot may take the card first, R10)."""
    before = tmux("capture-pane", "-p", "-t", session).count("you put down")
    for _ in range(10):
        to_the_table(tmux, session)
        tmux("send-keys", "-t", session, "a")
        tmux("send-keys", "-t", session, "q")
        try:
            wait_for(tmux, session, lambda t: t.count("you put down") > before, "a swap in the feed", timeout=3)
        except AssertionError:
            continue
        if seen_by is not None:
            wait_for(tmux, seen_by, lambda t: "ann put down" in t, "ann's swap on ben's screen")
        return
    raise AssertionError(f"no swap seen on screen:\n{tmux('capture-pane', '-p', '-t', session)}")


def all_to_the_table(tmux, *sessions: str) -> None:
    """Everyone ready at signing (the round opens when all are), the host past a reveal, until all see the table."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        arrived = 0
        for session in sessions:
            text = tmux("capture-pane", "-p", "-t", session)
            if on_the_table(text):
                arrived += 1
            elif "starts the next round now" in text:
                tmux("send-keys", "-t", session, "n")
            elif "pick this sign" in text and "you: ready" not in text:
                tmux("send-keys", "-t", session, "Enter")
        if arrived == len(sessions):
            return
        time.sleep(0.3)
    raise AssertionError("never all at the table:\n" + "\n".join(tmux("capture-pane", "-p", "-t", s) for s in sessions))


def clients_left(door: DoorServer, count: int) -> None:
    deadline = time.monotonic() + WAIT
    while len(door.clients()) != count:
        assert time.monotonic() < deadline, f"{len(door.clients())} session clients run, not {count}"
        time.sleep(0.1)


def test_ssh_door_with_openssh_two_players_a_resize_a_killed_session_and_a_key_back_to_its_seat(
    tmp_path, tmux, ssh_client
):
    door = start_door(tmp_path)
    ben_key = tmp_path / "ben_key"
    player_key(ben_key)
    try:
        tmux("-u", "new-session", "-d", "-s", "ann", "-x", "100", "-y", "30", ssh_command(ssh_client, door, "ann"))
        wait_for(tmux, "ann", lambda t: "Tables on this server" in t, "ann's lobby")
        tmux("send-keys", "-t", "ann", "c")
        wait_for(tmux, "ann", lambda t: "ann (you) (host)" in t, "ann's table")
        tmux("send-keys", "-t", "ann", "b")
        wait_for(tmux, "ann", lambda t: "Add a bot at which level?" in t, "the level question")
        tmux("send-keys", "-t", "ann", "Enter")
        wait_for(tmux, "ann", lambda t: t.count("bot normal") == 1, "a bot")
        tmux("send-keys", "-t", "ann", "b")
        wait_for(tmux, "ann", lambda t: "Add a bot at which level?" in t, "the level question")
        tmux("send-keys", "-t", "ann", "3")
        wait_for(tmux, "ann", lambda t: t.count("bot normal") == 1 and "bot hard" in t, "a hard bot")

        tmux(
            "-u",
            "new-session",
            "-d",
            "-s",
            "ben",
            "-x",
            "100",
            "-y",
            "30",
            ssh_command(ssh_client, door, "ben", ben_key),
        )
        wait_for(tmux, "ben", lambda t: "Tables on this server" in t and "1/4" not in t, "ben's lobby, ann's table")
        tmux("send-keys", "-t", "ben", "Enter")  # join the highlighted table: ann's
        wait_for(tmux, "ben", lambda t: "ben (you)" in t, "ben at ann's table")
        wait_for(tmux, "ann", lambda t: "ben" in t, "ben on ann's screen")
        tmux("send-keys", "-t", "ann", "s")  # every seat is filled: the host starts

        all_to_the_table(tmux, "ann", "ben")
        swap(tmux, "ann", seen_by="ben")

        # ann's window grows: her client draws on all of it (the footer moves to the new last row).
        tmux("resize-window", "-t", "ann", "-x", "120", "-y", "40")
        wait_for(
            tmux,
            "ann",
            lambda t: len(t.splitlines()) == 40 and "quit" in t.splitlines()[-1],
            "ann's screen redrawn at 120x40",
        )

        # ben's ssh dies mid-round: his client goes, ann plays on.
        tmux("kill-session", "-t", "ben")
        clients_left(door, 1)
        swap(tmux, "ann")

        # ben comes back with his key: his own seat, no lobby on the way.
        tmux(
            "-u",
            "new-session",
            "-d",
            "-s",
            "ben",
            "-x",
            "100",
            "-y",
            "30",
            ssh_command(ssh_client, door, "ben", ben_key),
        )
        wait_for(tmux, "ben", lambda t: "Back in your seat" in t, "ben back in his seat")
        assert "Tables on this server" not in tmux("capture-pane", "-p", "-t", "ben")
        clients_left(door, 2)
    finally:
        tmux("kill-server")
        door.stop()
