"""Quarto in the client: its screen and the widgets that draw it."""
