"""Issue 16: an error says what to send next. Each test sends a real mail and reads the
whole answer the player gets."""

import re

from pbm.security import MASK
from tests.mailpipe import command_mail

GAMES = "knightline, knightpanic, knightvision, lox, tally, uknight"


def answer(harness, subject, body="", sender="alice@example.org"):
    """The one mail the sender gets back for a mail with this Subject and body."""
    harness.new_mails()
    outcome = harness.deliver(command_mail(sender, subject, body))
    assert outcome.consumed
    [mail] = harness.new_mails(sender)
    return mail["Subject"], mail.get_content()


def flat(text):
    """The text with its lines joined as they were before the mail was wrapped."""
    return "\n\n".join(
        p.strip("\n") if p.startswith(">") else " ".join(p.split()) for p in text.split("\n\n")
    )


def with_board(harness):
    harness.signup("alice", "bob", "carol")
    harness.challenge("knightline challenge alice bob carol")


def test_draw_is_proposed_with_propose(harness):
    with_board(harness)
    subject, body = answer(harness, "knightline draw 101 alice secret")
    assert subject == "KnightLine error"
    assert flat(body).startswith(
        'Unknown command "draw".\n\n'
        'A draw is proposed with "knightline propose board userid password"; '
        "the other players then accept or reject it.\n"
    )
    assert "secret" not in body


def test_a_move_without_its_game_names_the_game_of_the_users_board(harness):
    with_board(harness)
    subject, body = answer(harness, "move 101 alice secret a1")
    assert subject == "PBM error"
    assert flat(body) == (
        'Unknown command "move".\n\n'
        'Put the game name first: "knightline move 101 ... ... ...". '
        "alice plays on boards of: knightline.\n\n"
        "Original message follows:\n\n"
        f"> Subject: move 101 alice {MASK} a1"
    )


def test_a_move_without_its_game_from_a_user_without_boards_lists_the_games(harness):
    harness.signup("alice")
    _, body = answer(harness, "move 104 alice secret a1")
    assert flat(body).startswith(
        'Unknown command "move".\n\n'
        f'Put the game name first: "<game> move 104 ... ... ...". Games: {GAMES}.\n'
    )
    assert "secret" not in body


def test_an_unknown_game_gets_the_list_of_games(harness):
    _, body = answer(harness, "chess move 1 alice secret e4")
    assert flat(body).startswith(
        'Unknown command "chess".\n\n'
        f"The games here are: {GAMES}. A game's commands start with its name; "
        'send "help commands" for every command.\n'
    )


def test_help_for_an_unknown_game_lists_the_games(harness):
    _, body = answer(harness, "help chess")
    assert flat(body).startswith(
        'No help available for "chess"\n\n'
        "Help is available for: commands, tutorial, games, clocks, a command word, or a game. "
        f"The games here are: {GAMES}.\n"
    )


def test_an_empty_mail_is_pointed_to_help(harness):
    subject, body = answer(harness, "")
    assert subject == "PBM error"
    assert flat(body).startswith(
        "No command given\n\n"
        'The command goes in the Subject. Send "help" as the Subject for the list of '
        'commands, or "help tutorial" for how to start and play a game.\n'
    )


def test_a_command_in_the_body_under_an_empty_subject_is_pointed_to_the_subject(harness):
    with_board(harness)
    subject, body = answer(harness, "", body="knightline move 101 alice secret a1")
    assert subject == "PBM error"
    assert flat(body).startswith(
        "No command given\n\n"
        "Your Subject line is empty: the command goes in the Subject, and the body is a "
        "comment for the other players. Send the mail again with the command as its Subject. "
        "Or, to play on a board, reply to your latest mail about it with just the move on the "
        "first line: a reply needs no Subject and no password.\n"
    )
    assert "secret" not in body
    # The advice holds: such a reply, again with an empty Subject, plays the move.
    board_mail = [m for m in harness.mails("alice@example.org") if m["Reply-To"]][-1]
    example = re.search(r"Reply with your move, e\.g\. `([^`]+)`", board_mail.get_content())[1]
    reply = command_mail("alice@example.org", "", example)
    assert harness.deliver(reply, envelope_recipients=[str(board_mail["Reply-To"])]).result.ok
    assert "It is bob's turn." in harness.mails("alice@example.org")[-1].get_content()


def test_show_with_a_password_suggests_showas_and_hides_the_password(harness):
    with_board(harness)
    subject, body = answer(harness, "knightline show 101 alice pear99")
    assert subject == "KnightLine error"
    assert flat(body) == (
        "Give either board numbers or userids, not both. To see a board from your own seat, "
        'with your password, send "knightline showas alice <password> 101"\n\n'
        "Original message follows:\n\n"
        f"> Subject: knightline show 101 alice {MASK}"
    )


def test_show_with_the_password_before_the_board_hides_it_too(harness):
    with_board(harness)
    _, body = answer(harness, "knightline show alice pear99 101")
    assert "showas alice <password> 101" in body and "pear99" not in body


def test_userid_and_password_swapped_is_masked_in_the_mail(harness):
    harness.signup("alice", password="pear99")
    harness.signup("bob", "carol")
    harness.challenge("knightline challenge alice bob carol")
    subject, body = answer(
        harness, "knightline move 101 pear99 alice a1", body="knightline move 101 pear99 alice a1"
    )
    assert subject == "KnightLine error"
    assert flat(body) == (
        "Invalid userid entered\n\n"
        'The userid comes before the password: "knightline move board userid password '
        'move[#n]".\n\n'
        "Original message follows:\n\n"
        f"> Subject: knightline move 101 {MASK} {MASK} a1\n"
        f"> knightline move 101 {MASK} {MASK} a1"
    )


def test_through_the_mail_handler_a_move_without_its_game_and_an_empty_subject(project_env):
    """The same answers for mail piped into mail_handler.py by an MTA."""
    from pathlib import Path

    from click.testing import CliRunner

    from pbm.cli import cli
    from tests.mailpipe import inbox, send

    env = dict(project_env, PBM_LOAD_PLUGINS="knightline")
    home = Path(env["PBM_HOME"])
    assert CliRunner().invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    seen = set()
    for userid in ("alice", "bob", "carol"):
        send(env, f"{userid}@example.org", f"signup {userid} pear99")
    send(env, "alice@example.org", "knightline challenge alice bob carol")
    inbox(home, seen)
    send(env, "alice@example.org", "move 101 alice pear99 1,1")
    [answer] = inbox(home, seen)["alice@example.org"]
    assert flat(answer.get_content()).startswith(
        'Unknown command "move".\n\n'
        'Put the game name first: "knightline move 101 ... ... ...". '
        "alice plays on boards of: knightline.\n\n"
    )
    send(env, "alice@example.org", "", body="knightline move 101 alice pear99 1,1")
    [answer] = inbox(home, seen)["alice@example.org"]
    text = answer.get_content()
    assert "Your Subject line is empty: the command goes in the Subject" in flat(text)
    assert "pear99" not in text and "> knightline move ... ... ... ..." in text
