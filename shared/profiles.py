"""The names of the timing profiles every Quatro server offers, known to the server and to every client.

The durations behind each name live on the server (``quatro_server.timing``); a server may offer more
profiles (``quatro-server --timing FILE`` adds one named after the file), never fewer.
"""

from __future__ import annotations

#: The spec's durations.
STANDARD_PROFILE = "standard"
#: About a tenth of them, for tests and demos.
FAST_PROFILE = "fast"
#: Every server's profiles, the default first.
PROFILE_NAMES: tuple[str, ...] = (STANDARD_PROFILE, FAST_PROFILE)
