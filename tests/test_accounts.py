"""Accounts: signup, add, change password, change address, signoff (docs/spec/server.md §3.2)."""

import re

import pytest

from tests.conftest import body_of


def test_signup_creates_the_account_and_mails_it(harness):
    harness.ok("signup Alice s3cret alice@example.org", sender="alice@example.org")
    [mail] = harness.mails()
    assert mail["Subject"] == "Account alice created"
    assert mail["To"] == "alice@example.org"
    assert "help tutorial" in body_of(mail)
    assert "s3cret" not in mail.as_string()


def test_signup_without_address_uses_the_sender(harness):
    harness.ok("signup alice s3cret", sender="a@example.org")
    [mail] = harness.mails()
    assert mail["To"] == "a@example.org"


def test_signup_copies_a_sender_who_is_not_among_the_addresses(harness):
    harness.ok("signup alice s3cret alice@example.org", sender="friend@example.org")
    recipients = sorted(str(m["To"]) for m in harness.mails())
    assert recipients == ["alice@example.org", "friend@example.org"]


@pytest.mark.parametrize(
    "command,message",
    [
        ("signup a pw12", "Userids must be 2 to 16 characters"),
        ("signup 1abc pw12", "Userids must be 2 to 16 characters"),
        ("signup abcdefghijklmnopq pw12", "Userids must be 2 to 16 characters"),
        ("signup show pw12", '"show" is a reserved word and cannot be a userid'),
        ("signup knightpanic pw12", "is a reserved word"),
        ("signup active pw12", "is a reserved word"),
        ("signup alice abc", "Passwords must be 4 to 64 characters"),
        ("signup alice " + "p" * 65, "Passwords must be 4 to 64 characters"),
        ("signup alice pw12 not-an-address", 'Invalid address "not-an-address"'),
        (
            "signup alice pw12 a@b.org b@b.org c@b.org d@b.org e@b.org f@b.org",
            "At most 5 addresses",
        ),
        ("signup alice", 'Syntax is "signup userid password [address...]"'),
    ],
)
def test_signup_errors(harness, command, message):
    assert message in harness.refused(command)


def test_a_userid_is_never_reused(harness):
    harness.signup("alice")
    assert 'Userid "alice" is already taken' in harness.refused("signup ALICE other1")
    harness.ok("signoff alice secret")
    assert 'Userid "alice" is already taken' in harness.refused("signup alice other1")


def test_add_appends_addresses_and_tells_old_and_new(harness):
    harness.signup("alice")
    harness.new_mails()
    harness.ok("add alice secret second@example.org alice@example.org")
    [mail] = harness.new_mails()
    assert mail["Subject"] == "Account alice changed"
    assert "alice@example.org" in mail["To"] and "second@example.org" in mail["To"]
    assert "Added:     second@example.org" in body_of(mail)


def test_add_refuses_a_sixth_address(harness):
    harness.signup("alice")
    harness.ok("add alice secret b@x.org c@x.org d@x.org e@x.org")
    assert "At most 5 addresses per user" in harness.refused("add alice secret f@x.org")


def test_change_address_replaces_and_tells_both(harness):
    harness.signup("alice")
    harness.new_mails()
    harness.ok("change address alice secret new@example.org")
    [mail] = harness.new_mails()
    assert "alice@example.org" in mail["To"] and "new@example.org" in mail["To"]
    harness.ok("knightpanic games", sender="x@example.org")
    harness.signup("bob")
    harness.new_mails()
    harness.challenge("knightpanic challenge alice bob", by="bob")
    assert len(harness.new_mails("new@example.org")) == 1


def test_change_password(harness):
    harness.signup("alice")
    harness.new_mails()
    harness.ok("change password alice secret better1")
    [mail] = harness.new_mails()
    assert mail["Subject"] == "Password changed for alice"
    assert "better1" not in mail.as_string() and "secret" not in body_of(mail)
    assert "Invalid password entered" in harness.refused("add alice secret z@x.org")
    harness.ok("add alice better1 z@x.org")


@pytest.mark.parametrize(
    "command,message",
    [
        ("add nobody secret a@x.org", "Invalid userid entered"),
        ("add alice wrong a@x.org", "Invalid password entered"),
        ("change password alice wrong better1", "Invalid password entered"),
        ("change password alice secret no", "Passwords must be 4 to 64"),
        ("change colour alice secret", "Syntax is"),
        ("signoff alice", 'Syntax is "signoff userid password"'),
    ],
)
def test_account_errors(harness, command, message):
    harness.signup("alice")
    assert message in harness.refused(command)


def test_error_mails_mask_passwords(harness):
    harness.signup("alice")
    harness.new_mails()
    harness.refused("change password alice secret no", sender="alice@example.org")
    [mail] = harness.new_mails()
    text = mail.as_string()
    assert "Subject: change password alice ******** ********" in body_of(mail)
    assert "secret" not in text


def test_unparsed_commands_hide_everything_after_the_second_word(harness):
    harness.refused("knightpanic mvoo 101 alice secret a1-c5", sender="x@example.org")
    [mail] = harness.mails()
    assert "Subject: knightpanic mvoo ... ... ... ..." in body_of(mail)
    assert "secret" not in mail.as_string()


def test_signoff_deletes_and_forfeits_active_boards(harness):
    harness.signup("alice", "bob", "carol")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    harness.ok("knightpanic move 101 bob secret g7-e3")
    harness.challenge("knightpanic challenge carol alice")
    harness.new_mails()
    harness.ok("delete alice secret")
    mails = harness.new_mails()
    deleted = [m for m in mails if m["Subject"] == "Account alice deleted"]
    assert len(deleted) == 1 and deleted[0]["To"] == "alice@example.org"
    assert "KnightPanic board 101" in body_of(deleted[0])
    to_bob = [m for m in mails if m["To"] == "bob@example.org"]
    assert to_bob[0]["Subject"] == "KnightPanic Board 101: alice vs bob"
    assert "alice has left the server and forfeits." in body_of(to_bob[0])
    assert "Game won by bob." in body_of(to_bob[0])
    to_carol = [m for m in mails if m["To"] == "carol@example.org"]
    assert to_carol[0]["Subject"] == "KnightPanic board 102 has been removed"
    assert "Invalid userid entered" in harness.refused("add alice secret x@y.org")
    text = harness.ok("knightpanic show 101", sender=None).printed[0].body
    assert "Forfeit" in text


def test_multiple_runs_each_line_on_its_own(harness):
    harness.signup("alice", "bob")
    harness.new_mails()
    body = "\n".join(
        [
            "# my moves for today",
            "knightpanic challenge alice bob",
            "",
            "knightpanic move 101 alice secret c1-e5",
            "knightpanic move 101 alice secret a1-c5",
            "knightpanic move 101 bob secret g7-e3",
            "-- ",
            "knightpanic move 101 bob secret never-run",
        ]
    )
    result = harness.run("multiple", sender="alice@example.org", body=body)
    assert not result.ok
    subjects = [m["Subject"] for m in harness.new_mails("alice@example.org")]
    # The board mails as each line ran; the one answer (here one error) when all have.
    assert subjects == [
        "KnightPanic Board 101: alice vs bob",
        "KnightPanic Board 101: alice vs bob",
        "KnightPanic Board 101: alice vs bob",
        "KnightPanic Board 101: alice vs bob",
    ]
    text = harness.ok("knightpanic show 101", sender=None).printed[0].body
    assert "   1 c1-e5      2 g7-e3" in text and "writes:" not in text


def test_multiple_needs_lines_and_stops_at_the_limit(harness):
    assert "No commands found in the message body" in harness.refused("multiple", body="# none")
    harness.configure("[limits]\nmax_multiple_lines = 2\n")
    result = harness.run("multiple", body="help\nhelp games\nhelp tutorial")
    assert not result.ok
    [(_, answer)] = result.queued
    assert answer.subject == "Answers to your 3 commands"
    assert re.findall(r"^--- (.*) ---$", answer.body, re.M) == ["Help commands", "Help games"]
    assert "Only the first 2 commands were processed: lines 3 to 3" in answer.body


def test_a_misspelt_change_hides_every_word_after_the_second(harness):
    harness.signup("alice")
    harness.new_mails()
    message = harness.refused("change pasword alice secret N3wSecret", sender="x@example.org")
    assert 'Syntax is "change address userid password [address...]" or' in message
    [mail] = harness.new_mails()
    assert "Subject: change pasword ... ... ..." in body_of(mail)
    assert "secret" not in mail.as_string() and "N3wSecret" not in mail.as_string()


def test_deleting_an_account_with_several_seats_forfeits_each(harness):
    harness.signup("alice", "bob", "carol")
    harness.ok("tally challenge carol bob carol", sender=None)
    harness.ok("tally challenge alice bob alice -target=30", sender=None)
    harness.ok("tally move 102 alice secret 1")
    harness.challenge("tally challenge bob alice carol")
    for userid in ("bob", "alice", "carol"):
        harness.ok(f"tally move 103 {userid} secret 1")
    harness.ok("signoff carol secret")
    assert not harness.run("tally show 101", sender=None).ok, "carol's two seats withdrew"
    harness.ok("signoff alice secret")
    shown = harness.run("tally show 102", sender=None)
    assert not shown.ok, "both of alice's seats left board 102: it is removed"
    text = harness.ok("tally show 103", sender=None).printed[0].body
    assert "Forfeit" in text and "Game won by bob." in text


def test_the_password_change_mail_names_the_operator_to_write_to(harness):
    """Issue 16: "write to the operator" is no help without an address."""
    harness.configure("[server]\noperator_address = games-admin@example.org\n")
    harness.signup("alice")
    harness.new_mails()
    harness.ok("change password alice secret better1")
    [mail] = harness.new_mails()
    assert body_of(mail) == (
        "Password changed for alice.\n"
        "\n"
        "The new password is not repeated here.\n"
        "If you did not ask for this change, write to the operator of this server,\n"
        "games-admin@example.org, from one of the account's addresses.\n"
        "\n"
        "Should you forget your password, or find it changed without asking, send\n"
        '"forgot alice" from any address: a code to set a new one comes to\n'
        "this account's addresses.\n"
    )


def test_the_password_change_mail_without_an_operator_says_what_else_to_do(harness):
    """With no operator to write to, `forgot` (issue 19) is the way back into the account."""
    harness.signup("alice")
    harness.new_mails()
    harness.ok("change password alice secret better1")
    [mail] = harness.new_mails()
    assert body_of(mail) == (
        "Password changed for alice.\n"
        "\n"
        "The new password is not repeated here.\n"
        "\n"
        "Should you forget your password, or find it changed without asking, send\n"
        '"forgot alice" from any address: a code to set a new one comes to\n'
        "this account's addresses.\n"
    )
