"""The client's screens: lobby, room, signing, table, reveal and match end, help, and small dialogs."""
