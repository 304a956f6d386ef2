"""Where the server's and the network bot's log lines go: standard error, one format for both."""

from __future__ import annotations

import logging
import re
import sys
from typing import TextIO

#: The levels a ``--log-level`` option offers.
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error")


#: The longest a peer's value is written into a log line (``shown``).
SHOWN_LIMIT = 80

#: The longest a log line's message is written: a value no call site bounded cannot make a line of megabytes.
LINE_LIMIT = 2000

#: Characters that could end a log line, start a forged one, or move a terminal's cursor: C0 and C1 controls, DEL
#: and Unicode's line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def shown(value: object) -> str:
    """A value a peer sent, as a log line may hold it: quoted with every control character escaped (a newline can
    never start a forged line), and cut at ``SHOWN_LIMIT`` characters."""
    text = repr(value)
    return text if len(text) <= SHOWN_LIMIT else text[: SHOWN_LIMIT - 3] + "..."


def _escaped(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


class OneLineFormatter(logging.Formatter):
    """Every message one line, whatever a call site put in it: control characters escaped (``\\n``, ``\\x1b``),
    the message cut at ``LINE_LIMIT`` characters. ``shown`` is still the way to write a peer's value (quoted, short);
    this is the floor under the call sites that forgot. A traceback keeps its own lines after the message."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        message = record.message
        if len(message) > LINE_LIMIT:
            message = f"{message[:LINE_LIMIT]}... ({len(message) - LINE_LIMIT} characters more)"
        record = logging.makeLogRecord({**record.__dict__, "message": _CONTROL.sub(_escaped, message)})
        return super().formatMessage(record)


def configure(level: str, process: str | None = None, stream: TextIO | None = None) -> None:
    """Send log lines at ``level`` and above to standard error (or ``stream``), with their time, level and logger;
    ``process`` names the process among others writing to the same log (a supervisor's workers: ``worker-2``)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(
        OneLineFormatter(f"%(asctime)s %(levelname)s {process + ' ' if process else ''}%(name)s %(message)s")
    )
    logging.basicConfig(level=getattr(logging, level.upper()), handlers=[handler])
