"""Where the server's and the network bot's log lines go: standard error, one format for both."""

from __future__ import annotations

import logging
import sys

#: The levels a ``--log-level`` option offers.
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error")


#: The longest a peer's value is written into a log line (``shown``).
SHOWN_LIMIT = 80


def shown(value: object) -> str:
    """A value a peer sent, as a log line may hold it: quoted with every control character escaped (a newline can
    never start a forged line), and cut at ``SHOWN_LIMIT`` characters."""
    text = repr(value)
    return text if len(text) <= SHOWN_LIMIT else text[: SHOWN_LIMIT - 3] + "..."


def configure(level: str, process: str | None = None) -> None:
    """Send log lines at ``level`` and above to standard error, with their time, level and logger; ``process`` names
    the process among others writing to the same log (a supervisor's workers: ``worker-2``)."""
    logging.basicConfig(
        level=getattr(logging, level.upper()),
        stream=sys.stderr,
        format=f"%(asctime)s %(levelname)s {process + ' ' if process else ''}%(name)s %(message)s",
    )
