"""The Quatro protocol's messages: kinds, fields, limits and reasons, validated in one place.

Every frame (see ``quatro_shared.framing``) is a msgpack map with a string ``kind``. A client sends requests,
each with a client-chosen integer ``id``; the server answers every request exactly once, with ``ok``,
``refused`` (a rule or lobby reason, and the wait where there is one) or ``error`` (the request itself was
bad). The server also pushes ``update`` (the events of a batch the seat may see and its fresh view, numbered
per seat),
``table`` (who sits where), ``lobby`` (the list of tables) and ``bye`` (the server is going away).
``docs/protocol.md`` documents every kind; a test checks that it documents all of them.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

from quatro_shared.actions import PLAYER_ACTIONS
from quatro_shared.wire import quote

#: Bumped on any change a peer could notice. A client with another version is told both numbers.
PROTOCOL_VERSION = 2
#: Quatro's port: unassigned by IANA, easy to type, above the privileged range.
DEFAULT_PORT = 7777

MAX_NAME_LEN = 24
MAX_PASSWORD_LEN = 64
MAX_SECRET_LEN = 64
MAX_REQUEST_ID = 2**53  # ids round-trip through any client language's numbers

# --- client → server ------------------------------------------------------------------------------

HELLO = "hello"
LIST_TABLES = "list_tables"
CREATE_TABLE = "create_table"
JOIN = "join"
REJOIN = "rejoin"
LEAVE = "leave"
RENAME = "rename"
ADD_BOT = "add_bot"
REMOVE_BOT = "remove_bot"
START = "start"
PING = "ping"

#: The game actions are requests too, with the fields of their ``quatro_shared.actions`` class.
ACTION_KINDS: frozenset[str] = frozenset(cls.kind for cls in PLAYER_ACTIONS)

# --- server → client ------------------------------------------------------------------------------

OK = "ok"
REFUSED = "refused"
ERROR = "error"
UPDATE = "update"
TABLE = "table"
LOBBY = "lobby"
BYE = "bye"

SERVER_KINDS: frozenset[str] = frozenset({OK, REFUSED, ERROR, UPDATE, TABLE, LOBBY, BYE})

# --- why a lobby request is refused (the engine's reasons are in quatro_shared.actions.Reason) -----------

HELLO_FIRST = "hello_first"  # the first request must be hello
ALREADY_HELLO = "already_hello"
INCOMPATIBLE_VERSION = "incompatible_version"
NO_SUCH_TABLE = "no_such_table"
BAD_PASSWORD = "bad_password"
TABLE_FULL = "table_full"
SEAT_TAKEN = "seat_taken"
NOT_SEATED = "not_seated"  # a game action or a host request from a connection with no seat
ALREADY_SEATED = "already_seated"
BAD_SECRET = "bad_secret"
NOT_HOST = "not_host"
MATCH_STARTED = "match_started"  # seats can no longer change
SEATS_EMPTY = "seats_empty"  # start needs every seat filled
NOT_A_BOT = "not_a_bot"
BAD_TIMING = "bad_timing"
BAD_LEVEL = "bad_level"
SERVER_FULL = "server_full"
RATE_LIMITED = "rate_limited"

# --- protocol errors (the request could not be understood; see also quatro_shared.framing) ----------------

BAD_REQUEST = "bad_request"
UNKNOWN_KIND = "unknown_kind"


class RequestError(Exception):
    """A request that cannot be understood; answered with an ``error`` frame naming ``code``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: Bidirectional overrides and isolates: they would reorder what other players' terminals show around a name.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


#: Categories never allowed: controls (escape sequences, newlines), line and paragraph separators.
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Zl", "Zp"})


def printable(value: str) -> bool:
    """Something visible, with no control character (escape sequences, newlines), no line or paragraph
    separator and no bidi override; emoji sequences (joined with U+200D) are fine."""
    if not any(not unicodedata.category(ch).startswith(("Z", "C")) for ch in value):
        return False  # blank or invisible: spaces, zero-width characters only
    return all(unicodedata.category(ch) not in _FORBIDDEN_CATEGORIES and ch not in _BIDI_CONTROLS for ch in value)


def _str(limit: int):
    def check(value: Any) -> bool:
        # Names reach other players' terminals, where a control character could do harm.
        return isinstance(value, str) and 0 < len(value) <= limit and printable(value)

    check.__doc__ = f"a printable string of 1 to {limit} characters"
    return check


_int.__doc__ = "an integer"

#: Each lobby request's fields: name → (validator, required). Game actions are checked by ``quatro_shared.wire``.
REQUEST_FIELDS: dict[str, dict[str, tuple[Any, bool]]] = {
    HELLO: {"version": (_int, True), "name": (_str(MAX_NAME_LEN), True)},
    LIST_TABLES: {},
    CREATE_TABLE: {
        "players": (_int, True),
        "timing": (_str(32), False),
        "password": (_str(MAX_PASSWORD_LEN), False),
    },
    JOIN: {
        "table": (_int, True),
        "password": (_str(MAX_PASSWORD_LEN), False),
        "seat": (_int, False),
        "team": (_int, False),
    },
    REJOIN: {"table": (_int, True), "secret": (_str(MAX_SECRET_LEN), True)},
    LEAVE: {},
    RENAME: {"name": (_str(MAX_NAME_LEN), True)},
    ADD_BOT: {"seat": (_int, False), "level": (_str(16), False)},
    REMOVE_BOT: {"seat": (_int, True)},
    START: {},
    PING: {},
}


@dataclass(frozen=True, slots=True)
class Request:
    kind: str
    id: int
    fields: dict[str, Any]


def parse_request(frame: dict[str, Any]) -> Request:
    """Check a decoded frame is a well-formed request; game actions keep their fields for ``quatro_shared.wire``.

    Raises ``RequestError`` naming what is wrong.
    """
    kind = frame.get("kind")
    request_id = frame.get("id")
    if not _int(request_id) or not 0 <= request_id <= MAX_REQUEST_ID:
        raise RequestError(BAD_REQUEST, "every request needs an integer id between 0 and 2**53")
    fields = {k: v for k, v in frame.items() if k not in ("kind", "id")}
    if kind in ACTION_KINDS:
        return Request(kind, request_id, fields)
    spec = REQUEST_FIELDS.get(kind)  # type: ignore[arg-type]
    if spec is None:
        raise RequestError(UNKNOWN_KIND, f"unknown request kind {quote(kind)}")
    for name in fields:
        if name not in spec:
            raise RequestError(BAD_REQUEST, f"{kind}: unknown field {quote(name)}")
    for name, (check, required) in spec.items():
        if name not in fields:
            if required:
                raise RequestError(BAD_REQUEST, f"{kind}: missing field {name!r}")
        elif not check(fields[name]):
            raise RequestError(BAD_REQUEST, f"{kind}: field {name!r} must be {check.__doc__}")
    return Request(kind, request_id, fields)


def ok(request_id: int | None, **fields: Any) -> dict[str, Any]:
    return {"kind": OK, "id": request_id, **fields}


def refused(request_id: int | None, reason: str, message: str, wait: float | None = None) -> dict[str, Any]:
    """A request the rules or the lobby say no to. ``wait_ms``: how long before it could succeed."""
    wait_ms = None if wait is None else max(0, round(wait * 1000))
    return {"kind": REFUSED, "id": request_id, "reason": str(reason), "message": message, "wait_ms": wait_ms}


def error(request_id: int | None, code: str, message: str) -> dict[str, Any]:
    return {"kind": ERROR, "id": request_id, "code": code, "message": message}
