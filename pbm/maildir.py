"""The Maildir $PBM_HOME/outbox (docs/spec/server.md §5.1): a mail is written into tmp/,
synced, then renamed into new/, so a reader never sees half of one; `pbm serve` writes a
group's mails into tmp/ and syncs them with its commit in one sync."""

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache

from .private import FILE_MODE, make_folders

# open(path, "wb") as os.open flags: a mail file written in one call, no buffer
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC


def write_maildir(config, name: str, message: bytes) -> None:
    """One file into tmp/, synced, then renamed into new/: a reader never sees half a mail."""
    temporary = os.path.join(config.outbox_dir, "tmp", name)
    _create(config, temporary, message, sync=True)
    os.replace(temporary, os.path.join(config.outbox_dir, "new", name))


def _maildir(config):
    base = config.outbox_dir
    for sub in ("tmp", "new", "cur"):
        make_folders(base / sub)
    return base


def maildir_name(row_id: int) -> str:
    """An outbox row's file name: made from its id only, so a rewrite replaces it."""
    return f"{int(row_id):010d}.pbm"


MAILDIR_NAME = re.compile(r"[0-9]{10}\.pbm")


@dataclass
class MaildirBatch:
    """Outbox rows on their way into the Maildir, written into tmp/ but not yet synced."""

    written: list = field(default_factory=list)  # in tmp/: sync, then publish
    present: list = field(default_factory=list)  # in new/ or cur/ before a crash: only marked
    failed: list = field(default_factory=list)  # (row, error)

    def paths(self, config) -> list[str]:
        tmp = os.path.join(config.outbox_dir, "tmp")
        return [os.path.join(tmp, maildir_name(row.id)) for row in self.written]

    @property
    def delivered(self) -> list:
        return self.written + self.present


def stage_maildir(config, rows) -> MaildirBatch:
    """Write the rows into tmp/ without a sync: sync_together makes the whole batch
    durable at once (with the commit, in `pbm serve`), or fsync_each, then
    publish_maildir renames it into new/. A row taken over from a claimer that died (claim_many gives its status as
    it found it) is not written again if its file got into new/ or cur/ before the crash:
    the crash came between the rename and the sent mark, and a second file would be a
    second delivery."""
    tmp = os.path.join(config.outbox_dir, "tmp")
    batch = MaildirBatch()
    for row in rows:
        name = maildir_name(row.id)
        if row.status == "sending" and _in_maildir(config.outbox_dir, name):
            batch.present.append(row)
            continue
        try:
            _create(config, os.path.join(tmp, name), row.message)
        except OSError as error:
            batch.failed.append((row, str(error)))
        else:
            batch.written.append(row)
    return batch


def _create(config, path: str, message: bytes, sync: bool = False) -> None:
    """A new 0600 file with the message, synced only when asked (a group's files are
    synced together). The folders are made when the first file finds them missing (an
    outbox removed while `pbm serve` runs is made again), not looked for before every
    file."""
    try:
        descriptor = os.open(path, CREATE_FLAGS, FILE_MODE)
    except FileNotFoundError:
        _maildir(config)
        descriptor = os.open(path, CREATE_FLAGS, FILE_MODE)
    try:
        view = memoryview(message)
        while view:
            view = view[os.write(descriptor, view) :]
        if sync:
            os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _in_maildir(base, name: str) -> bool:
    """Delivered: still in new/, or moved into cur/ by its reader (with its `:2,` flags)."""
    if (base / "new" / name).exists() or (base / "cur" / name).exists():
        return True
    return any(base.joinpath("cur").glob(name + ":*"))


def publish_maildir(config, batch: MaildirBatch) -> None:
    """Rename the synced files into new/; one that cannot be renamed is written again
    later (its row is marked for retry by the caller, from batch.failed)."""
    tmp, new = (os.path.join(config.outbox_dir, sub) for sub in ("tmp", "new"))
    published = []
    for row in batch.written:
        name = maildir_name(row.id)
        try:
            os.replace(os.path.join(tmp, name), os.path.join(new, name))
        except OSError as error:
            batch.failed.append((row, str(error)))
        else:
            published.append(row)
    batch.written = published


def recover_maildir(store, config) -> int:
    """A file left in tmp/ whose row is marked sent was synced there, and a crash lost its
    rename (a rename becomes durable with the next sync, the sent mark may come first):
    rename it into new/ now. Returns how many."""
    folder = config.outbox_dir / "tmp"
    if not folder.is_dir():
        return 0
    names = {int(p.name[:10]): p.name for p in folder.iterdir() if MAILDIR_NAME.fullmatch(p.name)}
    moved = 0
    for row_id in store.outbox.sent_among(sorted(names)):
        name = names[row_id]
        try:
            os.replace(folder / name, config.outbox_dir / "new" / name)
            moved += 1
        except FileNotFoundError:
            pass  # renamed meanwhile by the process that wrote it
    return moved


def sync_together(paths) -> None:
    """Make files written without a sync durable with as few syncs as the system allows:
    one syncfs(2) per file system they are on (Linux: it gives the guarantee of an fsync
    of every file there, and flushes whatever else is dirty there), else one sync(2).

    Never through a descriptor of the file itself: the database is among them, and closing
    any descriptor of it drops every POSIX lock SQLite holds on it in this process (the
    readers' and the writer's), which a concurrent reader then sees as a disk I/O error.
    A descriptor of the file's folder names the same file system and holds no lock."""
    syncfs = _syncfs()
    if syncfs is None:
        os.sync()
        return
    done = set()
    for folder in dict.fromkeys(os.path.dirname(os.path.abspath(path)) for path in paths):
        device = os.stat(folder).st_dev
        if device in done:
            continue
        done.add(device)
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            if syncfs(descriptor) != 0:
                number = _errno()
                raise OSError(number, f"syncfs: {os.strerror(number)}", folder)
        finally:
            os.close(descriptor)


def fsync_each(paths) -> None:
    """One fsync a file: for the few files of one mail's delivery, where loading syncfs
    (ctypes) would cost the mail pipe more than the fsync it saves."""
    for path in paths:
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


@lru_cache(maxsize=1)
def _syncfs():
    # deferred: ctypes costs the mail pipe's start-up a few milliseconds
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None


def _errno() -> int:
    import ctypes

    return ctypes.get_errno()
