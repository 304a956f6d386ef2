"""The games as this client plays them: each game's screens, state and words live in a package of its own here."""
