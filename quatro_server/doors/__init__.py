"""The doors beside the game port: SSH (``ssh``) and the browser (``web``), and what they share (``gate``)."""
