"""Backups that cannot be torn, and putting one back (docs/operations in the README).

A backup is one dated tar.gz (mode 0600, its members too) holding a copy of the database made with SQLite's
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
from .private import make_folders, private_opener

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
    make_folders(target_dir)
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
                archive.add(copy, arcname=DATABASE, filter=_private_member)
                for name in HOME_FILES:
                    if (config.home / name).exists():
                        archive.add(config.home / name, arcname=name, filter=_private_member)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, target)
    return target, _prune(target_dir, config.number("backup.keep"))


def _private_member(member: tarfile.TarInfo) -> tarfile.TarInfo:
    """Unpacked by hand with tar, a member is as private as in the home."""
    member.mode = 0o600
    return member


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
    from .store import Store

    home = config.home
    make_folders(home)
    with tempfile.TemporaryDirectory(dir=home, prefix=".restoring-") as scratch:
        unpacked = _unpack(Path(archive_path), Path(scratch))
        report = _check_database(unpacked[DATABASE])
        for sub in ("outbox/tmp", "outbox/new", "outbox/cur", "templates", "log"):
            make_folders(home / sub)
        with no_mail_handled(home, wait_seconds):
            store = Store.open(config.db_path)
            try:
                store.restore_from(unpacked[DATABASE])
                store.enable_wal()
            finally:
                store.close()
            for name in HOME_FILES:
                if name in unpacked:
                    _put_file(unpacked[name], home / name)
                    report.append(f"{name} restored")
    return [f"database restored from {archive_path}"] + report


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
                with (
                    archive.extractfile(member) as source,
                    open(path, "wb", opener=private_opener) as target,
                ):
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


def _put_file(source: Path, target: Path):
    partial = target.with_name(f".{target.name}.restoring")
    with open(partial, "wb", opener=private_opener) as handle:
        handle.write(source.read_bytes())
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(partial, 0o600)
    os.replace(partial, target)
