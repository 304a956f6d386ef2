"""The tables of one server: the lobby (``lobby``), its rooms (``room``), what a connection may ask in each state
(``accepts``) and the limits on what one address may ask (``limits``)."""
