"""The command line (docs/spec/server.md §2.5 and §3.10), through click's CliRunner."""

import os
import stat

import pytest
from click.testing import CliRunner

from pbm.cli import cli


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    result = CliRunner().invoke(cli, ["--home", str(home), "init"])
    assert result.exit_code == 0, result.output
    return home


def pbm(home, *words, input=None):
    return CliRunner().invoke(cli, ["--home", str(home), *words], input=input)


def test_init_creates_the_home(home):
    assert (home / "pbm.db").exists()
    assert "[server]" in (home / "pbm.ini").read_text()
    key = home / "secret.key"
    assert len(key.read_bytes()) == 32
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    for sub in ("tmp", "new", "cur"):
        assert (home / "outbox" / sub).is_dir()
    before = key.read_bytes()
    result = CliRunner().invoke(cli, ["--home", str(home), "init"])
    assert result.exit_code == 0 and "0 migrations applied" in result.output
    assert key.read_bytes() == before


def test_migrate_list(home):
    result = pbm(home, "migrate", "--list")
    assert result.exit_code == 0
    assert "applied  pbm: m001_core" in result.output
    assert "pending" not in result.output


def test_operator_replies_are_printed_and_exit_zero(home):
    result = pbm(home, "help", "games")
    assert result.exit_code == 0
    assert result.output.startswith("Games on this server")
    assert "knightpanic   KnightPanic, 2 players" in result.output


def test_refused_commands_exit_one_with_the_reason(home):
    result = pbm(home, "knightpanic", "show", "101")
    assert result.exit_code == 1
    assert "101 (not found)" in result.output


def test_options_reach_the_grammar(home):
    assert pbm(home, "signup", "alice", "secret", "alice@example.org").exit_code == 0
    assert pbm(home, "signup", "bob", "secret", "bob@example.org").exit_code == 0
    result = pbm(home, "knightpanic", "challenge", "alice", "bob", "-size=6", "--nagtime=3")
    assert result.exit_code == 0, result.output
    shown = pbm(home, "knightpanic", "show", "101")
    assert "Options: -size=6" in shown.output
    assert "Nag time........ 3 days" in shown.output
    assert "  11   x x x x x x   11" in shown.output


def test_from_acts_like_a_mail_and_queues_the_reply(home):
    result = pbm(home, "--from", "player@example.org", "help")
    assert result.exit_code == 0
    assert result.stdout == ""
    [path] = (home / "outbox" / "new").iterdir()
    text = path.read_text()
    assert "To: player@example.org" in text and "Subject: Help commands" in text


def test_body_from_stdin_becomes_the_comment(home):
    for userid in ("alice", "bob"):
        pbm(home, "signup", userid, "secret", f"{userid}@example.org")
    result = pbm(
        home,
        "--body",
        "-",
        "knightpanic",
        "challenge",
        "alice",
        "bob",
        input="Have fun!\n-- \nsig\n",
    )
    assert result.exit_code == 0
    assert "Challenger writes:\nHave fun!" in pbm(home, "knightpanic", "show", "101").output


def test_headers_print_the_whole_message(home):
    result = pbm(home, "--headers", "help", "tutorial")
    assert "Subject: Help tutorial" in result.output
    assert "Auto-Submitted: auto-replied" in result.output


def test_no_database_is_a_transient_failure(tmp_path):
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "none"), "help"])
    assert result.exit_code == 75
    assert "pbm init" in result.output


def test_no_words_is_a_usage_error(home):
    assert pbm(home).exit_code == 2


def test_plugins_lists_the_games(home):
    result = pbm(home, "plugins")
    assert result.exit_code == 0
    assert "knightpanic     KnightPanic" in result.output


def test_outbox_list_flush_and_retry(home):
    pbm(home, "--from", "a@example.org", "help")
    listing = pbm(home, "outbox", "list", "--all")
    assert "sent" in listing.output and "a@example.org" in listing.output
    # The queue is empty while the Maildir holds the delivered mail: the listing says both.
    assert pbm(home, "outbox", "list").output == (
        "The delivery queue is empty: no mail is waiting to be sent or has failed.\n"
        f"Delivered mail is in the Maildir {home / 'outbox' / 'new'} (1 message; pbm only "
        "writes there, your mail reader or MTA takes them away).\n"
    )
    assert "0 sent" in pbm(home, "outbox", "flush").output
    result = pbm(home, "outbox", "retry", "1")
    assert result.exit_code == 1 and "No queued or failed message 1" in result.output
