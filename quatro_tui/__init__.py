"""Quatro's terminal client: a Textual app that plays at a Quatro server, and the ``quatro`` command."""
