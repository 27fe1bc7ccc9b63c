"""The home's lock between handling mail and `pbm restore`: every mail is handled under a
shared lock on $PBM_HOME/pbm.lock, a restore holds it exclusively. So a restore never
replaces the database under a command half done, and mail that comes in during a restore
waits with the MTA (exit 75, SMTP 451) instead of being answered from a database about
to be replaced."""

import fcntl
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from .failures import TransientError
from .private import FILE_MODE, make_folders

LOCK_NAME = "pbm.lock"
POLL_SECONDS = 0.1


def _open(home: Path) -> int | None:
    try:
        return os.open(Path(home) / LOCK_NAME, os.O_RDONLY | os.O_CREAT, FILE_MODE)
    except OSError:
        # A home we cannot write: the database layer names that problem; there is no
        # restore to wait for, since a restore creates the lock file first.
        return None


class SharedLock:
    """The shared lock of one home, for all the mails this process handles at once: one
    descriptor, locked when the first mail starts and closed when the last ends. `pbm
    serve` handles sixteen mails at once, and opening the lock file for each cost its
    readers a tenth of their time."""

    def __init__(self, home: Path):
        self.home = home
        self.mutex = threading.Lock()
        self.holders = 0
        self.descriptor: int | None = None

    def acquire(self):
        with self.mutex:
            if self.holders == 0:
                self.descriptor = _open(self.home)
                if self.descriptor is not None:
                    try:
                        fcntl.flock(self.descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    except BlockingIOError:
                        os.close(self.descriptor)
                        raise TransientError(
                            "a restore is under way: mail waits until `pbm restore` ends"
                        ) from None
            self.holders += 1

    def release(self):
        with self.mutex:
            self.holders -= 1
            if self.holders == 0 and self.descriptor is not None:
                os.close(self.descriptor)


_shared_locks: dict[Path, SharedLock] = {}
_shared_locks_mutex = threading.Lock()


@contextmanager
def handling_mail(home: Path):
    """Held while one mail is handled; refuses at once while a restore is under way."""
    key = Path(home)
    with _shared_locks_mutex:
        lock = _shared_locks.get(key) or _shared_locks.setdefault(key, SharedLock(key))
    lock.acquire()
    try:
        yield
    finally:
        lock.release()


@contextmanager
def no_mail_handled(home: Path, wait_seconds: float):
    """Held by `pbm restore`: waits up to wait_seconds for mail being handled to finish,
    then refuses with TransientError."""
    make_folders(home)
    descriptor = os.open(Path(home) / LOCK_NAME, os.O_RDONLY | os.O_CREAT, FILE_MODE)
    try:
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TransientError("mail is being handled: try `pbm restore` again") from None
                time.sleep(POLL_SECONDS)
        yield
    finally:
        os.close(descriptor)
