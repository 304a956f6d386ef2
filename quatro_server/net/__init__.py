"""The network's parts: the outbound path, TLS, the LAN's addresses and zeroconf, the loop's quiet tail."""
