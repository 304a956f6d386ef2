"""Where the server's and the network bot's log lines go: standard error, one format for both."""

from __future__ import annotations

import logging
import sys

#: The levels a ``--log-level`` option offers.
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error")


def configure(level: str, process: str | None = None) -> None:
    """Send log lines at ``level`` and above to standard error, with their time, level and logger; ``process`` names
    the process among others writing to the same log (a supervisor's workers: ``worker-2``)."""
    logging.basicConfig(
        level=getattr(logging, level.upper()),
        stream=sys.stderr,
        format=f"%(asctime)s %(levelname)s {process + ' ' if process else ''}%(name)s %(message)s",
    )
