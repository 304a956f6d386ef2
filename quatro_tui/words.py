"""How the client words the game: cards, signs, teams, seats, events and refusals, in emoji or in ASCII."""

from __future__ import annotations

import functools
import socket
import unicodedata
from collections.abc import Callable
from typing import TYPE_CHECKING

from quatro_shared.games.quatro import cards, signs
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.signs import Sign
from quatro_shared.messages import Refused, Reply, RequestBody
from quatro_shared.protocol import UNPROVEN_MOVE
from quatro_shared.tls import Endpoint, SpeaksTls, tls_trouble
from quatro_shared.wording import person as person  # seats from 1, a name where there is one, as the server says
from quatro_shared.wording import seconds as seconds  # the client counts down as the server words waits

if TYPE_CHECKING:
    from quatro_tui.games.base import ClientGame

TEAM_LETTERS = "ABCD"
#: How the partner's pulse of the team's sign is marked, in the feed and on the partner's seat.
YOUR_SIGN = "YOUR SIGN"


#: What the client's own sentences draw beyond ASCII, and its ASCII stand-in: punctuation and arrows. Each game adds
#: the symbols of its own words (``ClientGame.ascii_stand_ins``).
_ASCII_STAND_INS = {"—": "-", "–": "-", "…": "...", "×": "x", "←": "<-", "→": "->", "↑": "^", "↓": "v", "•": "*"}


def _stand_ins() -> dict[int, str]:
    """The stand-ins of the client's sentences and of every game it plays."""
    from quatro_tui.games import CLIENT_GAMES  # late: the games' parts are made of these words

    return _translation(tuple(CLIENT_GAMES.values()))


@functools.cache
def _translation(games: tuple[ClientGame, ...]) -> dict[int, str]:
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


def card(value: str, ascii_only: bool) -> str:
    return cards.display(value, ascii_only)


def sign(value: Sign | None, ascii_only: bool, named: bool = False) -> str:
    """An emoji (with its name when ``named``), or its ASCII name."""
    if value is None:
        return "-"
    if ascii_only:
        return value
    return f"{signs.EMOJI[value]} {value}" if named else signs.EMOJI[value]


def idle(seconds_idle: int) -> str:
    """How long a table has been quiet: "now", "40s", "12m", "3h"."""
    if seconds_idle < 10:
        return "now"
    if seconds_idle < 60:
        return f"{seconds_idle}s"
    if seconds_idle < 3600:
        return f"{seconds_idle // 60}m"
    return f"{seconds_idle // 3600}h"


def teams_text(teams: tuple[int, ...] | list[int]) -> str:
    letters = [team_letter(t) for t in teams]
    if not letters:
        return "nobody"
    if len(letters) == 1:
        return f"team {letters[0]}"
    return "teams " + ", ".join(letters[:-1]) + " and " + letters[-1]


def outcome(
    kind: str,
    by: int | None,
    accused: int | None,
    right: bool | None,
    scorers: tuple[int, ...],
    name: Callable[[int], str],
) -> str:
    """How a round ended, in one line (R13, R14, R18)."""
    if kind == "draw" or by is None:
        return "Nobody spoke in time: a draw, no points."
    verdict = "right" if right else "wrong"
    scored = f"{teams_text(scorers)} {'scores' if len(scorers) == 1 else 'score'}"
    if kind == "call":
        return f"{name(by)} called Quatro! — {verdict}: {scored}."
    return f"{name(by)} countered team {team_letter(accused or 0)} — {verdict}: {scored}."


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


#: The feed's first line of a match (a lesson says its own in its place).
MATCH_STARTS = "The match starts: "


def event(ev: e.Event, name: Callable[[int], str], me: int, ascii_only: bool) -> str | None:
    """One feed line for a public event, or None for events the screen shows elsewhere."""

    def c(value: str) -> str:
        return card(value, ascii_only)

    if isinstance(ev, e.MatchStarted):
        return f"{MATCH_STARTS}first team to {ev.target_score} points wins."
    if isinstance(ev, e.SigningStarted):
        return f"Round {ev.round}: pick your team's sign."
    if isinstance(ev, e.SignChosen):
        who = "drawn by lot" if ev.seat is None else f"picked by {name(ev.seat)}"
        return f"Your team's sign: {sign(ev.sign, ascii_only, named=True)} ({who})."
    if isinstance(ev, e.RoundOpened):
        return f"Round {ev.round} opens: swap!"
    if isinstance(ev, e.Dealt):
        if ev.reshuffle:
            return "Reshuffled: a fresh deal for everyone."
        if ev.redeals:
            return f"A hand held three of a rank: redealt ({ev.redeals}×)."
        return None
    if isinstance(ev, e.Swapped):
        return f"{name(ev.seat)} put down {c(ev.put_down)}, took {c(ev.taken)}."
    if isinstance(ev, e.ChannelTaken):
        return f"{name(ev.seat)} took the channel."
    if isinstance(ev, e.ChannelReleased):
        return f"{name(ev.seat)} released the channel."
    if isinstance(ev, e.VoteStarted):
        asks = "ask" if ev.seat == me else "asks"
        if me in ev.voters:
            return f"{name(ev.seat)} {asks} for a reshuffle: y / n?"
        return f"{name(ev.seat)} {asks} for a reshuffle."
    if isinstance(ev, e.VoteCast):
        return f"{name(ev.seat)} {'vote' if ev.seat == me else 'votes'} {'yes' if ev.yes else 'no'}."
    if isinstance(ev, e.VoteEnded):
        return {
            "agreed": "Reshuffle agreed.",
            "refused": "Reshuffle refused.",
            "timeout": "Reshuffle vote timed out: no.",
            "voter_left": "A voter left: no reshuffle.",
            "round_over": "The round ended before the vote did.",
        }.get(ev.outcome, f"Vote over: {ev.outcome}.")
    if isinstance(ev, e.RoundEnded):
        return outcome(ev.outcome, ev.by, ev.accused, ev.right, ev.scorers, name)
    if isinstance(ev, e.MatchOver):
        return f"{teams_text(ev.winners)} {'wins' if len(ev.winners) == 1 else 'win'} the match!"
    if isinstance(ev, e.SeatConnected):
        return None if ev.seat == me else f"{name(ev.seat)} is back."  # one's own return: the app says it once
    if isinstance(ev, e.SeatDisconnected):
        return f"{name(ev.seat)} dropped out."
    if isinstance(ev, e.HostChanged):
        if ev.seat is None:
            return None
        return "You host now." if ev.seat == me else f"{name(ev.seat)} hosts now."
    return None  # ready marks, hands, own emoji choice, pulses: drawn on the seats themselves
