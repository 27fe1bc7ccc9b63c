"""Failures the operator (or time) can cure: the mail waits with the MTA (exit 75, SMTP 451)
instead of being consumed. Shared by the dispatcher and the intake, so neither imports the
other."""

import errno
from pathlib import Path
from typing import NamedTuple

from .config import ConfigError
from .store import is_busy_or_full, unusable_database_cause


class TransientError(Exception):
    """The MTA should try again later (exit 75): locked or full database, missing plugin.
    A subclass names its own kind of alert and its cure."""

    kind: str | None = None
    cure = "see `pbm check`"


class Cause(NamedTuple):
    """Why mail cannot be handled now, and what the operator should do about it."""

    kind: str  # one alert per kind an hour
    text: str
    cure: str

    def line(self) -> str:
        return f"{self.text} -- {self.cure}"


def curable_cause(error: BaseException, home: Path | None = None) -> Cause | None:
    """The Cause when the error is one the operator (or time) can cure, else None."""
    where = f" in {home}" if home else ""
    if isinstance(error, ConfigError):
        return Cause(
            "config", f"pbm.ini is wrong: {error}", "correct pbm.ini, then run `pbm check`"
        )
    if isinstance(error, TransientError):
        kind = error.kind or "not-ready:" + str(error).split(":")[0]
        return Cause(kind, str(error), error.cure)
    if is_busy_or_full(error):
        return Cause(
            "busy-or-full",
            f"the database is busy or the disk is full ({error})",
            "free disk space; if it persists, look for a process holding the database",
        )
    database = unusable_database_cause(error)
    if database:
        return Cause("database", database, _database_cure(database, where))
    if isinstance(error, OSError):
        name = f" {error.filename}" if error.filename else ""
        if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return Cause(
                "permission",
                f"cannot write{name}: {error.strerror}",
                f"give the service user write access{where} (run `pbm check`)",
            )
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            return Cause("disk-full", f"the disk is full{name}", "free disk space")
    return None


def _database_cure(cause: str, where: str) -> str:
    if "damaged" in cause:
        return f"restore pbm.db from a backup{where}"
    if "not migrated" in cause:
        return "run `pbm migrate`"
    if "read-only" in cause or "cannot be opened" in cause:
        return (
            f"give the service user write access to the home, pbm.db, pbm.db-wal and"
            f" pbm.db-shm{where} (`pbm check` names which)"
        )
    return f"run `pbm check` as the service user and fix what it names{where}"


def is_transient(error: BaseException) -> bool:
    return curable_cause(error) is not None
