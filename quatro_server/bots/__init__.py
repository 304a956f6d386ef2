"""The platform's bots: the network bot (``netbot``) and the registry of the games it plays (``games``)."""
