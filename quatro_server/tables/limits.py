"""What one address, and everyone together, may ask of the lobby: how many tables, how many password guesses."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

#: Tables one server holds at once; beyond it ``create_table`` is refused ``server_full``.
MAX_TABLES = 500
#: Open tables created from one remote address. A household or a LAN party behind one router runs a few
#: tables at once; one host cannot fill ``MAX_TABLES`` and lock everyone else out.
MAX_TABLES_PER_ADDRESS = 8
#: Password guessing (``join`` with a wrong password): each address may miss this many times freely, then waits
#: ``GUESS_DELAY`` seconds, doubled with every further miss up to ``GUESS_DELAY_CAP``; misses are forgotten
#: ``GUESS_MEMORY`` seconds after the last one, or at once on a right guess from that address.
GUESSES_PER_ADDRESS = 3
#: The same for one table, whoever guesses (many addresses): more free misses, so that a crowd of honest typos
#: is not slowed, and a shorter cap, so that an attack on a table delays its own players by at most that.
GUESSES_PER_TABLE = 10
GUESS_DELAY = 1.0
GUESS_DELAY_CAP = 60.0
GUESS_DELAY_CAP_TABLE = 30.0
GUESS_MEMORY = 900.0
#: Addresses whose misses are remembered at once; past it the longest-quiet ones are forgotten (bounded memory).
GUESS_RECORDS = 4096


@dataclass(slots=True)
class _Misses:
    count: int = 0
    last: float = 0.0
    blocked_until: float = 0.0


class GuessLimiter:
    """Failed password attempts per key (an address, a table): free misses, then a growing delay."""

    def __init__(
        self, free: int, delay: float, cap: float, memory: float = GUESS_MEMORY, records: int = GUESS_RECORDS
    ) -> None:
        self.free, self.delay, self.cap, self.memory, self.records = free, delay, cap, memory, records
        self._misses: dict[Hashable, _Misses] = {}

    def wait(self, key: Hashable, now: float) -> float:
        """Seconds before ``key`` may guess again; 0 when it may now."""
        misses = self._misses.get(key)
        if misses is None:
            return 0.0
        if now - misses.last >= self.memory:
            del self._misses[key]
            return 0.0
        return max(0.0, misses.blocked_until - now)

    def missed(self, key: Hashable, now: float) -> None:
        misses = self._misses.pop(key, None) or _Misses()
        if now - misses.last >= self.memory:
            misses = _Misses()
        misses.count += 1
        misses.last = now
        over = misses.count - self.free
        if over > 0:
            misses.blocked_until = now + min(self.cap, self.delay * 2 ** min(over - 1, 32))
        self._misses[key] = misses  # re-inserted: the dict's order is the order of last misses
        while len(self._misses) > self.records:
            del self._misses[next(iter(self._misses))]

    def forget(self, key: Hashable) -> None:
        self._misses.pop(key, None)
