"""Quarto, the two-player board game (Q1–Q7): everything of its own on the server."""
