"""Password hashing (argon2id) and masking of secrets in quoted mail."""

import hmac
import secrets
import threading
from collections import OrderedDict
from functools import cache, lru_cache

from .clock import HOUR, now, parse_stamp, stamp


@cache
def _hasher():
    """argon2 is loaded by the mails that check or set a password: a move by reply token
    needs none, and its import is a tenth of a bare Python start."""
    from argon2 import PasswordHasher

    # At least the OWASP minimum for argon2id: m = 19 MiB, t = 2, p = 1.
    return PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


def hash_password(password: str) -> str:
    return _hasher().hash(password)


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return _hasher().hash("not a password of anyone")


def verify_password(stored_hash: str | None, password: str) -> bool:
    """Check a password; an unknown user costs as much as a known one."""
    from argon2.exceptions import InvalidHashError, VerificationError

    hasher = _hasher()
    try:
        return hasher.verify(stored_hash or _dummy_hash(), password) and stored_hash is not None
    except (VerificationError, InvalidHashError):
        return False


class PasswordCache:
    """Successful checks remembered by a long-running service (pbm serve), so that every
    move of a player does not pay argon2 again. Only a digest keyed with a random
    per-process key is kept, in memory; a new hash (a new password) misses the cache."""

    def __init__(self, size: int = 10000):
        self._key = secrets.token_bytes(32)
        self._known: OrderedDict[bytes, None] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def _digest(self, userid, password, stored_hash) -> bytes:
        text = f"{userid}\0{stored_hash}\0{password}".encode("utf-8", "surrogatepass")
        return hmac.digest(self._key, text, "sha256")

    def known(self, userid: str, password: str, stored_hash: str | None) -> bool:
        if stored_hash is None:
            return False
        digest = self._digest(userid, password, stored_hash)
        with self._lock:
            if digest in self._known:
                self._known.move_to_end(digest)
                return True
        return False

    def remember(self, userid: str, password: str, stored_hash: str):
        digest = self._digest(userid, password, stored_hash)
        with self._lock:
            self._known[digest] = None
            while len(self._known) > self._size:
                self._known.popitem(last=False)


class EarlyCheck:
    """A password check started as soon as the words name the password: argon2 releases
    the GIL, so it runs on another core while the rest of the server starts (or, in
    pbm serve, while the previous command commits)."""

    def __init__(
        self,
        userid: str,
        password: str,
        stored_hash: str | None,
        cache: PasswordCache | None = None,
        background: bool = True,
    ):
        self._checked = (userid, password, stored_hash)
        self._cache = cache
        self._verdict = False
        self._thread = None
        if cache is not None and cache.known(userid, password, stored_hash):
            self._verdict = True
        elif background:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        else:
            self._run()

    def _run(self):
        userid, password, stored_hash = self._checked
        self._verdict = verify_password(stored_hash, password)
        if self._verdict and self._cache is not None:
            self._cache.remember(userid, password, stored_hash)

    def __getstate__(self):
        """As a reader process sends it to `pbm serve`: the verdict, waited for; the
        cache of checks stays with the reader."""
        if self._thread is not None:
            self._thread.join()
        return {**self.__dict__, "_cache": None, "_thread": None}

    def verdict(self, userid: str, password: str, stored_hash: str | None) -> bool | None:
        """The verdict for exactly this check, waiting for it; None for any other."""
        if (userid, password, stored_hash) != self._checked:
            return None
        if self._thread is not None:
            self._thread.join()
        return self._verdict


def needs_rehash(stored_hash: str) -> bool:
    return _hasher().check_needs_rehash(stored_hash)


MASK = "********"


def mask_secrets(text: str, secrets) -> str:
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            text = text.replace(secret, MASK)
    return text


# -- limits on guessing, checked before any argon2 work (issue 13.5) -------------------


def login_lock(store, config, userid: str, sender: str, moment):
    """(time it opens again, whether the whole account is locked) when a password of
    userid may not be tried from sender now, else None. The pair locks after more than
    failed_logins_per_hour failures; the account, for every address not registered to
    it, after more than failed_logins_per_account_per_hour from any sender."""
    if not sender:
        return None
    since = stamp(moment - HOUR)
    limit = config.number("limits.failed_logins_per_hour")
    failures = store.limits.auth_failures(userid, sender, since)
    if len(failures) > limit:
        return parse_stamp(failures[-limit - 1]) + HOUR, False
    limit = config.number("limits.failed_logins_per_account_per_hour")
    failures = store.limits.auth_failures_of_user(userid, since)
    if len(failures) > limit and sender not in {a.lower() for a in store.users.addresses(userid)}:
        return parse_stamp(failures[-limit - 1]) + HOUR, True
    return None


def password_check_needed(store, config, request, userid: str | None) -> bool:
    """False when the command will not get as far as its password: a stranger's mail, a
    duplicate, a sender over commands_per_hour, a locked pair or account. Then no argon2
    runs for it, so a flood of password commands costs only these reads."""
    if request.stranger or (request.key and store.limits.inbox_seen(request.key)):
        return False
    sender = (request.sender or "").lower()
    if not sender:
        return True
    moment = now()
    limit = config.number("limits.commands_per_hour")
    if store.limits.limit_reached_at("command", sender, stamp(moment - HOUR), limit):
        return False
    return userid is None or login_lock(store, config, userid.lower(), sender, moment) is None


# -- passwords pasted into a mail (issue 25.7) -------------------------------------------

# How much of a mail is read for pasted commands: its command line and its whole comment
# (mailin.MAX_COMMENT_CHARS), at about 10 ms a kilobyte at worst.
MAX_SCANNED_CHARS = 16000


def pasted_passwords_of(request, store) -> list[str]:
    """The passwords of whole commands pasted anywhere in a mail that may be quoted, stored
    or relayed: its command line (a reply's first line), its comment, its quoted lines. A
    command counts when its userid names an account and its game word a game; no password
    is checked (grammar.pasted_passwords)."""
    from .grammar import pasted_passwords  # deferred: the early check needs none of it

    @cache
    def names_account(game_word, userid) -> bool:
        if store.users.password_hash(userid) is None:
            return False
        return game_word is None or is_game_word(game_word)

    lines = [request.text, *request.body.splitlines(), *request.body_lines]
    found, budget = [], MAX_SCANNED_CHARS
    for line in dict.fromkeys(lines):
        if budget <= 0:
            break
        found.extend(pasted_passwords(line[:budget], names_account))
        budget -= len(line) + 1
    return found


def is_game_word(word: str) -> bool:
    """A game's command name in any case (a display name is the same word capitalised);
    only that game's plugin is loaded to tell, never every game."""
    from .game import GAME_NAME_RE  # deferred: the early check needs none of it
    from .plugins import load_game

    lowered = word.lower()
    return GAME_NAME_RE.fullmatch(lowered) is not None and load_game(lowered) is not None
