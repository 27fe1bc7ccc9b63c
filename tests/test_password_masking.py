"""Issue 13.4: a password is never relayed, stored or quoted, wherever the player pastes it."""

import sqlite3

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm.security import MASK
from tests.conftest import STRESS_FACTOR, Harness


def everything_written(harness) -> str:
    """Every mail in the outbox and every row of the database, as text."""
    mails = "\n".join(p.read_bytes().decode("utf-8", "replace") for p in harness.outbox_files())
    with sqlite3.connect(harness.home / "pbm.db") as conn:
        rows = "\n".join(
            line for line in conn.iterdump() if not line.startswith('INSERT INTO "users"')
        )
    return mails + rows


def test_a_pasted_command_does_not_send_the_password_to_the_opponent(harness):
    harness.signup("alice", password="Tr0ub4dor")
    harness.signup("bob")
    harness.challenge("knightpanic challenge alice bob")
    harness.new_mails()
    body = "My move:\nknightpanic move 101 alice Tr0ub4dor c1-e5\nGood luck!"
    harness.ok("knightpanic move 101 alice Tr0ub4dor c1-e5", sender="alice@example.org", body=body)
    [to_bob] = harness.new_mails("bob@example.org")
    text = to_bob.get_content()
    assert "Tr0ub4dor" not in text
    assert f"knightpanic move 101 alice {MASK} c1-e5" in text and "Good luck!" in text
    harness.ok("knightpanic move 101 bob secret g7-e3", sender="bob@example.org")
    assert "Tr0ub4dor" not in everything_written(harness), "nor in later board mails or the log"


def test_chat_and_message_bodies_are_masked(harness):
    harness.signup("alice", password="Tr0ub4dor")
    harness.signup("bob")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic chat 101 alice Tr0ub4dor", body="oops: alice Tr0ub4dor")
    harness.ok("message alice Tr0ub4dor bob", body="password is Tr0ub4dor, right?")
    harness.ok("knightpanic queue 101 alice Tr0ub4dor c1-e5", body="queued with Tr0ub4dor")
    written = everything_written(harness)
    assert "Tr0ub4dor" not in written and f"oops: alice {MASK}" in written


def test_a_swapped_userid_and_password_is_masked_in_the_quote(harness):
    harness.signup("alice", password="Tr0ub4dor")
    harness.signup("bob")
    harness.challenge("knightpanic challenge alice bob")
    message = harness.refused(
        "knightpanic move 101 Tr0ub4dor alice c1-e5",
        body="knightpanic move 101 Tr0ub4dor alice c1-e5",
    )
    assert "Invalid userid entered" in message
    assert "Tr0ub4dor" not in everything_written(harness)


def test_an_unknown_command_hides_its_words_in_the_quoted_body_too(harness):
    message = harness.refused("nonsense alice word Tr0ub4dor", body="nonsense alice word Tr0ub4dor")
    assert "Unknown command" in message and "Tr0ub4dor" not in message


# -- generated variants ----------------------------------------------------------------

passwords = st.text(
    st.sampled_from("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!$%&*+.^_~"),
    min_size=8,
    max_size=24,
).map(lambda tail: "Zq" + tail)
fillers = st.lists(
    st.sampled_from(["gg", "move", "alice", "c1-e5", "\n", "> quoted", "pw:", " ", "101", ":"]),
    max_size=6,
).map(" ".join)


@settings(
    max_examples=8 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    password=passwords,
    before=fillers,
    after=fillers,
    swapped=st.booleans(),
    command=st.sampled_from(["move", "chat", "queue"]),
)
def test_generated_pastes_never_reach_a_mail_or_the_database(
    tmp_path_factory, password, before, after, swapped, command
):
    harness = Harness(tmp_path_factory.mktemp("home"))
    harness.signup("alice", password=password)
    harness.signup("bob")
    harness.challenge("knightpanic challenge alice bob")
    words = {
        "move": "move 101 {} {} c1-e5",
        "chat": "chat 101 {} {}",
        "queue": "queue 101 {} {} c1-e5",
    }[command]
    pair = ("alice", password) if not swapped else (password, "alice")
    text = "knightpanic " + words.format(*pair)
    body = f"{before}{text}{after}\n{password}\n{before}{password.lower()}"
    harness.run(text, sender="alice@example.org", body=body)
    harness.run("knightpanic move 101 bob secret g7-e3", sender="bob@example.org")
    assert password not in everything_written(harness)
