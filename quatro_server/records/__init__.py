"""Players' records and ratings: who a player is across sessions, what they did in each finished match, and where
they stand (``docs/protocol.md`` section 20).

- ``match``: a finished match as its game tells it (``MatchRecord``), the one shape every game's ``record`` returns.
- ``ratings``: the rating of a side of a match and of several at once (Plackett-Luce, ``openskill``).
- ``store``: the records themselves, in SQLite beside the journal (``records.sqlite3``), or in memory.
- ``identity``: a person's key as a door derives it for its visitor, and the digest the server keeps of a key.
"""
