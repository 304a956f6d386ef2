"""How the client words what every game shares: seats, teams, waits, links and refusals, and any text in ASCII where the
terminal has no Unicode. Each game words its own moves and events in its package (``quatro_tui.games.<game>.words``)."""

from __future__ import annotations

import functools
import socket
import unicodedata
from typing import TYPE_CHECKING, Any

from quatro_shared.messages import Refused, Reply, RequestBody
from quatro_shared.protocol import UNPROVEN_MOVE
from quatro_shared.tls import Endpoint, SpeaksTls, tls_trouble
from quatro_shared.wording import person as person  # seats from 1, a name where there is one, as the server says
from quatro_shared.wording import seconds as seconds  # the client counts down as the server words waits

if TYPE_CHECKING:
    from quatro_tui.games.base import ClientGame

TEAM_LETTERS = "ABCD"


#: What the client's own sentences draw beyond ASCII, and its ASCII stand-in: punctuation and arrows. Each game adds
#: the symbols of its own words (``ClientGame.ascii_stand_ins``).
_ASCII_STAND_INS = {"—": "-", "–": "-", "…": "...", "×": "x", "←": "<-", "→": "->", "↑": "^", "↓": "v", "•": "*"}


def _stand_ins() -> dict[int, str]:
    """The stand-ins of the client's sentences and of every game it plays."""
    from quatro_tui.games import CLIENT_GAMES  # late: the games' parts are made of these words

    return _translation(tuple(CLIENT_GAMES.values()))


@functools.cache
def _translation(games: tuple[ClientGame[Any], ...]) -> dict[int, str]:
    stand_ins = dict(_ASCII_STAND_INS)
    for game in games:
        stand_ins |= game.ascii_stand_ins
    return str.maketrans(stand_ins)


def plain(text: str, ascii_only: bool) -> str:
    """``text`` as a terminal without Unicode can show it: symbols spelled out, accents dropped ("Zoë" is
    "Zoe"), and any other character a "?". Names are other players' text, in any script: this is for them too."""
    if not ascii_only or text.isascii():
        return text
    text = unicodedata.normalize("NFKD", text.translate(_stand_ins()))
    return "".join(c if c.isascii() else "?" for c in text if not unicodedata.combining(c))


def unreachable(
    exc: BaseException, host: str, port: int, *, tls: bool = False, ca: str | None = None, address: str | None = None
) -> str:
    """Why a server could not be reached, in plain words and with what to do: no errno, no exception names.
    ``tls``: the connection spoke TLS (``ca``: the only CA trusted), whose failures say what was wrong with it."""
    if isinstance(exc, SpeaksTls):
        return str(exc)
    # As the person typed it (``tls://`` included), else as the endpoint reads.
    address = address or str(Endpoint(host, port, tls))
    trouble = tls_trouble(exc, Endpoint(host, port, True, ca)) if tls else None
    if trouble is not None:
        return trouble
    if isinstance(exc, socket.gaierror):
        return f"No computer called {host} was found. Is the name right?"
    if isinstance(exc, ConnectionRefusedError):
        return f"Nobody is serving at {address}. Is the server running?"
    if isinstance(exc, TimeoutError):
        return f"{address} did not answer in time. Is the address right, and the server running?"
    if isinstance(exc, OSError):
        reason = (exc.strerror or "the network failed").rstrip(".")
        return f"Cannot reach {address}: {reason[:1].lower()}{reason[1:]}. Is the network up?"
    text = str(exc).rstrip(".")
    return f"{address} did not let us in: {text}." if text else f"{address} did not let us in."


def ended(text: str) -> str:
    """``text`` ending in one full stop, unless it already ends in one, or in a question or an exclamation mark
    (a reason such as ``unreachable``'s ends in a question)."""
    return text if text.endswith((".", "?", "!")) else text + "."


#: Why a request got no answer: ``request`` returns None only when the link went before the reply came.
NO_ANSWER = "the connection to the server was lost before it answered"


#: Lobby refusals worded by this client rather than by the server's message (the client core says
#: ``unproven_move`` itself, protocol 8: the server it names is the one that was not trusted).
LOBBY_REFUSAL_WORDS: dict[str, str] = {
    UNPROVEN_MOVE: (
        "the lobby's directory pointed at a server that could not prove it holds this table (or the password or "
        "seat secret is wrong, which no server can prove), so nothing secret was sent there"
    ),
}
#: The screen said when a seat's rejoin was kept from a server that could not prove it holds the table.
UNPROVEN_TITLE = "The table's server could not be trusted."


def why_not(reply: Reply | None) -> str:
    """Why ``reply`` is not the answer asked for, in words: the server's own (a refusal's, an error's), or that no
    answer came (the link went: None), or that the answer was another than asked for (a client out of step)."""
    if reply is None:
        return NO_ANSWER
    if isinstance(reply, Refused) and reply.reason in LOBBY_REFUSAL_WORDS:
        return LOBBY_REFUSAL_WORDS[reply.reason]
    message = getattr(reply, "message", None)
    return message or "the server answered something this client did not ask for"


def sentence(text: str) -> str:
    """``text`` (a reason, a server's words) as a sentence of its own: a capital first, one closing mark last."""
    return ended(text[:1].upper() + text[1:])


def team_letter(team: int) -> str:
    """Teams are told apart by letter everywhere, so colour is never the only cue."""
    return TEAM_LETTERS[team]


def idle(seconds_idle: int) -> str:
    """How long a table has been quiet: "now", "40s", "12m", "3h"."""
    if seconds_idle < 10:
        return "now"
    if seconds_idle < 60:
        return f"{seconds_idle}s"
    if seconds_idle < 3600:
        return f"{seconds_idle // 60}m"
    return f"{seconds_idle // 3600}h"


def refusal(request: RequestBody, reply: Reply) -> str:
    """A refused request (or one answered ``error``) in the platform's words: a lobby reason as this client words
    it, anything else as the server's message says it. A game words its own rules' refusals
    (``ClientGame.refusal``: Quatro's draws the card a swap wanted as this screen draws cards)."""
    if not isinstance(reply, Refused):
        return getattr(reply, "message", "") or getattr(reply, "code", "") or "not done"
    reason = str(reply.reason)
    if reason in LOBBY_REFUSAL_WORDS:
        return sentence(LOBBY_REFUSAL_WORDS[reason])
    return reply.message or reason.replace("_", " ")
