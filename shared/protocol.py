"""The Quatro protocol's words: kinds, limits, reasons and codes (the messages themselves are typed in
``quatro_shared.messages`` and checked in ``quatro_shared.wire``).

Every frame (see ``quatro_shared.framing``) is a msgpack map with a string ``kind``. A client sends requests,
each with a client-chosen integer ``id``; the server answers every request exactly once, with ``ok``,
``refused`` (a rule or lobby reason, and the wait where there is one) or ``error`` (the request itself was
bad). The server also pushes ``update`` (the events of a batch the seat may see and the table's countdowns,
numbered per seat; a full view only in a snapshot),
``table`` (who sits where), ``lobby`` (the list of tables) and ``bye`` (the server is going away).
``docs/protocol.md`` documents every kind; a test checks that it documents all of them.
"""

from __future__ import annotations

import unicodedata

#: Bumped on any change a peer could notice. A client with another version is told both numbers.
PROTOCOL_VERSION = 9
#: Quatro's port: unassigned by IANA, easy to type, above the privileged range.
DEFAULT_PORT = 7777

MAX_NAME_LEN = 24
MAX_PASSWORD_LEN = 64
MAX_SECRET_LEN = 64
#: A ``prove`` nonce (protocol 8): this many random bytes at least, and at most this many, written in hex.
MIN_NONCE_BYTES = 16
MAX_NONCE_BYTES = 64
#: A door token in ``hello`` (protocol 4): printable, 1 to this many characters (the server issues 32).
MAX_DOOR_TOKEN_LEN = 64
#: The variable a door hands its visitors' clients the server's door token in; a client that finds it says it in
#: ``hello`` (its ``door``), and the game port counts it under the door's caps, not its address's share.
DOOR_TOKEN_ENV = "QUATRO_DOOR_TOKEN"
MAX_PROFILE_LEN = 32
MAX_LEVEL_LEN = 16
MAX_GAME_LEN = 16
#: A person as the records name them (``player_card``'s ``person``, a leaderboard entry's): ``p:`` and 32 hex
#: digits, or ``bot:`` and a level.
MAX_PERSON_LEN = 40
#: A person key in ``hello`` (``person``, protocol 4): printable, 1 to this many characters.
MAX_PERSON_KEY_LEN = 64
#: Entries in one ``leaderboard`` reply, at most.
LEADERBOARD_PAGE = 20
#: The environment variable through which a door hands its visitor's client the visitor's person key (``hello``'s
#: ``person``): the client plays as that person, and keeps no key of its own.
PERSON_KEY_ENV = "QUATRO_PERSON_KEY"
#: A chat line: printable, at most this many characters.
MAX_CHAT_LEN = 200
#: An operator's notice (the ``notice`` push, protocol 5): printable, at most this many characters.
MAX_NOTICE_LEN = 300
#: Seconds: a connection's chat lines come at most this often (a faster one is refused ``rate_limited``).
CHAT_INTERVAL = 1.0
#: Request ids are integers from 0 to this. Not every language holds it exactly: 2**53 is one past
#: JavaScript's largest safe integer, and some msgpack libraries send it as a float; count from 1 upward.
MAX_REQUEST_ID = 2**53

#: Heartbeat, in seconds. A client sends ``ping`` whenever it has sent nothing for this long, so that a live
#: connection is never silent for long, even while its player only watches.
HEARTBEAT_INTERVAL = 10.0
#: Seconds: a connection heard nothing from for this long counts as gone. The server drops it: the seat is kept
#: (R19) and the host role passes (R18); a client drops a silent server's connection and reconnects with the seat
#: secret. Three missed heartbeats: a slow link survives, a dead one does not.
HEARTBEAT_TIMEOUT = 30.0

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
REMATCH = "rematch"
MOVE = "move"
CHAT = "chat"
PING = "ping"
RESYNC = "resync"
PAST_MATCHES = "past_matches"
REPLAY = "replay"
WATCH = "watch"
WATCHERS = "watchers"
LEADERBOARD = "leaderboard"
PLAYER_CARD = "player_card"
#: Protocol 8: after a ``moved``, ask the new server to prove it holds the table's secret before sending it (section 21).
PROVE = "prove"

#: The requests that are not game actions. Each game's player actions are requests too, one kind per action
#: class (``quatro_shared.games.request_kinds()`` lists them all).
LOBBY_KINDS: tuple[str, ...] = (
    HELLO,
    LIST_TABLES,
    CREATE_TABLE,
    JOIN,
    REJOIN,
    LEAVE,
    RENAME,
    ADD_BOT,
    REMOVE_BOT,
    START,
    REMATCH,
    MOVE,
    CHAT,
    PING,
    RESYNC,
    PAST_MATCHES,
    REPLAY,
    WATCH,
    WATCHERS,
    LEADERBOARD,
    PLAYER_CARD,
    PROVE,
)

# --- the games a table plays (``create_table``'s ``game``, the lobby list's ``game``) --------------------

#: The game a table plays when ``create_table`` names none (each game's name is its contract's,
#: ``quatro_shared.games.CONTRACTS``).
QUATRO = "quatro"

# --- server → client ------------------------------------------------------------------------------

OK = "ok"
REFUSED = "refused"
ERROR = "error"
UPDATE = "update"
TABLE = "table"
LOBBY = "lobby"
BYE = "bye"
WATCH_ENDED = "watch_ended"
NOTICE = "notice"  # protocol 5: a line from the server's operator, for every connection
SEAT_ENDED = "seat_ended"  # protocol 5: this connection sits at its table no more (the operator's doing)
RECENT = "recent"  # protocol 7: a rejoiner's recent events of its match, for its feed (before its snapshot)
#: The most events a ``recent`` push holds: the seat's latest of its match, oldest first.
MAX_RECENT_EVENTS = 60
#: The reply to a request naming a table that another server holds: ask it there (protocol 5, section 21).
MOVED = "moved"

SERVER_KINDS: frozenset[str] = frozenset(
    {OK, REFUSED, ERROR, UPDATE, TABLE, LOBBY, BYE, WATCH_ENDED, NOTICE, SEAT_ENDED, RECENT, MOVED}
)

# --- why a lobby request is refused (the engine's reasons are in quatro_shared.games.quatro.actions.Reason) -----------

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
SEAT_IN_USE = "seat_in_use"  # a rejoin without takeover while another connection plays the seat
NOT_HOST = "not_host"
#: Refusals of a game action that every game gives in these words (each game's own reasons say the rest): its
#: engine's refusal enum takes these values from here (``GAME_ACTION_REASONS``), and the architecture test holds it.
UNKNOWN_ACTION = "unknown_action"  # not an action of the table's game
BAD_SEAT = "bad_seat"  # no such seat at this table
BAD_ARGUMENT = "bad_argument"  # a game action's field of the wrong type or out of range
DISCONNECTED = "disconnected"  # the seat is not connected (a seat's player must be there to act)
NOT_STARTED = "not_started"  # the match has not started yet
GAME_ACTION_REASONS = frozenset((UNKNOWN_ACTION, BAD_SEAT, BAD_ARGUMENT, DISCONNECTED, NOT_STARTED))
MATCH_STARTED = "match_started"  # seats can no longer change
SEATS_EMPTY = "seats_empty"  # start needs every seat filled
NOT_OVER = "not_over"  # rematch needs the match over; replay, a match that is over
CHAT_CLOSED = "chat_closed"  # no chat while a team signs or plays: it would carry signals
NOT_A_BOT = "not_a_bot"
BAD_TIMING = "bad_timing"
BAD_LEVEL = "bad_level"
UNKNOWN_GAME = "unknown_game"  # create_table names a game this server does not host
SERVER_FULL = "server_full"
RATE_LIMITED = "rate_limited"
TOO_MANY_CONNECTIONS = "too_many_connections"  # this address already holds its share of connections
TOO_MANY_TABLES = "too_many_tables"  # this address already holds its share of open tables
NO_JOURNAL = "no_journal"  # past_matches / replay at a server that keeps no journal
NO_SUCH_MATCH = "no_such_match"  # replay names a match the table never played
NO_SUCH_SEAT = "no_such_seat"  # replay names a seat the table does not have
NOT_REPLAYABLE = "not_replayable"  # the journal's record of the match does not replay as recorded
WATCHING = "watching"  # a request a connection watching a table does not make (leave first)
NOT_WATCHABLE = "not_watchable"  # the table's host closed it to watchers
#: Protocol 8, said by the client core, never by a server: a ``moved`` named a server that could not prove it holds
#: the table's secret (``prove``), so the request that carries the secret was not sent there (section 21).
UNPROVEN_MOVE = "unproven_move"

#: Why a watcher is sent back to the lobby (the ``watch_ended`` push).
CLOSED_TO_WATCHERS = "closed_to_watchers"  # the host closed the table to watchers
TABLE_CLOSED = "table_closed"  # the table closed
NO_SUCH_PLAYER = "no_such_player"  # player_card: no record of that person or name (or an anonymous player's own)
DRAINING = "draining"  # the server drains before a restart: no new table, no new match (protocol 5)

#: Why a seat or a watcher is sent back to the lobby by the server's operator (``seat_ended``, ``watch_ended``).
CLOSED_BY_OPERATOR = "closed_by_operator"  # the operator closed the table
REMOVED_BY_OPERATOR = "removed_by_operator"  # the operator removed this seat's player

# --- protocol errors (the request could not be understood; see also quatro_shared.framing) ----------------

BAD_REQUEST = "bad_request"
UNKNOWN_KIND = "unknown_kind"


class RequestError(Exception):
    """A request that cannot be understood; answered with an ``error`` frame naming ``code``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


#: Bidirectional overrides and isolates: they would reorder what other players' terminals show around a name.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


#: Categories never allowed: controls (escape sequences, newlines), line and paragraph separators.
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Zl", "Zp"})

#: Characters that are letters or symbols to Unicode yet draw nothing: the Hangul fillers, the blank
#: braille pattern, and the rest of Unicode's default-ignorable code points that are not already format
#: characters (category Cf). A name made only of these would look empty on every other player's screen.
_BLANK_LOOKING = frozenset(
    "\u115f\u1160\u3164\uffa0"  # Hangul choseong and jungseong fillers, Hangul filler, halfwidth filler
    "\u2800"  # braille pattern blank
    "\u034f"  # combining grapheme joiner
    "\u17b4\u17b5"  # Khmer inherent vowels
    "\u180b\u180c\u180d\u180f"  # Mongolian free variation selectors
    "\u3000"  # ideographic space (a Z character already, listed for clarity)
)


def _visible(ch: str) -> bool:
    """Draws something on its own: not a space, control, format or mark, and not a blank-looking letter."""
    category = unicodedata.category(ch)
    if category.startswith(("Z", "C", "M")) or ch in _BLANK_LOOKING:
        return False
    code = ord(ch)
    # Variation selectors and tags are marks or format characters already; these ranges guard older Unicode tables.
    return not (0xFE00 <= code <= 0xFE0F or 0xE0000 <= code <= 0xE0FFF or 0x1BCA0 <= code <= 0x1BCA3)


def printable(value: str) -> bool:
    """Something visible, with no control character (escape sequences, newlines), no line or paragraph
    separator and no bidi override; emoji sequences (joined with U+200D) are fine. Blank-looking letters
    (U+3164 HANGUL FILLER, U+2800 BRAILLE PATTERN BLANK...) and lone combining marks are not visible."""
    if not any(_visible(ch) for ch in value):
        return False  # blank or invisible: spaces, zero-width characters, fillers only
    return all(unicodedata.category(ch) not in _FORBIDDEN_CATEGORIES and ch not in _BIDI_CONTROLS for ch in value)
