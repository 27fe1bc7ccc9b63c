"""Issue 25.7: a password is never echoed. The password of the command in hand, and that of
any line that reads as a whole command (the grammar reads it, no argon2 call per word), are
masked in every answer, quote, comment and log line, on every path (docs/security.md)."""

import logging
import sqlite3
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm.grammar import specs_for
from pbm.security import MASK
from tests.conftest import ROOT, STRESS_FACTOR, Harness
from tests.replying import STYLES, reply_mail
from tests.test_guessing import count_argon2

ALICE, BOB = "alice@example.org", "bob@example.org"
PASSWORD = "papaya9"
ISSUE_LINE = f"knightpanic move 101 bob {PASSWORD} c1-a5"


def everything_written(home) -> str:
    """Every mail in the outbox and every row of the database but the users' hashes."""
    new = home / "outbox" / "new"
    mails = "\n".join(p.read_bytes().decode("utf-8", "replace") for p in sorted(new.iterdir()))
    with sqlite3.connect(home / "pbm.db") as conn:
        rows = "\n".join(
            line for line in conn.iterdump() if not line.startswith('INSERT INTO "users"')
        )
    return mails + rows


def latest_token_mail(harness, address):
    return [m for m in harness.mails(address) if m["Reply-To"] is not None][-1]


def reply(harness, address, answer, sender=None, style="top", comment=""):
    original = latest_token_mail(harness, address)
    raw = reply_mail(original, sender or address, answer, style, comment)
    return harness.deliver(raw, envelope_recipients=[str(original["Reply-To"])]).result


@pytest.fixture
def board(harness):
    harness.signup("alice")
    harness.ok(f"signup bob {PASSWORD} bob@example.org", sender=BOB)
    harness.ok("knightpanic challenge bob alice", sender=BOB)
    return harness


@pytest.mark.parametrize("style", STYLES)
def test_the_issues_reply_with_the_whole_classic_command(board, style, caplog):
    """Before: `Invalid move "knightpanicmove106bobpapaya9c1-a5"`, and the command quoted
    back as the Subject: the password mailed twice. Now the line runs as the command it is
    (issue 27 item 4), and its password is in no mail, row or log line."""
    harness = board
    with caplog.at_level(logging.DEBUG):
        result = reply(harness, BOB, ISSUE_LINE, style=style)
    assert result.ok, harness.last_error_text(result)
    assert {mail.userid for _, mail in result.queued} == {"alice", "bob"}, "the board mails"
    assert PASSWORD not in everything_written(harness.home)
    assert PASSWORD not in caplog.text
    # Refused (not bob's move any more), the line is quoted with its password masked.
    again = reply(harness, BOB, ISSUE_LINE, style=style)
    assert not again.ok
    [(_, answer)] = again.queued
    assert f"knightpanic move 101 bob {MASK} c1-a5" in answer.body, "the quote is masked"
    assert PASSWORD not in everything_written(harness.home)


def test_the_issues_reply_through_the_mail_pipe(project_env, tmp_path):
    home = tmp_path / "home"
    harness = Harness(home)
    harness.signup("alice")
    harness.ok(f"signup bob {PASSWORD} bob@example.org", sender=BOB)
    harness.ok("knightpanic challenge bob alice", sender=BOB)
    original = latest_token_mail(harness, BOB)
    env = dict(project_env, ORIGINAL_RECIPIENT=str(original["Reply-To"]))
    run = subprocess.run(
        [sys.executable, str(ROOT / "mail_handler.py")],
        input=reply_mail(original, BOB, ISSUE_LINE),
        env=env,
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr.decode()
    to_alice = harness.mails(ALICE)[-1]
    assert "1 c1-a5" in to_alice.get_content() and to_alice["Reply-To"] is not None
    assert PASSWORD not in everything_written(home)
    assert PASSWORD not in (home / "log" / "pbm.log").read_text()


def test_a_chat_by_reply_that_pastes_a_command_reaches_the_opponent_masked(board):
    harness = board
    harness.new_mails()
    result = reply(harness, BOB, f"chat please ignore: {ISSUE_LINE}")
    assert result.ok, harness.last_error_text(result)
    [to_alice] = harness.new_mails(ALICE)
    assert f"knightpanic move 101 bob {MASK} c1-a5" in to_alice.get_content()
    assert PASSWORD not in everything_written(harness.home)


def test_a_comment_pasting_another_accounts_command_is_masked(board):
    """A command in the body for a password other than the command's own: its password
    is masked in the comment stored and mailed to the opponent, and in the quote."""
    harness = board
    harness.ok("change password alice secret Sesame42", sender=ALICE)
    harness.ok(
        "knightpanic move 101 bob papaya9 c1-e5",
        sender=BOB,
        body="for alice, in case: knightpanic accept 101 alice Sesame42\ngood luck",
    )
    error = harness.refused(
        "knightpanic move 999 alice Sesame42 a1-c5",
        sender=ALICE,
        body="my old try: knightpanic move 101 bob papaya9 c1-e5",
    )
    assert "not found" in error
    written = everything_written(harness.home)
    assert PASSWORD not in written and "Sesame42" not in written


def test_multiple_lines_mask_every_pasted_password(board):
    harness = board
    harness.run(
        "multiple",
        sender=BOB,
        body=f"{ISSUE_LINE}\nknightpanic show 101\nknightpanic mvoe 101 bob {PASSWORD}\n"
        + "\n".join(["help"] * 60),
    )
    assert PASSWORD not in everything_written(harness.home)


def test_an_internal_error_logs_and_mails_no_pasted_password(board, monkeypatch, caplog):
    harness = board
    harness.configure("[server]\noperator_address = op@example.org\n")

    def broken(ctx):
        raise RuntimeError(f"a bug that shows the mail's text: {ISSUE_LINE}")

    [spec] = [s for s in specs_for("game", "move") if s.word == "move"]
    monkeypatch.setattr(spec, "handler", broken)
    with caplog.at_level(logging.DEBUG):
        result = reply(harness, BOB, "c1-e5", comment=f"oops, pasted: {ISSUE_LINE}")
    assert not result.ok
    assert "RuntimeError" in caplog.text and PASSWORD not in caplog.text
    assert PASSWORD not in everything_written(harness.home)
    [alert] = harness.mails("op@example.org")
    assert "RuntimeError" in alert.get_content()


def test_pasted_lines_cost_no_argon2(board, monkeypatch):
    harness = board
    counter = count_argon2(monkeypatch)
    body = "\n".join([ISSUE_LINE.replace("c1-a5", f"c1-a{n}") for n in range(20)])
    harness.run(f"knightpanic move 101 bob {PASSWORD} c1-e5", sender=BOB, body=body)
    assert counter.verified == 1, "the command's own password only"


# -- generated variants ----------------------------------------------------------------

PASSWORDS = st.text(
    st.sampled_from("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!$%&*+.^_~"),
    min_size=8,
    max_size=24,
).map(lambda tail: "Zq" + tail)
COMMANDS = st.sampled_from(
    [
        "knightpanic move 101 bob {} c1-e5",
        "KnightPanic move 101 BOB {} a1-c5",
        "knightpanic mvoe 101 bob {} zz",
        "knightpanic chat 101 bob {} hello there",
        "knightpanic queue 101 bob {} c1-e5",
        "knightpanic accept 101 bob {}",
        "knightpanic resign 101 bob {}",
        "knightpanic show 101 bob {}",
        "vacation bob {} on",
        "change password bob {} Zz-other-1",
        "message bob {} alice",
        "digest bob {} off",
    ]
)
WORDS = st.lists(
    st.sampled_from(["gg", "move", "alice", "c1-e5", "pw:", "101", "Re:", "> old", "thanks"]),
    max_size=5,
).map(" ".join)


@settings(
    max_examples=10 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    password=PASSWORDS,
    command=COMMANDS,
    before=WORDS,
    after=WORDS,
    path=st.sampled_from(["first line", "reply comment", "subject body", "multiple"]),
)
def test_generated_pasted_commands_never_leave(
    tmp_path_factory, password, command, before, after, path
):
    """Hypothesis: a whole command with a random password, pasted with random words around
    it on any path: the password is in no outgoing mail, no stored row and no log line."""
    home = tmp_path_factory.mktemp("echo") / "home"
    harness = Harness(home)
    harness.signup("alice")
    harness.ok(f"signup bob {password} bob@example.org", sender=BOB)
    harness.ok("knightpanic challenge bob alice", sender=BOB)
    line = " ".join(filter(None, [before, command.format(password), after]))
    logger = logging.getLogger("pbm")
    records = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    logger.addHandler(handler)
    try:
        if path == "first line":
            reply(harness, BOB, line)
        elif path == "reply comment":
            reply(harness, BOB, "c1-e5", comment=f"{before}\n{line}\n{after}")
        elif path == "subject body":
            harness.run("knightpanic move 101 bob wrongpw c1-e5", sender=BOB, body=line)
            harness.run("knightpanic move 101 bob wrongpw c1-e5", sender=ALICE, body=line)
        else:
            harness.run("multiple", sender=BOB, body=f"{line}\nhelp\n{line}")
        harness.run("knightpanic move 101 alice secret g7-e3", sender=ALICE)
    finally:
        logger.removeHandler(handler)
    assert password not in everything_written(home)
    assert all(password not in record for record in records)
