"""`pbm check`: every cause that would make incoming mail wait (intake.py), found before
mail arrives, and every file or folder of the home others could read. Run it as the user
the MTA runs mail_handler.py as; each problem is one line with its cure."""

import os
import shutil
import stat
import uuid
from pathlib import Path

from .backup import backup_dir
from .config import MIN_FREE_BYTES, Config, ConfigError, resolve_home
from .plugins import get_migration_sets
from .private import shared_paths
from .replica import ReplicaNotConfirmed, describe, lag, ship
from .store import Store, core_migrations, unusable_database_cause

# A home made under umask 022 has a file for every mail delivered: name the first ones,
# then one line with the cure for them all.
MAX_SHARED_LINES = 20


def _owner_problem(path: Path) -> str | None:
    owner = path.stat().st_uid
    if owner != os.geteuid():
        return (
            f"{path} is owned by uid {owner}, not by uid {os.geteuid()} who runs this check"
            f" -- run `pbm check` as the service user, or `chown` the home to it"
        )
    return None


def _write_probe(folder: Path) -> str | None:
    """Really create and remove a file: permission bits, ACLs and read-only mounts alike."""
    probe = folder / f".pbm-check-{uuid.uuid4().hex}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        return f"cannot write in {folder}: {error.strerror} -- give the service user write access to it"
    return None


def _open_for_writing(path: Path) -> str | None:
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
    except OSError as error:
        return f"cannot write {path}: {error.strerror} -- give the service user write access to it"
    return None


def problems(home=None) -> list[str]:
    home = resolve_home(home)
    found = []
    try:
        config = Config.load(home)
    except ConfigError as error:
        found.append(f"pbm.ini is wrong: {error} -- correct {home / 'pbm.ini'}")
        config = Config.load(home, strict=False)
    if not home.is_dir():
        return found + [f"no home at {home} -- run `pbm init` as the service user"]
    found += filter(None, [_owner_problem(home), _write_probe(home)])
    for folder in (config.outbox_dir / "tmp", config.outbox_dir / "new", home / "log"):
        if not folder.is_dir():
            found.append(f"{folder} is missing -- run `pbm init` as the service user")
        else:
            found += filter(None, [_write_probe(folder)])
    found += _database_problems(config)
    found += _replica_problems(config)
    free = shutil.disk_usage(home).free
    if free < MIN_FREE_BYTES:
        found.append(
            f"only {free // (1024 * 1024)} MB free on the disk of {home} -- free disk space"
        )
    return found


def _database_problems(config) -> list[str]:
    path = config.db_path
    if not path.exists():
        return [f"no database at {path} -- run `pbm init` as the service user"]
    found: list[str] = []
    for companion in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if companion.exists():
            found += filter(None, [_owner_problem(companion), _open_for_writing(companion)])
    try:
        store = Store.open(path)
        try:
            verdict = store.integrity_check()
            if verdict != "ok":
                return found + [
                    f"the database is damaged ({verdict}) -- restore {path} from a backup"
                ]
            pending = store.pending_migrations([core_migrations()] + get_migration_sets())
        finally:
            store.close()
    except Exception as error:
        cause = unusable_database_cause(error)
        if cause is None:
            raise
        cure = (
            f"restore {path} from a backup"
            if "damaged" in cause
            else "give the service user write access to the home and the pbm.db files"
        )
        return found + [f"{cause} -- {cure}"]
    if pending:
        found.append(f"{len(pending)} database migrations pending -- run `pbm migrate`")
    return found


def shared_problems(home=None) -> list[str]:
    """The home's files and folders (and those of the backups' folder) that give the group
    or others any access: the home holds password hashes, addresses, the SMTP password,
    the reply tokens' key and mail with reset codes (docs/security.md)."""
    home = resolve_home(home)
    config = Config.load(home, strict=False)
    tops = [home]
    backups = backup_dir(config)
    if not backups.resolve().is_relative_to(home.resolve()):
        tops.append(backups)
    found: list[str] = []
    more = 0
    for top in tops:
        for path, mode in shared_paths(top):
            if len(found) == MAX_SHARED_LINES:
                more += 1
                continue
            private = "700" if stat.S_ISDIR(mode) else "600"
            found.append(
                f"{path} is open to others (mode {stat.S_IMODE(mode):04o}, the home must be "
                f"private) -- chmod {private} {path}"
            )
    if more:
        cure = " ".join(str(top) for top in tops)
        found.append(f"{more} more files and folders are open to others -- chmod -R go= {cure}")
    return found


def _replica_problems(config) -> list[str]:
    """With [replica] wait = on a mail is acknowledged only once Litestream confirms that
    the replica holds its commit: ask for that confirmation as a mail would."""
    try:
        ship(config)
    except ReplicaNotConfirmed as error:
        return [f"{error} -- {error.cure}"]
    return []


def replica_line(config) -> str | None:
    """The replica's lag, where Litestream's configuration names the database."""
    figures = lag(config)
    return None if figures is None else describe(figures)
