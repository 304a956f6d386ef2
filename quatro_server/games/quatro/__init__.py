"""Quatro, the team card game (R1–R20, H1–H3): everything of its own on the server."""
