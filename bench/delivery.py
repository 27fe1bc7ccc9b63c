"""Delivery (docs/delivery.md, docs/spec/server.md §5.9): what a bounce costs next to a
move, and whether a move whose mails go out with VERP senders costs more than one whose
mails share one envelope sender, in the same run.

1. Through mail_handler.py, one fresh process per mail as an MTA runs it: the CPU time of
   the child (user + system) for a Postfix DSN (stdlib path), an Exchange report
   (flufl.bounce path), each marking an address and mailing its owner's other address,
   next to a move mail on the same home.
2. In process, as `pbm serve` runs moves, with SMTP delivery to a relay in another
   process (aiosmtpd's sink): CPU and wall time of a move, its mails delivered, with VERP
   senders (one transaction per recipient) next to `[server] bounce_address` set (one
   transaction per mail, as the null sender was); players with one address, then with two.
"""

import os
import resource
import statistics
import subprocess
import sys
import time
from email.message import EmailMessage
from pathlib import Path

from click.testing import CliRunner
from fixtures import LIMITS

from pbm.bounces import verp_sender
from pbm.cli import cli
from pbm.config import Config
from pbm.dispatch import open_server
from pbm.mailin import build_request
from pbm.store import Store

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "tests" / "bounces"
MOVES = ["c1-a5", "a7-c3", "g1-e5", "c7-a3", "e5-a7", "a3-c7", "a5-c1", "c7-e3"]


def new_home(path: Path, extra: str = "") -> Config:
    result = CliRunner().invoke(cli, ["--home", str(path), "init"])
    assert result.exit_code == 0, result.output
    (path / "pbm.ini").write_text(
        LIMITS + "[mail]\nhtml = off\n[server]\naddress = pbm@games.example.org\n" + extra
    )
    return Config.load(path)


def run(config, text, sender, body=""):
    with open_server(config) as server:
        result = server.execute(build_request(text, body, sender))
    assert result.ok, [m.body for _, m in result.queued]


def child_cpu(config, raw: bytes, recipient=None) -> float:
    env = dict(os.environ, PBM_HOME=str(config.home), PYTHONPATH=str(ROOT))
    if recipient:
        env["ORIGINAL_RECIPIENT"] = recipient
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, str(ROOT / "mail_handler.py")], input=raw, env=env, cwd=ROOT, check=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def move_mail(userid, board, ply, move) -> bytes:
    message = EmailMessage()
    message["From"] = f"{userid}@bench.example"
    message["To"] = "pbm@games.example.org"
    message["Subject"] = f"knightpanic move {board} {userid} secret {move}#{ply}"
    message["Message-ID"] = f"<move-{board}-{ply}@bench.example>"
    message.set_content("bench")
    return message.as_bytes()


def bounce_mail(sample, verp, recipient, number) -> bytes:
    text = (SAMPLES / sample).read_text().replace("@@VERP@@", verp)
    text = text.replace("@@RCPT@@", recipient).replace("@@MSGID@@", "<x@games.example.org>")
    return (
        text.replace("Message-ID: <", f"Message-ID: <{number}.", 1)
        .replace("Message-Id: <", f"Message-Id: <{number}.", 1)
        .encode()
    )


def bounce_cost(work: Path, count: int) -> dict:
    """Mean child CPU ms of a move and of bounces, each in a fresh mail_handler.py."""
    config = new_home(work / "bounces")
    for userid in ("white", "black"):
        run(config, f"signup {userid} secret {userid}@bench.example", f"{userid}@bench.example")
    users = [f"u{i:03d}" for i in range(2 * count)]
    for userid in users:
        run(
            config,
            f"signup {userid} secret {userid}@bench.example {userid}@other.example",
            f"{userid}@bench.example",
        )
    store = Store.open(config.db_path)
    try:
        rows = {r.recipients[0]: r.id for r in store.outbox.rows(["sent"])}
    finally:
        store.close()
    costs = {"move": [], "Postfix DSN": [], "Exchange report (flufl.bounce)": []}
    for number in range(count):
        board = 101 + number
        run(config, "knightpanic challenge white black", "white@bench.example")
        costs["move"].append(child_cpu(config, move_mail("white", board, 1, MOVES[0])))
        for sample, label, userid in (
            ("postfix_user_unknown.eml", "Postfix DSN", users[2 * number]),
            ("exchange_not_reached.eml", "Exchange report (flufl.bounce)", users[2 * number + 1]),
        ):
            address = f"{userid}@bench.example"
            verp = verp_sender(config, rows[address], address)
            costs[label].append(child_cpu(config, bounce_mail(sample, verp, address, number), verp))
    store = Store.open(config.db_path)
    try:
        marked = len(store.delivery.failing())
    finally:
        store.close()
    assert marked == 2 * count, f"{marked} addresses marked, not {2 * count}"
    return {label: statistics.median(values) * 1000 for label, values in costs.items()}


def start_sink(port: int):
    process = subprocess.Popen(
        [sys.executable, "-m", "aiosmtpd", "-n", "-c", "aiosmtpd.handlers.Sink"]
        + ["-l", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import socket

    for _ in range(200):
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return process
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("the SMTP sink did not start")


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def move_costs(work: Path, extras: dict, addresses: int, games: int) -> dict:
    """Median (CPU ms, wall ms) of a move with its board mails delivered over SMTP, for
    each home of `extras` (label: pbm.ini lines); their moves alternate, so that whatever
    else the machine does falls on both alike."""
    port = free_port()
    sink = start_sink(port)
    try:
        configs = {}
        for label, extra in extras.items():
            config = new_home(
                work / f"{label}-{addresses}", extra + f"[smtp]\nhost = 127.0.0.1\nport = {port}\n"
            )
            for userid in ("white", "black"):
                owned = " ".join(f"{userid}{i}@bench.example" for i in range(addresses))
                run(config, f"signup {userid} secret {owned}", f"{userid}0@bench.example")
            configs[label] = config
        cpu = {label: [] for label in extras}
        wall = {label: [] for label in extras}
        for game in range(games):
            board = 101 + game
            for config in configs.values():
                run(config, "knightpanic challenge white black", "white0@bench.example")
            for ply, move in enumerate(MOVES, start=1):
                userid = "white" if ply % 2 else "black"
                text = f"knightpanic move {board} {userid} secret {move}#{ply}"
                for label, config in configs.items():
                    request = build_request(text, "", f"{userid}0@bench.example")
                    start_cpu, start_wall = time.process_time(), time.perf_counter()
                    with open_server(config) as server:
                        result = server.execute(request)
                    cpu[label].append(time.process_time() - start_cpu)
                    wall[label].append(time.perf_counter() - start_wall)
                    assert result.ok
        return {
            label: (statistics.median(cpu[label]) * 1000, statistics.median(wall[label]) * 1000)
            for label in extras
        }
    finally:
        sink.terminate()
        sink.wait(timeout=30)


def delivery(report, quick):
    import tempfile

    with tempfile.TemporaryDirectory(prefix="pbm-bench-delivery-") as tmp:
        work = Path(tmp)
        count = 5 if quick else 20
        costs = bounce_cost(work, count)
        move = costs.pop("move")
        for label, cost in costs.items():
            report(
                f"a bounce through mail_handler.py, {label}, marking an address and telling "
                f"its owner (child CPU, median of {count})",
                f"{cost:.1f} ms",
                f"a move mail {move:.1f} ms",
                f"{cost / move:.2f}x",
            )
        games = 3 if quick else 12
        for addresses in (1, 2):
            costs = move_costs(
                work,
                {"verp": "", "fixed": "[server]\nbounce_address = bounces@games.example.org\n"},
                addresses,
                games,
            )
            plural = "address" if addresses == 1 else "addresses"
            for index, what in ((0, "CPU"), (1, "wall")):
                verp, fixed = costs["verp"][index], costs["fixed"][index]
                report(
                    f"a move over SMTP with VERP senders, players with {addresses} {plural} "
                    f"({what}, median of {games * len(MOVES)})",
                    f"{verp:.1f} ms",
                    f"one envelope sender a mail {fixed:.1f} ms",
                    f"{verp / fixed:.2f}x",
                )
