"""Backups that cannot be torn, and putting one back (docs/operations in the README).

A backup is one dated tar.gz (mode 0600, its members too) holding a copy of the database
made with SQLite's online backup API, so mail goes on being handled meanwhile and the copy
is one committed state, together with pbm.ini and secret.key.

A restore takes the archive as hostile until checked (docs/security.md): it unpacks it
into a private scratch folder, each member capped and the free space checked before it is
written; the database must pass integrity_check and hold pbm's schema and nothing else.
Only then does it overwrite the live database through SQLite under the home's exclusive
lock (see homelock), so no mail is handled half on the old and half on the new state."""

import gzip
import io
import os
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path

from .clock import now
from .config import MIN_FREE_BYTES, Config, ConfigError
from .homelock import no_mail_handled
from .private import make_folders, private_opener

PREFIX = "pbm-backup-"
SUFFIX = ".tar.gz"
DATABASE = "pbm.db"
HOME_FILES = ("pbm.ini", "secret.key")
MEGABYTE = 1024 * 1024
# What a restore unpacks of the home's files (the database's cap is [backup]
# max_restore_megabytes); a secret.key is 32 bytes, a pbm.ini a few kilobytes.
HOME_FILE_CAPS = {"pbm.ini": MEGABYTE, "secret.key": 4096}
# Read at once from the archive: the unpacking's chunk. tarfile reads a pax or GNU long-name
# header whole, so this also caps what such a header can make it hold in memory.
CHUNK = MEGABYTE
# Tar headers, padding and end blocks, beyond the members' own bytes.
TAR_OVERHEAD = MEGABYTE


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


def restore_cap_warning(config) -> str | None:
    """A warning when the database has outgrown what `pbm restore` unpacks."""
    cap = config.number("backup.max_restore_megabytes")
    size = config.db_path.stat().st_size if config.db_path.exists() else 0
    if size <= cap * MEGABYTE:
        return None
    return (
        f"warning: the database ({size // MEGABYTE} MB) is bigger than [backup] "
        f"max_restore_megabytes = {cap}: raise it in pbm.ini, or `pbm restore` refuses "
        "this backup"
    )


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
    """Put a backup back into config.home (which may be new) once it has passed every
    check; returns what was done. A refused archive leaves the home as it was."""
    from .plugins import get_migration_sets
    from .store import core_migrations

    home, archive_path = config.home, Path(archive_path)
    new_home = not home.exists()
    make_folders(home)
    try:
        # In the home: the one folder on its file system the service user surely may write.
        with tempfile.TemporaryDirectory(dir=home, prefix=".restoring-") as scratch:
            unpacked = _unpack(archive_path, Path(scratch), config)
            report = _check_database(unpacked[DATABASE], [core_migrations()] + get_migration_sets())
            if "pbm.ini" in unpacked:
                _check_ini(unpacked["pbm.ini"])
            report += _put_back(config, unpacked[DATABASE], unpacked, wait_seconds)
    except BackupError:
        if new_home and not any(home.iterdir()):
            home.rmdir()
        raise
    return [f"database restored from {archive_path}"] + report


def restore_from_replica(
    config, litestream_config: Path, keys_archive: Path | None, wait_seconds: float = 10
) -> list[str]:
    """Put the database back from Litestream's replica (a new host after losing the old
    one), with the same checks as a backup's, and pbm.ini and secret.key from the backup
    `keys_archive` when given; returns what was done."""
    from .plugins import get_migration_sets
    from .replica import ReplicaNotConfirmed, entry_in, restore_copy
    from .store import core_migrations

    home = config.home
    make_folders(home)
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
            make_folders(Path(scratch) / "keys")
            unpacked = _unpack(Path(keys_archive), Path(scratch) / "keys", config)
            files = {name: path for name, path in unpacked.items() if name in HOME_FILES}
            if "pbm.ini" in files:
                _check_ini(files["pbm.ini"])
        copy = Path(scratch) / DATABASE
        try:
            restore_copy(entry, copy)
        except ReplicaNotConfirmed as error:
            raise BackupError(str(error)) from error
        report = _check_database(copy, [core_migrations()] + get_migration_sets())
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
        make_folders(home / sub)
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
                _put_file(files[name], home / name)
                report.append(f"{name} restored")
    return report


class _NotABackup(BackupError):
    """The archive is not one `pbm backup` writes: a member or header no backup has."""


class _Bounded:
    """The archive's unpacked bytes, as tarfile reads them: refused past `limit` in all and
    past CHUNK at once, whatever its headers declare."""

    def __init__(self, stream, limit: int):
        self.stream, self.limit = stream, limit

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > CHUNK:
            raise _NotABackup(f"it holds a header of {size} bytes")
        if self.stream.tell() + size > self.limit:
            raise _NotABackup(f"it unpacks to more than {self.limit} bytes")
        return self.stream.read(size)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence != os.SEEK_SET or offset > self.limit:
            raise _NotABackup(f"it unpacks to more than {self.limit} bytes")
        return self.stream.seek(offset)

    def tell(self) -> int:
        return self.stream.tell()

    def write(self, data: bytes) -> int:
        raise io.UnsupportedOperation("a backup is only read")

    def close(self) -> None:
        """The gzip stream beneath is closed by its own `with`."""


def _unpack(archive_path: Path, scratch: Path, config) -> dict:
    """The archive's files by name, written into scratch; anything but our three plain
    files, or more than they may hold, or more than the disk can take, is refused."""
    caps = {DATABASE: config.number("backup.max_restore_megabytes") * MEGABYTE}
    caps.update(HOME_FILE_CAPS)
    found: dict[str, Path] = {}
    try:
        with open(archive_path, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as stream:
            bounded = _Bounded(stream, sum(caps.values()) + TAR_OVERHEAD)
            with tarfile.open(fileobj=bounded, mode="r:") as archive:
                for member in archive:
                    _refuse_member(member, found, caps)
                    _need_room(member, scratch, config)
                    found[member.name] = _write_member(archive, member, scratch)
    except _NotABackup as error:
        raise BackupError(f"{archive_path} is not a pbm backup: {error}") from None
    except (EOFError, zlib.error, gzip.BadGzipFile, tarfile.TarError) as error:
        raise BackupError(f"{archive_path} {_archive_problem(error)}") from error
    except OSError as error:
        raise BackupError(f"cannot read {archive_path}: {error}") from error
    if DATABASE not in found:
        raise BackupError(f"{archive_path} holds no {DATABASE}")
    return found


def _archive_problem(error: Exception) -> str:
    """What is wrong with an archive gzip or tarfile cannot read, and the cure."""
    said = str(error)
    if isinstance(error, EOFError) or "unexpected end" in said:
        return f"is truncated: it ends in the middle ({said}); copy the backup again"
    if said.startswith("Not a gzipped file"):
        return f"is not a tar.gz ({said}): not a pbm backup"
    if isinstance(error, (zlib.error, gzip.BadGzipFile)) or said.startswith("zlib error"):
        return f"is damaged ({said}): copy the backup again, or take an older one"
    if said == "empty file":
        return "is empty: copy the backup again"
    return f"is not a tar archive ({said}): not a pbm backup"


def _refuse_member(member: tarfile.TarInfo, found: dict, caps: dict) -> None:
    name = member.name
    if name.startswith("/") or ".." in name.split("/"):
        problem = "has a path outside the archive"
    elif member.issym() or member.islnk():
        problem = "is a link"
    elif member.isdev():
        problem = "is a device"
    elif name not in caps:
        problem = "is no file of a pbm backup"
    elif member.type not in (tarfile.REGTYPE, tarfile.AREGTYPE):
        problem = "is not a plain file"
    elif name in found:
        problem = "comes twice"
    else:
        problem = None
    if problem:
        raise _NotABackup(f"member {name!r} {problem}")
    if member.size > caps[name]:
        raise BackupError(_too_big(name, member.size, caps[name]))


def _too_big(name: str, size: int, cap: int) -> str:
    said = f"{name} unpacks to {size} bytes, more than the {cap} a restore takes"
    if name == DATABASE:
        said += " (raise [backup] max_restore_megabytes in pbm.ini if the backup is yours)"
    return said


def _need_room(member: tarfile.TarInfo, scratch: Path, config) -> None:
    """Room on the disk for the member before it is written: the database also passes
    through the -wal into pbm.db; what `pbm check` asks for stays free."""
    need = member.size + MIN_FREE_BYTES
    if member.name == DATABASE:
        live = config.db_path.stat().st_size if config.db_path.exists() else 0
        need += member.size + max(0, member.size - live)
    free = shutil.disk_usage(scratch).free
    if free < need:
        raise BackupError(
            f"{member.name} unpacks to {member.size / MEGABYTE:.1f} MB and the restore needs "
            f"{need / MEGABYTE:.1f} MB free on the disk of {config.home}, which has "
            f"{free / MEGABYTE:.1f} MB: free disk space first"
        )


def _write_member(archive, member: tarfile.TarInfo, scratch: Path) -> Path:
    path, written = scratch / member.name, 0
    with archive.extractfile(member) as source, open(path, "xb", opener=private_opener) as target:
        while chunk := source.read(CHUNK):
            written += len(chunk)
            if written > member.size:  # a member never gives more than it declared
                raise BackupError(_too_big(member.name, written, member.size))
            target.write(chunk)
    return path


def _check_database(path: Path, migration_sets) -> list[str]:
    """Refuse a damaged copy, one made by a newer pbm, or one whose schema holds anything
    pbm's migrations do not make; say what `pbm migrate` will add."""
    from .store import Store, unusable_database_cause
    from .store.schema import SchemaError

    try:
        store = Store.open(path)
        try:
            _check_schema(store, migration_sets)
            pending = store.pending_migrations(migration_sets)
        finally:
            store.close()
    except BackupError:
        raise
    except SchemaError as error:
        raise BackupError(f"the backup cannot be checked: {error}") from error
    except Exception as error:
        if unusable_database_cause(error) is None:
            raise
        raise BackupError(f"the backup's database cannot be read: {error}") from error
    report = ["integrity_check: ok", "schema: only what pbm's migrations make"]
    if pending:
        report.append(f"{len(pending)} migrations pending: run `pbm migrate`")
    return report


def _check_schema(store, migration_sets) -> None:
    from .store.migrations import core_step_names

    verdict = store.integrity_check()
    if verdict != "ok":
        raise BackupError(f"the backup's database is damaged: integrity_check says {verdict}")
    applied = store.core_applied()
    if not applied:
        raise BackupError("the backup's database has no pbm schema")
    unknown = sorted(applied - set(core_step_names()))
    if unknown:
        raise BackupError(
            "the backup was made by a newer pbm (migrations "
            f"{', '.join(unknown)} are unknown here): upgrade pbm first"
        )
    foreign = store.foreign_schema_objects(migration_sets)
    if foreign:
        raise BackupError(
            "the backup's database holds what pbm's migrations do not make: " + ", ".join(foreign)
        )


def _check_ini(path: Path) -> None:
    """A pbm.ini this pbm would refuse would make every mail wait after the restore."""
    try:
        Config.load(path.parent)
    except ConfigError as error:
        raise BackupError(f"the backup's pbm.ini cannot be used: {error}") from error


def _put_file(source: Path, target: Path):
    partial = target.with_name(f".{target.name}.restoring")
    with open(partial, "wb", opener=private_opener) as handle:
        handle.write(source.read_bytes())
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(partial, 0o600)
    os.replace(partial, target)
