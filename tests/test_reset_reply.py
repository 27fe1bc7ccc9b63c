"""Password reset by reply (docs/spec/server.md §3.2.3): the reset mail's Reply-To carries a
reset token, and a reply from a registered address whose first line is the new password sets
it as `reset userid code password` would. A reset token never moves on a board, and a board's
reply token never resets a password."""

import email
import email.policy
import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbm.grants import Refused, _reset_reply
from pbm.replies import TOKEN_PASSWORD, _mac, _reset_mac, split_token, token_of_recipient
from pbm.request import Request
from pbm.store import Store
from tests.conftest import body_of
from tests.replying import STYLES, reply_mail
from tests.test_replies import board_state, latest_reply_to

ALICE, ALICE2, MALLORY = "alice@example.org", "alice2@example.org", "mallory@example.org"


def reset_mail(harness, userid="alice", sender="stranger@example.net"):
    harness.new_mails()
    harness.ok(f"forgot {userid}", sender=sender)
    [mail] = harness.new_mails(ALICE)
    return mail


def reply(harness, original, sender, answer, style="top"):
    raw = reply_mail(original, sender, answer, style)
    return harness.deliver(raw, envelope_recipients=[str(original["Reply-To"])]).result


def errors(result) -> str:
    return "\n".join(m.body for _, m in result.queued if m.kind == "error")


def password_is(harness, password) -> bool:
    return harness.run(f"vacation alice {password}", sender=ALICE).ok


def with_reply_to(original, token):
    forged = email.message_from_bytes(original.as_bytes(), policy=email.policy.default)
    forged.replace_header("Reply-To", f"pbm+{token}@localhost")
    return forged


def token_in(mail) -> str:
    return str(mail["Reply-To"]).split("+")[1].split("@")[0]


def test_the_reset_mail_says_how_to_reply(harness):
    harness.signup("alice")
    mail = reset_mail(harness)
    assert mail["Reply-To"] is not None
    assert token_of_recipient(harness.config, str(mail["Reply-To"])) is not None
    text = " ".join(body_of(mail).split())
    assert "reply to this mail with your new password on the first line" in text.lower()


@pytest.mark.parametrize("style", STYLES)
def test_a_reply_with_the_new_password_sets_it_once(harness, style):
    harness.signup("alice")
    original = reset_mail(harness)
    result = reply(harness, original, ALICE, "n3wpass", style)
    assert result.ok, errors(result)
    assert {m.subject for _, m in result.queued} == {"Password changed for alice"}
    assert password_is(harness, "n3wpass") and not password_is(harness, "secret")
    again = reply(harness, original, ALICE, "other123", style)
    assert not again.ok and "not valid" in errors(again)
    assert password_is(harness, "n3wpass")


def test_a_reply_from_any_registered_address_works(harness):
    harness.signup("alice")
    harness.ok(f"add alice secret {ALICE2}", sender=ALICE)
    original = reset_mail(harness)
    assert reply(harness, original, ALICE2, "n3wpass").ok
    assert password_is(harness, "n3wpass")


def test_a_reply_from_another_address_is_refused_and_counted(harness):
    harness.configure("[limits]\nfailed_logins_per_hour = 2\n")
    harness.signup("alice")
    original = reset_mail(harness)
    for _ in range(4):
        result = reply(harness, original, MALLORY, "h4ck3d")
        assert not result.ok and [m.to for _, m in result.queued] == [[MALLORY]]
    assert "Too many wrong reset codes or passwords" in errors(result)
    assert password_is(harness, "secret")
    assert reply(harness, original, ALICE, "n3wpass").ok, "the owner's reply still works"


def test_an_expired_reset_reply_is_refused(harness, clock):
    clock("2026-03-01T10:00:00")
    harness.signup("alice")
    original = reset_mail(harness)
    clock("2026-03-01T11:00:01")
    result = reply(harness, original, ALICE, "n3wpass")
    assert not result.ok and "Invalid or expired reset reply" in errors(result)
    assert password_is(harness, "secret")


def test_a_newer_reset_mail_leaves_the_older_reply_valid(harness, clock):
    # Issue 25.6 (changed from "a newer reset mail replaces the older reply"): a stranger's
    # `forgot` must not void the mail alice is answering; a reset ends both.
    harness.signup("alice")
    clock("2026-03-01T10:00:00")
    older = reset_mail(harness)
    clock("2026-03-01T10:16:00")
    newer = reset_mail(harness)
    assert reply(harness, older, ALICE, "n3wpass").ok
    assert not reply(harness, newer, ALICE, "other123").ok
    assert password_is(harness, "n3wpass")


def test_the_reset_code_and_the_reply_are_one_single_use(harness):
    harness.signup("alice")
    original = reset_mail(harness)
    code = body_of(original).split("Your reset code is: ")[1].split()[0]
    harness.ok(f"reset alice {code} n3wpass", sender=ALICE)
    assert not reply(harness, original, ALICE, "other123").ok
    assert password_is(harness, "n3wpass")


def test_a_board_token_never_resets_and_a_reset_token_never_moves(harness):
    harness.signup("alice", "bob")
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    board_mail = latest_reply_to(harness, ALICE)
    original = reset_mail(harness)
    key = harness.config.secret_key
    board_id, _ = split_token(token_in(board_mail))
    reset_id, _ = split_token(token_in(original))
    # The board mail's reply is a move, whatever it says: it sets no password.
    assert not reply(harness, board_mail, ALICE, "n3wpass").ok
    # A board token's id under a reset MAC, a reset token's id under a board MAC: both forged.
    for forged in (
        board_id + _reset_mac(key, board_id, "alice"),
        reset_id + _mac(key, reset_id, "knightpanic", 101, "alice", 1),
    ):
        result = reply(harness, with_reply_to(original, forged), ALICE, "a1-c5")
        assert not result.ok
    # A reply to the reset mail is a password, never a move.
    assert reply(harness, original, ALICE, "a1-c5").ok
    assert board_state(harness, "knightpanic", 101)[0].plies_made == 0
    assert password_is(harness, "a1-c5")


def test_a_reply_that_is_not_one_word_is_refused_without_echo(harness):
    harness.signup("alice")
    original = reset_mail(harness)
    for answer in ("zz9secret and more", ""):
        result = reply(harness, original, ALICE, answer)
        assert not result.ok and "on the first line of your reply" in errors(result)
        assert "zz9secret" not in "".join(m.body + m.subject for _, m in result.queued)
    result = reply(harness, original, ALICE, "zz9")
    assert not result.ok and "Passwords must be 4 to 64 characters" in errors(result)
    assert "zz9" not in errors(result).replace("Passwords must", "")
    assert reply(harness, original, ALICE, "n3wpass").ok, "a bad password does not use it up"


def test_the_new_password_is_in_no_mail_log_or_row(harness, caplog):
    harness.signup("alice")
    original = reset_mail(harness)
    with caplog.at_level(logging.DEBUG):
        assert not reply(harness, original, MALLORY, "M4ll0ry!pw").ok
        assert reply(harness, original, ALICE, "N3w!pass").ok
    for path in harness.outbox_files():
        text = path.read_text(errors="replace")
        assert "N3w!pass" not in text and "M4ll0ry!pw" not in text
    store = Store.open(harness.home / "pbm.db")
    try:
        dump = "\n".join(store.conn.iterdump())
    finally:
        store.close()
    assert "N3w!pass" not in dump and "M4ll0ry!pw" not in dump
    assert "N3w!pass" not in caplog.text and "M4ll0ry!pw" not in caplog.text


@given(st.text(max_size=200))
def test_any_reply_line_becomes_a_reset_of_the_tokens_user_or_a_refusal(line):
    """Whatever the first line of a reply to a reset mail says, it is refused or runs
    `reset` for the token's user, the line as the one new password: never anything else."""
    from pbm.grammar import GrammarError, parse
    from pbm.store.records import ResetCodeRecord

    row = ResetCodeRecord(1, "alice", "digest", "then", "later", "a" * 16)
    resolved = _reset_reply(Request(text=line, token="a" * 32), row, True)
    if isinstance(resolved, Refused):
        fixed = _reset_reply(Request(text="two words", token="a" * 32), row, True)
        assert resolved == fixed, "the line is not echoed"
        return
    assert resolved.grant.userid == "alice" and resolved.grant.token_id == "a" * 16
    assert resolved.request.body == "" and resolved.request.body_lines == []
    try:
        parsed = parse(resolved.command, {})
    except GrammarError:
        return
    assert parsed.spec.word == "reset"
    assert parsed.args[:2] == ["alice", TOKEN_PASSWORD] and len(parsed.args) == 3
    assert parsed.args[2] in parsed.secrets, "the new password is masked wherever quoted"
