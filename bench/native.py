"""Where a move's time goes by owner: pbm's own Python against the libraries and the system
calls it asks for, sampled with py-spy in native mode (C frames too), beside the same for
bench/move_floor.py (the least a move can cost with the design card's libraries) in the
same run. Issue 31's goal of 2 ms a move is checked against this: the part that is not
pbm's own Python is what a move costs even if pbm's Python cost nothing.

Each sample goes to the owner of its innermost frame: SQLite (libsqlite3 and the sqlite3
module), the system calls (libc: writes, renames, syncs, random bytes), or else the Python
code whose frame is innermost, with the interpreter's work for that code (libpython, a C
builtin it called) counted to it. The password hashing of the warm-up is left out.

The shares are of the samples py-spy takes of a running thread, the kernel's work in a
system call included (the CPU clock counts it too: a sync's writeback is CPU); the
milliseconds are each share of the CPU a move measured without the sampler, by the same
script in the same run.
"""

import collections
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RATE = 250  # samples a second: native unwinding pauses the process for each
PYTHON_FRAME = re.compile(r"\((?P<path>[^()]+\.(?:py|txt|html)|<frozen [^>]+>):\d+\)$")
PBM_PYTHON = "pbm's own Python (pbm/, games/, their templates)"
SQLITE_WORK = "SQLite (the library and the sqlite3 module)"
SYSTEM_CALLS = "system calls (libc: files, renames, syncs, random bytes)"
REST = "the rest of the standard library and C extensions"
# The owners of Python code, by the start of its file's path.
PYTHON_OWNERS = {
    PBM_PYTHON: ("pbm/", "games/", "templates/"),
    "the email package": ("email/",),
    "Jinja2's runtime": ("jinja2/", "markupsafe/"),
}
OWNERS = (PBM_PYTHON, SQLITE_WORK, SYSTEM_CALLS, *list(PYTHON_OWNERS)[1:], REST)
# What pbm serve's writer does once for a group of commands (one command a group here, about
# 8 under load: the serve section): the commit, the Maildir's sync, the sent marks.
GROUP_WORK = ("Store.group (", "sync_together (", "Outbox.mark_sent_many (")
# What pbm serve's reader processes do, off the writer's path.
READER_WORK = "read_for_command ("
SQLITE_FRAMES = ("libsqlite3", "connection.c", "cursor.c", "statement.c", "module.c", "util.c")


def owner(frames: list[str]) -> str:
    leaf = frames[-1]
    if any(part in leaf for part in SQLITE_FRAMES):
        return SQLITE_WORK
    if "(libc.so" in leaf:
        return SYSTEM_CALLS
    paths = [m["path"] for f in frames if (m := PYTHON_FRAME.search(f))]
    innermost = paths[-1] if paths else ""
    if innermost.endswith((".txt", ".html")):  # a template Jinja2 compiled: pbm's or a game's
        return PBM_PYTHON
    for name, prefixes in PYTHON_OWNERS.items():
        if innermost.startswith(prefixes):
            return name
    return REST


def shares(raw: Path, anchor: str) -> tuple[dict, float, float, int]:
    """Each owner's share of the samples under the measured loop (`anchor`'s frames); the
    shares of the library work a group of commands does once for all of them and of the
    library work of reading the mail; and the number of samples."""
    counts: collections.Counter = collections.Counter()
    shared = reading = total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if anchor not in stack or "argon2" in stack:
            continue
        frames = stack.split(";")
        who = owner(frames)
        counts[who] += int(count)
        total += int(count)
        python = [f for f in frames if PYTHON_FRAME.search(f)]
        if who != PBM_PYTHON and python and python[-1].startswith(GROUP_WORK):
            shared += int(count)
        if who != PBM_PYTHON and READER_WORK in stack:
            reading += int(count)
    if not total:
        raise SystemExit(f"py-spy took no sample under {anchor}: was the script changed?")
    return (
        {name: counts[name] / total for name in OWNERS},
        shared / total,
        reading / total,
        total,
    )


def sampled(spy: str, script: list[str], moves: int, work: Path, label: str) -> Path:
    raw = work / f"{label}.raw"
    subprocess.run(
        [spy, "record", "--native", "-r", str(RATE), "-f", "raw", "-o", str(raw), "--"]
        + [sys.executable, *script, "--moves", str(moves)],
        check=True,
        capture_output=True,
    )
    return raw


def where_cpu_goes(report, interleaved, moves: int, batch: int):
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if spy is None:
        print("py-spy is not installed: `make bench` adds it (the profile extra)")
        return
    scripts = {
        "pbm": [str(ROOT / "bench" / "cpu_per_move.py"), "--root", str(ROOT)],
        "floor": [str(ROOT / "bench" / "move_floor.py")],
    }
    anchors = {"pbm": "process_message (", "floor": "Floor.move ("}
    with tempfile.TemporaryDirectory(prefix="pbm-native-") as tmp:
        found = {
            label: shares(sampled(spy, script, moves, Path(tmp), label), anchors[label])
            for label, script in scripts.items()
        }
    # The CPU a move without the sampler, the two alternated as in the cpu section.
    played = ["--moves", str(moves), "--batch", str(batch)]
    figures = interleaved(
        {label: [*script, *played] for label, script in scripts.items()}, moves // batch
    )
    pbm_ms, floor_ms = (statistics.median(figures[label]) for label in ("pbm", "floor"))
    (pbm, shared, reading, pbm_samples), (floor, _, _, floor_samples) = found["pbm"], found["floor"]
    title = "where a text-only move's time goes (bench/native.py, py-spy --native"
    for name in OWNERS:
        report(
            f"{title}, {pbm_samples} samples): {name}",
            f"{pbm[name]:.1%}, {pbm[name] * pbm_ms:.2f} ms",
            f"the floor's {floor[name]:.1%}, {floor[name] * floor_ms:.2f} ms",
        )
    not_pbm = 1 - pbm[PBM_PYTHON]
    report(
        f"{title}): all but pbm's own Python, a group's commit, sync and sent marks shared "
        "by 8 commands as under load",
        f"{(not_pbm - shared * 7 / 8) * pbm_ms:.2f} ms of {pbm_ms:.2f} ms",
        f"target 2 ms; the floor, all of it, {floor_ms:.2f} ms ({floor_samples} samples)",
    )
    report(
        f"{title}): the same on the writer's path, the mail read by a reader process",
        f"{(not_pbm - shared * 7 / 8 - reading) * pbm_ms:.2f} ms",
        "target 2 ms",
    )
