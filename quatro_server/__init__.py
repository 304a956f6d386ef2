"""The Quatro server: the rules engine, the tables, the bots and the network."""
