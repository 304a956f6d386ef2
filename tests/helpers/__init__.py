"""What the tests share: engines set up and played, peers and clients over real TCP, servers with their doors as
processes, the client's apps and terminals, the hand-made games the screens are drawn from, the hypothesis strategies,
the protocol's vocabulary. Imported as ``helpers.engine``, ``helpers.netclient`` and so on (``tests`` is on the module
path, as pytest puts it there)."""
