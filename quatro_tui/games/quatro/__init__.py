"""Quatro in the client: the screen of each phase of its tables (the screens themselves are in ``screens/``)."""
