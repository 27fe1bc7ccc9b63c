"""Play by replying (docs/spec/server.md §11.3): a board mail's Reply-To carries a token;
answering it with just the move plays it, for that player on that board only."""

import email
import email.policy
import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbm.boards import Board
from pbm.context import Context
from pbm.dispatch import open_server
from pbm.replies import TOKEN_RE, token_of_recipient
from pbm.request import Request
from tests.mailpipe import pipe
from tests.replying import STYLES, reply_mail

ALICE, BOB, MALLORY = "alice@example.org", "bob@example.org", "mallory@example.org"
MAX_PLIES = 40


def board_state(harness, game, number):
    """(position, game plugin, still running) of a board, read as the server reads it."""
    with open_server(harness.config) as server:
        ctx = Context(server, Request(text="test"), None, {})
        board = Board(ctx, server.store.boards.get(game, number))
        return board.position, board.game, board.active


def latest_reply_to(harness, address):
    """The newest mail to an address that can be answered by a reply."""
    mails = [m for m in harness.mails(address) if m["Reply-To"] is not None]
    assert mails, f"no mail to {address} carries a Reply-To"
    return mails[-1]


def send_reply(harness, original, sender, answer, style="top", comment="", how="envelope"):
    """The reply, delivered as an MTA would: the +token address as the envelope recipient,
    or only in a Delivered-To header."""
    raw = reply_mail(original, sender, answer, style, comment)
    target = str(original["Reply-To"])
    if how == "envelope":
        return harness.deliver(raw, envelope_recipients=[target]).result
    return harness.deliver(f"Delivered-To: {target}\n".encode() + raw).result


@pytest.fixture
def players(harness):
    harness.signup("alice", "bob", "mallory")
    return harness


GAMES = [
    ("knightpanic", ""),
    ("knightpanic", "-3d"),
    ("knightvision", "-size=9"),
    ("lox", "-size=9"),
    ("uknight", "-size=5"),
    ("knightline", ""),
]


@pytest.mark.parametrize("game_name,options", GAMES)
def test_a_whole_game_played_by_replies_only(players, game_name, options):
    harness = players
    harness.ok(f"{game_name} challenge alice bob {options}".strip(), sender=ALICE)
    rng = random.Random(f"{game_name}{options}")
    address = {"alice": ALICE, "bob": BOB}
    for ply in range(MAX_PLIES):
        position, game, active = board_state(harness, game_name, 101)
        if not active:
            break
        seat = position.to_move()
        userid = position.holders[seat]
        legal = list(game.legal_moves(position.state, seat)) or [game.forced_move(position.state)]
        move = rng.choice(sorted(legal))
        original = latest_reply_to(harness, address[userid])
        result = send_reply(
            harness,
            original,
            address[userid],
            move,
            STYLES[ply % len(STYLES)],
            comment=f"my move {ply}",
            how=("envelope", "header")[ply % 2],
        )
        assert result.ok, harness.last_error_text(result)
        after, _, _ = board_state(harness, game_name, 101)
        assert after.move_number == position.move_number + 1
        assert after.plies[-1].userid == userid
    else:
        position, _, _ = board_state(harness, game_name, 101)
        userid = position.holders[position.to_move()]
        original = latest_reply_to(harness, address[userid])
        result = send_reply(harness, original, address[userid], "resign", "bottom")
        assert result.ok, harness.last_error_text(result)
    _, _, active = board_state(harness, game_name, 101)
    assert not active
    last = harness.mails(ALICE)[-1]
    assert (
        "Game won by" in last.get_body(("plain",)).get_content()
        or "tie" in last.get_body(("plain",)).get_content()
    )
    assert last["Reply-To"] is None  # nothing is asked of anyone once the game has ended


def test_the_rest_of_the_reply_is_the_moves_comment_and_the_subject_is_ignored(players):
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    original = latest_reply_to(harness, ALICE)
    raw = reply_mail(original, ALICE, "a1-c5", "top", comment="Your turn, Bob\nGood luck")
    raw = raw.replace(b"Subject: Re: ", b"Subject: knightpanic resign 101 alice secret ", 1)
    result = harness.deliver(raw, envelope_recipients=[str(original["Reply-To"])]).result
    assert result.ok, harness.last_error_text(result)
    body = harness.mails(BOB)[-1].get_body(("plain",)).get_content()
    assert "alice writes:\nYour turn, Bob\nGood luck" in body
    position, _, active = board_state(harness, "knightpanic", 101)
    assert active and position.plies[-1].text.lower() == "a1-c5"


def test_a_token_used_from_another_address_is_refused(players):
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    original = latest_reply_to(harness, ALICE)
    result = send_reply(harness, original, MALLORY, "a1-c5")
    assert not result.ok
    [error] = [m for _, m in result.queued]
    assert error.to == [MALLORY] and "only from the addresses of the player" in error.body
    position, _, _ = board_state(harness, "knightpanic", 101)
    assert position.plies_made == 0


def test_a_stale_reply_is_refused_with_the_current_board(players):
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    old = latest_reply_to(harness, BOB)  # Bob's mail of the new board: move 1
    assert send_reply(harness, latest_reply_to(harness, ALICE), ALICE, "a1-c5").ok
    result = send_reply(harness, old, BOB, "resign")
    assert not result.ok
    [error] = [m for _, m in result.queued]
    said = " ".join(error.body.split())
    assert "Your reply answered the board mail sent for move #1" in said
    assert "moved on since: alice played a1-c5" in said
    assert 'Your reply "resign" was not carried out' in said and "It is bob's turn." in said
    assert "Reply-To" in error.headers, "the refusal can itself be answered"
    _, _, active = board_state(harness, "knightpanic", 101)
    assert active


def test_a_token_expires_after_30_days_and_at_the_games_end(players, clock):
    harness = players
    clock("2026-11-01T12:00:00")
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    first = [m for m in harness.mails(ALICE) if "101" in m["Subject"]][-1]
    second = [m for m in harness.mails(ALICE) if "102" in m["Subject"]][-1]
    clock("2026-12-01T12:00:01")
    result = send_reply(harness, first, ALICE, "a1-c5")
    assert not result.ok and "has expired" in [m for _, m in result.queued][0].body
    clock("2026-11-02T12:00:00")
    harness.ok("knightpanic resign 102 alice secret", sender=ALICE)
    result = send_reply(harness, second, ALICE, "a1-c5")
    assert not result.ok and "has expired" in [m for _, m in result.queued][0].body


def test_a_token_is_never_valid_for_another_board_user_or_account_command(players):
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    on_101 = [m for m in harness.mails(ALICE) if "101" in m["Subject"]][-1]
    # A whole command as the first line runs as that command, by its own password: the
    # token grants nothing for board 102, and a wrong password plays nothing anywhere.
    result = send_reply(harness, on_101, ALICE, "knightpanic move 102 alice wrong1 a1-c5")
    assert not result.ok and "Invalid password" in harness.last_error_text(result)
    for number in (101, 102):
        assert board_state(harness, "knightpanic", number)[0].plies_made == 0
    assert send_reply(harness, on_101, ALICE, "knightpanic move 102 alice secret a1-c5").ok
    assert board_state(harness, "knightpanic", 101)[0].plies_made == 0
    assert board_state(harness, "knightpanic", 102)[0].plies_made == 1
    result = send_reply(harness, on_101, ALICE, "delete alice")
    assert not result.ok
    harness.ok("knightpanic show 101", sender=ALICE)  # alice's account is still there
    assert harness.ok("knightpanic move 101 alice secret a1-c5", sender=ALICE).ok
    # A token whose MAC was altered, or whose id was given another's MAC, is refused.
    token = str(on_101["Reply-To"]).split("+")[1].split("@")[0]
    for forged in (token[:-1] + ("a" if token[-1] != "a" else "b"), token[:16] + "a" * 16):
        forged_mail = email.message_from_bytes(on_101.as_bytes(), policy=email.policy.default)
        forged_mail.replace_header("Reply-To", f"pbm+{forged}@localhost")
        result = send_reply(harness, forged_mail, ALICE, "resign")
        assert not result.ok and "not valid" in [m for _, m in result.queued][0].body


def test_votes_confirm_queue_and_chat_by_reply(players):
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    assert send_reply(harness, latest_reply_to(harness, ALICE), ALICE, "a1-c5").ok
    # Alice, not on move, queues her next move by reply.
    result = send_reply(harness, latest_reply_to(harness, ALICE), ALICE, "queue c5-a1", "html")
    assert result.ok, harness.last_error_text(result)
    assert (
        "You have the following move queued: c5-a1"
        in harness.mails(ALICE)[-1].get_body(("plain",)).get_content()
    )
    result = send_reply(
        harness,
        latest_reply_to(harness, BOB),
        BOB,
        "chat Nice opening",
        "outlook",
        comment="Really.",
    )
    assert result.ok, harness.last_error_text(result)
    chat = harness.mails(ALICE)[-1]
    assert "Nice opening\nReally." in chat.get_body(("plain",)).get_content()
    result = send_reply(harness, latest_reply_to(harness, BOB), BOB, "propose", "bottom")
    assert result.ok, harness.last_error_text(result)
    result = send_reply(harness, latest_reply_to(harness, ALICE), ALICE, "accept", "html")
    assert result.ok, harness.last_error_text(result)
    _, _, active = board_state(harness, "knightpanic", 101)
    assert not active


def test_an_empty_reply_says_what_to_write(players):
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    result = send_reply(harness, latest_reply_to(harness, ALICE), ALICE, "")
    assert not result.ok and "write your move" in [m for _, m in result.queued][0].body


def test_the_pipe_reads_the_token_from_original_recipient(project_env, tmp_path):
    from click.testing import CliRunner

    from pbm.cli import cli

    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    for userid in ("alice", "bob"):
        runner.invoke(
            cli,
            ["--home", str(home), "--from", f"{userid}@example.org", "signup", userid, "secret"],
        )
    runner.invoke(cli, ["--home", str(home), "knightpanic", "challenge", "alice", "bob"])
    newest = sorted((home / "outbox" / "new").iterdir())
    mails = [email.message_from_bytes(p.read_bytes(), policy=email.policy.default) for p in newest]
    original = [m for m in mails if m["To"] == ALICE and m["Reply-To"]][-1]
    env = dict(project_env, ORIGINAL_RECIPIENT=str(original["Reply-To"]))
    result = pipe(env, reply_mail(original, ALICE, "a1-c5", "bottom"))
    assert result.returncode == 0, result.stderr.decode()
    newest = sorted((home / "outbox" / "new").iterdir())[-1]
    answer = email.message_from_bytes(newest.read_bytes(), policy=email.policy.default)
    assert "a1-c5" in answer.get_body(("plain",)).get_content().lower()


def test_a_recipient_names_a_token_only_in_exactly_our_form(harness):
    config = harness.config
    token = "a" * 32
    assert token_of_recipient(config, f"pbm+{token}@localhost") == token
    assert token_of_recipient(config, f"<PBM+{token.upper()}@LOCALHOST>") == token
    for other in (
        f"pbm+{token}@elsewhere",
        f"xpbm+{token}@localhost",
        f"pbm+{token}1@localhost",
        f"pbm+{token[:-1]}@localhost",
        "pbm@localhost",
        f"pbm+{token}+x@localhost",
        f"pbm+{'1' * 32}@localhost",
        None,
        "",
    ):
        assert token_of_recipient(config, other) is None


@given(st.text(max_size=300))
def test_any_recipient_yields_no_token_or_a_well_formed_one(text):
    from pbm.config import Config

    config = Config.load("/nonexistent-pbm-home")
    token = token_of_recipient(config, text)
    assert token is None or (TOKEN_RE.fullmatch(token) and f"+{token}@" in text.lower())


def test_every_board_mail_says_what_to_do_next(players):
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    to_alice = latest_reply_to(harness, ALICE).get_body(("plain",)).get_content()
    to_bob = latest_reply_to(harness, BOB).get_body(("plain",)).get_content()
    assert "You are White (o)." in to_alice and "Please start the game alice." in to_alice
    assert "You are Black (x)." in to_bob and "Reply with" not in to_bob
    example = re.search(
        r"Reply with your move, e\.g\. `([^`]+)`,\n"
        r"or send `knightpanic move 101 alice <password> \1#1`\.",
        to_alice,
    )
    assert example, to_alice
    assert "secret" not in to_alice
    # The example in the mail is a move that a reply of just that word plays.
    assert send_reply(harness, latest_reply_to(harness, ALICE), ALICE, example.group(1)).ok
    assert (
        "Reply with your move" in latest_reply_to(harness, BOB).get_body(("plain",)).get_content()
    )
    assert send_reply(harness, latest_reply_to(harness, BOB), BOB, "propose").ok
    to_alice = latest_reply_to(harness, ALICE).get_body(("plain",)).get_content()
    assert "Reply `accept` or `reject` to the draw" in to_alice


def test_a_submitted_move_gives_the_confirm_reply(players):
    harness = players
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    result = harness.ok("knightpanic submit 101 alice secret a1-c5", sender=ALICE)
    [(_, preview)] = result.queued
    assert "Reply `confirm` to play it" in preview.body and preview.headers["Reply-To"]
    preview_mail = harness.mails(ALICE)[-1]
    assert send_reply(harness, preview_mail, ALICE, "confirm", "html").ok
    position, _, _ = board_state(harness, "knightpanic", 101)
    assert position.plies_made == 1


BOARD_COMMANDS = {"move", "queue", "confirm", "chat"}


@given(st.text(min_size=1, max_size=200).filter(lambda t: t.split()))
def test_any_reply_line_becomes_a_board_command_of_the_tokens_user_and_board(line):
    """Whatever the first line says, it parses (if at all) as one of the board commands, on
    the token's board, for the token's user: never another board, user or account command."""
    import games.knightpanic
    from pbm.grammar import GrammarError, parse
    from pbm.replies import TOKEN_PASSWORD, token_command

    games_by_name = {"knightpanic": games.knightpanic.KnightPanic()}
    text, _ = token_command("knightpanic", 101, "alice", line)
    try:
        parsed = parse(text, games_by_name)
    except GrammarError:
        return
    assert parsed.game.name == "knightpanic" and parsed.spec.word in BOARD_COMMANDS
    assert parsed.args[:3] == ["101", "alice", TOKEN_PASSWORD]
