"""A log line is one line, whatever a peer sent: an operator's ``grep`` and their terminal see what happened, not a
line a peer wrote for them."""

from __future__ import annotations

import ast
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from quatro_server.logs import LINE_LIMIT, OneLineFormatter, shown

ROOT = Path(__file__).resolve().parent.parent

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


# --- every log call that takes a value ----------------------------------------------------------------------------

#: The values a server log line writes with ``%s`` as they are, each with why no peer can put a line in it (the
#: argument's source text, as the call writes it). Anything else a peer may have sent is written ``shown(value)``.
#: A new ``%s`` value must be either: this test names the call that wrote neither.
SERVER_OWN: dict[str, str] = {
    # Addresses: the socket's, or parsed (``parse_address``) into a host and a port.
    "address": "a socket's peer address or a parsed HOST:PORT",
    "conn.address": "a socket's peer address",
    "self.address": "a socket's peer address or this server's own",
    "self.server.peer": "the SSH connection's socket address",
    "self.url": "the operator's --directory URL",
    "self.server.fingerprint or '-'": "a key's fingerprint, computed here (hex and base64)",
    # Names a player chose: the wire reads a name only printable and at most 24 characters (``Name``).
    "result.name": "a network bot's own name, given by its operator",
    "announcement.info.name": "a door's name, from the server's own configuration",
    "self.name": "a door's name, from the server's own configuration",
    "person": "a browser visit's number, made here",
    "self.person": "a browser visit's number, made here",
    "visit.pid": "a process id",
    # The server's own words: reasons, phases, game and profile names, request kinds it already knew.
    "reason": "a close reason among the server's own",
    "why": "the server's own words for why a page closed",
    "event.why": "the client core's own words",
    "conn.closed_reason": "a close reason among the server's own",
    "outcome.refusal.reason": "a refusal reason among the protocol's",
    "request.kind": "a request kind the wire already knew (an unknown kind is refused before)",
    "action.kind": "an action kind the wire already knew",
    "reply['kind']": "the admin's own reply kind",
    "level": "a bot level the lobby checked against the game's levels",
    "timing_name": "a timing profile the lobby checked against its profiles",
    "game.name": "a registered game's name",
    "room.game.name": "a registered game's name",
    "room.phase": "a table phase (an enum)",
    "signal.Signals(signum).name": "a signal's name",
    "_status(status)": "a worker's exit status, in words made here",
    "self.failed": "the supervisor's own words",
    "timeout": "a number (the admin's drain reads a finite float)",
    "longest": "a number of seconds",
    "' '.join((f'le_{b}={n}' for b, n in zip(bounds, self.histogram)))": "numbers",
    "freed": "seat numbers",
    "leaving": "seat numbers",
    "result.seat": "a seat number",
    "result.table": "a table number",
    # Messages and exceptions: a message's repr quotes its strings; the wire's and the directory's errors quote a
    # peer's value with ``quote``; the others are the OS's and Redis's client's own words.
    "reply": "a message (its repr quotes its strings) or the admin client's own words",
    "event.reply": "a message: its repr quotes its strings",
    "exc": "an exception whose text quotes a peer's value (``quote``) or is the OS's or a library's own",
    "type(exc).__name__": "an exception class's name",
    "type(exc_info).__name__": "an exception class's name",
    "str(exc)[:200]": "an SSH session's failure: the OS's or the SSH library's words, cut",
    "errno.errorcode.get(exc.errno or 0, exc.errno)": "the OS's error name",
    "os.strerror(exc.errno or 0)": "the OS's error words",
    # The web server library's own log text, passed on: a request's bytes reach it only escaped by the formatter.
    "str(message)[:200]": "the web library's own warning, cut",
    "message % args if args else message": "the web library's own failure line",
    # Paths the operator gave.
    "self.path": "the journal's path (--data-dir)",
    "journal.path": "the journal's path (--data-dir)",
    "self.data_dir / BEHIND_NAME": "a path under --data-dir",
}

LOG_METHODS = frozenset({"debug", "info", "warning", "error", "exception", "critical"})


def log_calls(root: Path) -> Iterator[tuple[str, ast.Call, int]]:
    """Every log call under ``root``: its ``path:line``, the call, and where its message is among its arguments (a
    logger's method takes it first; the server's QuietLog, ``self.quiet(key, level, ...)``, third)."""
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            at = 0 if node.func.attr in LOG_METHODS else 2 if node.func.attr == "quiet" else None
            if at is not None and len(node.args) > at:
                yield f"{path.relative_to(root.parent).as_posix()}:{node.lineno}", node, at


def raw_log_values(root: Path) -> list[str]:
    """Every ``%s`` value of a log call under ``root`` that is neither ``shown``/``quote``d nor in ``SERVER_OWN``,
    as ``path:line: value``."""
    found = []
    for where, node, at in log_calls(root):
        first = node.args[at]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            found.append(f"{where}: a message the walk cannot read")
            continue
        specs = re.findall(r"%[-#0 +]*\d*(?:\.\d+)?([a-z%])", first.value)
        values = iter(node.args[at + 1 :])
        for spec in specs:
            if spec == "%":
                continue
            value = next(values, None)
            if value is None or spec != "s":
                continue
            text = ast.unparse(value)
            quoted = isinstance(value, ast.Call) and ast.unparse(value.func) in ("shown", "quote")
            if not quoted and text not in SERVER_OWN:
                found.append(f"{where}: {text}")
    return found


def test_every_server_log_call_writes_a_peers_value_shown_or_a_value_of_its_own():
    """Walks every log call of the server, its doors, workers and network bot: each ``%s`` value is ``shown()``, or
    one of the server's own whose reason ``SERVER_OWN`` gives."""
    assert raw_log_values(ROOT / "quatro_server") == []


def test_the_walk_finds_a_raw_value_and_passes_a_shown_one(tmp_path):
    """Guards the walk itself."""
    (tmp_path / "quatro_server").mkdir()
    (tmp_path / "quatro_server" / "door.py").write_text(
        "log.info('hello name=%s kind=%s n=%d', shown(name), frame.get('kind'), 3)\n"
        "log.warning('%d%% full peer=%s', 9, conn.address)\n"
        "logger.error('raw=%r ok', value)\n"
        "self.quiet('flood', logging.INFO, 'closed name=%s peer=%s', hello.name, conn.address)\n"
        "log.info(f'hello {name}')\n"
    )
    assert raw_log_values(tmp_path / "quatro_server") == [
        "quatro_server/door.py:1: frame.get('kind')",
        "quatro_server/door.py:4: hello.name",
        "quatro_server/door.py:5: a message the walk cannot read",
    ]


def test_every_server_own_value_is_still_written_somewhere():
    """An entry no log call writes any more is taken off ``SERVER_OWN``: the list says what the code does."""
    written = {ast.unparse(arg) for _, node, at in log_calls(ROOT / "quatro_server") for arg in node.args[at + 1 :]}
    assert sorted(set(SERVER_OWN) - written) == []
