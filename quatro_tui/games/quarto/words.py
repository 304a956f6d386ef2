"""How the client words Quarto: the turn line, the match score, a game's end and the news of each event."""

from __future__ import annotations

from collections.abc import Callable

from quatro_shared.games.quarto import contract as q


def squares(line: tuple[int, ...] | None) -> str:
    """A line of squares in Q7: "a1 b2 c3 d4"."""
    return " ".join(q.format_square(s) for s in line or ())


def score(view: q.QuartoView, name: Callable[[int], str]) -> str:
    """The match score from the reader's seat: "you 2 – 1 perfect-bot, 1 draw" (a watcher's, seat 1 first)."""
    me = view.seat if view.seat in (0, 1) else 0
    other = 1 - me
    draws = f", {view.draws} draw{'' if view.draws == 1 else 's'}" if view.draws else ""
    return f"{name(me)} {view.scores[me]} – {view.scores[other]} {name(other)}{draws}"


def turn(view: q.QuartoView, name: Callable[[int], str], *, live: bool = True) -> str:
    """Whose turn it is and which step (Q3), or how the game or the match ended (Q4–Q6), in one sentence. Not
    ``live`` (a replay), one's own turn is told as it went, never asked for: nobody moves in a replay."""
    if view.phase is q.Phase.LOBBY:
        return "Waiting for the match to start."
    if view.phase is q.Phase.PLAYING and view.seat not in (0, 1):  # a watcher's view: nobody is "you"
        mover = view.turn or 0
        if view.step is q.Step.GIVE:
            return f"{name(mover)} chooses the piece {name(1 - mover)} places next."
        piece = q.format_piece(view.in_hand) if view.in_hand is not None else "the piece"
        return f"{name(mover)} places {piece}."
    if view.phase is q.Phase.PLAYING and not live and view.turn == view.seat:
        return own_turn_told(view, name)
    if view.phase is q.Phase.PLAYING:
        mine = view.turn == view.seat
        opening = view.in_hand is None and all(p is None for p in view.board)
        if view.step is q.Step.GIVE:
            if opening:
                return (
                    "You start: choose a piece for your opponent to place."
                    if mine
                    else f"{name(view.turn or 0)} starts: choosing a piece for you."
                )
            return (
                "Your turn, step 2 of 2: choose the piece your opponent places."
                if mine
                else f"{name(view.turn or 0)} chooses the piece you place next."
            )
        piece = q.format_piece(view.in_hand) if view.in_hand is not None else "the piece"
        return (
            f"Your turn, step 1 of 2: place {piece} on an empty square."
            if mine
            else f"{name(view.turn or 0)} places {piece}."
        )
    ended = result(view, name)
    if view.phase is q.Phase.OVER:
        if len(view.winners) == 1:
            verb = "win" if view.winners[0] == view.seat else "wins"
            return f"{ended} Match over: {name(view.winners[0])} {verb} the match."
        return f"{ended} Match over: a drawn match."
    return ended


def own_turn_told(view: q.QuartoView, name: Callable[[int], str]) -> str:
    """One's own turn in a replay, as the opponent's is told live: what is done, not what to do."""
    other = name(1 - view.seat)
    if view.step is q.Step.GIVE:
        return f"You choose the piece {other} places next."
    piece = q.format_piece(view.in_hand) if view.in_hand is not None else "the piece"
    return f"You place {piece}."


def result(view: q.QuartoView, name: Callable[[int], str]) -> str:
    """The last game's end: who completed which line and what its pieces share (Q4), or a full board (Q5)."""
    if view.winner is None:
        return f"Game {view.game} is a draw: the board is full and no line shares an attribute."
    verb = "win" if view.winner == view.seat else "wins"
    shared = " and ".join(view.shared) if view.shared else "an attribute"
    return f"{name(view.winner)} {verb} game {view.game}: {squares(view.line)}, all {shared}."


def event(ev: q.Event, name: Callable[[int], str], me: int) -> str | None:
    """One line of news for a Quarto event, or None for what the board and the move list already show."""
    if isinstance(ev, q.MatchStarted):
        return f"The match starts: {ev.games} game{'' if ev.games == 1 else 's'}; {name(ev.first)} {'start' if ev.first == me else 'starts'} (drawn by lot)."
    if isinstance(ev, q.GameStarted):
        return f"Game {ev.game} begins: {name(ev.starter)} {'give' if ev.starter == me else 'gives'} the first piece."
    if isinstance(ev, q.PiecePlaced):
        verb = "place" if ev.seat == me else "places"
        lot = " (the clock ran out: placed by lot)" if ev.by_lot else ""
        return f"{name(ev.seat)} {verb} {q.format_piece(ev.piece)} on {ev.notation}{lot}."
    if isinstance(ev, q.PieceGiven):
        verb = "give" if ev.seat == me else "gives"
        lot = " (the clock ran out: chosen by lot)" if ev.by_lot else ""
        return f"{name(ev.seat)} {verb} {name(1 - ev.seat)} {q.format_piece(ev.piece)}{lot}."
    if isinstance(ev, q.PlayerReady):
        return None if ev.seat == me else f"{name(ev.seat)} is ready for the next game."
    if isinstance(ev, q.SeatDisconnected):
        return f"{name(ev.seat)} dropped out."
    if isinstance(ev, q.SeatConnected):
        return None if ev.seat == me else f"{name(ev.seat)} is back."
    return None  # the game's and the match's end: the turn line says them
