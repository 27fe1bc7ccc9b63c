"""Invitations (docs/spec/server.md §11.1, §11.3, §3.4, §3.9): whole scenarios by mail over a
simulated calendar, each command a real RFC 822 message through the intake, each answer a
reply to the mail pbm sent or a command with the password."""

import pytest
from click.testing import CliRunner

from pbm.cli import cli
from pbm.store import Store
from tests.bymail import flat, fresh, last_to, reply, send

ALICE, BOB, CAROL, DAVE = (f"{u}@example.org" for u in ("alice", "bob", "carol", "dave"))
START = "2026-04-01T10:00:00"


@pytest.fixture
def players(harness, clock):
    clock(START)
    harness.signup("alice", "bob", "carol", "dave")
    harness.new_mails()
    return harness


def board_row(harness, number, game="knightline"):
    store = Store.open(harness.home / "pbm.db")
    try:
        return store.boards.get(game, number), store.boards.seat_userids(
            store.boards.get(game, number).id
        ) if store.boards.get(game, number) else None
    finally:
        store.close()


def invitation_status(harness, number, game="knightline"):
    store = Store.open(harness.home / "pbm.db")
    try:
        return store.invitations.get(game, number).status
    finally:
        store.close()


def test_accepted_by_reply_and_by_command_the_board_starts_for_everyone(players):
    h = players
    result = send(
        h, ALICE, "knightline invite alice secret bob carol --time=3d+24h", "A friendly game?"
    )
    assert result.ok, h.last_error_text(result)
    mails = fresh(h)
    [sent] = mails[ALICE]
    assert sent["Subject"] == "Invitation sent: KnightLine Board 101"
    assert "It starts when bob and carol accept" in flat(sent)
    assert 'send "knightline decline 101 alice <password>"' in flat(sent)
    [to_bob] = mails[BOB]
    assert to_bob["Subject"] == "Invitation: KnightLine Board 101 from alice"
    assert to_bob["References"] == "<knightline.101.bob@localhost>"  # the board's own thread
    body = flat(to_bob)
    for line in (
        "alice invites you to play KnightLine on board 101.",
        "White: alice (accepted)",
        "Black: bob (awaited)",
        "Red: carol (awaited)",
        "Clock: 3 days + 24 hours a move, at most 10 days",
        "The invitation lapses on 2026-04-15 10:00 UTC",
        "A friendly game?",
        'or send "knightline accept 101 bob <password>"',
    ):
        assert line in body, line
    assert "pbm+" in str(to_bob["Reply-To"])
    assert board_row(h, 101)[0] is None, "no board before everyone accepted"
    shown = h.run("knightline show 101", sender=None).printed[0].body
    assert "101 (not found)" in shown

    assert reply(h, to_bob, BOB, "accept", comment="Gladly").ok
    mails = fresh(h)
    assert sorted(mails) == [ALICE, BOB, CAROL]
    for address in (ALICE, BOB, CAROL):
        [mail] = mails[address]
        assert "bob has accepted the invitation to KnightLine Board 101." in flat(mail)
        assert "It waits for carol." in flat(mail) and "Gladly" in flat(mail)
    assert mails[BOB][0]["Reply-To"] is None, "bob has answered: nothing more is asked"
    assert mails[CAROL][0]["Reply-To"] is not None

    result = send(h, CAROL, "knightline accept 101 carol secret")
    assert result.ok, h.last_error_text(result)
    mails = fresh(h)
    for address in (ALICE, BOB, CAROL):
        [mail] = mails[address]
        assert mail["Subject"] == "KnightLine Board 101: alice vs bob vs carol"
        assert "Everyone has accepted the invitation." in flat(mail)
        assert "A friendly game?" in flat(mail)
    assert "You have 3 days left, until 2026-04-04 10:00 UTC." in flat(mails[ALICE][0])
    row, seats = board_row(h, 101)
    assert seats == ["alice", "bob", "carol"] and row.clock_initial == 3 * 86400
    assert invitation_status(h, 101) == "started"


def test_a_decline_by_reply_ends_it_and_everyone_hears(players):
    h = players
    assert send(h, ALICE, "knightpanic invite alice secret bob").ok
    to_bob = last_to(h, BOB, "Invitation:")
    fresh(h)
    assert reply(h, to_bob, BOB, "decline", comment="Sorry, too busy").ok
    mails = fresh(h)
    for address in (ALICE, BOB):
        [mail] = mails[address]
        assert mail["Subject"] == "Invitation: KnightPanic Board 101 from alice"
        body = flat(mail)
        assert "bob has declined the invitation to KnightPanic Board 101." in body
        assert "Sorry, too busy" in body
        assert "lapses" not in body
    assert invitation_status(h, 101, "knightpanic") == "declined"
    # A second answer is told what became of it, and nothing starts.
    error = h.refused("knightpanic accept 101 bob secret")
    assert "The invitation to KnightPanic Board 101 is over: it was declined" in error
    assert board_row(h, 101, "knightpanic")[0] is None
    # The number stays reserved: the next board is 102.
    assert send(h, ALICE, "knightpanic challenge alice bob").ok
    assert board_row(h, 102, "knightpanic")[0] is not None


def test_the_inviter_withdraws_it(players):
    h = players
    assert send(h, ALICE, "knightline invite alice secret bob carol").ok
    fresh(h)
    assert send(h, ALICE, "knightline decline 101 alice secret").ok
    mails = fresh(h)
    assert sorted(mails) == [ALICE, BOB, CAROL]
    for address in (BOB, CAROL):
        assert "alice has withdrawn the invitation" in flat(mails[address][0])
    assert invitation_status(h, 101) == "withdrawn"
    assert "alice withdrew it" in h.refused("knightline accept 101 bob secret")


def test_cleanup_lapses_it_after_14_days_and_tells_everyone(players, clock):
    h = players
    assert send(h, ALICE, "knightline invite alice secret bob carol").ok
    assert send(h, BOB, "knightline accept 101 bob secret").ok
    to_carol = last_to(h, CAROL, "Invitation:")
    fresh(h)
    clock("2026-04-15T09:59:00")
    h.ok("cleanup", sender=None)
    assert invitation_status(h, 101) == "open", "not before its time"
    clock("2026-04-15T10:00:00")
    h.ok("cleanup", sender=None)
    mails = fresh(h)
    for address in (ALICE, BOB, CAROL):
        [mail] = mails[address]
        assert (
            "The invitation to KnightLine Board 101 has lapsed: carol did not answer within "
            "14 days." in flat(mail)
        )
    assert invitation_status(h, 101) == "lapsed"
    assert "it lapsed on 2026-04-15 10:00 UTC" in h.refused("knightline accept 101 carol secret")
    # Thirty days on, cleanup forgets it: its token then answers nothing.
    assert "it lapsed" in h.last_error_text(reply(h, to_carol, CAROL, "accept"))
    clock("2026-05-16T10:00:00")
    h.ok("cleanup", sender=None)
    result = reply(h, to_carol, CAROL, "accept")
    assert not result.ok and "This reply address is not valid" in h.last_error_text(result)


def test_a_player_with_invitations_on_turns_a_challenge_into_an_invitation(players):
    h = players
    assert send(h, BOB, "knightpanic invitations bob secret on").ok
    [mail] = fresh(h)[BOB]
    assert mail["Subject"] == "KnightPanic invitations on for bob"
    assert "becomes an invitation" in flat(mail)
    # A challenge from alice's own address: alice is its inviter, bob must accept.
    result = send(h, ALICE, "knightpanic challenge alice bob", "Shall we?")
    assert result.ok, h.last_error_text(result)
    mails = fresh(h)
    assert mails[ALICE][0]["Subject"] == "Invitation sent: KnightPanic Board 101"
    [to_bob] = mails[BOB]
    assert to_bob["Subject"] == "Invitation: KnightPanic Board 101 from alice"
    assert "Shall we?" in flat(to_bob) and "Challenger writes:" in flat(to_bob)
    assert board_row(h, 101, "knightpanic")[0] is None
    assert reply(h, to_bob, BOB, "accept").ok
    row, seats = board_row(h, 101, "knightpanic")
    assert seats == ["alice", "bob"] and row.comment_text == "Shall we?"
    fresh(h)
    # Only players seat players (docs/spec/server.md §3.4): a stranger's challenge is refused.
    refused = send(h, "stranger@example.net", "knightpanic challenge carol bob")
    assert not refused.ok
    assert "Only a player of the new board can challenge" in h.last_error_text(refused)
    fresh(h)
    # The operator's challenge of carol and bob: carol (invitations off) is seated as pbmserv
    # seats her, and counts as accepted; there is no inviter.
    result = h.run("knightpanic challenge carol bob", sender=None)
    assert result.ok
    [answer] = result.printed
    assert answer.subject == "Invitation sent: KnightPanic Board 102"
    assert "Any player on it may decline it" in " ".join(answer.body.split())
    mails = fresh(h)
    [to_carol] = mails[CAROL]
    assert to_carol["Subject"] == "Invitation: KnightPanic Board 102"
    assert to_carol["Reply-To"] is None and "carol (accepted)" in flat(to_carol)
    assert "bob (awaited)" in flat(mails[BOB][0])
    # bob turns it off: challenges start at once again.
    assert send(h, BOB, "knightpanic invitations bob secret off").ok
    assert send(h, ALICE, "knightpanic challenge alice bob").ok
    assert board_row(h, 103, "knightpanic")[0] is not None


def test_the_invitation_token_never_votes(players):
    """`accept` by reply to the invitation mail answers the invitation only: once the board
    runs, it is told the invitation is over, and a pending draw proposal stays pending."""
    h = players
    assert send(h, ALICE, "knightpanic invite alice secret bob").ok
    to_bob = last_to(h, BOB, "Invitation:")
    assert send(h, BOB, "knightpanic accept 101 bob secret").ok
    assert send(h, ALICE, "knightpanic propose 101 alice secret").ok
    result = reply(h, to_bob, BOB, "accept")
    assert not result.ok
    assert "is over: everyone accepted and the board has started" in h.last_error_text(result)
    store = Store.open(h.home / "pbm.db")
    try:
        vote = store.votes.get(store.boards.get("knightpanic", 101).id)
        assert vote is not None and vote.kind == "draw" and vote.accepted == [0]
    finally:
        store.close()
    # Nor does anything but accept or decline go through it, and only from bob's address.
    assert send(h, ALICE, "knightpanic invite alice secret bob").ok
    to_bob = last_to(h, BOB, "Invitation:")
    result = reply(h, to_bob, BOB, "a1-c5")
    assert "Reply accept or decline on the first line" in h.last_error_text(result)
    result = reply(h, to_bob, CAROL, "accept")
    assert "works only from the addresses of the player" in h.last_error_text(result)
    assert invitation_status(h, 102, "knightpanic") == "open"


def test_checks_at_invitation_and_at_acceptance(players):
    h = players
    assert send(h, DAVE, "knightpanic limit dave secret 1").ok
    assert send(h, CAROL, "knightpanic reject carol secret").ok
    result = send(h, ALICE, "knightpanic invite alice secret carol -size=9")
    assert not result.ok
    error = h.last_error_text(result)
    assert "carol is not accepting KnightPanic challenges" in error
    assert "size must be" in error
    assert "Invalid invitation" in [m["Subject"] for m in fresh(h)[ALICE]]
    result = send(h, ALICE, "knightpanic invite alice secret nobody1")
    assert "Unknown userid: nobody1" in h.last_error_text(result)
    # dave may take one board: the invitation is fine, but by the time he accepts a
    # challenge has filled his limit, so his acceptance is refused and it stays open.
    assert send(h, ALICE, "knightpanic invite alice secret dave").ok
    assert send(h, BOB, "knightpanic challenge bob dave").ok
    error = h.refused("knightpanic accept 101 dave secret")
    assert "dave has reached their limit of active KnightPanic games (1)" in error
    assert invitation_status(h, 101, "knightpanic") == "open"
    assert "You are not on the invitation" in h.refused("knightpanic accept 101 carol secret")
    assert "already accepted" in h.refused("knightpanic accept 101 alice secret")
    assert "invitation 150 not found" in h.refused("knightpanic decline 150 bob secret")
    assert "has started" in h.refused("knightpanic decline 102 bob secret")


def test_the_last_acceptance_is_refused_when_another_seat_may_no_longer_be_seated(players):
    """docs/spec/server.md §11.1: when the last seat accepts, a limit of any player refuses
    that acceptance, saying whose, and the invitation stays open."""
    h = players
    assert send(h, CAROL, "knightline limit carol secret 1").ok
    assert send(h, ALICE, "knightline invite alice secret bob carol").ok
    h.ok("knightline accept 101 carol secret", sender=CAROL)
    assert send(h, DAVE, "knightline challenge dave carol").ok  # fills carol's limit
    error = h.refused("knightline accept 101 bob secret")
    assert "cannot start yet, so your acceptance was not recorded" in error
    assert "carol has reached their limit of active" in error
    assert invitation_status(h, 101) == "open"


def test_games_lists_the_invitations_sent_and_received(players):
    h = players
    assert send(h, ALICE, "knightline invite alice secret bob").ok
    assert send(h, CAROL, "knightline invite carol secret dave alice").ok
    body = h.ok("knightline games bob", sender=None).printed[0].body
    lines = body.splitlines()
    assert "Invitations waiting for answers:" in lines
    assert any(line.startswith("  101  alice") and line.endswith("alice bob") for line in lines)
    assert not any(line.startswith("  102") for line in lines)
    body = h.ok("knightline games alice", sender=None).printed[0].body
    assert "  101  alice" in body and "  102  carol" in body
    body = h.ok("knightline games alice inactive", sender=None).printed[0].body
    assert "Invitations" not in body


def test_robots_accept_their_own_games_invitations_and_decline_others(players):
    h = players
    runner = CliRunner()
    for robot, game in (("robo", "knightpanic"), ("loxbot", "lox")):
        result = runner.invoke(
            cli, ["--home", str(h.home), "robots", "add", robot, game, "mcts", "--seconds", "1"]
        )
        assert result.exit_code == 0, result.output
    result = send(h, ALICE, "knightpanic invite alice secret robo")
    assert result.ok, h.last_error_text(result)
    [sent] = fresh(h)[ALICE][-1:]
    assert sent["Subject"] == "Invitation sent: KnightPanic Board 101"
    assert "Everyone accepted at once" in flat(sent)
    assert board_row(h, 101, "knightpanic")[1] == ["alice", "robo"]
    result = send(h, ALICE, "knightpanic invite alice secret loxbot")
    assert "loxbot is a robot that plays only Lox: it declines" in h.last_error_text(result)


@pytest.mark.parametrize(
    "word, says",
    [
        ("invite", "An invitation reserves a board number"),
        ("decline", "Declines an invitation"),
        ("invitations", 'With "on", a challenge that names you'),
        ("accept", "or an invitation"),
    ],
)
def test_help_for_each_invitation_command(harness, word, says):
    mail = harness.ok(f"help {word}", sender=None).printed[0]
    assert mail.subject == f"Help {word}"
    assert says in " ".join(mail.body.split())
