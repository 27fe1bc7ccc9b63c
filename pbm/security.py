"""Password hashing (argon2id) and masking of secrets in quoted mail."""

import threading
from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

# At least the OWASP minimum for argon2id: m = 19 MiB, t = 2, p = 1.
_hasher = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


def hash_password(password: str) -> str:
    return _hasher.hash(password)


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return _hasher.hash("not a password of anyone")


def verify_password(stored_hash: str | None, password: str) -> bool:
    """Check a password; an unknown user costs as much as a known one."""
    try:
        return _hasher.verify(stored_hash or _dummy_hash(), password) and stored_hash is not None
    except (VerificationError, InvalidHashError):
        return False


class EarlyCheck:
    """A password check started as soon as the words name the password: argon2 releases
    the GIL, so it runs on another core while the rest of the server starts."""

    def __init__(self, userid: str, password: str, stored_hash: str | None):
        self._checked = (userid, password, stored_hash)
        self._verdict = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        self._verdict = verify_password(self._checked[2], self._checked[1])

    def verdict(self, userid: str, password: str, stored_hash: str | None) -> bool | None:
        """The verdict for exactly this check, waiting for it; None for any other."""
        if (userid, password, stored_hash) != self._checked:
            return None
        self._thread.join()
        return self._verdict


def needs_rehash(stored_hash: str) -> bool:
    return _hasher.check_needs_rehash(stored_hash)


MASK = "********"


def mask_secrets(text: str, secrets) -> str:
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            text = text.replace(secret, MASK)
    return text
