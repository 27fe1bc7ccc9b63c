"""Password hashing (argon2id) and masking of secrets in quoted mail."""

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


def needs_rehash(stored_hash: str) -> bool:
    return _hasher.check_needs_rehash(stored_hash)


MASK = "********"


def mask_secrets(text: str, secrets) -> str:
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            text = text.replace(secret, MASK)
    return text
