"""Seat secrets and table passwords as the server keeps them: digests, never the words themselves.

A seat secret (R19) is 128 random bits: a plain SHA-256 digest is enough to keep it safe at rest, and checking one
costs nothing. A table password is chosen by a person and may be weak: it is kept as a salted scrypt hash, slow
enough to make guessing from a stolen journal expensive, quick enough (a few milliseconds) to check on a join.
What a server keeps is also what proves it holds a table's secrets (``prove``, protocol 8: ``quatro_shared.proofs``):
a seat secret's digest is its proof's key, and a password's scrypt key is its proof's, the hash's salt and costs
told to the client so that it can make the same key. Nothing new is stored for it. Only digests live in memory and in the journal (``quatro_server.journal``), so a restarted server validates the
same secrets and passwords without ever having stored them.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from quatro_shared.proofs import PASSWORD_KEY_BYTES

#: scrypt cost: 2**12 rounds of 8 blocks (4 MiB, about 10 ms here), per password set or checked.
SCRYPT_N = 2**12
SCRYPT_R = 8
SCRYPT_P = 1
SALT_BYTES = 16
_SCHEME = "scrypt"


def digest_secret(secret: str) -> str:
    """The stored form of a seat secret."""
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_matches(digest: str, candidate: str) -> bool:
    # compare_digest: no timing hints about how much of a secret was right
    return hmac.compare_digest(digest.encode(), digest_secret(candidate).encode())


def hash_password(password: str) -> str:
    """``scrypt$N$r$p$salt$hash`` (hex): everything needed to check the password later, on any server."""
    salt = secrets.token_bytes(SALT_BYTES)
    key = hashlib.scrypt(password.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=PASSWORD_KEY_BYTES)
    return f"{_SCHEME}${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${key.hex()}"


def password_matches(stored: str, candidate: str) -> bool:
    """Whether ``candidate`` is the password ``stored`` was made from. A malformed ``stored`` matches nothing."""
    try:
        scheme, n, r, p, salt, key = stored.split("$")
        if scheme != _SCHEME:
            return False
        expected = bytes.fromhex(key)
        got = hashlib.scrypt(
            candidate.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p), dklen=len(expected)
        )
    except ValueError:
        return False
    return hmac.compare_digest(expected, got)


def secret_proof_key(digest: str) -> bytes | None:
    """The key of a seat secret's proof (``quatro_shared.proofs.secret_key``): the stored digest's bytes."""
    try:
        return bytes.fromhex(digest)
    except ValueError:
        return None


def password_proof_key(stored: str) -> tuple[str, bytes] | None:
    """The public part of a stored password hash (``scrypt$N$r$p$salt``, told with a proof) and its key (the proof's
    key, ``quatro_shared.proofs.password_key``); None for a malformed ``stored``."""
    public, sep, key = stored.rpartition("$")
    if not sep or not public.startswith(_SCHEME + "$") or public.count("$") != 4:
        return None
    try:
        return public, bytes.fromhex(key)
    except ValueError:
        return None
