"""Quatro's part of the help page: its rules in short, and what every mark on its screens means."""

from __future__ import annotations

from typing import Any

from textual.markup import escape
from textual.screen import Screen

from quatro_tui import words
from quatro_tui.games.quatro import words as quatro_words
from quatro_tui.games.quatro.screens.table import DECOY_KEYS, decoys
from quatro_tui.screens.help import Row

RULES = (
    "[b]Quatro in short[/b]\n"
    "Everyone swaps at once: one card of your hand for one card of the center, then a short wait. "
    "Collect four of a kind, but never say so: show your team's secret sign on your channel and let your partner "
    "shout [b]Quatro![/b] — a call checks your [b]partner's[/b] hand, never yours. Opponents watch the channels too: "
    "[b]Counter![/b] accuses a team of holding four of a kind. Right scores for your team; wrong scores for the others. "
    "The first team to the target score wins.\n\n"
    "[b]Bots[/b] show the team sign when they hold four of a kind, and call when your channel shows the team sign."
)


def symbols_rows(screen: Screen[Any], ascii_only: bool) -> list[Row]:
    """What every mark on the screens means, and which emoji each channel key shows this round."""
    game = getattr(screen.app, "game", None)
    sign = game.view.sign if game is not None and game.view is not None else None
    held, on, away = ("[CH]", "on", "AWAY") if ascii_only else ("◉ CH", "● on", "○ AWAY")
    rows: list[Row] = [
        ("A B C D", "the teams; [b]A*[/b] in the score line is your team"),
        (escape(on), "connected"),
        (f"[b]{escape(away)}[/b]", "not connected (the seat waits for them)"),
        ("bot", "a bot plays this seat"),
        (escape(held), "the seat holds its channel; its emoji pulses for everyone"),
        ("pulse", "a channel's emoji, shown now; dimmed, how long ago the latest was"),
        ("[b]YOUR SIGN[/b]", "your partner showed your team's sign: by the convention, four of a kind"),
        ("partner", "the seat across the table (double border), your teammate"),
        ("*", "your team's sign in the sign grid"),
    ]
    if sign is not None:
        named = (lambda s: s) if ascii_only else (lambda s: f"{quatro_words.sign(s, ascii_only)} {s}")
        shown = ", ".join(f"{key} {named(s)}" for key, s in zip(DECOY_KEYS, decoys(sign), strict=False))
        rows.append(("channel keys", f"1 {named(sign)} (your sign)"))
        rows.append(("decoys", f"{shown}; 0 shows nothing"))
    else:
        rows.append(("channel keys", "1 shows your team's sign, 2-9 the first eight other signs (decoys), 0 nothing"))
    return [(words.plain(mark, ascii_only), words.plain(what, ascii_only)) for mark, what in rows]
