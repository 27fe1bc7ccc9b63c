"""Every mail about a board can be answered (issue 27 items 1-3, docs/spec/server.md §11.3):
errors and refusals to a player carry a token for the board as it is now; a reply that lost
its Reply-To finds its board by the Message-ID it answers; a stale reply says what happened."""

import email
import email.policy
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbm.grants import subject_is_ours
from tests.mailpipe import pipe
from tests.replying import STYLES, reply_mail
from tests.test_replies import board_state, latest_reply_to, send_reply

ALICE, BOB = "alice@example.org", "bob@example.org"


@pytest.fixture
def players(harness):
    harness.signup("alice", "bob", "mallory")
    return harness


def to_plain_address(raw: bytes, replace_references=None) -> bytes:
    """The reply as a client that ignores Reply-To sends it: to the server's own address.
    With `replace_references`, In-Reply-To and References name that id alone."""
    message = email.message_from_bytes(raw, policy=email.policy.default)
    message.replace_header("To", "pbm@localhost")
    if replace_references is not None:
        message.replace_header("In-Reply-To", replace_references)
        message.replace_header("References", replace_references)
    return message.as_bytes()


def test_an_error_about_a_board_can_itself_be_answered(players):
    """The issue's typo: `c1-c5`, then answering the error mail with `c1-a5`."""
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    result = send_reply(harness, latest_reply_to(harness, ALICE), ALICE, "c1-c5")
    assert not result.ok
    [(_, error)] = result.queued
    assert error.subject == "KnightPanic Board 101: alice vs bob", "it stays in the thread"
    assert "Reply-To" in error.headers and "You can answer this mail" in error.body
    error_mail = harness.mails(ALICE)[-1]
    assert error_mail["Reply-To"] == error.headers["Reply-To"]
    assert send_reply(harness, error_mail, ALICE, "c1-a5").ok
    assert board_state(harness, "knightpanic", 101)[0].plies_made == 1


def test_an_error_to_someone_not_playing_carries_no_token(players):
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    text = harness.refused(
        "knightpanic move 101 mallory secret c1-a5", sender="mallory@example.org"
    )
    assert "You are NOT playing this game" in text
    [error] = harness.mails("mallory@example.org")[-1:]
    assert error["Reply-To"] is None and "You can answer this mail" not in error.get_content()


def test_a_refused_empty_reply_stays_in_the_thread_and_can_be_answered(players):
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    result = send_reply(harness, latest_reply_to(harness, ALICE), ALICE, "")
    [(_, error)] = result.queued
    assert "Your reply is empty" in error.body
    assert error.subject == "KnightPanic Board 101: alice vs bob"
    assert send_reply(harness, harness.mails(ALICE)[-1], ALICE, "c1-a5").ok


def test_a_stale_reply_says_what_happened_and_can_be_answered(players):
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    assert send_reply(harness, latest_reply_to(harness, ALICE), ALICE, "c1-a5").ok
    first_to_bob = latest_reply_to(harness, BOB)
    assert send_reply(harness, first_to_bob, BOB, "a7-c3").ok
    assert send_reply(harness, latest_reply_to(harness, ALICE), ALICE, "g1-e5").ok
    result = send_reply(harness, first_to_bob, BOB, "c7-e5")
    [(_, error)] = result.queued
    said = " ".join(error.body.split())
    assert "Your reply answered the board mail sent for move #2" in said
    assert "moved on since: bob played a7-c3; alice played g1-e5" in said
    assert "Your move c7-e5 was not played" in said and "reply to it to play" in said
    result = send_reply(harness, harness.mails(BOB)[-1], BOB, "c3-a7")
    assert result.ok, harness.last_error_text(result)
    assert board_state(harness, "knightpanic", 101)[0].plies_made == 4


def test_a_reply_to_the_plain_address_finds_its_board_by_message_id(players):
    """Clients that ignore Reply-To, and forwards, send to the plain address: In-Reply-To
    names our mail, which carried the token."""
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    original = latest_reply_to(harness, ALICE)
    assert re.fullmatch(r"<[0-9a-f]{32}@localhost>", original["Message-ID"]), "unguessable"
    for style in ("top", "bottom", "outlook"):
        raw = to_plain_address(reply_mail(original, ALICE, "c1-a5", style))
        result = harness.deliver(raw).result
        assert result.ok, harness.last_error_text(result)
        assert board_state(harness, "knightpanic", 101)[0].plies_made == 1
        harness.ok("knightpanic undo 101 alice secret", sender=ALICE)
        harness.ok("knightpanic accept 101 bob secret", sender=BOB)
        original = latest_reply_to(harness, ALICE)


def test_a_plain_address_reply_through_the_pipe(project_env, challenged_home):
    """mail_handler.py with no recipient at all: the Message-ID alone finds the board."""
    env = dict(project_env)
    new = challenged_home / "outbox" / "new"
    mails = [
        email.message_from_bytes(p.read_bytes(), policy=email.policy.default)
        for p in sorted(new.iterdir())
    ]
    original = [m for m in mails if m["To"] == ALICE and m["Reply-To"] is not None][-1]
    run = pipe(env, to_plain_address(reply_mail(original, ALICE, "c1-a5")))
    assert run.returncode == 0, run.stderr.decode()
    latest = sorted(new.iterdir())[-1].read_text()
    assert "1 c1-a5" in latest


def test_only_the_players_confirmed_address_may_answer_by_message_id(players):
    harness = players
    harness.ok("add alice secret alice@work.example", sender=ALICE)
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    original = latest_reply_to(harness, ALICE)
    # From an address of hers that never proved itself: not taken as her reply.
    raw = to_plain_address(reply_mail(original, "alice@work.example", "c1-a5"))
    result = harness.deliver(raw).result
    assert not result.ok and board_state(harness, "knightpanic", 101)[0].plies_made == 0
    [(_, answer)] = result.queued
    assert "came to the plain address" in answer.body
    assert "KnightPanic Board 101 (alice to move): mailto:pbm+" in answer.body
    # From a stranger: nothing about anyone's boards.
    raw = to_plain_address(reply_mail(original, "mallory@example.org", "c1-a5"))
    result = harness.deliver(raw).result
    [(_, answer)] = result.queued
    assert "alice" not in answer.body and "mailto:" not in answer.body


def test_the_threads_root_message_id_never_counts(players):
    """References name the thread's root, `<game.board.userid@domain>`, which anyone can
    write: it is no Message-ID of a mail, so nothing is played; the sender's boards on move
    come back, each with its own reply address, and one sentence on how to reply."""
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    original = latest_reply_to(harness, ALICE)
    root = "<knightpanic.101.alice@localhost>"
    raw = to_plain_address(reply_mail(original, ALICE, "c1-a5"), replace_references=root)
    result = harness.deliver(raw).result
    assert not result.ok and board_state(harness, "knightpanic", 101)[0].plies_made == 0
    [(_, answer)] = result.queued
    [link] = re.findall(r"mailto:(pbm\+[a-z2-7]{32}@localhost)", answer.body)
    assert "Reply to the board mail again" in answer.body
    assert "********" not in answer.body, "our own Subject is no command to mask"
    # The link it gives works.
    answered = email.message_from_bytes(original.as_bytes(), policy=email.policy.default)
    answered.replace_header("Reply-To", link)
    assert send_reply(harness, answered, ALICE, "c1-a5").ok


def test_a_command_in_the_subject_of_a_reply_still_runs_as_a_command(players):
    """A pbmserv player answers with the command as the Subject: it is not taken for the
    body's first line."""
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    original = latest_reply_to(harness, ALICE)
    message = email.message_from_bytes(
        to_plain_address(reply_mail(original, ALICE, "never mind")), policy=email.policy.default
    )
    message.replace_header("Subject", "knightpanic move 101 alice secret c1-a5")
    assert harness.deliver(message.as_bytes()).result.ok
    assert board_state(harness, "knightpanic", 101)[0].plies_made == 1


@given(
    game=st.sampled_from(["knightpanic", "lox", "knightline"]),
    number=st.integers(1, 10**6),
    userid=st.from_regex(r"[a-z][a-z0-9]{1,10}", fullmatch=True),
    password=st.from_regex(r"[!-~]{4,12}", fullmatch=True),
    move=st.from_regex(r"[a-z][0-9]-[a-z][0-9]", fullmatch=True),
    word=st.sampled_from(["move", "board", "queue", "submit"]),
    prefix=st.sampled_from(["", "Re: ", "RE: ", "Fwd: ", "AW: "]),
)
def test_a_classic_command_is_never_taken_for_one_of_our_subjects(
    game, number, userid, password, move, word, prefix
):
    command = f"{prefix}{game} {word} {number} {userid} {password} {move}"
    assert not subject_is_ours(command)
    assert subject_is_ours(f"{prefix}KnightPanic Board {number}: {userid} vs bob")
    assert subject_is_ours(f"{prefix}New KnightPanic Board {number} {userid} **")


def test_replies_in_every_client_style_reach_the_plain_address_too(players):
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    plies = 0
    for style in STYLES[:6]:
        mover, address = ("alice", ALICE) if plies % 2 == 0 else ("bob", BOB)
        original = latest_reply_to(harness, address)
        move = ["c1-a5", "a7-c3", "a5-c1", "c3-a7", "c1-a5", "a7-c3"][plies]
        raw = to_plain_address(reply_mail(original, address, move, style))
        result = harness.deliver(raw).result
        assert result.ok, (style, mover, harness.last_error_text(result))
        plies += 1
    assert board_state(harness, "knightpanic", 101)[0].plies_made == plies
