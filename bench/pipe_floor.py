"""The least a mail through the pipe can cost with the libraries the design card fixes,
and no pbm code: read the mail with the email package, check the password with argon2id at
pbm's parameters (left out with --by-reply: a reply token needs none), render a template
with Jinja2 from a bytecode cache, commit one row to SQLite and write one mail into a
Maildir, synced. bench.py runs it beside mail_handler.py: a pbm mail cannot cost less
than this on the same machine, so the ratio of this to `python -c pass` is the floor of
issue 31's third goal.

Usage: pipe_floor.py WORKDIR [--by-reply] < mail
"""

import os
import sqlite3
import sys
import time
from email.parser import BytesParser
from email.policy import default
from pathlib import Path

import jinja2
import pluggy  # every mail loads its game through the plugin manager

PASSWORD = "secret"
BOARD = "{{ title }}\n{% for line in lines %}{{ line }}\n{% endfor %}"


def main() -> None:
    work = Path(sys.argv[1])
    message = BytesParser(policy=default).parsebytes(sys.stdin.buffer.read())
    words = str(message["Subject"]).split()
    if "--by-reply" not in sys.argv:
        from argon2 import PasswordHasher

        hasher = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)
        stored = work / "hash"
        if not stored.exists():
            stored.write_text(hasher.hash(PASSWORD))
        hasher.verify(stored.read_text(), PASSWORD)
    cache = work / "templates-cache"
    cache.mkdir(exist_ok=True)
    environment = jinja2.Environment(
        loader=jinja2.DictLoader({"board.txt": BOARD}),
        bytecode_cache=jinja2.FileSystemBytecodeCache(str(cache)),
    )
    pluggy.PluginManager("floor")
    text = environment.get_template("board.txt").render(title=" ".join(words), lines=words)
    with sqlite3.connect(work / "floor.db") as db:
        db.execute("create table if not exists moves (id integer primary key, text)")
        db.execute("insert into moves (text) values (?)", (text,))
    maildir = work / "outbox"
    (maildir / "tmp").mkdir(parents=True, exist_ok=True)
    (maildir / "new").mkdir(exist_ok=True)
    name = f"{time.time_ns()}.floor"
    with open(maildir / "tmp" / name, "w") as out:
        out.write(f"Subject: {words[0]}\n\n{text}")
        out.flush()
        os.fsync(out.fileno())
    (maildir / "tmp" / name).rename(maildir / "new" / name)


if __name__ == "__main__":
    main()
