"""Many processes as one server: the supervisor and its workers, the admin socket, the metrics endpoint."""
