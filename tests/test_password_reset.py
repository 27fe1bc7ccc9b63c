"""Password reset by mail: `forgot` and `reset` (docs/spec/server.md §3.2.3)."""

import logging
import re

from pbm.commands.recovery import code_digest
from pbm.store import Store
from tests.conftest import body_of
from tests.mailpipe import command_mail

CODE_RE = re.compile(r"Your reset code is: (\S+)")


def code_in(mail) -> str:
    return CODE_RE.search(body_of(mail)).group(1)


def ask_code(harness, userid="alice", sender="stranger@example.net") -> str:
    harness.new_mails()
    harness.ok(f"forgot {userid}", sender=sender)
    [mail] = harness.new_mails("alice@example.org")
    return code_in(mail)


def test_forgot_mails_a_code_to_the_registered_addresses_only(harness):
    harness.signup("alice")
    harness.ok("add alice secret alice2@example.org")
    harness.new_mails()
    harness.ok("forgot alice", sender="stranger@example.net")
    mails = harness.new_mails()
    to_owner = [m for m in mails if "alice" in str(m["To"])]
    to_sender = [m for m in mails if m["To"] == "stranger@example.net"]
    assert len(to_owner) == 1 and len(to_sender) == 1
    assert to_owner[0]["To"] == "alice@example.org, alice2@example.org"
    code = code_in(to_owner[0])
    assert len(code) == 12
    assert f"reset alice {code} NEWPASSWORD" in body_of(to_owner[0]), "what to send, exactly"
    assert code not in to_sender[0].as_string()


def test_the_sender_learns_nothing_about_whether_the_userid_exists(harness):
    harness.signup("alice")
    harness.new_mails()
    harness.ok("forgot alice", sender="stranger@example.net")
    [known] = harness.new_mails("stranger@example.net")
    harness.ok("forgot alicf", sender="stranger@example.net")
    [unknown] = harness.new_mails("stranger@example.net")
    assert known["Subject"].replace("alice", "X") == unknown["Subject"].replace("alicf", "X")
    assert body_of(known).replace("alice", "X") == body_of(unknown).replace("alicf", "X")
    assert harness.new_mails() == [], "nobody else got mail for the unknown userid"


def test_reset_sets_the_password_once(harness):
    harness.signup("alice")
    code = ask_code(harness)
    harness.ok(f"reset alice {code} n3wpass", sender="stranger@example.net")
    mails = harness.new_mails()
    assert {m["Subject"] for m in mails} == {"Password changed for alice"}
    assert all(code not in m.as_string() and "n3wpass" not in m.as_string() for m in mails)
    assert "Invalid password" in harness.refused("vacation alice secret")
    harness.ok("vacation alice n3wpass")
    error = harness.refused(f"reset alice {code} other12", sender="stranger@example.net")
    assert 'Invalid or expired reset code for "alice"' in error
    assert code not in error and "other12" not in error, "the code is masked like a password"


def test_a_code_expires_after_an_hour(harness, clock):
    clock("2026-03-01T10:00:00")
    harness.signup("alice")
    code = ask_code(harness)
    clock("2026-03-01T11:00:01")
    assert "Invalid or expired reset code" in harness.refused(f"reset alice {code} n3wpass")
    harness.ok("vacation alice secret")


def test_a_new_request_leaves_the_pending_code_valid(harness, clock):
    # Issue 25.6: anyone may send `forgot alice`; it must not void the code alice holds.
    # Changed from "a new code replaces the old one".
    harness.signup("alice")
    clock("2026-03-01T10:00:00")
    first = ask_code(harness)
    clock("2026-03-01T10:16:00")
    second = ask_code(harness)
    assert first != second
    harness.ok(f"reset alice {first} n3wpass")
    error = harness.refused(f"reset alice {second} other123")
    assert "Invalid or expired reset code" in error, "a reset ends every pending code"
    harness.ok("vacation alice n3wpass")


def test_only_a_digest_of_the_code_is_stored_and_nothing_is_logged(harness, caplog):
    harness.signup("alice")
    with caplog.at_level(logging.DEBUG):
        code = ask_code(harness)
        harness.refused("reset alice WRONGWRONG12 n3wpass")
    store = Store.open(harness.home / "pbm.db")
    try:
        dump = "\n".join(store.conn.iterdump())
    finally:
        store.close()
    assert code not in dump
    assert code_digest("alice", code) in dump
    assert code not in caplog.text and "WRONGWRONG12" not in caplog.text


def test_wrong_codes_are_limited_like_password_guesses(harness):
    harness.configure("[limits]\nfailed_logins_per_hour = 3\n")
    harness.signup("alice")
    code = ask_code(harness)
    for guess in ("AAAAAAAAAAAA", "BBBBBBBBBBBB", "CCCCCCCCCCCC", "DDDDDDDDDDDD"):
        harness.refused(f"reset alice {guess} n3wpass", sender="guesser@example.net")
    error = harness.refused(f"reset alice {code} n3wpass", sender="guesser@example.net")
    assert "Too many wrong reset codes or passwords for alice" in error
    harness.ok(f"reset alice {code} n3wpass", sender="alice@example.org")


def test_reset_mails_and_requests_are_capped(harness, clock):
    # Changed for issue 25.6: a window of 15 minutes between reset mails comes first.
    harness.configure("[limits]\nreset_mails_per_account_per_day = 2\nreset_requests_per_day = 3\n")
    harness.signup("alice")
    harness.new_mails()
    for minute, sender in (
        ("00", "a@example.net"),
        ("16", "b@example.net"),
        ("32", "c@example.net"),
    ):
        clock(f"2026-03-01T10:{minute}:00")
        harness.ok("forgot alice", sender=sender)
    owner = harness.new_mails("alice@example.org")
    assert len(owner) == 2, "a third mail in a day is not sent at others' request"
    for _ in range(2):
        harness.ok("forgot bob", sender="a@example.net")
    assert "Too many password reset requests from a@example.net today" in harness.refused(
        "forgot carol", sender="a@example.net"
    )


def test_a_reset_by_mail_masks_the_code_in_the_quoted_error(harness):
    harness.signup("alice")
    harness.new_mails()
    raw = command_mail("stranger@example.net", "reset alice ZZZZZZZZZZZZ n3wpass")
    outcome = harness.deliver(raw)
    assert outcome.consumed
    [error] = harness.new_mails("stranger@example.net")
    text = error.as_string()
    assert "Invalid or expired reset code" in body_of(error)
    assert "ZZZZZZZZZZZZ" not in text and "n3wpass" not in text


def test_signup_and_password_change_mails_point_to_forgot(harness):
    harness.signup("alice")
    [created] = harness.new_mails("alice@example.org")
    assert 'send "forgot alice"' in " ".join(body_of(created).split())
    harness.ok("change password alice secret n3wpass")
    [changed] = harness.new_mails("alice@example.org")
    assert 'send "forgot alice"' in " ".join(body_of(changed).split())
