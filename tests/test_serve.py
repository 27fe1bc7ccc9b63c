"""`pbm serve`: mail over SMTP, answered exactly as through mail_handler.py."""

import email
import email.policy
import os
import signal
import smtplib
import socket
import subprocess
import sys
import time
from email.message import EmailMessage
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbm.cli import cli
from tests.conftest import GENEROUS_LIMITS, ROOT, free_port, start_serve

PBM = Path(sys.executable).parent / "pbm"


@pytest.fixture
def service(project_env, tmp_path):
    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS + "[limits]\nmax_message_bytes = 50000\n")
    for userid in ("alice", "bob"):
        runner.invoke(
            cli,
            ["--home", str(home), "--from", f"{userid}@example.org", "signup", userid, "secret"],
        )
    process, port = start_serve(project_env, home)
    yield home, port
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0


def command(subject, sender="alice@example.org", to="pbm@localhost", body="hello"):
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = to
    mail["Subject"] = subject
    mail.set_content(body)
    return mail


def outbox(home):
    folder = home / "outbox" / "new"
    return [
        email.message_from_bytes(p.read_bytes(), policy=email.policy.default)
        for p in sorted(folder.iterdir())
    ]


def test_moves_over_smtp_are_answered(service):
    home, port = service
    before = len(outbox(home))
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
        client.send_message(command("knightpanic challenge alice bob"))
        client.send_message(command("knightpanic move 101 alice secret c1-e5", body="over SMTP"))
    mails = outbox(home)[before:]
    subjects = sorted(m["Subject"] for m in mails)
    assert subjects == [
        "KnightPanic Board 101: alice vs bob",
        "KnightPanic Board 101: alice vs bob",
        "KnightPanic Board 101: alice vs bob",
        "KnightPanic Board 101: alice vs bob",
    ]
    assert "alice writes:\nover SMTP" in mails[-1].get_content()


def test_plus_tokens_are_ours_other_recipients_are_refused(service):
    home, port = service
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
        refused = client.send_message(command("help", to="pbm+abc123@localhost"))
        assert refused == {}
        with pytest.raises(smtplib.SMTPRecipientsRefused) as error:
            client.send_message(command("help", to="someone@else.example"))
        assert error.value.recipients["someone@else.example"][0] == 550


def test_a_reply_to_a_plus_token_address_plays_the_move(service):
    """docs/spec/server.md §11.3: the RCPT's +token is the reply's authority."""
    from tests.replying import reply_mail

    home, port = service
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
        client.send_message(command("knightpanic challenge alice bob"))
    [original] = [m for m in outbox(home) if m["To"] == "alice@example.org" and m["Reply-To"]]
    target = str(original["Reply-To"])
    raw = reply_mail(original, "alice@example.org", "a1-c5", "bottom", comment="by reply")
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
        assert client.sendmail("alice@example.org", [target], raw) == {}
    answer = outbox(home)[-1]
    assert "alice writes:\nby reply" in answer.get_content()
    assert "It is bob's turn." in answer.get_content()


def test_too_large_is_refused_with_552(service):
    home, port = service
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
        with pytest.raises(smtplib.SMTPResponseException) as error:
            client.send_message(command("help", body="x" * 60000))
    assert error.value.smtp_code == 552


def test_serve_refuses_to_start_without_a_database(project_env, tmp_path):
    result = subprocess.run(
        [str(PBM), "--home", str(tmp_path / "none"), "serve", "--port", str(free_port())],
        env=project_env,
        cwd=ROOT,
        capture_output=True,
        timeout=30,
    )
    assert result.returncode != 0 and b"pbm init" in result.stderr


def test_a_stop_while_a_mail_is_read_still_runs_its_command_once(project_env, tmp_path):
    """SIGTERM while a reader checks a mail's password: the listener stops, and pbm serve
    exits (it once waited for ever on such a command, 3 runs in 10), having run the command
    or not. The client had no answer and sends again: the move is played once, however many
    times it was cut short."""
    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS)
    for userid in ("alice", "bob"):
        sender = ["--from", f"{userid}@example.org"]
        runner.invoke(cli, ["--home", str(home), *sender, "signup", userid, "secret"])
    challenge = ["--home", str(home), "--from", "alice@example.org"]
    assert (
        runner.invoke(cli, [*challenge, "knightpanic", "challenge", "alice", "bob"]).exit_code == 0
    )
    before = len(outbox(home))
    move = command("knightpanic move 101 alice secret c1-e5")
    move["Message-ID"] = "<cut-short@example.org>"
    data = move.as_bytes().replace(b"\n", b"\r\n")
    for pause in (0.0, 0.01, 0.02, 0.04):
        process, port = start_serve(project_env, home)
        with socket.create_connection(("127.0.0.1", port), timeout=60) as client:
            client.recv(1024)  # the greeting: the session is on
            client.sendall(b"EHLO client.example\r\nMAIL FROM:<alice@example.org>\r\n")
            client.sendall(b"RCPT TO:<pbm@localhost>\r\nDATA\r\n")
            time.sleep(0.05)  # DATA's 354 before the message
            client.sendall(data + b"\r\n.\r\n")
            time.sleep(pause)
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=60) == 0
    process, port = start_serve(project_env, home)
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
            assert client.sendmail("alice@example.org", ["pbm@localhost"], data) == {}
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    boards = [m for m in outbox(home)[before:] if m["Subject"].startswith("KnightPanic Board 101")]
    assert len(boards) == 2, [m["Subject"] for m in outbox(home)[before:]]


def reader_processes(pid: int) -> list[int]:
    return [
        int(child)
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text().split()
    ]


def test_a_reader_process_that_dies_costs_its_mail_a_retry_and_is_replaced(project_env, tmp_path):
    """pbm serve reads mail in processes of its own (issue 31). One killed while it reads
    leaves its mail unanswered with 451, for the client to send again; a new reader reads
    the next one. The readers end with the server."""
    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS)
    signup = ["--home", str(home), "--from", "alice@example.org", "signup", "alice", "secret"]
    assert runner.invoke(cli, signup).exit_code == 0
    process, port = start_serve(project_env, home)
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
            client.send_message(command("help"))
            client.send_message(command("help", body="again"))
            readers = reader_processes(process.pid)
            assert len(readers) == 1, "started at the first mail, and a sender keeps its reader"
            os.kill(readers[0], signal.SIGKILL)
            with pytest.raises(smtplib.SMTPDataError) as refused:
                client.send_message(command("help", body="the retried one"))
            assert refused.value.smtp_code == 451
            before = len(outbox(home))
            client.send_message(command("help", body="the retried one"))
            assert len(outbox(home)) == before + 1
            [replaced] = reader_processes(process.pid)
            assert replaced not in readers
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    assert "a reader process ended" in (home / "log" / "pbm.log").read_text()


def test_the_reader_processes_end_with_a_server_that_is_killed(project_env, tmp_path):
    """A kill that ends pbm serve (a lost host) ends its readers at once too: left to find
    the end of their stream, they closed the database after the kill, and SQLite removed
    its files under whoever was already looking at the home (the restore drill)."""
    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS)
    process, port = start_serve(project_env, home)
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
            for userid in ("alice", "bob", "carol", "dave"):
                client.send_message(command("help", sender=f"{userid}@example.org"))
        readers = reader_processes(process.pid)
        assert readers
    finally:
        process.kill()
        process.wait(timeout=60)
    for pid in readers:
        deadline = time.monotonic() + 30
        while Path(f"/proc/{pid}").exists() and "Z" not in reader_state(pid):
            assert time.monotonic() < deadline, f"reader {pid} outlived its server"
            time.sleep(0.01)


# A server that starts a reader which waits on nothing the server holds, so that only the
# parent-death signal can end it when the server is killed.
SLEEPING_READER = """
import os, subprocess, sys
reader = subprocess.Popen([sys.executable, "-c",
    "import os, sys, time; from pbm.readerpool import die_with; "
    "die_with(int(sys.argv[1])); print(os.getpid(), flush=True); time.sleep(120)",
    str(os.getpid())], stdout=subprocess.PIPE, text=True)
print(reader.stdout.readline().strip(), flush=True)
reader.wait()
"""


def test_a_reader_gets_the_kill_of_its_server():
    server = subprocess.Popen(
        [sys.executable, "-c", SLEEPING_READER], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    reader = int(server.stdout.readline())
    server.kill()
    server.wait(timeout=60)
    deadline = time.monotonic() + 30
    while Path(f"/proc/{reader}").exists() and reader_state(reader) != "Z":
        assert time.monotonic() < deadline, "the reader outlived its server by 30 s"
        time.sleep(0.01)


def reader_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "Z"


# A child floods its parent with SIGTERM while the parent waits in short slices, so that
# signals land at every point of the wait, and inside the handling of one another.
STOP_SIGNAL_FLOOD = """
import os, signal
from pbm.serve import StopSignals

stop = StopSignals()
parent = os.getpid()
child = os.fork()
if child == 0:
    for _ in range(20000):
        os.kill(parent, signal.SIGTERM)
    os._exit(0)
waits = stopped = 0
while os.waitpid(child, os.WNOHANG)[0] == 0:
    waits += 1
    stopped += stop.wait(0.00001)
stop.close()
print(waits, stopped)
"""


def test_stop_signals_at_any_moment_never_deadlock_the_wait(project_env):
    """A handler that set a threading.Event deadlocked when the signal came while the
    main thread held the Event's own lock: a pbm serve in CI never exited on SIGTERM."""
    done = subprocess.run(
        [sys.executable, "-c", STOP_SIGNAL_FLOOD],
        env=project_env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    waits, stopped = map(int, done.stdout.split())
    assert stopped >= 1 and waits >= stopped, done.stdout
