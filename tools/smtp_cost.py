"""What an abusive SMTP client costs `pbm serve`: docs/security.md records the worst sessions
before and after their bounds (issue 25), measured with this script against a pbm source
tree given (this checkout by default, or an export of another commit).

    python tools/smtp_cost.py flood 200000 [--padding 400] [--source DIR]
    python tools/smtp_cost.py siege 4 --every 3 --wait 120 [--source DIR]

flood: one client sends RCPT TO lines (to pbm+N@localhost, which the server accepts, the
+N padded with --padding characters) in pipelined batches of 1,000, reconnecting (EHLO, MAIL FROM) whenever the server closes the
session, until N have been answered; it reports the sessions it took and the resident
memory of the server process before, right after, and 10 s after.

siege: max_sessions is set to the number of besiegers; each holds a session and sends NOOP
every --every seconds, as long as the server answers it. Meanwhile a client with a real
mail tries to get in once a second for up to --wait seconds; it reports when it did.
"""

import argparse
import os
import signal
import smtplib
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BATCH = 1000


def pbm(source: Path, home: Path, *args, **popen):
    command = [sys.executable, "-c", "from pbm.cli import cli; cli()", "--home", str(home)]
    env = dict(os.environ, PYTHONPATH=str(source))
    return subprocess.Popen([*command, *args], env=env, cwd=source, **popen)


def start(source: Path, home: Path, ini: str):
    assert pbm(source, home, "init", stdout=subprocess.DEVNULL).wait() == 0
    with open(home / "pbm.ini", "a") as handle:
        handle.write(ini)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = pbm(source, home, "serve", "--port", str(port), stdout=subprocess.PIPE)
    if "listening" not in server.stdout.readline().decode():
        raise SystemExit("pbm serve did not start")
    return server, port


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise SystemExit(f"no {field} for {pid}")


def final_replies(data: bytes) -> list[bytes]:
    """The last line of each reply received (a multi-line reply counts once)."""
    return [line for line in data.split(b"\r\n")[:-1] if line[3:4] != b"-"]


def flood(port: int, wanted: int, padding: int) -> tuple[int, int]:
    """(RCPT TO answered, sessions used)."""
    answered = sessions = 0
    while answered < wanted:
        sessions += 1
        got = flood_session(port, answered, wanted - answered, b"x" * padding)
        if not got:
            raise SystemExit(f"session {sessions} answered no RCPT TO")
        answered += got
    return answered, sessions


def flood_session(port: int, first: int, most: int, padding: bytes) -> int:
    """How many of at most `most` RCPT TO one session answers before it is closed."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"EHLO flood.example\r\nMAIL FROM:<a@example.org>\r\n")
        data, sent, closed = b"", 0, False
        while sent < most and not closed:
            batch = min(BATCH, most - sent)
            numbers = range(first + sent, first + sent + batch)
            try:
                sock.sendall(
                    b"".join(b"RCPT TO:<pbm+%d%s@localhost>\r\n" % (n, padding) for n in numbers)
                )
            except OSError:
                break
            sent += batch
            while len(final_replies(data)) < 3 + sent and not closed:  # greeting, EHLO, MAIL
                try:
                    chunk = sock.recv(1 << 16)
                except OSError:
                    chunk = b""
                closed = not chunk
                data += chunk
    return sum(1 for line in final_replies(data)[3:] if not line.startswith(b"421"))


def siege(port: int, clients: int, every: float, wait: float) -> str:
    besiegers = [smtplib.SMTP("127.0.0.1", port, timeout=60) for _ in range(clients)]
    closed = []

    def besiege(client):
        try:
            while client.noop()[0] == 250:
                time.sleep(every)
        except (smtplib.SMTPException, OSError):
            pass
        closed.append(time.monotonic())

    threads = [threading.Thread(target=besiege, args=(c,), daemon=True) for c in besiegers]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    message = b"From: bob@example.org\r\nTo: pbm@localhost\r\nSubject: help\r\n\r\nhi\r\n"
    while time.monotonic() - began < wait:
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
                client.sendmail("bob@example.org", ["pbm@localhost"], message)
            return (
                f"a real client got in after {time.monotonic() - began:.0f} s "
                f"({len(closed)} of {clients} besiegers closed by then)"
            )
        except (smtplib.SMTPConnectError, smtplib.SMTPServerDisconnected):
            time.sleep(1)
    return f"a real client never got in within {wait:.0f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["flood", "siege"])
    parser.add_argument("count", type=int, help="RCPT TO lines, or besieging clients")
    parser.add_argument("--padding", type=int, default=0, help="flood: longer addresses")
    parser.add_argument("--every", type=float, default=3.0, help="siege: seconds between NOOPs")
    parser.add_argument("--wait", type=float, default=120.0, help="siege: how long to try")
    parser.add_argument("--source", type=Path, default=ROOT, help="the pbm source tree to run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        ini = f"\n[listen]\nmax_sessions = {args.count}\n" if args.mode == "siege" else ""
        server, port = start(args.source.resolve(), home, ini)
        try:
            if args.mode == "flood":
                before = rss_mb(server.pid)
                began = time.monotonic()
                answered, sessions = flood(port, args.count, args.padding)
                elapsed = time.monotonic() - began
                after = rss_mb(server.pid)
                time.sleep(10)
                print(
                    f"{answered} RCPT TO answered in {sessions} sessions, {elapsed:.1f} s; "
                    f"server RSS {before:.0f} MB before, {after:.0f} MB after, "
                    f"{rss_mb(server.pid):.0f} MB 10 s later "
                    f"(peak {rss_mb(server.pid, 'VmHWM'):.0f} MB)"
                )
            else:
                print(siege(port, args.count, args.every, args.wait))
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)


if __name__ == "__main__":
    main()
