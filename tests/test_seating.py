"""Only players seat players (issue 25 item 5, docs/spec/server.md §3.4): a challenge by mail
comes from a confirmed address of one of the accounts it seats, and no account takes two
seats on one board; the operator's command line may still do both."""

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm.cli import cli
from pbm.dispatch import open_server
from tests.conftest import STRESS_FACTOR
from tests.mailpipe import command_mail

NOT_A_PLAYER = "Only a player of the new board can challenge"


def boards(harness) -> int:
    with open_server(harness.config) as server:
        return sum(server.store.boards.active_counts().values())


def test_a_challenge_between_two_others_is_refused_by_mail(harness):
    harness.signup("alice", "bob", "carol")
    harness.new_mails()
    outcome = harness.deliver(command_mail("carol@example.org", "knightpanic challenge alice bob"))
    [answer] = harness.new_mails()
    assert answer["To"] == "carol@example.org"
    [(_, mail)] = outcome.result.queued
    text = mail.body
    assert f"{NOT_A_PLAYER}: send the challenge from the address of one of alice, bob" in text
    assert "or ask one of them to send it" in text
    assert not outcome.result.ok and boards(harness) == 0
    # alice and bob were not mailed, and one of them may start it.
    harness.challenge("knightpanic challenge alice bob")
    assert boards(harness) == 1


def test_a_player_may_challenge_from_any_seat(harness):
    harness.signup("alice", "bob", "carol")
    harness.challenge("knightline challenge alice bob carol", by="carol")
    assert boards(harness) == 1


def test_a_registered_address_not_yet_confirmed_is_told_how_to_confirm_it(harness):
    harness.signup("bob")
    harness.ok("signup alice secret alice@example.org", sender="tester@example.org")
    message = harness.refused("knightpanic challenge alice bob", sender="alice@example.org")
    assert "Your address alice@example.org is not yet confirmed for alice" in message
    assert 'for example "html alice <password>"' in message
    harness.ok("html alice secret", sender="alice@example.org")
    harness.challenge("knightpanic challenge alice bob")
    assert boards(harness) == 1


def test_an_address_no_longer_registered_cannot_challenge(harness):
    harness.signup("alice", "bob")
    harness.ok("change address alice secret alice@new.example", sender="alice@example.org")
    assert NOT_A_PLAYER in harness.refused(
        "knightpanic challenge alice bob", sender="alice@example.org"
    )


def test_no_account_takes_two_seats_by_mail(harness):
    harness.signup("alice", "bob")
    message = harness.refused("tally challenge alice bob alice", sender="alice@example.org")
    assert "alice is named more than once: an account takes one seat on a board" in message
    assert boards(harness) == 0


def test_the_operator_may_seat_anyone_and_one_account_twice(harness):
    harness.signup("alice", "bob")
    harness.ok("knightpanic challenge alice bob", sender=None)
    harness.ok("tally challenge alice bob alice", sender=None)
    runner = CliRunner()
    result = runner.invoke(
        cli, ["--home", str(harness.home), "knightpanic", "challenge", *["bob"] * 2]
    )
    assert result.exit_code == 0, result.output
    assert boards(harness) == 3


def test_a_human_challenges_a_robot_but_nobody_seats_it_twice(harness):
    runner = CliRunner()
    home = ["--home", str(harness.home)]
    assert (
        runner.invoke(cli, [*home, "robots", "add", "robo", "knightpanic", "mcts"]).exit_code == 0
    )
    harness.signup("alice")
    message = harness.refused("knightpanic challenge robo robo -size=7", sender="alice@example.org")
    assert NOT_A_PLAYER in message
    message = harness.refused("knightpanic challenge robo alice robo", sender="alice@example.org")
    assert "robo is named more than once" in message
    harness.challenge("knightpanic challenge robo alice -size=7", by="alice")
    assert boards(harness) == 1
    # The operator's own command still may: robots alone, on both sides.
    result = runner.invoke(cli, [*home, "robots", "challenge", "robo", "robo"])
    assert result.exit_code == 0, result.output
    assert boards(harness) == 2


ACCOUNTS = ["alice", "bob", "carol"]


@settings(
    max_examples=40 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seats=st.lists(st.sampled_from(ACCOUNTS + ["ghost"]), min_size=2, max_size=4),
    sender=st.sampled_from(
        [f"{u}@example.org" for u in ACCOUNTS] + ["dave@example.org", "stranger@evil.example"]
    ),
)
def test_a_generated_challenge_starts_a_board_only_from_a_player(harness, seats, sender):
    if not harness.mails():
        harness.signup(*ACCOUNTS, "dave")
    before = boards(harness)
    result = harness.run(f"knightline challenge {' '.join(seats)}", sender=sender)
    userid = sender.split("@")[0]
    allowed = (
        userid in seats
        and userid in ACCOUNTS
        and "ghost" not in seats
        and len(set(seats)) == len(seats)
        and len(seats) <= 3
    )
    assert result.ok == allowed
    assert boards(harness) == before + (1 if allowed else 0)
