"""Quarto, the board game, in the contract: pieces, squares, the Q7 notation, its actions, events, the view of a
table, its legal moves and its ``GameContract`` (``contract.py``).

Rules Q1–Q7 (``docs/quarto.md``); only the registry (``quatro_shared.games``) and Quarto's own parts on the server and
the client import this folder.
"""
