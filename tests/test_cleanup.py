"""Timeouts (docs/spec/server.md §9): nags, forfeits, votes left undecided, vacations, archiving.

The clock is PBM_NOW, so a 30-day timeline runs in a second."""

from datetime import datetime, timedelta

import pytest
from click.testing import CliRunner

from pbm.cli import cli
from pbm.clock import stamp
from tests.conftest import body_of

START = datetime(2026, 1, 1, 12, 0)
THREAD = "KnightPanic Board 101: alice vs bob"


def nag_to(mail) -> str | None:
    """The address a mail nags about board 101, in the board's thread; None for another mail."""
    is_nag = mail["Subject"] == THREAD and body_of(mail).startswith(
        "Reminder: it is your move on KnightPanic Board 101."
    )
    return mail["To"] if is_nag else None


def at_day(clock, day, hour=12):
    clock((START + timedelta(days=day, hours=hour - 12)).isoformat())


def cleanup(harness, *args):
    result = CliRunner().invoke(cli, ["--home", str(harness.home), "cleanup", *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def board(harness, clock):
    """Board 101 after one full round: alice has been on move since day 0."""
    harness.signup("alice", "bob")
    at_day(clock, 0)
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    harness.ok("knightpanic move 101 bob secret g7-e3")
    harness.new_mails()
    return harness


def test_a_first_round_forfeit_is_a_withdrawal(harness, clock):
    harness.signup("alice", "bob")
    at_day(clock, 0)
    harness.challenge("knightpanic challenge alice bob")
    harness.new_mails()
    at_day(clock, 21)
    cleanup(harness)
    mails = harness.new_mails()
    assert {m["Subject"] for m in mails} == {"KnightPanic board 101 has been removed"}
    assert "alice has declined to play" in body_of(mails[0])


def test_nag_on_day_7_and_forfeit_on_day_21(board, clock):
    nag_days = []
    for day in range(1, 22):
        at_day(clock, day)
        cleanup(board)
        for mail in board.new_mails():
            if nag_to(mail):
                nag_days.append(day)
                assert mail["To"] == "alice@example.org"
                body = body_of(mail)
                assert f"You have not moved in {day} days." in " ".join(body.split())
                assert "If you do not move by 2026-01-22 12:00 UTC, you will forfeit." in " ".join(
                    body.split()
                )
                assert "Nag of KnightPanic Board 101" in body
                assert "It is now....... 2026-" in body
            else:
                assert day == 21
                body = body_of(mail)
                assert "alice forfeits: no move in 21 days." in body
                assert "Game won by bob." in body
                assert "Forfeit" in body
    assert nag_days == list(range(7, 21))
    text = board.ok("knightpanic show 101", sender=None).printed[0].body
    assert "bob's rating went up" in text


def test_nags_at_most_once_a_day(board, clock):
    at_day(clock, 7)
    cleanup(board)
    at_day(clock, 7, hour=20)
    cleanup(board)
    at_day(clock, 8, hour=11)
    cleanup(board)
    assert len([m for m in board.new_mails() if nag_to(m)]) == 1


def test_a_move_resets_the_clock(board, clock):
    at_day(clock, 6)
    board.ok("knightpanic move 101 alice secret a1-c5")
    board.new_mails()
    at_day(clock, 12)
    cleanup(board)
    assert board.new_mails() == []
    at_day(clock, 13)
    cleanup(board)
    assert [nag_to(m) for m in board.new_mails()] == ["bob@example.org"]


def test_vacation_suspends_nags_and_forfeits(board, clock):
    at_day(clock, 2)
    board.ok("vacation alice secret on")
    board.new_mails()
    for day in range(3, 26):
        at_day(clock, day)
        cleanup(board)
    assert board.new_mails() == []
    board.ok("vacation alice secret off")
    board.new_mails()
    cleanup(board)
    assert [nag_to(m) for m in board.new_mails()] == ["alice@example.org"]
    at_day(clock, 45)
    cleanup(board)
    assert all(nag_to(m) == "alice@example.org" for m in board.new_mails())
    at_day(clock, 46)
    cleanup(board)
    assert any("alice forfeits: no move in 21 days." in body_of(m) for m in board.new_mails())


def test_cleanup_ends_a_vacation_whose_allowance_is_used_up(board, clock):
    at_day(clock, 1)
    board.ok("vacation alice secret on")
    board.new_mails()
    at_day(clock, 30)
    cleanup(board)
    assert board.new_mails() == []
    at_day(clock, 31, hour=13)
    output = cleanup(board)
    assert "vacation of alice ended: allowance used up" in output
    mails = board.new_mails()
    off = [m for m in mails if m["Subject"] == "Vacation off for alice"]
    assert off and "used up" in body_of(off[0])
    at_day(clock, 32)
    cleanup(board)
    assert [nag_to(m) for m in board.new_mails()] == ["alice@example.org"]


def test_an_undecided_vote_is_nagged_then_auto_accepted(board, clock):
    at_day(clock, 0, hour=13)
    board.ok("knightpanic move 101 alice secret a1-c5")
    board.ok("knightpanic propose 101 alice secret")
    board.new_mails()
    at_day(clock, 7, hour=14)
    cleanup(board)
    [nag] = board.new_mails()
    assert nag["To"] == "bob@example.org"
    assert nag["Subject"] == THREAD
    assert " ".join(body_of(nag).split()).startswith(
        "Reminder: you still have to accept or reject the draw proposal on KnightPanic Board 101."
    )
    for day in range(8, 22):
        at_day(clock, day, hour=14)
        cleanup(board)
    mails = board.new_mails()
    final = [m for m in mails if m["Subject"] == THREAD and "Reminder:" not in body_of(m)]
    assert final, [m["Subject"] for m in mails]
    body = body_of(final[0])
    assert "bob auto-accepts after 21 days." in body
    assert "The players have agreed to a draw." in body and "Game was a tie." in body


def test_total_time_forfeits_even_on_vacation(harness, clock):
    harness.signup("alice", "bob")
    at_day(clock, 0)
    harness.challenge("knightpanic challenge alice bob --totaltime=3")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    harness.ok("knightpanic move 101 bob secret g7-e3")
    harness.ok("vacation alice secret on")
    at_day(clock, 3)
    assert "alice forfeits (total time)" in cleanup(harness)


def test_finished_boards_are_archived_after_14_days(board, clock):
    at_day(clock, 1)
    board.ok("knightpanic resign 101 alice secret")
    at_day(clock, 15, hour=13)
    assert "KnightPanic Board 101: archived" in cleanup(board)
    games = board.ok("knightpanic games", sender=None).printed[0].body
    assert "No boards found." in games
    archived = board.ok("knightpanic games alice archived", sender=None).printed[0].body
    assert "bob Won (archived)" in archived
    shown = board.ok("knightpanic show 101#1", sender=None).printed[0].body
    assert "after move 1" in shown


def test_dry_run_and_nag_mode_change_nothing_else(board, clock):
    at_day(clock, 25)
    assert "would do: KnightPanic Board 101: alice forfeits (no move)" in cleanup(
        board, "--dry-run"
    )
    assert board.new_mails() == []
    assert "nag to alice" in cleanup(board, "--mode", "nag")
    assert [nag_to(m) for m in board.new_mails()] == ["alice@example.org"]
    text = board.ok("knightpanic show 101", sender=None).printed[0].body
    assert "It is alice's turn." in text


def test_cleanup_by_mail_is_for_the_operator_only(board, clock):
    assert "only available to the operator" in board.refused("cleanup")
    assert "only available to the operator" in board.refused("knightpanic cleanup nag")
    at_day(clock, 8)
    result = board.ok("knightpanic cleanup nag", sender=None)
    assert "nag to alice" in result.printed[0].body


def test_per_board_nag_and_forfeit_times(harness, clock):
    harness.signup("alice", "bob")
    at_day(clock, 0)
    harness.challenge("knightpanic challenge alice bob --nagtime=2 --forfeittime=4")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    harness.ok("knightpanic move 101 bob secret g7-e3")
    harness.ok("knightpanic move 101 alice secret a1-c5")
    harness.new_mails()
    at_day(clock, 1)
    assert cleanup(harness).strip() == "Nothing to do."
    at_day(clock, 2)
    assert "nag to bob" in cleanup(harness)
    at_day(clock, 4)
    assert "bob forfeits (no move)" in cleanup(harness)
    body = body_of(harness.new_mails("alice@example.org")[-1])
    assert "Nag time........ 2 days" in body and "Forfeit time.... 4 days" in body


def test_one_failing_board_does_not_stop_the_run(harness, clock, monkeypatch):
    import pbm.cleanup

    harness.signup("alice", "bob")
    at_day(clock, 0)
    for _ in range(2):
        harness.challenge("knightpanic challenge alice bob")
    for number in (101, 102):
        harness.ok(f"knightpanic move {number} alice secret c1-e5")
        harness.ok(f"knightpanic move {number} bob secret g7-e3")
    real = pbm.cleanup._clean_board

    def broken_first(ctx, board_id, mode, report):
        if ctx.store.boards.by_id(board_id).number == 101:
            raise RuntimeError("a plugin bug")
        real(ctx, board_id, mode, report)

    monkeypatch.setattr(pbm.cleanup, "_clean_board", broken_first)
    at_day(clock, 8)
    output = cleanup(harness)
    assert "board knightpanic 101: failed and skipped (RuntimeError: a plugin bug)" in output
    assert "KnightPanic Board 102: nag to alice" in output


def test_a_move_made_after_the_listing_is_seen(harness, clock, monkeypatch):
    """Cleanup lists the boards first; each board is read again in its own transaction."""
    import pbm.cleanup

    harness.signup("alice", "bob")
    at_day(clock, 0)
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    harness.ok("knightpanic move 101 bob secret g7-e3")
    real = pbm.cleanup._clean_board

    def move_first(ctx, board_id, mode, report):
        ctx.store.boards.append_ply(
            board_id,
            ply=3,
            seat=0,
            userid="alice",
            kind="move",
            text="a1-c5",
            auto=False,
            charged=0,
            at=stamp(ctx.now),
        )
        real(ctx, board_id, mode, report)

    monkeypatch.setattr(pbm.cleanup, "_clean_board", move_first)
    at_day(clock, 25)
    assert "forfeits" not in cleanup(harness)
