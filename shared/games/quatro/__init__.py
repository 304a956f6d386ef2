"""Quatro, the card game, in the contract: its cards and signs, its actions, events and the seat's view, what each
phase accepts, how a seat's state follows its updates, and its ``GameContract`` (``contract.py``).

Rules R1–R20 and H1–H3 (``docs/rules.md``); only the registry (``quatro_shared.games``) and Quatro's own parts on the
server and the client import this folder.
"""
