"""Challenges and play: the order of checks, plies, resignation, withdrawal, swap, pass."""

import pytest

from tests.conftest import body_of


@pytest.fixture
def game(harness):
    harness.signup("alice", "bob", "carol")
    harness.challenge("knightpanic challenge alice bob")
    harness.new_mails()
    return harness


def test_challenge_mails_every_player_a_new_board(harness):
    harness.signup("alice", "bob")
    harness.new_mails()
    harness.ok("knightpanic challenge Alice BOB", sender="alice@example.org", body="Good luck!")
    mails = harness.new_mails()
    assert sorted(m["To"] for m in mails) == ["alice@example.org", "bob@example.org"]
    for mail in mails:
        assert mail["Subject"] == "KnightPanic Board 101: alice vs bob"
        body = body_of(mail)
        assert body.startswith("A new KnightPanic board (101) has been started.")
        assert "Please start the game alice." in body
        assert "Challenger writes:\nGood luck!" in body


def test_only_the_operator_gets_a_spectator_copy_and_a_referee_is_refused(harness):
    """Only players seat players (docs/spec/server.md §3.4): an outside sender's challenge
    is refused; the operator's command line still starts one and prints the copy."""
    harness.signup("alice", "bob")
    harness.new_mails()
    message = harness.refused("knightpanic challenge alice bob -size=5", "referee@example.org")
    assert "Only a player of the new board can challenge" in message
    assert [m["To"] for m in harness.new_mails()] == ["referee@example.org"]
    result = harness.ok("knightpanic challenge alice bob -size=5", sender=None)
    assert sorted(m["To"] for m in harness.new_mails()) == [
        "alice@example.org",
        "bob@example.org",
    ]
    [copy] = result.printed
    assert "Options: -size=5" in copy.body


def test_board_numbers_start_at_101_and_grow_per_game(harness):
    harness.signup("alice", "bob")
    for expected in (101, 102, 103):
        harness.challenge("knightpanic challenge alice bob")
        assert harness.new_mails()[-1]["Subject"] == f"KnightPanic Board {expected}: alice vs bob"
    harness.challenge("tally challenge alice bob")
    assert harness.new_mails()[-1]["Subject"].startswith("Tally Board 101: alice vs bob")


def test_invalid_challenge_lists_every_problem(harness):
    harness.signup("alice")
    harness.new_mails()
    harness.refused("knightpanic challenge alice nobody ghost -size=9", "alice@example.org")
    [mail] = harness.new_mails()
    assert mail["Subject"] == "Invalid challenge"
    body = body_of(mail)
    assert "Unknown userid: nobody" in body and "Unknown userid: ghost" in body
    assert "At most 2 players can play" in body
    assert 'Invalid KnightPanic parameter "-size=9": size must be from 4 to 7' in body


def test_challenge_needs_enough_players(harness):
    harness.signup("alice", "bob")
    message = harness.refused("knightpanic challenge alice", sender="alice@example.org")
    assert "At least 2 players must play" in message


def test_a_move_reaches_both_players_in_their_view(game):
    game.ok("knightpanic move 101 alice secret c1-e5", body="Your move.\n\n-- \nalice")
    mails = game.new_mails()
    assert sorted(m["To"] for m in mails) == ["alice@example.org", "bob@example.org"]
    for mail in mails:
        assert mail["Subject"] == "KnightPanic Board 101: alice vs bob"
        body = body_of(mail)
        assert body.startswith("Summary of KnightPanic Board 101")
        assert "It is bob's turn." in body
        assert "   1 c1-e5" in body
        assert "alice writes:\nYour move." in body
        assert "-- " not in body.split("alice writes:")[1]


@pytest.mark.parametrize(
    "command,message",
    [
        ("knightpanic move 999 alice secret c1-e5", "KnightPanic board 999 not found"),
        ("knightpanic move 101 alice wrong c1-e5", "Invalid password entered"),
        ("knightpanic move 101 nobody secret c1-e5", "Invalid userid entered"),
        ("knightpanic move 101 carol secret c1-e5", "You are NOT playing this game"),
        ("knightpanic move 101 bob secret a7-c3", "It is not your move"),
        ("knightpanic move 101 alice secret c1-e5#2", "Move c1-e5 received as move #1"),
        ("knightpanic move 101 alice secret c1-e5#x", 'Invalid move number "x" specified'),
        ("knightpanic move 101 alice secret c1-e3", "a knight moves two squares"),
        ("knightpanic move 101 alice secret pass", "KnightPanic does not allow passing"),
        ("knightpanic move 101 alice secret swap", "KnightPanic does not support swapping"),
        ("knightpanic move 101 alice secret", "Syntax is"),
        ("knightpanic move x alice secret c1-e5", "Syntax is"),
    ],
)
def test_move_refusals(game, command, message):
    assert message in game.refused(command)
    assert game.new_mails("bob@example.org") == []


def test_errors_after_login_carry_the_board_and_stay_in_its_thread(game):
    game.refused("knightpanic move 101 alice secret c1-e3", sender="alice@example.org")
    [mail] = game.new_mails()
    assert mail["Subject"] == "KnightPanic Board 101: alice vs bob"
    body = body_of(mail)
    assert "Summary of KnightPanic Board 101" in body and "It is now......." in body
    assert "> Subject: knightpanic move 101 alice ******** c1-e3" in body
    assert "secret" not in body


def test_a_player_with_pbmserv_subjects_gets_the_board_error_subject(game):
    game.ok("subjects alice secret pbmserv", sender="alice@example.org")
    game.new_mails()
    game.refused("knightpanic move 101 alice secret c1-e3", sender="alice@example.org")
    [mail] = game.new_mails()
    assert mail["Subject"] == "KnightPanic Board 101 Error"


def test_errors_before_login_have_the_game_subject(game):
    game.refused("knightpanic move 999 alice secret c1-e5", sender="alice@example.org")
    [mail] = game.new_mails()
    assert mail["Subject"] == "KnightPanic error"


def test_a_correct_guard_is_accepted(game):
    game.ok("knightpanic move 101 alice secret c1-e5#1")
    game.ok("knightpanic move 101 bob secret G7-E3#2")
    text = game.ok("knightpanic show 101", sender=None).printed[0].body
    assert "   1 c1-e5      2 g7-e3" in text


def test_the_game_ends_with_the_win_and_no_more_moves(game):
    game.ok("knightpanic move 101 alice secret c1-e5")
    game.new_mails()
    game.ok("knightpanic move 101 bob secret a7-c3")
    for mail in game.new_mails():
        assert mail["Subject"] == "KnightPanic Board 101: alice vs bob"
        assert "Game won by bob." in body_of(mail)
        assert "(White's knight on g1 cannot move)" in body_of(mail)
        assert "Game ended......" in body_of(mail)
    assert "The game has ended" in game.refused("knightpanic move 101 alice secret a1-c5")


def test_declining_before_any_move_removes_a_two_player_board(game):
    game.ok("knightpanic resign 101 bob secret", sender="bob@example.org")
    mails = game.new_mails()
    assert sorted(m["To"] for m in mails) == ["alice@example.org", "bob@example.org"]
    for mail in mails:
        assert mail["Subject"] == "KnightPanic board 101 has been removed"
        assert "bob has declined to play. Too few players are left" in body_of(mail)
    result = game.run("knightpanic show 101")
    assert not result.ok
    assert "The following boards were not shown: 101 (not found)" in result.queued[0][1].body
    game.challenge("knightpanic challenge alice bob")
    assert game.new_mails()[-1]["Subject"].startswith("KnightPanic Board 102: alice vs bob")


def test_withdrawal_in_the_first_round_after_the_first_move(game):
    game.ok("knightpanic move 101 alice secret c1-e5")
    game.ok("knightpanic resign 101 bob secret")
    assert "has been removed" in game.new_mails()[-1]["Subject"]


def test_withdrawal_restarts_a_board_with_enough_players(harness):
    harness.signup("alice", "bob", "carol")
    harness.challenge("tally challenge alice bob carol")
    harness.ok("tally move 101 alice secret 2")
    harness.new_mails()
    harness.ok("tally resign 101 bob secret")
    mails = harness.new_mails()
    assert sorted(m["To"] for m in mails) == ["alice@example.org", "carol@example.org"]
    body = body_of(mails[0])
    assert "bob has decided not to play. The game has been re-started." in body
    assert "Please start the game alice." in body
    assert "Total: 0 of 10" in body


def test_resigning_on_turn_ends_a_two_player_game(game):
    game.ok("knightpanic move 101 alice secret c1-e5")
    game.ok("knightpanic move 101 bob secret g7-e3")
    game.new_mails()
    game.ok("knightpanic resign 101 alice secret #3", body="Well played.")
    mails = game.new_mails()
    for mail in mails:
        assert mail["Subject"] == "KnightPanic Board 101: alice vs bob"
        body = body_of(mail)
        assert "alice has resigned." in body and "Game won by bob." in body
        assert "   3 Resign" in body
    assert sorted(m["To"] for m in mails) == ["alice@example.org", "bob@example.org"]


def test_a_resigned_player_watches_a_three_player_game(harness):
    harness.signup("alice", "bob", "carol")
    harness.challenge("tally challenge alice bob carol -target=20")
    for userid in ("alice", "bob", "carol"):
        harness.ok(f"tally move 101 {userid} secret 1")
    harness.ok("tally resign 101 alice secret")
    harness.ok("tally move 101 bob secret 2")
    harness.new_mails()
    harness.ok("tally move 101 carol secret 2")
    mails = harness.new_mails()
    assert sorted(m["To"] for m in mails) == [
        "alice@example.org",
        "bob@example.org",
        "carol@example.org",
    ]
    for mail in mails:
        assert mail["Subject"] == "Tally Board 101: alice vs bob vs carol"
        body = body_of(mail)
        # An extra ply (the resignation) breaks the columns: one line per ply instead.
        assert "   4 Red (alice): Resign\n   5 Red (alice): pass\n   6 Blue (bob): 2" in body
        assert "   7 Green (carol): 2\n   8 Red (alice): pass (Auto)" in body
        assert "It is bob's turn." in body
        assert "Subscribers: alice" in body
    assert "You have resigned from this game" in harness.refused("tally move 101 alice secret 1")


def test_a_player_who_resigns_and_so_ends_the_game_is_no_subscriber_of_it(harness):
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic move 101 alice secret a1-c5")
    harness.ok("knightpanic move 101 bob secret a7-c3")
    harness.new_mails()
    harness.ok("knightpanic resign 101 alice secret")
    for mail in harness.new_mails():
        assert "Game won by bob." in body_of(mail)
        assert "Subscribers:" not in body_of(mail)
    shown = harness.ok("knightpanic show 101").queued[0][1].body
    assert "Subscribers:" not in shown


def test_swap_takes_over_the_first_side(harness):
    harness.signup("alice", "bob")
    harness.challenge("tally challenge alice bob")
    assert "You can only swap after move number 1" in harness.refused("tally swap 101 alice secret")
    harness.ok("tally move 101 alice secret 2")
    harness.new_mails()
    harness.ok("tally swap 101 bob secret #2")
    mails = harness.new_mails()
    body = body_of(mails[0])
    assert "bob has swapped sides." in body
    assert "   1 Red (alice): 2\n   2 Blue (bob): swap" in body
    assert mails[0]["Subject"] == "Tally Board 101: alice vs bob"
    assert "The board has just been swapped" in harness.refused("tally swap 101 alice secret")
    harness.ok("tally move 101 alice secret 1")


def test_pass_where_the_game_allows_it(harness):
    harness.signup("alice", "bob")
    harness.challenge("tally challenge alice bob")
    harness.ok("tally pass 101 alice secret")
    harness.ok("tally move 101 bob secret --")
    text = harness.ok("tally show 101", sender=None).printed[0].body
    assert "   1 pass       2 pass" in text


def test_the_operator_may_seat_one_user_on_both_seats(harness):
    harness.signup("alice")
    harness.ok("knightpanic challenge alice alice", sender=None)
    harness.ok("knightpanic move 101 alice secret c1-e5")
    harness.ok("knightpanic move 101 alice secret a7-c3")
    text = harness.ok("knightpanic show 101", sender=None).printed[0].body
    assert "Game won by alice." in text


def test_total_time_forfeits_instead_of_moving(harness, clock):
    harness.signup("alice", "bob")
    clock("2026-03-01T10:00:00")
    harness.challenge("knightpanic challenge alice bob --totaltime=2")
    clock("2026-03-01T11:00:00")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    clock("2026-03-01T12:00:00")
    harness.ok("knightpanic move 101 bob secret g7-e3")
    harness.new_mails()
    clock("2026-03-03T12:00:00")
    assert "You used too much time" in harness.refused("knightpanic move 101 alice secret a1-c5")
    body = body_of(harness.new_mails("bob@example.org")[-1])
    assert "alice forfeits: exceeded the total time limit of 2 days." in body
    assert "Game won by bob." in body
    assert "Total time...... 2 days" in body


def test_time_is_charged_to_the_seat_that_moves(harness, clock):
    harness.signup("alice", "bob")
    clock("2026-03-01T10:00:00")
    harness.challenge("knightpanic challenge alice bob")
    clock("2026-03-02T12:30:05")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    clock("2026-03-02T13:00:00")
    text = harness.ok("knightpanic show 101", sender=None).printed[0].body
    assert "Game started.... 2026-03-01 10:00 UTC" in text
    assert "Last move made.. 2026-03-02 12:30 UTC" in text
    assert "It is now....... 2026-03-02 13:00 UTC" in text
    assert "Deadline........ 2026-03-23 12:30 UTC (bob forfeits if no move)" in text
    assert "alice (White):  1 days, 02:30:05" in text
    assert "bob (Black):    0 days, 00:00:00" in text
    assert "Total:          1 days, 02:30:05" in text


def test_server_options_are_checked(harness):
    harness.signup("alice", "bob")
    assert "--nagtime must be between 1 and 365 days" in harness.challenge_refused(
        "knightpanic challenge alice bob --nagtime=0"
    )
    assert "--forfeittime must be between --nagtime and 365 days" in harness.challenge_refused(
        "knightpanic challenge alice bob --nagtime=10 --forfeittime=5"
    )
    assert "--totaltime must be between 0 and 3650 days" in harness.challenge_refused(
        "knightpanic challenge alice bob --totaltime=5000"
    )
    assert 'Unknown server option "--colour"' in harness.challenge_refused(
        "knightpanic challenge alice bob --colour=red"
    )
    harness.challenge("knightpanic challenge alice bob --nagtime=3 --forfeittime=9")
    text = harness.ok("knightpanic show 101", sender=None).printed[0].body
    assert "Nag time........ 3 days" in text and "Forfeit time.... 9 days" in text


def test_options_only_where_accepted(game):
    assert "The move command takes no options" in game.refused(
        "knightpanic move 101 alice secret c1-e5 -size=5"
    )


def test_comment_is_replaced_and_cleared(game):
    game.ok("knightpanic move 101 alice secret c1-e5", body="first")
    game.ok("knightpanic move 101 bob secret g7-e3", body="")
    mail = game.new_mails("alice@example.org")[-1]
    assert mail["Subject"] == "KnightPanic Board 101: alice vs bob"
    assert "writes:" not in body_of(mail)


@pytest.mark.parametrize("guard", ["²", "٣", "1e3"])
def test_guards_take_ascii_digits_only(game, guard):
    assert f'Invalid move number "{guard}" specified' in game.refused(
        f"knightpanic move 101 alice secret c1-e5#{guard}"
    )
    assert f'Invalid move number "{guard}" specified' in game.refused(
        f"knightpanic queue 101 bob secret a7-c3#{guard}"
    )
    game.ok("knightpanic move 101 alice secret c1-e5")


def test_board_numbers_too_large_for_the_database_are_not_found(game):
    assert "Syntax is" in game.refused("knightpanic move 99999999999999999999 alice secret c1-e5")
    result = game.run("knightpanic show 99999999999999999999")
    assert not result.ok and "Internal error" not in result.queued[0][1].body


def test_a_long_move_is_refused(game):
    assert "A move is at most 64 characters long" in game.refused(
        "knightpanic move 101 alice secret " + "a1-c5" * 14
    )


def test_server_options_need_values_that_fit_together(harness):
    harness.signup("alice", "bob")
    assert "--nagtime must be between 1 and 365 days" in harness.challenge_refused(
        "knightpanic challenge alice bob --nagtime"
    )
    assert "--forfeittime must be between --nagtime and 365 days (the default is 21)" in (
        harness.challenge_refused("knightpanic challenge alice bob --nagtime=30")
    )
    harness.challenge("knightpanic challenge alice bob --nagtime=30 --forfeittime=40")
