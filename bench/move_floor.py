"""The least an accepted move mail can cost in CPU with the libraries the design card fixes,
and no pbm code: issue 31's floor for its first goal (2 ms a move in `pbm serve`), measured
the way bench/cpu_per_move.py measures pbm, and beside it in the same batches.

A move here does only what every accepted move must:
- read the mail with the email package (its cheapest policy, compat32, and the Subject's
  encoded words decoded);
- check the password against a digest of an earlier check kept in memory (pbm serve's
  PasswordCache: argon2 ran at the warm-up), after reading the stored hash;
- in one transaction: record the Message-ID (a retried mail must not move twice), read
  the sender's rate limit, read the board, append the move, update the board, queue one
  mail for each of the two players;
- render each player's board mail with Jinja2, headers written as strings, its reply
  address an HMAC of board, player and move (no row);
- commit without a sync, write both mails into the Maildir's tmp/, make database and
  mails durable with one syncfs, and move the mails into new/.

Left out, so that the floor is lower than any real move: the game's rules (bench/engines.py
and `--only contract` measure those), the board's text, the sent mark of each mail, and
everything pbm checks beyond these reads (answer limits, bounces, held mail, vacations,
votes, robots).

    python bench/move_floor.py [--moves N]          prints floor_ms_per_move
    python bench/move_floor.py --batch N [--moves N]  as cpu_per_move.py --batch
"""

import argparse
import ctypes
import hmac
import os
import secrets
import sqlite3
import sys
import tempfile
import time
from email.header import decode_header, make_header
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import compat32
from email.utils import formatdate, parseaddr
from pathlib import Path

import jinja2
from cpu_per_move import play_in_batches

BOARDS = 21
RATE_LIMIT = 60  # pbm's default commands_per_hour
BOARD_MAIL = """{{ game }} {{ number }}: {{ last }}

{% for row in rows %}{{ row }}
{% endfor %}
{% if on_move %}Your move, {{ userid }}: reply to this mail with your move on its first line.
{% else %}{{ other }} is on move.
{% endif %}"""
SCHEMA = """
CREATE TABLE users (userid TEXT PRIMARY KEY, password_hash TEXT);
CREATE TABLE inbox (key TEXT PRIMARY KEY, sender TEXT, at TEXT);
CREATE INDEX inbox_sender ON inbox (sender, at);
CREATE TABLE boards (id INTEGER PRIMARY KEY, state TEXT, plies INTEGER);
CREATE TABLE moves (id INTEGER PRIMARY KEY, board_id INTEGER, ply INTEGER, userid TEXT,
    text TEXT, at TEXT);
CREATE TABLE outbox (id INTEGER PRIMARY KEY, recipient TEXT, message BLOB, at TEXT);
"""


class Floor:
    def __init__(self, work: Path):
        self.db = sqlite3.connect(work / "floor.db", isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self.key = secrets.token_bytes(32)
        self.known = set()
        for board in range(BOARDS):
            self.db.execute("INSERT INTO boards VALUES (?, ?, 0)", (board, "." * 169))
            for userid in (f"white{board}", f"black{board}"):
                stored = "$argon2id$" + secrets.token_hex(32)
                self.db.execute("INSERT INTO users VALUES (?, ?)", (userid, stored))
                self.known.add(self._digest(userid, stored, "secret"))
        environment = jinja2.Environment(loader=jinja2.DictLoader({"board.txt": BOARD_MAIL}))
        self.template = environment.get_template("board.txt")
        self.maildir = work / "outbox"
        for folder in ("tmp", "new", "cur"):
            (self.maildir / folder).mkdir(parents=True)
        self.libc = ctypes.CDLL(None, use_errno=True)

    def _digest(self, userid, stored, password) -> bytes:
        return hmac.digest(self.key, f"{userid}\0{stored}\0{password}".encode(), "sha256")

    def move(self, raw: bytes):
        message = BytesParser(policy=compat32).parsebytes(raw)
        subject = str(make_header(decode_header(message["Subject"])))
        sender = parseaddr(message["From"])[1].lower()
        message_id = message["Message-ID"]
        charset = message.get_content_charset() or "ascii"
        message.get_payload(decode=True).decode(charset)  # a comment to pass on
        game, _, number, userid, password, text = subject.split()
        board = int(number) - 101
        moment = formatdate()
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        (stored,) = db.execute(
            "SELECT password_hash FROM users WHERE userid = ?", (userid,)
        ).fetchone()
        assert self._digest(userid, stored, password) in self.known
        db.execute("INSERT INTO inbox VALUES (?, ?, ?)", (message_id, sender, moment))
        db.execute(
            "SELECT at FROM inbox WHERE sender = ? ORDER BY at DESC LIMIT 1 OFFSET ?",
            (sender, RATE_LIMIT - 1),
        ).fetchone()
        state, plies = db.execute(
            "SELECT state, plies FROM boards WHERE id = ?", (board,)
        ).fetchone()
        db.execute(
            "INSERT INTO moves (board_id, ply, userid, text, at) VALUES (?, ?, ?, ?, ?)",
            (board, plies + 1, userid, text, moment),
        )
        db.execute("UPDATE boards SET state = ?, plies = ? WHERE id = ?", (state, plies + 1, board))
        rows = [state[i : i + 13] for i in range(0, 169, 13)]
        mails = []
        for player, other in (
            (f"white{board}", f"black{board}"),
            (f"black{board}", f"white{board}"),
        ):
            token = hmac.digest(self.key, f"{board}\0{player}\0{plies + 1}".encode(), "sha256")
            body = self.template.render(
                game=game,
                number=number,
                last=f"{userid} played {text}",
                rows=rows,
                on_move=player != userid,
                userid=player,
                other=other,
            )
            data = (
                f"From: PBM <pbm@localhost>\nTo: {player}@bench.example\n"
                f"Subject: {game} {number}: {userid} played {text}\nDate: {moment}\n"
                f"Message-ID: <{secrets.token_hex(16)}@localhost>\n"
                f"Reply-To: pbm+{token[:12].hex()}@localhost\n"
                'Content-Type: text/plain; charset="utf-8"\nContent-Transfer-Encoding: 7bit\n'
                f"MIME-Version: 1.0\n\n{body}"
            ).encode()
            db.execute(
                "INSERT INTO outbox (recipient, message, at) VALUES (?, ?, ?)",
                (f"{player}@bench.example", data, moment),
            )
            mails.append(data)
        db.execute("COMMIT")
        names = []
        for data in mails:
            name = f"{time.time_ns()}.{os.getpid()}.{len(names)}.floor"
            descriptor = os.open(
                self.maildir / "tmp" / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600
            )
            os.write(descriptor, data)
            os.close(descriptor)
            names.append(name)
        descriptor = os.open(self.maildir, os.O_RDONLY)
        if self.libc.syncfs(descriptor) != 0:
            raise OSError(ctypes.get_errno(), "syncfs")
        os.close(descriptor)
        for name in names:
            os.rename(self.maildir / "tmp" / name, self.maildir / "new" / name)


def mails(count: int) -> list[bytes]:
    """Move mails as bench.py's mail() writes them, the boards' players in turn."""
    made = []
    for number in range(count):
        board, ply = number % BOARDS, number // BOARDS + 1
        userid = f"{'white' if ply % 2 else 'black'}{board}"
        message = EmailMessage()
        message["From"] = f"{userid}@bench.example"
        message["To"] = "pbm@localhost"
        message["Subject"] = f"lox move {101 + board} {userid} secret g7#{ply}"
        message["Message-ID"] = f"<floor-{board}-{ply}@bench.example>"
        message.set_content("bench")
        made.append(message.as_bytes())
    return made


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--moves", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=2 * BOARDS)
    parser.add_argument("--batch", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pbm-floor-") as tmp:
        floor = Floor(Path(tmp))
        every = mails(args.warmup + args.moves)

        def play(batch):
            for raw in batch:
                floor.move(raw)

        play(every[: args.warmup])
        measured = every[args.warmup :]
        if args.batch:
            play_in_batches(play, measured, args.batch)
            return
        start = time.process_time()
        play(measured)
        print(f"floor_ms_per_move {(time.process_time() - start) / len(measured) * 1000:.3f}")


if __name__ == "__main__":
    sys.exit(main())
