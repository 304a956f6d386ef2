"""Where the server's and the network bot's log lines go: standard error, one format for both."""

from __future__ import annotations

import logging
import sys

#: The levels a ``--log-level`` option offers.
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error")


def configure(level: str) -> None:
    """Send log lines at ``level`` and above to standard error, with their time, level and logger."""
    logging.basicConfig(
        level=getattr(logging, level.upper()),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
