"""`pbm status`: health figures for monitoring, non-zero past the [status] thresholds."""

import json

from click.testing import CliRunner

from pbm.cli import cli
from pbm.store import Store


def status(harness, *options):
    result = CliRunner().invoke(cli, ["--home", str(harness.home), "status", *options])
    return result.exit_code, result.output


def test_a_fresh_home_reports_that_cleanup_never_ran(harness):
    code, output = status(harness)
    assert code == 1
    assert "outbox:     0 queued; 0 failed" in output
    assert "problem: cleanup has never run" in output
    assert "migrations: none pending" in output


def test_a_healthy_server_exits_zero_and_json_gives_the_same(harness, clock):
    clock("2026-03-01T10:00:00")
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    assert CliRunner().invoke(cli, ["--home", str(harness.home), "cleanup"]).exit_code == 0
    clock("2026-03-01T12:00:00")
    code, output = status(harness)
    assert code == 0, output
    assert "last run 2026-03-01T10:00:00Z (2 h ago)" in output
    code, output = status(harness, "--json")
    assert code == 0
    figures = json.loads(output)
    assert figures["ok"] is True and figures["problems"] == []
    assert figures["activity"] == {
        "boards_active": 1,
        "boards_moved_30d": 1,
        "players_moved_30d": 1,
    }
    assert figures["cleanup"]["hours_ago"] == 2
    assert figures["database"]["bytes"] > 0
    assert figures["pending_migrations"] == []


def test_boards_that_ended_this_month_count_as_moved(harness, clock):
    """`boards_moved_30d` once counted running boards only: 0 after a day of finished games."""
    clock("2026-03-01T10:00:00")
    harness.signup("alice", "bob")
    for number in (101, 102, 103):
        harness.challenge("knightpanic challenge alice bob")
        harness.ok(f"knightpanic move {number} alice secret c1-e5")
        harness.ok(f"knightpanic resign {number} bob secret")
    harness.challenge("knightpanic challenge alice bob")
    activity = json.loads(status(harness, "--json")[1])["activity"]
    assert (activity["boards_active"], activity["boards_moved_30d"]) == (1, 3)
    clock("2026-04-01T10:00:00")
    activity = json.loads(status(harness, "--json")[1])["activity"]
    assert activity["boards_moved_30d"] == 0


def test_thresholds_are_read_from_pbm_ini(harness, clock):
    clock("2026-03-01T10:00:00")
    harness.signup("alice", "bob")
    assert CliRunner().invoke(cli, ["--home", str(harness.home), "cleanup"]).exit_code == 0
    store = Store.open(harness.home / "pbm.db")
    try:
        with store.write():
            store.conn.execute("UPDATE outbox SET status = 'pending', sent_at = NULL")
            store.conn.execute(
                "UPDATE outbox SET status = 'failed' WHERE id = (SELECT min(id) FROM outbox)"
            )
    finally:
        store.close()
    harness.configure(
        "[status]\nmax_queued = 0\nmax_mail_age_minutes = 30\nmax_cleanup_age_hours = 1\n"
    )
    clock("2026-03-01T12:00:00")
    code, output = status(harness, "--json")
    assert code == 1
    figures = json.loads(output)
    assert figures["outbox"]["failed"] == 1 and figures["outbox"]["failed_oldest_minutes"] == 120
    assert figures["outbox"]["queued"] >= 1
    assert figures["outbox"]["queued_oldest_minutes"] == 120
    problems = " | ".join(figures["problems"])
    assert "mails queued (more than 0)" in problems
    assert "the oldest queued mail waits for 120 minutes (more than 30)" in problems
    assert "1 mails failed (more than 0)" in problems
    assert "cleanup last ran 2 hours ago (more than 1)" in problems


def test_pending_migrations_are_a_problem(harness):
    store = Store.open(harness.home / "pbm.db")
    try:
        store.conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm005_password_resets'")
    finally:
        store.close()
    code, output = status(harness)
    assert code == 1
    assert "pbm: m005_password_resets" in output
    assert "problem: 1 migrations pending: run `pbm migrate`" in output
