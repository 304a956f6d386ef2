"""What a ``prove`` proves (protocol 8, section 21): that a server holds a table's secret, without anyone sending it.

A request that carries a secret (``rejoin``'s seat ``secret``, ``join``'s or ``watch``'s ``password``) and was
answered ``moved`` is not sent to the server the ``moved`` named before that server proves it holds the same secret:
whoever can write to the table directory could otherwise name a listener of their own and harvest it. The client
picks a fresh ``nonce``; the server answers with ``HMAC-SHA256(key, nonce || "|" || ADDRESS)`` in hex, where:

- ``key`` is what the server keeps of the secret, and the client can make from it: for a seat secret its SHA-256
  digest (``SHA-256(secret as UTF-8)``, 32 bytes); for a table password the scrypt key of the server's stored
  hash (``scrypt(password as UTF-8, salt, N, r, p)``, ``PASSWORD_KEY_BYTES`` bytes), the server sending the
  hash's public part (``scrypt$N$r$p$SALT``) beside the proof so that the client can make the same key;
- ``ADDRESS`` is the server's own address as the directory gives it to other servers (``HOST:PORT``,
  ``[V6]:PORT``, ``:PORT`` for a host ``""``), which is what a ``moved`` to it says. A forger who relays the
  client's nonce to the real server gets a proof bound to the real server's address, never to the forger's.

The proof tells nothing of the secret to one who does not know it; a password proof can be checked offline against
guessed passwords, at the cost of one scrypt per guess (what a stolen journal gives too), so the server counts a
password ``prove`` as a guess. Pure functions: no I/O, no clock.
"""

from __future__ import annotations

import hashlib
import hmac

from quatro_shared.addresses import format_address

#: What a ``prove`` asks a proof of (its ``of``): a seat's secret (``rejoin``) or the table's password.
OF_SECRET = "secret"
OF_PASSWORD = "password"
#: Bytes of a password's scrypt key (the server's stored hash keeps one of this length).
PASSWORD_KEY_BYTES = 64
#: The most memory a client spends deriving a password's key from a server's salt and costs (a forger's costs
#: could ask for more; such a proof is taken as wrong). The server's own (``N`` 2**12, ``r`` 8) take 4 MiB.
MAX_SCRYPT_MEMORY = 64 * 1024 * 1024
_SCHEME = "scrypt"


#: (host, port) as a proof binds it: ``HOST:PORT``, an IPv6 host in brackets, ``:PORT`` for the host "".
address_text = format_address


def secret_key(secret: str) -> bytes:
    """The key of a seat secret's proof: its SHA-256 digest (the server keeps that digest, never the secret)."""
    return hashlib.sha256(secret.encode()).digest()


def password_key(salt: str, password: str) -> bytes | None:
    """The key of a password's proof, from the public part of the server's stored hash (``scrypt$N$r$p$SALT``, as
    ``prove``'s reply says it); None when ``salt`` is not one, or would cost more than ``MAX_SCRYPT_MEMORY``."""
    try:
        scheme, n, r, p, hex_salt = salt.split("$")
        if scheme != _SCHEME or not (n.isdigit() and r.isdigit() and p.isdigit()):
            return None
        return hashlib.scrypt(
            password.encode(),
            salt=bytes.fromhex(hex_salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=PASSWORD_KEY_BYTES,
            maxmem=MAX_SCRYPT_MEMORY,
        )
    except (ValueError, MemoryError, OverflowError):
        return None


def proof(key: bytes, nonce: str, host: str, port: int) -> str:
    """``HMAC-SHA256(key, nonce || "|" || address_text(host, port))`` in hex; ``nonce`` is the hex of its bytes."""
    return proof_for(key, nonce, address_text(host, port))


def proof_for(key: bytes, nonce: str, address: str) -> str:
    """``proof`` with the address already written as ``address_text`` writes it (the server's own)."""
    message = bytes.fromhex(nonce) + b"|" + address.encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def matches(expected: str, proofs: tuple[str, ...] | list[str]) -> bool:
    """Whether one of ``proofs`` is ``expected`` (compared in constant time, each of them)."""
    found = False
    for got in proofs:
        found = hmac.compare_digest(expected.encode(), str(got).encode()) or found
    return found
