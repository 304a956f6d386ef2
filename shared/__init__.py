"""What the Quatro server and its clients share: cards, signs, views and the wire protocol.

Nothing here does I/O or imports the server or the client.
"""
