"""Every message of the wire that is not a game's, as a typed definition: lobby requests, replies with their
payloads, and pushes.

Each game declares its own actions, events, the seat's view and its ``update`` push in its folder
(``quatro_shared.games.<game>``, listed by its ``GameContract``); this module declares the rest of the protocol in the
same manner: small frozen dataclasses with a stable ``kind``, whose annotations ``quatro_shared.wire`` reads to
encode them and to check them coming in. That module is the one place where a peer's message is validated;
past it, server and clients handle these objects and never read a map by key.

- A client sends a ``Request``: an ``id`` and a body, either a ``LobbyRequest`` below or a player action.
- The server answers each request once: ``Ok`` carrying the payload its request kind defines (``REPLY_PAYLOADS``),
  ``Refused`` or ``Error``.
- The server pushes each game's ``update``, ``Seating`` (kind ``table``), ``LobbyList`` (kind ``lobby``) and ``Bye``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, TypeAlias

from quatro_shared import protocol as p
from quatro_shared.framing import Message
from quatro_shared.game import GameAction
from quatro_shared.tables import LEFT_OUT_AT_DEFAULT, TablePhase

# --- constrained strings -----------------------------------------------------------------------------
# Each is ``str`` to Python; quatro_shared.wire checks it by its name: printable, and within its length
# (see protocol.printable and the limits there). A bare ``str`` is any string.

#: A player's name: printable, 1 to ``MAX_NAME_LEN`` characters.
Name = str
#: A table password: printable, 1 to ``MAX_PASSWORD_LEN`` characters.
Password = str
#: A seat secret as a client sends it back: printable, 1 to ``MAX_SECRET_LEN`` characters.
Secret = str
#: A door's token in ``hello``: printable, 1 to ``MAX_DOOR_TOKEN_LEN`` characters.
DoorToken = str
#: A timing profile's name: printable, 1 to ``MAX_PROFILE_LEN`` characters.
ProfileName = str
#: A bot level's name: printable, 1 to ``MAX_LEVEL_LEN`` characters.
LevelName = str
#: A game's name (a contract's, ``quatro_shared.games``): printable, 1 to ``MAX_GAME_LEN`` characters.
GameName = str
#: A chat line: printable, 1 to ``MAX_CHAT_LEN`` characters.
ChatText = str
#: An ``update`` as a seat was sent it (a replay's frame): a map, read by the client as any ``update`` push.
UpdateFrame: TypeAlias = Message
#: A person as the records name them: printable, 1 to ``MAX_PERSON_LEN`` characters.
PersonId = str
#: A person key as a client sends it in ``hello``: printable, 1 to ``MAX_PERSON_KEY_LEN`` characters.
PersonKey = str
#: A ``prove`` nonce (protocol 8): the hex of ``MIN_NONCE_BYTES`` to ``MAX_NONCE_BYTES`` random bytes.
Nonce = str
#: What a ``prove`` asks a proof of: ``"secret"`` (a seat's) or ``"password"`` (the table's).
ProofOf = str
#: The durations of a table's timing, by name, in seconds (``target_score`` a whole number): a map of numbers.
Durations = dict[str, float]


# --- client → server: lobby requests ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LobbyRequest:
    """A request that is not a game action. Optional fields left as None are left out on the wire."""

    kind: ClassVar[str] = "request"


@dataclass(frozen=True, slots=True)
class Hello(LobbyRequest):
    """The first request. ``door`` (protocol 4): the token the server handed its doors' clients; left out by
    everyone else."""

    version: int
    name: Name
    door: DoorToken | None = None
    #: The player's person key (``quatro_server.records.identity``): the same key, the same person, whatever the
    #: name; left out, the player is anonymous and unrated. Version 4.
    person: PersonKey | None = None
    kind: ClassVar[str] = p.HELLO


@dataclass(frozen=True, slots=True)
class ListTables(LobbyRequest):
    kind: ClassVar[str] = p.LIST_TABLES


@dataclass(frozen=True, slots=True)
class CreateTable(LobbyRequest):
    """A new table, the creator at seat 0. ``game`` is ``quatro`` when left out; ``players`` is one of the game's
    table sizes (its contract's ``seats``): 4, 6 or 8 for Quatro (required there), left out for a game of one size."""

    players: int | None = None
    timing: ProfileName | None = None
    password: Password | None = None
    game: GameName | None = None
    #: False: a friendly table, whose matches leave the records and ratings as they were. Left out: rated. Version 4.
    rated: bool | None = None
    kind: ClassVar[str] = p.CREATE_TABLE


@dataclass(frozen=True, slots=True)
class Join(LobbyRequest):
    table: int
    password: Password | None = None
    seat: int | None = None
    team: int | None = None
    kind: ClassVar[str] = p.JOIN


@dataclass(frozen=True, slots=True)
class Rejoin(LobbyRequest):
    table: int
    secret: Secret
    #: True: take the seat from a live connection (which gets ``bye`` ``replaced``); left out, a live seat is
    #: refused ``seat_in_use``.
    takeover: bool | None = None
    kind: ClassVar[str] = p.REJOIN


@dataclass(frozen=True, slots=True)
class Leave(LobbyRequest):
    kind: ClassVar[str] = p.LEAVE


@dataclass(frozen=True, slots=True)
class Rename(LobbyRequest):
    name: Name
    kind: ClassVar[str] = p.RENAME


@dataclass(frozen=True, slots=True)
class AddBot(LobbyRequest):
    seat: int | None = None
    level: LevelName | None = None
    kind: ClassVar[str] = p.ADD_BOT


@dataclass(frozen=True, slots=True)
class RemoveBot(LobbyRequest):
    seat: int
    kind: ClassVar[str] = p.REMOVE_BOT


@dataclass(frozen=True, slots=True)
class Start(LobbyRequest):
    kind: ClassVar[str] = p.START


@dataclass(frozen=True, slots=True)
class Move(LobbyRequest):
    """Before the match: move to another free seat of one's table (friends sit as partners, R1)."""

    seat: int
    kind: ClassVar[str] = p.MOVE


@dataclass(frozen=True, slots=True)
class Chat(LobbyRequest):
    """A line to everyone in the same place: the lobby, or one's table outside signing and rounds."""

    text: ChatText
    kind: ClassVar[str] = p.CHAT


@dataclass(frozen=True, slots=True)
class Rematch(LobbyRequest):
    """The host plays the match again, same seats, once it is over."""

    kind: ClassVar[str] = p.REMATCH


@dataclass(frozen=True, slots=True)
class Ping(LobbyRequest):
    kind: ClassVar[str] = p.PING


@dataclass(frozen=True, slots=True)
class Resync(LobbyRequest):
    """Ask for a snapshot of the seat's view (a client that doubts its state)."""

    kind: ClassVar[str] = p.RESYNC


@dataclass(frozen=True, slots=True)
class PastMatches(LobbyRequest):
    """The matches this server journalled that are over, newest first, ``PAST_MATCHES_PAGE`` at a time from
    ``offset`` (0: the newest)."""

    offset: int | None = None
    kind: ClassVar[str] = p.PAST_MATCHES


@dataclass(frozen=True, slots=True)
class Replay(LobbyRequest):
    """A match that is over, as seat ``seat`` saw it: its frames from number ``start`` on (0 when left out), as many
    as fit one reply. ``match`` counts the table's matches from 0 (left out: its last that is over). A password
    table's match asks for its ``password`` or the ``secret`` of one of its seats."""

    table: int
    seat: int
    match: int | None = None
    start: int | None = None
    password: Password | None = None
    secret: Secret | None = None
    kind: ClassVar[str] = p.REPLAY


@dataclass(frozen=True, slots=True)
class Watch(LobbyRequest):
    """From the lobby: watch a table from no seat (its public events only, protocol section 18). A password table
    asks for its password."""

    table: int
    password: Password | None = None
    kind: ClassVar[str] = p.WATCH


@dataclass(frozen=True, slots=True)
class Watchers(LobbyRequest):
    """The host opens its table to watchers (``open`` true) or closes it, sending every watcher back to the lobby."""

    open: bool
    kind: ClassVar[str] = p.WATCHERS


@dataclass(frozen=True, slots=True)
class Leaderboard(LobbyRequest):
    """A page of a game's leaderboard (``game`` left out: the default game's), from place ``offset`` (0: the top)."""

    game: GameName | None = None
    offset: int | None = None
    kind: ClassVar[str] = p.LEADERBOARD


@dataclass(frozen=True, slots=True)
class PlayerCard(LobbyRequest):
    """A player's record in every game: ``person``'s (from a leaderboard), or the one who last played as ``name``;
    both left out, the asker's own."""

    person: PersonId | None = None
    name: Name | None = None
    kind: ClassVar[str] = p.PLAYER_CARD


@dataclass(frozen=True, slots=True)
class Prove(LobbyRequest):
    """Protocol 8: prove this server holds table ``table``'s secret (``of`` ``"secret"``: a seat's, ``seat``'s or,
    left out, every seat's that has one) or its password (``of`` ``"password"``), bound to ``nonce`` and to this
    server's address (``quatro_shared.proofs``). The client core asks it after a ``moved``, before it sends a
    request that carries that secret (section 21)."""

    table: int
    nonce: Nonce
    of: ProofOf
    seat: int | None = None
    kind: ClassVar[str] = p.PROVE


LOBBY_REQUESTS: tuple[type[LobbyRequest], ...] = (
    Hello,
    ListTables,
    CreateTable,
    Join,
    Rejoin,
    Leave,
    Rename,
    AddBot,
    RemoveBot,
    Start,
    Rematch,
    Move,
    Chat,
    Ping,
    Resync,
    PastMatches,
    Replay,
    Watch,
    Watchers,
    Leaderboard,
    PlayerCard,
    Prove,
)

#: What a client may send: a lobby request or a player action (of any game: ``quatro_shared.games``).
RequestBody: TypeAlias = LobbyRequest | GameAction


@dataclass(frozen=True, slots=True)
class Request:
    """One request as it travels: the client's ``id`` and what it asks.

    ``invalid`` is set (and ``body`` is None) for a game action whose fields do not fit: the server still
    checks the seat first, so that such a request is answered in the order the protocol gives."""

    id: int
    kind: str
    body: RequestBody | None
    invalid: Exception | None = None


# --- server → client: what an ``ok`` carries, by request ---------------------------------------------


@dataclass(frozen=True, slots=True)
class TableSummary:
    """One line of the lobby's list of tables: public facts only."""

    table: int
    game: str
    players: int
    taken: int
    bots: int
    phase: TablePhase
    timing: str
    password: bool
    scores: tuple[int, ...]
    #: Who sits there, seat by seat ("" for a free seat): players' names and bots' ("normal-bot-2"). Version 2.
    names: tuple[str, ...] = ()
    #: Which of those seats hold bots. Version 2.
    bot_seats: tuple[int, ...] = ()
    #: Whole seconds since anyone at the table last sent anything. Version 2.
    idle_s: int = 0
    #: How many connections watch the table, and whether its host lets more watch (protocol section 18). Version 4.
    watchers: int = 0
    watching: bool = True
    #: Whether its matches count for the records and ratings (False: a friendly table). Version 4.
    rated: bool = True


@dataclass(frozen=True, slots=True)
class Payload:
    """The fields an ``ok`` adds for its request kind."""


@dataclass(frozen=True, slots=True)
class Done(Payload):
    """An ``ok`` with no fields (most requests, and every game action)."""


@dataclass(frozen=True, slots=True)
class Welcome(Payload):
    """``hello``'s ok."""

    version: int
    server: str
    profiles: tuple[str, ...]
    tables: tuple[TableSummary, ...]
    #: The games this server hosts (``create_table``'s ``game``). Version 2.
    games: tuple[str, ...] = ()
    #: The server drains before a restart: no new table, no new match (left out when it does not). Version 5.
    draining: bool = field(default=False, metadata=LEFT_OUT_AT_DEFAULT)


@dataclass(frozen=True, slots=True)
class Tables(Payload):
    """``list_tables``'s ok."""

    tables: tuple[TableSummary, ...]
    #: As in ``Welcome``. Version 5.
    draining: bool = field(default=False, metadata=LEFT_OUT_AT_DEFAULT)


@dataclass(frozen=True, slots=True)
class Seated(Payload):
    """``create_table``'s and ``join``'s ok: the seat, and the secret that proves it (R19)."""

    table: int
    seat: int
    secret: str


@dataclass(frozen=True, slots=True)
class Moved(Payload):
    """``move``'s ok: the seat now held (the secret stays the same)."""

    seat: int


@dataclass(frozen=True, slots=True)
class Rejoined(Payload):
    """``rejoin``'s ok (the secret is the one sent)."""

    table: int
    seat: int


@dataclass(frozen=True, slots=True)
class Watching(Payload):
    """``watch``'s ok: the table watched, and how many watch it now (this connection counted)."""

    table: int
    watchers: int


@dataclass(frozen=True, slots=True)
class Renamed(Payload):
    name: str


@dataclass(frozen=True, slots=True)
class BotAdded(Payload):
    seat: int


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """One match of the journal that is over: public facts only (who sat where, the score, when)."""

    table: int
    #: The table's matches counted from 0 (a rematch is the next).
    match: int
    game: str
    players: int
    names: tuple[str, ...]
    bot_seats: tuple[int, ...]
    #: When it started and ended, whole seconds since the Unix epoch (UTC).
    started: int
    ended: int
    scores: tuple[int, ...]
    #: A password table's: replaying it asks for the password or a seat's secret.
    password: bool


@dataclass(frozen=True, slots=True)
class Matches(Payload):
    """``past_matches``'s ok: newest first; ``more``: older ones follow (ask again from ``offset`` + its length)."""

    matches: tuple[MatchSummary, ...]
    more: bool


@dataclass(frozen=True, slots=True)
class ReplayNote:
    """What the whole record says beside a seat's replay, shown from frame ``frame`` on (``lines`` empty: nothing
    from there on), in the words of the table's game: what the seat could not see, once it is no secret."""

    frame: int
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReplayFrames(Payload):
    """``replay``'s ok: frames ``start`` to ``start + len(frames) - 1`` of ``total``; each an ``update`` exactly as the
    seat was sent it, ``times`` their match times in milliseconds. ``notes`` come whole with
    the first chunk (``start`` 0) and are empty in the others."""

    table: int
    match: int
    seat: int
    game: str
    players: int
    #: Who sat where ("" for nobody), the seats bots played, and the table's durations by name (its ``table``
    #: push's): what a client needs to draw the table around the frames.
    names: tuple[str, ...]
    bot_seats: tuple[int, ...]
    timing: Durations
    total: int
    start: int
    frames: tuple[UpdateFrame, ...]
    times: tuple[int, ...]
    notes: tuple[ReplayNote, ...]


@dataclass(frozen=True, slots=True)
class Standing:
    """One line of a leaderboard: a person's place, who they are, and their record in its game."""

    place: int
    person: str
    name: str
    bot: bool
    #: What the board ranks by: ``mu - 3 sigma``, the rating one can be fairly sure of (0 for a newcomer).
    rating: float
    matches: int
    wins: int


@dataclass(frozen=True, slots=True)
class Standings(Payload):
    """``leaderboard``'s ok: at most ``LEADERBOARD_PAGE`` entries from place ``offset``, of ``total``."""

    game: str
    offset: int
    total: int
    entries: tuple[Standing, ...]


@dataclass(frozen=True, slots=True)
class Tally:
    """One of a game's own counts on a player's card (``calls_right``, ``games_won``...)."""

    name: str
    value: int


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A player's record in one game: their place on its leaderboard, their rating, matches, wins and tallies."""

    game: str
    place: int
    rating: float
    mu: float
    sigma: float
    matches: int
    wins: int
    tallies: tuple[Tally, ...]


@dataclass(frozen=True, slots=True)
class Card(Payload):
    """``player_card``'s ok: who, and their record in every game they played (none yet: an empty ``games``)."""

    person: str
    name: str
    bot: bool
    games: tuple[GameRecord, ...]


@dataclass(frozen=True, slots=True)
class Proof(Payload):
    """``prove``'s ok: the proofs (hex), one per seat asked for (in seat order), one for a password; and for a
    password the public part of the server's stored hash (``scrypt$N$r$p$SALT``), from which the client makes the
    key (``quatro_shared.proofs``)."""

    proofs: tuple[str, ...]
    salt: str | None = None


#: The payload of each lobby request kind's ``ok``; a game action's is ``GAME_ACTION_PAYLOAD``.
REPLY_PAYLOADS: dict[str, type[Payload]] = {
    p.HELLO: Welcome,
    p.LIST_TABLES: Tables,
    p.CREATE_TABLE: Seated,
    p.JOIN: Seated,
    p.REJOIN: Rejoined,
    p.LEAVE: Done,
    p.RENAME: Renamed,
    p.ADD_BOT: BotAdded,
    p.REMOVE_BOT: Done,
    p.START: Done,
    p.REMATCH: Done,
    p.MOVE: Moved,
    p.CHAT: Done,
    p.PING: Done,
    p.RESYNC: Done,
    p.PAST_MATCHES: Matches,
    p.REPLAY: ReplayFrames,
    p.WATCH: Watching,
    p.WATCHERS: Done,
    p.LEADERBOARD: Standings,
    p.PLAYER_CARD: Card,
    p.PROVE: Proof,
}
#: What the ``ok`` to a game action carries (of every game): nothing.
GAME_ACTION_PAYLOAD: type[Payload] = Done


# --- server → client: replies ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reply:
    """An answer to one request; ``id`` is the request's (None when the server could not read one)."""

    kind: ClassVar[str] = "reply"


@dataclass(frozen=True, slots=True)
class Ok(Reply):
    """Done. On the wire the payload's fields sit beside ``kind`` and ``id``."""

    id: int | None
    payload: Payload = Done()
    kind: ClassVar[str] = p.OK


@dataclass(frozen=True, slots=True)
class Refused(Reply):
    """Understood, but the rules or the lobby say no; ``wait_ms``: how long before it could succeed."""

    id: int | None
    reason: str
    message: str
    wait_ms: int | None = None
    kind: ClassVar[str] = p.REFUSED


@dataclass(frozen=True, slots=True)
class Error(Reply):
    """The request itself was bad (a client's bug, or a hostile one)."""

    id: int | None
    code: str
    message: str
    kind: ClassVar[str] = p.ERROR


@dataclass(frozen=True, slots=True)
class MovedTo(Reply):
    """The table the request names is held by another server, at ``host``:``port``: ask there (protocol 5). The
    client core follows it: it reconnects there, says hello and sends the same request again."""

    id: int | None
    table: int
    host: str
    port: int
    kind: ClassVar[str] = p.MOVED


def refused(request_id: int | None, reason: str, message: str, wait: float | None = None) -> Refused:
    """A refusal, with ``wait`` in seconds turned into the wire's whole milliseconds."""
    wait_ms = None if wait is None else max(0, round(wait * 1000))
    return Refused(request_id, str(reason), message, wait_ms)


# --- server → client: pushes ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Push:
    """A message the server sends unasked, with no ``id``."""

    kind: ClassVar[str] = "push"


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """One seat as the ``table`` push shows it."""

    seat: int
    name: str | None
    bot: str | None
    taken: bool
    connected: bool


@dataclass(frozen=True, slots=True)
class Seating(Push):
    """Who sits where at a table, who hosts, and the durations in force (the ``table`` push)."""

    table: int
    players: int
    phase: TablePhase
    host: int | None
    timing: Durations
    timing_name: str
    seats: tuple[SeatInfo, ...]
    #: The game the table plays (its contract's name). Version 2.
    game: str = p.QUATRO
    #: How many connections watch the table, and whether its host lets more watch. Version 4.
    watchers: int = 0
    watching: bool = True
    kind: ClassVar[str] = p.TABLE


@dataclass(frozen=True, slots=True)
class LobbyList(Push):
    """The tables of the server, to replace the list a client shows (the ``lobby`` push)."""

    tables: tuple[TableSummary, ...]
    #: As in ``Welcome``: the lobby shows that the server drains. Version 5.
    draining: bool = field(default=False, metadata=LEFT_OUT_AT_DEFAULT)
    kind: ClassVar[str] = p.LOBBY


@dataclass(frozen=True, slots=True)
class Bye(Push):
    """The server lets this connection go: ``replaced``, ``table_failed``, ``shutdown`` or ``closed``."""

    reason: str
    message: str
    kind: ClassVar[str] = p.BYE


@dataclass(frozen=True, slots=True)
class ChatLine(Push):
    """A chat line said where this connection is: ``table`` None in the lobby; ``seat`` None for a lobby speaker."""

    table: int | None
    seat: int | None
    name: str
    text: str
    kind: ClassVar[str] = p.CHAT


@dataclass(frozen=True, slots=True)
class WatchEnded(Push):
    """This connection watches ``table`` no more and is back in the lobby: ``reason`` is ``closed_to_watchers`` (the
    host closed the table to watchers) or ``table_closed``."""

    table: int
    reason: str
    message: str
    kind: ClassVar[str] = p.WATCH_ENDED


@dataclass(frozen=True, slots=True)
class Notice(Push):
    """A line from the server's operator to every connection, wherever it is (a restart coming, a word to all):
    plain text, shown whatever the screen. ``draining``: the server drains from now on. Version 5."""

    text: str
    draining: bool = field(default=False, metadata=LEFT_OUT_AT_DEFAULT)
    kind: ClassVar[str] = p.NOTICE


@dataclass(frozen=True, slots=True)
class SeatEnded(Push):
    """This connection sits at ``table`` no more and is back in the lobby, by the operator's doing: ``reason`` is
    ``closed_by_operator`` (the table is closed) or ``removed_by_operator`` (this seat's player was removed; the
    seat's secret no longer works). ``message`` says why, in the operator's words when it gave some. Version 5."""

    table: int
    reason: str
    message: str
    kind: ClassVar[str] = p.SEAT_ENDED


#: An event of whichever game a message names (``Recent``): the wire reads it by that game's codec.
GameEvent: TypeAlias = object


@dataclass(frozen=True, slots=True)
class Recent(Push):
    """What a seat saw of its match before it rejoined, for its feed: the latest events it may see (at most
    ``MAX_RECENT_EVENTS``, oldest first; those of its time away too). Sent to a rejoiner just before its snapshot,
    by a game that keeps them (Quatro's; the wire's ``push_from_wire`` reads them as ``game``'s events); it changes
    no state: the snapshot is the game as it is. Version 7."""

    table: int
    #: The table's game (a name of the registry), whose events these are: read by its codec.
    game: str
    events: tuple[GameEvent, ...]
    kind: ClassVar[str] = p.RECENT


PUSHES: tuple[type[Push], ...] = (Seating, LobbyList, Bye, ChatLine, WatchEnded, Notice, SeatEnded, Recent)

#: Why the server says bye.
BYE_REPLACED = "replaced"
BYE_TABLE_FAILED = "table_failed"
BYE_SHUTDOWN = "shutdown"
#: Version 6: the server stops for good (a private game its opener ended): nothing to wait for, no seat to come
#: back to. ``shutdown`` may be a restart.
BYE_CLOSED = "closed"
