"""The home is private whatever the umask (docs/security.md, issue 25): it holds password
hashes, every address, the SMTP password, the reply tokens' key and mail with live reset
codes. Folders are 0700 and files 0600.

Two layers, since either alone leaves a gap. Every process pbm starts (the `pbm` command,
mail_handler.py) sets umask 077 first, which covers what libraries create for pbm (SQLite's
database, -wal and -shm, jinja2's compiled templates, whatever is added later). And pbm's own
writers ask for these modes themselves, so that the home stays private in a process that
did not start through those doors (a test, a script importing pbm). The modes asked for are
only ever narrowed by a umask, never widened."""

import os
import stat
from collections.abc import Iterator
from pathlib import Path

PRIVATE_UMASK = 0o077
FOLDER_MODE = 0o700
FILE_MODE = 0o600
# Any permission for the group or for others: the home's rule is owner only.
SHARED_BITS = stat.S_IRWXG | stat.S_IRWXO


def keep_private() -> None:
    """The first thing every pbm process does."""
    os.umask(PRIVATE_UMASK)


def make_folders(path: Path) -> None:
    """mkdir -p, each folder made 0700 (Path.mkdir gives the parents it makes 0777 less
    the umask); folders already there keep their mode (`pbm check` names a shared one)."""
    path = Path(path)
    missing = []
    while not path.is_dir():
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=FOLDER_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise


def private_opener(path: str | os.PathLike[str], flags: int) -> int:
    """For open(..., opener=private_opener): a file it creates is 0600."""
    return os.open(path, flags, FILE_MODE)


def create_private(path: Path) -> None:
    """Make an empty 0600 file unless one is there, for a library that then opens it with
    its own mode (logging's FileHandler, SQLite's database)."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE))


def shared_paths(top: Path) -> Iterator[tuple[Path, int]]:
    """Every file and folder under top (top included) whose mode gives the group or others
    any access, as (path, st_mode); links are not followed (their own mode means
    nothing)."""
    top = Path(top)
    try:
        mode = top.stat().st_mode
    except FileNotFoundError:
        return
    if mode & SHARED_BITS:
        yield top, mode
    for folder, folders, files in os.walk(top):
        for name in folders + files:
            path = Path(folder) / name
            try:
                mode = path.lstat().st_mode
            except FileNotFoundError:  # removed meanwhile: mail taken away, a scratch file
                continue
            if not stat.S_ISLNK(mode) and mode & SHARED_BITS:
                yield path, mode
