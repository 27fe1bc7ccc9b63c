"""Mail in through mail_handler.py, run as the MTA would: real RFC 822 messages on stdin."""

import email
import email.policy
import re
import sqlite3
import subprocess
import sys

import pytest
from click.testing import CliRunner

from pbm.cli import cli
from pbm.htmltext import html_to_text
from pbm.ownwords import own_lines
from tests.conftest import ROOT
from tests.mailpipe import command_mail, modules_loaded_by, pipe
from tests.replying import reply_mail

FIXTURES = ROOT / "tests" / "mail"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


class Mailbox:
    def __init__(self, home):
        self.new = home / "outbox" / "new"
        self.seen = set()

    def fresh(self):
        messages = []
        for path in sorted(self.new.iterdir()):
            if path.name not in self.seen:
                self.seen.add(path.name)
                messages.append(
                    email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
                )
        return messages


@pytest.fixture
def server(project_env, tmp_path):
    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    for userid in ("alice", "bob"):
        result = runner.invoke(
            cli,
            ["--home", str(home), "--from", f"{userid}@example.org", "signup", userid, "secret"],
        )
        assert result.exit_code == 0
    box = Mailbox(home)
    box.fresh()
    return project_env, box


def test_a_game_opening_through_every_kind_of_mail(server):
    env, box = server

    assert pipe(env, fixture("signup_plain.eml")).returncode == 0
    [mail] = box.fresh()
    assert mail["Subject"] == "Account carol created" and mail["To"] == "carol@example.org"
    assert mail["In-Reply-To"] == "<signup-carol-1@example.org>"

    assert pipe(env, fixture("challenge_multipart.eml")).returncode == 0
    mails = box.fresh()
    assert {m["Subject"] for m in mails} == {"KnightPanic Board 101: alice vs bob"}
    body = mails[0].get_body(("plain",)).get_content()
    assert "Challenger writes:\nLet's play, Bob!" in body and "(html)" not in body

    assert pipe(env, fixture("move_html_only.eml")).returncode == 0
    mails = box.fresh()
    assert {m["Subject"] for m in mails} == {"KnightPanic Board 101: alice vs bob"}
    body = mails[0].get_body(("plain",)).get_content()
    assert "alice writes:\nYour turn, Bob & good luck\nSecond line\nThird line" in body
    assert "Earlier board text" not in body and "alert" not in body and "color" not in body

    assert pipe(env, fixture("move_quoted_printable.eml")).returncode == 0
    mails = box.fresh()
    assert sorted(m["To"] for m in mails) == ["alice@example.org", "bob@example.org"]
    body = mails[0].get_body(("plain",)).get_content()
    assert (
        "bob writes:\nSchöne Grüße — a very long line that goes on and on and on past the soft"
        in body
    )
    for line in body.split("\n"):
        assert len(line) <= 76

    assert pipe(env, fixture("reply_quoting_server_mail.eml")).returncode == 0
    mails = box.fresh()
    body = mails[0].get_body(("plain",)).get_content()
    assert "   3 a1-c5" in body
    assert "alice writes:\nTaking the flank.\n" in body and "wrote:" not in body

    assert pipe(env, fixture("reply_without_quote_marks.eml")).returncode == 0
    body = box.fresh()[0].get_body(("plain",)).get_content()
    assert "bob writes:\nHm.\n" in body


def test_errors_go_to_the_origin_never_to_reply_to(server):
    # The mail's From, not its Reply-To, is who sent it (docs/spec/server.md §4.2, issue 25).
    env, box = server
    raw = fixture("move_quoted_printable.eml")
    assert pipe(env, raw).returncode == 0
    [mail] = box.fresh()
    assert mail["To"] == "bob@example.org"
    assert mail["Subject"] == "KnightPanic error"
    assert "KnightPanic board 101 not found" in mail.get_body(("plain",)).get_content()
    assert "secret" not in mail.as_string()


@pytest.mark.parametrize(
    "name", ["autoreply.eml", "bounce.eml", "list_mail.eml", "own_mail_back.eml"]
)
def test_mail_that_must_get_no_answer(server, name):
    env, box = server
    result = pipe(env, fixture(name))
    assert result.returncode == 0
    assert box.fresh() == []


def test_null_envelope_sender_gets_no_answer(server):
    env, box = server
    assert pipe(env, fixture("signup_plain.eml"), sender="").returncode == 0
    assert box.fresh() == []


def test_a_message_id_seen_before_is_not_processed_twice(server):
    env, box = server
    assert pipe(env, fixture("challenge_multipart.eml")).returncode == 0
    assert len(box.fresh()) == 2
    assert pipe(env, fixture("challenge_multipart.eml")).returncode == 0
    assert box.fresh() == []
    result = CliRunner().invoke(cli, ["--home", env["PBM_HOME"], "knightpanic", "games"])
    assert "  101" in result.output and "  102" not in result.output


def test_a_message_without_id_is_keyed_by_its_bytes(server):
    env, box = server
    assert pipe(env, fixture("no_message_id.eml")).returncode == 0
    assert [m["Subject"] for m in box.fresh()] == ["Help games"]
    assert pipe(env, fixture("no_message_id.eml")).returncode == 0
    assert box.fresh() == []


def test_too_large_message_is_refused_without_running(server):
    env, box = server
    raw = fixture("signup_plain.eml") + b"x" * (1024 * 1024 + 10) + b"\n"
    assert pipe(env, raw).returncode == 0
    [mail] = box.fresh()
    assert mail["Subject"] == "PBM error"
    assert (
        "Message too large (limit 1048576 bytes); nothing was done"
        in mail.get_body(("plain",)).get_content()
    )
    assert "s3cret" not in mail.as_string()


def test_no_database_means_try_again_later(project_env):
    result = pipe(project_env, fixture("signup_plain.eml"))
    assert result.returncode == 75


def test_pending_migrations_mean_try_again_later(project_env, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    sqlite3.connect(home / "pbm.db").close()
    assert pipe(project_env, fixture("signup_plain.eml")).returncode == 75


# -- the pieces of the pipeline ----------------------------------------------------------


def test_own_lines_cuts_signatures_quotes_and_forwards():
    text = "Nice move.\n\n> quoted line\nStill mine.  \n-- \nAlice\nsecret sig"
    assert own_lines(text) == ["Nice move.", "", "Still mine."]
    assert own_lines("ok\n__________\nlegal notice") == ["ok"]
    assert own_lines("ok\n-----Original Message-----\nFrom: x") == ["ok"]
    assert own_lines("ok\nFrom: Bob\nSent: Monday\nSubject: x") == ["ok"]
    assert own_lines("From: me, with love\n\nreally") == ["From: me, with love", "", "really"]
    assert own_lines("ok\r\n" + "*" * 60 + "\r\nGame started") == ["ok"]
    assert own_lines("\n\n\nhello\n\n") == ["hello"]
    assert own_lines("ok\nA new KnightPanic board (101) has been started.") == ["ok"]


def test_html_to_text():
    html = "<p>One &lt;two&gt;</p><ul><li>a</li><li>b</li></ul><style>x{}</style>"
    assert [line for line in html_to_text(html).split("\n") if line] == ["One <two>", "a", "b"]


def test_a_multiple_mail_runs_the_good_lines_and_reports_the_bad(server):
    env, box = server
    assert pipe(env, fixture("multiple_mixed.eml")).returncode == 0
    to_alice = [m for m in box.fresh() if m["To"] == "alice@example.org"]
    # The board mails as the lines ran, then the one answer to the mail: both errors.
    assert [m["Subject"] for m in to_alice] == [
        "KnightPanic Board 101: alice vs bob",
        "KnightPanic Board 101: alice vs bob",
        "KnightPanic Board 101: alice vs bob",
        "Answers to your 5 commands",
    ]
    assert re.findall(r"^--- (.*) ---$", to_alice[-1].get_content(), re.M) == [
        "KnightPanic Board 101: alice vs bob",
        "KnightPanic error",
    ]
    assert pipe(env, fixture("multiple_mixed.eml")).returncode == 0
    assert box.fresh() == [], "a redelivered multiple mail runs no line twice"


def test_a_move_by_mail_never_imports_sqlite_utils(server):
    """sqlite-utils builds and migrates the schema only: importing it would cost the mail
    path more than a whole command (docs/performance.md)."""
    env, box = server
    assert pipe(env, fixture("challenge_multipart.eml")).returncode == 0
    box.fresh()
    probe = (
        "import runpy, sys\n"
        "try:\n"
        "    runpy.run_path('mail_handler.py', run_name='__main__')\n"
        "except SystemExit as done:\n"
        "    assert not done.code, done.code\n"
        "print(sorted(m for m in sys.modules if m.partition('.')[0] == 'sqlite_utils'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        input=fixture("move_html_only.eml"),
        env=env,
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().split() == ["[]"]
    assert {m["Subject"] for m in box.fresh()} == {"KnightPanic Board 101: alice vs bob"}


def test_each_header_is_parsed_once_and_read_as_policy_default_reads_it():
    import email
    import email.policy

    from pbm.mailin import READING

    raw = (
        b"From: =?utf-8?q?J=C3=B6rg?= <joerg@example.org>\r\n"
        b"Subject: lox move 101 joerg\r\n secret a1\r\n"
        b"Content-Type: text/plain; charset=utf-8\r\n\r\nbody\r\n"
    )
    ours = email.message_from_bytes(raw, policy=READING)
    theirs = email.message_from_bytes(raw, policy=email.policy.default)
    for name in ("From", "Subject", "Content-Type"):
        assert str(ours[name]) == str(theirs[name])
        assert type(ours[name]).__name__ == type(theirs[name]).__name__
        assert ours[name] is ours[name], "parsed again on the second look"
    assert ours["From"].addresses == theirs["From"].addresses
    assert ours.get_content() == theirs.get_content()


# Runs mail_handler.py as the MTA does and says, as it exits, which modules it loaded.
def test_a_move_mail_imports_no_robot_picture_or_web_code(project_env, challenged_home):
    """The pipe's start-up is paid per mail (docs/performance.md): a move for players who
    take text mail loads neither the robots and their search knowledge, nor the pictures
    and the types they are described with, nor the web view, nor what only HTML mail and `pbm restore --replica` use, nor the
    installed distributions' metadata once a mail has read the game's entry point."""
    for userid in ("alice", "bob"):
        result = CliRunner().invoke(
            cli, ["--home", str(challenged_home), "html", userid, "secret", "off"]
        )
        assert result.exit_code == 0, result.output
    box = Mailbox(challenged_home)
    # The first mail about a game reads the installed entry points; later ones keep them.
    first = pipe(project_env, command_mail("alice@example.org", "knightpanic show 101"))
    assert first.returncode == 0, first.stderr
    box.fresh()
    loaded = modules_loaded_by(
        project_env, command_mail("alice@example.org", "knightpanic move 101 alice secret c1-e5")
    )
    assert "games.knightpanic.engine" in loaded
    unwanted = ("pbm.robots", "pbm.pictures", "pbm.drawing_types", "pbm.web", "PIL", "waitress")
    unwanted += ("games.connection",)
    unwanted += ("html", "subprocess", "importlib.metadata")
    assert [m for m in loaded if m.startswith(unwanted) or m.endswith((".robot", ".solver"))] == []
    board_mails = {str(message["To"]): message for message in box.fresh()}
    assert {to: str(mail["Subject"]) for to, mail in board_mails.items()} == {
        "alice@example.org": "KnightPanic Board 101: alice vs bob",
        "bob@example.org": "KnightPanic Board 101: alice vs bob",
    }
    # A move by reply token checks no password, so it does not load argon2 either.
    to_bob = board_mails["bob@example.org"]
    env = dict(project_env, ORIGINAL_RECIPIENT=str(to_bob["Reply-To"]))
    loaded = modules_loaded_by(env, reply_mail(to_bob, "bob@example.org", "g7-e3"))
    assert "games.knightpanic.engine" in loaded
    assert [m for m in loaded if m.startswith(unwanted + ("argon2",))] == []
    assert "g7-e3" in str(box.fresh()[0].get_body(("plain",)).get_content())
