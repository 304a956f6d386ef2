"""What a client program's exit status tells the door that started it (``quatro join`` behind the SSH and
browser doors): the door says on the visitor's screen why the game closed.

0 is a quit on purpose, 1 a failure the client printed (no server, a table that refused it); anything else not
named here (a signal, a crash) is a client that stopped unexpectedly.
"""

from __future__ import annotations

#: The client closed itself after ``--idle-exit`` seconds without a key press outside a match.
IDLE = 3
