"""`pbm check`: every cause that would make incoming mail wait (intake.py), found before
mail arrives. Run it as the user the MTA runs mail_handler.py as; each problem is one line
with its cure."""

import os
import shutil
import uuid
from pathlib import Path

from .config import Config, ConfigError, resolve_home
from .plugins import get_migration_sets
from .replica import ReplicaNotConfirmed, describe, lag, ship
from .store import Store, core_migrations, unusable_database_cause

MIN_FREE_BYTES = 50 * 1024 * 1024


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
    found = []
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
