"""Quatro in the client: the screen of each phase of its tables (``screens/``), its widgets (``widgets/``), its
lesson, and its part of the registry (``client.py``)."""
