"""Quatro's screens: the table, the signing, the reveal and the match's end, watching from no seat, and its
dialogs (the call's confirmation, the counter's team, the emoji)."""
