"""mail_handler.py hands its mail to a running `pbm serve` (pbm/handoff.py, issue 31): the
same answers as a mail handled in the pipe's own process, none of pbm loaded there, and a
mail the server cannot take now, or a server gone mid-mail, is left to the MTA to retry.
Real RFC 822 mail through mail_handler.py, a real `pbm serve`."""

import os
import signal
import socket
import stat
import threading

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from pbm.cli import cli
from pbm.handoff import ENVELOPE_VARIABLES, SOCKET_NAME, read_environment
from pbm.homelock import no_mail_handled
from pbm.testing.mail import command_mail
from tests.conftest import GENEROUS_LIMITS, start_serve
from tests.mailpipe import inbox, modules_loaded_by, pipe
from tests.replying import reply_mail


@pytest.fixture
def served(project_env, challenged_home):
    """(home, env) of Knight Panic board 101 with `pbm serve` running for the home."""
    process, _ = start_serve(project_env, challenged_home)
    yield challenged_home, project_env
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 0
    assert not (challenged_home / SOCKET_NAME).exists()


def test_the_pipe_hands_its_move_to_serve_and_loads_nothing_of_pbm(served):
    home, env = served
    assert stat.S_IMODE((home / SOCKET_NAME).stat().st_mode) == 0o600
    seen = set()
    inbox(home, seen)
    raw = command_mail("alice@example.org", "knightpanic move 101 alice secret c1-e5", "by hand")
    modules = modules_loaded_by({**env, "SENDER": "alice@example.org"}, raw)
    assert "socket" in modules
    assert not [m for m in modules if m == "pbm" or m.startswith(("pbm.", "argon2", "jinja2"))]
    answers = inbox(home, seen)
    assert sorted(answers) == ["alice@example.org", "bob@example.org"]
    assert "alice writes:\nby hand" in answers["bob@example.org"][0].get_content()


def test_a_reply_handed_over_keeps_its_envelope_recipient(served):
    """$ORIGINAL_RECIPIENT carries the reply token: the server reads it from the frame."""
    home, env = served
    seen = set()
    [board] = inbox(home, seen)["alice@example.org"][-1:]
    raw = reply_mail(board, "alice@example.org", "c1-e5", "bottom")
    token_address = str(board["Reply-To"])
    done = pipe({**env, "ORIGINAL_RECIPIENT": token_address}, raw, "alice@example.org")
    assert done.returncode == 0, done.stderr
    answers = inbox(home, seen)
    assert "It is bob's turn." in answers["bob@example.org"][0].get_content()


def test_a_mail_serve_cannot_take_now_is_left_to_retry_with_its_cause(served):
    home, env = served
    seen = set()
    inbox(home, seen)
    raw = command_mail("alice@example.org", "knightpanic move 101 alice secret c1-e5")
    with no_mail_handled(home, wait_seconds=0):  # as `pbm restore` holds the home
        done = pipe(env, raw, "alice@example.org")
    assert done.returncode == 75
    assert b"pbm: try again later: a restore is under way" in done.stderr
    assert not [m for m in inbox(home, seen).values() if "Board 101" in m[0]["Subject"]]
    retried = pipe(env, raw, "alice@example.org")
    assert retried.returncode == 0, retried.stderr
    assert sorted(inbox(home, seen)) == ["alice@example.org", "bob@example.org"]


def test_a_mail_too_large_gets_the_same_answer_handed_over_as_handled_here(
    project_env, challenged_home
):
    """The server reads the size as the pipe does, and answers alike."""
    ini = challenged_home / "pbm.ini"
    ini.write_text(ini.read_text().replace("[limits]\n", "[limits]\nmax_message_bytes = 20000\n"))
    subject, body = "knightpanic move 101 alice secret c1-e5", "x" * 50000
    seen = set()
    inbox(challenged_home, seen)
    answers = []
    for handed_over in (False, True):
        process = start_serve(project_env, challenged_home)[0] if handed_over else None
        try:
            raw = command_mail("alice@example.org", subject, body)  # a new one: answered
            done = pipe(project_env, raw, "alice@example.org")
        finally:
            if process is not None:
                process.send_signal(signal.SIGTERM)
                assert process.wait(timeout=60) == 0
        assert done.returncode == 0, done.stderr
        [answer] = inbox(challenged_home, seen)["alice@example.org"]
        answers.append((answer["Subject"], answer.get_content()))
    assert answers[0] == answers[1]
    assert "too large" in answers[0][1]


def test_a_socket_left_by_a_killed_serve_leaves_the_mail_to_the_pipe(project_env, challenged_home):
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(challenged_home / SOCKET_NAME))
    stale.close()  # the file stays, nobody listens: as after a SIGKILL
    seen = set()
    inbox(challenged_home, seen)
    raw = command_mail("alice@example.org", "knightpanic move 101 alice secret c1-e5")
    done = pipe(project_env, raw, "alice@example.org")
    assert done.returncode == 0, done.stderr
    assert sorted(inbox(challenged_home, seen)) == ["alice@example.org", "bob@example.org"]


def test_a_serve_gone_mid_mail_leaves_it_to_retry(project_env, challenged_home):
    """A server that takes the mail and closes without an answer (killed while it ran the
    command, say): the pipe cannot tell whether it was run, so the MTA retries it."""
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(challenged_home / SOCKET_NAME))
    listener.listen()
    taken = []

    def take_and_vanish():
        connection, _ = listener.accept()
        with connection, connection.makefile("rb") as stream:
            taken.append(read_environment(stream))

    thread = threading.Thread(target=take_and_vanish)
    thread.start()
    raw = command_mail("alice@example.org", "knightpanic move 101 alice secret c1-e5")
    try:
        done = pipe(project_env, raw, "alice@example.org")
    finally:
        thread.join(timeout=60)
        listener.close()
    assert taken == [{"SENDER": "alice@example.org"}]
    assert done.returncode == 75
    assert b"pbm: try again later: pbm serve did not answer" in done.stderr


envelope_value = st.binary(max_size=300).filter(lambda value: b"\0" not in value)


@given(st.dictionaries(st.sampled_from(ENVELOPE_VARIABLES + ("PBM_NOW", "HOME")), envelope_value))
def test_the_frame_carries_the_envelope_variables_and_no_other(values):
    """mail_handler.py's block, read back: each envelope variable as os.environ would
    read it, any other name dropped."""
    import io

    block = b"".join(name.encode() + b"=" + value + b"\0" for name, value in values.items())
    stream = io.BytesIO(b"%d\n" % len(block) + block + b"the mail")
    expected = {n: os.fsdecode(v) for n, v in values.items() if n in ENVELOPE_VARIABLES}
    assert read_environment(stream) == expected
    assert stream.read() == b"the mail"


@pytest.mark.parametrize("frame", [b"", b"x\n", b"-1\n", b"70000\n", b"10\nshort"])
def test_a_frame_that_is_not_one_is_refused(frame):
    import io

    with pytest.raises(ValueError):
        read_environment(io.BytesIO(frame))


def test_a_home_too_deep_for_a_unix_socket_gets_no_handoff_and_the_log_says_so(
    project_env, tmp_path
):
    """AF_UNIX takes at most 107 bytes of path: pbm serve still serves SMTP, opens no
    socket, says why in its log, and the pipe handles its mail itself."""
    home = tmp_path / ("deep" * 20) / "home"
    assert len(os.fsencode(home / SOCKET_NAME)) > 107
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS)
    env = {**project_env, "PBM_HOME": str(home)}
    process, _ = start_serve(env, home)
    try:
        assert not (home / SOCKET_NAME).exists()
        raw = command_mail("alice@example.org", "help")
        done = pipe(env, raw, "alice@example.org")
        assert done.returncode == 0, done.stderr
        assert list(inbox(home, set())) == ["alice@example.org"]
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    log = (home / "log" / "pbm.log").read_text()
    assert "no handoff from mail_handler.py" in log and "too long for a Unix socket" in log
