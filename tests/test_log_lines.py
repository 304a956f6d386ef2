"""A log line is one line, whatever a peer sent: an operator's ``grep`` and their terminal see what happened, not a
line a peer wrote for them."""

from __future__ import annotations

import logging
import subprocess
import sys

from quatro_server.logs import LINE_LIMIT, OneLineFormatter, shown

HOSTILE = "ann\n2026-12-07 10:00:00,000 INFO quatro_server.admin admin_login who='root'\x1b[2J\x85\u2028\x00"


def formatted(message: str, *args: object) -> str:
    record = logging.LogRecord("quatro_server.test", logging.WARNING, __file__, 1, message, args, None)
    return OneLineFormatter("%(levelname)s %(name)s %(message)s").format(record)


def test_a_peers_newline_escape_and_separators_cannot_start_a_forged_line_or_move_the_cursor():
    line = formatted("directory_bad_record key=%s", HOSTILE)
    assert "\n" not in line and "\x1b" not in line and "\x85" not in line and "\u2028" not in line
    assert "\x00" not in line
    assert line.startswith("WARNING quatro_server.test directory_bad_record key=ann\\n2026-12-07")
    assert "\\x1b[2J" in line and "\\u2028" in line


def test_a_message_no_call_site_bounded_is_cut_and_says_how_much_was_left_out():
    line = formatted("lobby_name name=%s", "x" * (LINE_LIMIT * 3))
    assert len(line) < LINE_LIMIT + 100
    assert line.endswith(f"... ({len('lobby_name name=') + LINE_LIMIT * 3 - LINE_LIMIT} characters more)")


def test_the_record_other_handlers_see_is_left_as_it_was():
    record = logging.LogRecord("quatro_server.test", logging.INFO, __file__, 1, "a=%s", ("1\n2",), None)
    OneLineFormatter("%(message)s").format(record)
    assert record.getMessage() == "a=1\n2"


def test_shown_quotes_a_peers_value_short():
    assert shown("a\nb") == "'a\\nb'"
    assert len(shown("y" * 500)) == 80


def test_the_servers_configured_log_writes_one_line_for_a_hostile_message():
    """``configure`` (what ``quatro-server`` and the network bot call) puts the one-line formatter on standard error."""
    script = (
        "import logging\n"
        "from quatro_server import logs\n"
        "logs.configure('info', 'worker-2')\n"
        f"logging.getLogger('quatro_server.lobby').warning('hello name=%s', {HOSTILE!r})\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    assert " WARNING worker-2 quatro_server.lobby hello name=ann\\n2026-12-07 10:00:00,000 INFO " in lines[0]
