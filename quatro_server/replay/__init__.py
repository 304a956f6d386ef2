"""Past matches: the archive a running server answers from, a seat's replay, and the journal's printout."""
