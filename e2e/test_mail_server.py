"""Two players play whole games through a real Postfix: first with the README's pipe
transport, then with `pbm serve` as Postfix's relay target. Alice writes with sendmail,
Bob over SMTP on 127.0.0.1:25; every reply must land in their Maildirs through Postfix.
The tests run in file order on one installation (see conftest.py)."""

import email
import email.policy
import re
import shlex
import smtplib
import subprocess
import sys
from email.message import EmailMessage
from email.utils import make_msgid, parseaddr, parsedate_to_datetime

import dkim
import pytest
from conftest import (
    INSTALL_DIR,
    MAILDIRS,
    MAILLOG,
    PBM_HOME,
    PLAYER_DOMAIN,
    PLAYERS,
    ROOT,
    SERVER,
    SERVER_DOMAIN,
    as_pbm,
    dkim_public_record,
    run,
    wait_for,
)

sys.path.insert(0, str(ROOT / "tools"))
from demo import MOVES  # noqa: E402  (the demo's game: White wins on the ninth move)

PASSWORDS = {"alice": "wonderland", "bob": "builder1"}
BUSY_PLY = 5
REPLY_PLIES = (3, 4)  # played by replying to the board mail: the move alone, no password
ADDRESS = {p: f"{p}@{PLAYER_DOMAIN}" for p in PLAYERS}


class Mailboxes:
    """What Postfix delivered into each player's Maildir since the last look."""

    def __init__(self):
        self.seen = set()
        self.total = dict.fromkeys(PLAYERS, 0)

    def files(self, player):
        folder = MAILDIRS / player / "new"
        return sorted(folder.iterdir()) if folder.is_dir() else []

    def unseen(self, player):
        return [path for path in self.files(player) if path not in self.seen]

    def take(self, expected: dict) -> dict:
        """Wait for `expected[player]` new messages each, then return them parsed."""
        wait_for(
            lambda: all(len(self.unseen(p)) >= n for p, n in expected.items()),
            f"replies {expected}",
        )
        got = {}
        for player in PLAYERS:
            paths = self.unseen(player)
            self.seen.update(paths)
            self.total[player] += len(paths)
            got[player] = [read_mail(p) for p in paths]
        return got


def read_mail(path):
    """A delivered mail, parsed, with the bytes as they arrived (a signature covers those)."""
    raw = path.read_bytes()
    mail = email.message_from_bytes(raw, policy=email.policy.default)
    mail.raw_bytes = raw
    return mail


@pytest.fixture(scope="session")
def mailboxes(mail_host):
    return Mailboxes()


def command_mail(player, subject, body="", to=SERVER):
    message = EmailMessage()
    message["From"] = f"{player.title()} <{ADDRESS[player]}>"
    message["To"] = to
    message["Subject"] = subject
    message["Message-ID"] = make_msgid(domain=PLAYER_DOMAIN)
    message.set_content(body or "\n")
    return message


def send(player, subject, body="", to=SERVER):
    """Alice uses the local sendmail, Bob talks SMTP to 127.0.0.1:25."""
    message = command_mail(player, subject, body, to)
    if player == "alice":
        subprocess.run(
            ["/usr/sbin/sendmail", "-i", "-f", ADDRESS[player], "-t"],
            input=message.as_bytes(),
            check=True,
        )
    else:
        with smtplib.SMTP("127.0.0.1", 25, local_hostname=f"laptop.{PLAYER_DOMAIN}") as client:
            client.send_message(message, from_addr=ADDRESS[player], to_addrs=[to])
    return message


VERP = re.compile(rf"<pbm\+bounce-[a-z2-7]{{24}}@{re.escape(SERVER_DOMAIN)}>")


def assert_sane(reply, player, answer=False):
    """What a player's mail program sees: from the server, to them, delivered once by
    Postfix, signed by the milter for the From domain. A direct `answer` to a command comes
    from the null sender (RFC 3834), every other mail from its own VERP bounce address."""
    assert parseaddr(reply["From"])[1] == SERVER
    assert parseaddr(reply["To"])[1] == ADDRESS[player]
    assert reply.get_all("Delivered-To") == [ADDRESS[player]]
    [return_path] = reply.get_all("Return-Path")
    assert return_path == "<>" if answer else VERP.fullmatch(return_path), return_path
    assert_dkim_signed(reply)
    assert any("(Postfix" in received for received in reply.get_all("Received"))
    assert reply["Message-ID"].endswith(f"@{SERVER_DOMAIN}>")
    assert parsedate_to_datetime(reply["Date"]) is not None
    assert reply["Auto-Submitted"] in ("auto-replied", "auto-generated")
    text = reply.get_body(preferencelist=("plain",))
    assert text.get_content_charset() == "utf-8"
    if reply.is_multipart():
        # A board mail with its picture (new accounts have [mail] html on): it arrives
        # through Postfix whole, the PNG intact beside the text every reader gets.
        assert reply.get_content_type() == "multipart/alternative"
        assert next(reply.iter_parts()) is text
        [picture] = [part for part in reply.walk() if part.get_content_type() == "image/png"]
        assert picture.get_payload(decode=True).startswith(b"\x89PNG\r\n\x1a\n")
    else:
        assert reply.get_content_type() == "text/plain"


def assert_dkim_signed(mail):
    """The signature holds for the key the milter was given, and its d= is the From domain
    (DMARC alignment); the verifier gets the record from us, not from DNS."""
    raw = mail.raw_bytes
    assert dkim.verify(raw, dnsfunc=lambda name, timeout=5: dkim_public_record()), raw[:2000]
    tags = dict(
        part.strip().split("=", 1) for part in str(mail["DKIM-Signature"]).split(";") if "=" in part
    )
    assert "".join(tags["d"].split()) == parseaddr(mail["From"])[1].rpartition("@")[2]
    assert "".join(tags["s"].split()) == "pbm"


def text_of(mail) -> str:
    """What a plain-text reader sees of a mail, with or without its HTML part."""
    return mail.get_body(preferencelist=("plain",)).get_content()


def log_lines(*fragments):
    return [line for line in MAILLOG.read_text().splitlines() if all(f in line for f in fragments)]


def queue_is_empty():
    return "Mail queue is empty" in run("postqueue", "-p").stdout


class DatabaseLock:
    """An open write transaction on the server's database, held by the pbm user."""

    def __init__(self, journal):
        self.journal = journal

    def __enter__(self):
        self.holder = subprocess.Popen(
            [
                "runuser",
                "-u",
                "pbm",
                "--",
                str(INSTALL_DIR / ".venv" / "bin" / "python"),
                "-c",
                "import sqlite3, sys\n"
                "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
                "db.execute('BEGIN IMMEDIATE')\n"
                "print('locked', flush=True)\n"
                "sys.stdin.read()\n",
                str(PBM_HOME / "pbm.db"),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.running = self.journal.add("stop process", self.holder.pid)
        assert self.holder.stdout.readline().strip() == "locked"
        return self

    def __exit__(self, *exc):
        self.holder.stdin.close()
        self.holder.wait(timeout=30)
        self.journal.discard(self.running)


def play_game(journal, mailboxes, board, deferral_fragments):
    """alice challenges bob and wins in nine moves; at BUSY_PLY the database is held locked,
    so the delivery must be deferred (the log line holds `deferral_fragments`), and then,
    once the lock is gone and the queue flushed, carried out exactly once."""
    subject_of_game = f"KnightPanic Board {board}: alice vs bob"
    send("alice", "knightpanic challenge alice bob")
    got = mailboxes.take({"alice": 1, "bob": 1})
    for player, side in zip(PLAYERS, ("White (o)", "Black (x)")):
        [mail] = got[player]
        assert mail["Subject"] == subject_of_game
        assert f"You are {side}." in text_of(mail)
        assert_sane(mail, player)
    latest = {player: got[player][0] for player in PLAYERS}

    for ply, move in enumerate(MOVES, start=1):
        mover, waiting = ("alice", "bob") if ply % 2 else ("bob", "alice")
        subject = f"knightpanic move {board} {mover} {PASSWORDS[mover]} {move}#{ply}"
        if ply in REPLY_PLIES:
            # Through Postfix to pbm+<token>@: the envelope recipient carries the token.
            reply_to = parseaddr(latest[mover]["Reply-To"])[1]
            assert reply_to.startswith("pbm+") and reply_to.endswith(f"@{SERVER_DOMAIN}")
            send(mover, f"Re: {subject_of_game}", body=f"{move}\nply {ply}", to=reply_to)
        elif ply == BUSY_PLY:
            deferred_before = len(log_lines(*deferral_fragments))
            with DatabaseLock(journal):
                send(mover, subject, body=f"ply {ply}")
                wait_for(
                    lambda before=deferred_before: len(log_lines(*deferral_fragments)) > before,
                    "Postfix to defer the mail while the database is locked",
                )
                assert not queue_is_empty()
                assert mailboxes.unseen("alice") == [] and mailboxes.unseen("bob") == []
            run("postqueue", "-f")
        else:
            send(mover, subject, body=f"ply {ply}")
        got = mailboxes.take({"alice": 1, "bob": 1})
        for player in PLAYERS:
            [mail] = got[player]
            latest[player] = mail
            assert_sane(mail, player)
            body = text_of(mail)
            assert f"{mover} writes:\nply {ply}" in body
            assert mail["Subject"] == subject_of_game
            if ply < len(MOVES):
                assert f"It is {waiting}'s turn." in body
            else:
                assert "Game won by alice." in body


def pbm_check():
    """The README's check before the first mail (from the hardening branch)."""
    return as_pbm(str(INSTALL_DIR / ".venv" / "bin" / "pbm"), "check")


def test_pbm_check_passes_on_the_fresh_install(mail_host):
    result = pbm_check()
    assert result.returncode == 0, result.stdout + result.stderr
    assert PBM_HOME.stat().st_mode & 0o777 == 0o700


def test_a_whole_game_through_the_pipe_transport(mail_host, mailboxes):
    for player in PLAYERS:
        message = send(player, f"signup {player} {PASSWORDS[player]}")
        got = mailboxes.take({player: 1})
        [reply] = got[player]
        assert reply["Subject"] == f"Account {player} created"
        assert reply["In-Reply-To"] == message["Message-ID"]
        assert PASSWORDS[player] not in text_of(reply)
        assert_sane(reply, player)  # account mail, to the account's addresses: VERP
    play_game(mail_host, mailboxes, 101, ("to=<pbm@", "relay=pbm,", "status=deferred"))
    wait_for(queue_is_empty, "an empty mail queue")


TRANSPORT = "/etc/postfix/transport"


def route_server_to(line: str):
    """Put `line` in place of the server's route in the transport map, as an operator
    switching between the README's ways would, and tell Postfix."""
    routes = [
        (INSTALL_DIR / "deploy" / name).read_text() for name in ("transport", "transport.serve")
    ]
    with open(TRANSPORT, encoding="utf-8") as current:
        text = current.read()
    for route in routes:
        text = text.replace(route, "")
    with open(TRANSPORT, "w", encoding="utf-8") as changed:
        changed.write(text + line)
    run("postmap", TRANSPORT)
    run("postfix", "reload")


@pytest.fixture
def pbm_serve(mail_host):
    """The server's address routed to `pbm serve`, started the way the systemd unit says."""
    route_server_to((INSTALL_DIR / "deploy" / "transport.serve").read_text())

    unit = {}
    for line in (INSTALL_DIR / "deploy" / "pbm-serve.service").read_text().splitlines():
        key, _, value = line.partition("=")
        unit.setdefault(key, []).append(value)
    [user], [group] = unit["User"], unit["Group"]
    [exec_start] = unit["ExecStart"]
    # setpriv execs (runuser would stay in between): SIGTERM reaches pbm serve as systemd's would.
    server = subprocess.Popen(
        [
            "setpriv",
            f"--reuid={user}",
            f"--regid={group}",
            "--init-groups",
            "--reset-env",
            "env",
            *unit["Environment"],
            *shlex.split(exec_start),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    running = mail_host.add("stop process", server.pid)
    assert "listening on 127.0.0.1:2525" in server.stdout.readline()
    yield server
    server.terminate()
    server.wait(timeout=60)
    mail_host.discard(running)
    assert server.returncode == 0, server.stdout.read()


def test_the_same_game_through_pbm_serve_as_the_relay_target(mail_host, pbm_serve, mailboxes):
    play_game(
        mail_host,
        mailboxes,
        102,
        ("to=<pbm@", "relay=127.0.0.1[127.0.0.1]:2525", "status=deferred", " 451 "),
    )
    wait_for(queue_is_empty, "an empty mail queue")


@pytest.mark.parametrize("pipe", ["~pbm/.forward", "alias map owned by pbm"])
def test_the_pipes_of_the_pbm_user_work_without_a_transport(mail_host, mailboxes, pipe):
    """The README's alternatives to the transport: Postfix's local delivery runs
    ~pbm/.forward, or a pipe in an alias map, as the pbm user."""
    if pipe == "~pbm/.forward":
        made = [PBM_HOME / ".forward"]
        made[0].write_text((INSTALL_DIR / "deploy" / "forward").read_text())
        run("chown", "pbm:pbm", str(made[0]))
    else:
        made = [PBM_HOME / "aliases", PBM_HOME / "aliases.db"]
        made[0].write_text((INSTALL_DIR / "deploy" / "aliases").read_text())
        run("chown", "pbm:pbm", str(made[0]))
        run("runuser", "-u", "pbm", "--", "postalias", str(made[0]))
        maps = run("postconf", "-h", "alias_maps").stdout.strip()
        run("postconf", "-e", f"alias_maps = {maps}, hash:{made[0]}")
    route_server_to("")
    try:
        command = send("alice", "knightpanic show 102")
        [reply] = mailboxes.take({"alice": 1})["alice"]
        assert_sane(reply, "alice", answer=True)
        assert reply["In-Reply-To"] == command["Message-ID"]
        assert "102" in reply["Subject"] and "Game won by alice." in text_of(reply)

        # The reply can arrive before the command has exited and Postfix has logged it.
        def delivered():
            return log_lines("to=<pbm@", "relay=local", "status=sent (delivered to command:")

        wait_for(
            lambda: len(delivered()) == (1 if pipe == "~pbm/.forward" else 2),
            "Postfix to log the delivery to the pipe",
        )
    finally:
        if pipe != "~pbm/.forward":
            run("postconf", "-e", "alias_maps =")
        route_server_to((INSTALL_DIR / "deploy" / "transport").read_text())
        for path in made:
            path.unlink()
    wait_for(queue_is_empty, "an empty mail queue")


def test_the_pipe_hands_its_mail_to_a_running_pbm_serve(mail_host, pbm_serve, mailboxes):
    """The README's pipe transport with `pbm serve` running for the same home: Postfix runs
    mail_handler.py as pbm, which hands the mail to the server over $PBM_HOME/serve.sock,
    and the server runs its command (its own count at the stop says so)."""
    socket_path = PBM_HOME / "serve.sock"
    assert oct(socket_path.stat().st_mode & 0o777) == "0o600"
    assert socket_path.owner() == "pbm"
    route_server_to((INSTALL_DIR / "deploy" / "transport").read_text())
    command = send("alice", "knightpanic show 102")
    [reply] = mailboxes.take({"alice": 1})["alice"]
    assert reply["In-Reply-To"] == command["Message-ID"]
    assert "102" in reply["Subject"]
    # The reply can arrive before the command has exited and Postfix has logged it.
    wait_for(lambda: log_lines("to=<pbm@", "relay=pbm,", "status=sent"), "the pipe's delivery")
    pbm_serve.terminate()
    assert pbm_serve.wait(timeout=60) == 0
    counts = [
        line
        for line in (PBM_HOME / "log" / "pbm.log").read_text().splitlines()
        if f" {pbm_serve.pid} pbm.serve INFO writer: " in line
    ]
    assert counts and "writer: 1 commands in 1 groups" in counts[-1], counts
    assert not socket_path.exists()
    wait_for(queue_is_empty, "an empty mail queue")


def test_the_cron_lines_install_and_run_as_pbm(mail_host):
    crontab = INSTALL_DIR / "deploy" / "crontab"
    run("crontab", "-u", "pbm", str(crontab))
    mail_host.add("run", "crontab", "-u", "pbm", "-r")
    assert run("crontab", "-u", "pbm", "-l").stdout == crontab.read_text()
    for line in crontab.read_text().splitlines():
        command = line.split(None, 5)[5]
        result = run("runuser", "-u", "pbm", "--", "sh", "-c", command, check=False)
        assert result.returncode == 0, f"{command}\n{result.stdout}{result.stderr}"


@pytest.mark.parametrize(
    "breakage",
    [
        "wrong owner",
        "unwritable home",
        "missing database",
        "unparsable pbm.ini",
        "bad value in pbm.ini",
    ],
)
def test_pbm_check_names_what_the_operator_broke(mail_host, breakage):
    database, ini = PBM_HOME / "pbm.db", PBM_HOME / "pbm.ini"
    saved_ini = ini.read_text()
    try:
        if breakage == "wrong owner":
            run("chown", "root:root", str(database))
        elif breakage == "unwritable home":
            PBM_HOME.chmod(0o555)
        elif breakage == "missing database":
            database.rename(PBM_HOME / "pbm.db.away")
        elif breakage == "unparsable pbm.ini":
            ini.write_text(saved_ini + "\n[limits\nmax_message_bytes 1000\n")
        else:
            ini.write_text(saved_ini + "\n[limits]\nmax_message_bytes = lots\n")
        result = pbm_check()
        assert result.returncode != 0
        report = (result.stdout + result.stderr).strip()
        assert report
        assert str(PBM_HOME) in report or "pbm.ini" in report or "pbm.db" in report
    finally:
        if (PBM_HOME / "pbm.db.away").exists():
            (PBM_HOME / "pbm.db.away").rename(database)
        PBM_HOME.chmod(0o700)
        run("chown", "pbm:pbm", str(database))
        ini.write_text(saved_ini)
    assert pbm_check().returncode == 0


def test_postfix_ends_with_an_empty_queue_and_a_clean_log(mailboxes):
    assert queue_is_empty()
    outbox = as_pbm(str(INSTALL_DIR / ".venv" / "bin" / "pbm"), "outbox", "list")
    assert outbox.stdout.splitlines()[0] == (
        "The delivery queue is empty: no mail is waiting to be sent or has failed."
    )
    warnings = [
        line
        for line in MAILLOG.read_text().splitlines()
        if any(word in line for word in ("warning:", "error:", "fatal:", "panic:"))
    ]
    assert warnings == []
    # Signup, then per board the challenge and nine moves, then the three shows of board 102
    # through pipes: everything exactly once.
    assert all(not mailboxes.unseen(p) for p in PLAYERS)
    assert mailboxes.total == {"alice": 1 + 10 + 10 + 2 + 1, "bob": 1 + 10 + 10}
    assert len(log_lines("relay=pbm,", "status=sent")) == 2 + 10 + 1
