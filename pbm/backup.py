"""Backups that cannot be torn, and putting one back (docs/operations in the README).

A backup is one dated tar.gz (mode 0600) holding a copy of the database made with SQLite's
online backup API, so mail goes on being handled meanwhile and the copy is one committed
state, together with pbm.ini and secret.key. A restore checks the copy first, then
overwrites the live database through SQLite under the home's exclusive lock (see
homelock), so no mail is handled half on the old and half on the new state."""

import os
import tarfile
import tempfile
from pathlib import Path

from .clock import now
from .homelock import no_mail_handled

PREFIX = "pbm-backup-"
SUFFIX = ".tar.gz"
DATABASE = "pbm.db"
HOME_FILES = ("pbm.ini", "secret.key")


class BackupError(Exception):
    """The backup cannot be made or put back as asked; the message says why."""


def backup_dir(config, directory=None) -> Path:
    chosen = directory or config.get("backup.dir")
    return Path(chosen) if chosen else config.home / "backups"


def make_backup(config, directory=None) -> tuple[Path, list[Path]]:
    """(the new archive, the old ones removed to keep the last `backup.keep`)."""
    from .store import Store

    if not config.db_path.exists():
        raise BackupError(f"No database at {config.db_path}: nothing to back up")
    target_dir = backup_dir(config, directory)
    target_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target_dir, prefix=".making-") as scratch:
        copy = Path(scratch) / DATABASE
        store = Store.open(config.db_path)
        try:
            store.backup_to(copy)
        finally:
            store.close()
        target = _dated_name(target_dir)
        partial = Path(scratch) / target.name
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            with tarfile.open(fileobj=handle, mode="w:gz") as archive:
                archive.add(copy, arcname=DATABASE)
                for name in HOME_FILES:
                    if (config.home / name).exists():
                        archive.add(config.home / name, arcname=name)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, target)
    return target, _prune(target_dir, config.number("backup.keep"))


def _dated_name(directory: Path) -> Path:
    base = PREFIX + now().strftime("%Y%m%dT%H%M%SZ")
    candidate, n = directory / (base + SUFFIX), 1
    while candidate.exists():
        candidate, n = directory / f"{base}-{n}{SUFFIX}", n + 1
    return candidate


def backups_in(directory: Path) -> list[Path]:
    """The backups in a directory, oldest first (their names sort by date)."""
    return sorted(p for p in directory.glob(f"{PREFIX}*{SUFFIX}") if p.is_file())


def _prune(directory: Path, keep: int) -> list[Path]:
    """Remove all but the newest `keep` backups; keep = 0 keeps every one."""
    found = backups_in(directory)
    removed = found[:-keep] if keep and len(found) > keep else []
    for path in removed:
        path.unlink()
    return removed


def restore(config, archive_path: Path, wait_seconds: float = 10) -> list[str]:
    """Put a backup back into config.home (which may be new); returns what was done."""
    home = config.home
    home.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=home, prefix=".restoring-") as scratch:
        unpacked = _unpack(Path(archive_path), Path(scratch))
        report = _check_database(unpacked[DATABASE])
        report += _put_back(config, unpacked[DATABASE], unpacked, wait_seconds)
    return [f"database restored from {archive_path}"] + report


def restore_from_replica(
    config, litestream_config: Path, keys_archive: Path | None, wait_seconds: float = 10
) -> list[str]:
    """Put the database back from Litestream's replica (a new host after losing the old
    one), with the same checks as a backup's, and pbm.ini and secret.key from the backup
    `keys_archive` when given; returns what was done."""
    from .replica import ReplicaNotConfirmed, entry_in, restore_copy

    home = config.home
    home.mkdir(parents=True, exist_ok=True)
    try:
        entry = entry_in(litestream_config, config.db_path)
    except ReplicaNotConfirmed as error:
        raise BackupError(str(error)) from error
    if entry is None:
        raise BackupError(
            f"{litestream_config} does not name {config.db_path}: give the Litestream"
            " configuration that replicated this home"
        )
    with tempfile.TemporaryDirectory(dir=home, prefix=".restoring-") as scratch:
        files = {}
        if keys_archive is not None:
            (Path(scratch) / "keys").mkdir()
            unpacked = _unpack(Path(keys_archive), Path(scratch) / "keys")
            files = {name: path for name, path in unpacked.items() if name in HOME_FILES}
        copy = Path(scratch) / DATABASE
        try:
            restore_copy(entry, copy)
        except ReplicaNotConfirmed as error:
            raise BackupError(str(error)) from error
        report = _check_database(copy)
        report += _put_back(config, copy, files, wait_seconds)
    if "secret.key" not in files and not (home / "secret.key").exists():
        report.append(
            "no secret.key: reply addresses in mails sent before are void; give"
            " --keys-from with the last backup"
        )
    return [f"database restored from the replica {entry.replica}"] + report


def _put_back(config, database: Path, files: dict, wait_seconds: float) -> list[str]:
    """The checked copy over the home's database, and pbm.ini and secret.key from
    `files`, under the home's exclusive lock. Litestream's own tables in the home's
    database stay: Litestream goes on writing to them."""
    from .store import Store

    home, report = config.home, []
    for sub in ("outbox/tmp", "outbox/new", "outbox/cur", "templates", "log"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    with no_mail_handled(home, wait_seconds):
        store = Store.open(config.db_path)
        try:
            kept = store.replication_tables()
            if kept:
                copy = Store.open(database)
                try:
                    copy.add_replication_tables(kept)
                finally:
                    copy.close()
            store.restore_from(database)
            store.enable_wal()
        finally:
            store.close()
        for name in HOME_FILES:
            if name in files:
                mode = 0o600 if name == "secret.key" else 0o644
                _put_file(files[name], home / name, mode)
                report.append(f"{name} restored")
    return report


def _unpack(archive_path: Path, scratch: Path) -> dict:
    """The archive's files by name; anything but our three plain files is refused."""
    allowed = {DATABASE, *HOME_FILES}
    try:
        with tarfile.open(archive_path, mode="r:gz") as archive:
            found = {}
            for member in archive.getmembers():
                if member.name not in allowed or not member.isfile() or member.name in found:
                    raise BackupError(
                        f"{archive_path} is not a pbm backup (unexpected member {member.name!r})"
                    )
                path = scratch / member.name
                with archive.extractfile(member) as source, open(path, "wb") as target:
                    while chunk := source.read(1 << 20):
                        target.write(chunk)
                found[member.name] = path
    except (OSError, tarfile.TarError) as error:
        raise BackupError(f"cannot read {archive_path}: {error}") from error
    if DATABASE not in found:
        raise BackupError(f"{archive_path} holds no {DATABASE}")
    return found


def _check_database(path: Path) -> list[str]:
    """Refuse a damaged copy or one made by a newer pbm; say what `pbm migrate` will add."""
    from .store import Store, unusable_database_cause
    from .store.connection import core_step_names

    try:
        store = Store.open(path)
        try:
            verdict = store.integrity_check()
            applied = store.core_applied()
            pending = store.core_pending()
        finally:
            store.close()
    except Exception as error:
        if unusable_database_cause(error) is None:
            raise
        raise BackupError(f"the backup's database cannot be read: {error}") from error
    if verdict != "ok":
        raise BackupError(f"the backup's database is damaged: integrity_check says {verdict}")
    if not applied:
        raise BackupError("the backup's database has no pbm schema")
    unknown = sorted(applied - set(core_step_names()))
    if unknown:
        raise BackupError(
            "the backup was made by a newer pbm (migrations "
            f"{', '.join(unknown)} are unknown here): upgrade pbm first"
        )
    report = ["integrity_check: ok"]
    if pending:
        report.append(f"{len(pending)} migrations pending: run `pbm migrate`")
    return report


def _put_file(source: Path, target: Path, mode: int):
    partial = target.with_name(f".{target.name}.restoring")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(source.read_bytes())
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(partial, mode)
    os.replace(partial, target)
