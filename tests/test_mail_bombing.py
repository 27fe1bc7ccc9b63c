"""Issue 13.6: the server cannot be used to mail-bomb a third party. Mail to an address no
command of that account has come from is capped per day, whatever the command."""

import sqlite3

import sqlite_utils
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm.config import Config
from pbm.store import Store, core_migrations
from tests.conftest import STRESS_FACTOR, Harness

CAP = "[limits]\nmails_to_unconfirmed_address_per_day = 3\n"
VICTIM = "victim@target.example"


def test_twelve_address_changes_send_the_stranger_three_mails(harness, clock):
    harness.configure(CAP)
    harness.signup("alice")
    clock("2026-04-01T10:00:00")
    harness.new_mails()
    for _n in range(12):
        harness.ok(
            f"change address alice secret alice@example.org {VICTIM}", sender="alice@example.org"
        )
        harness.ok("change address alice secret alice@example.org", sender="alice@example.org")
    assert len(harness.new_mails(VICTIM)) == 3
    assert len(harness.mails("alice@example.org")) == 1 + 24, "the owner hears of every change"
    clock("2026-04-02T10:00:01")
    harness.ok(
        f"change address alice secret alice@example.org {VICTIM}", sender="alice@example.org"
    )
    assert len(harness.new_mails(VICTIM)) == 1, "the cap is per day"


def test_forged_signups_naming_a_stranger_are_capped_in_all(harness):
    harness.configure(CAP)
    for n in range(12):
        harness.ok(f"signup forged{n} secret {VICTIM}", sender=f"farm{n}@example.net")
    assert len(harness.mails(VICTIM)) == 3
    assert all(len(harness.mails(f"farm{n}@example.net")) == 1 for n in range(12))
    mail = harness.mails(VICTIM)[0].get_content()
    assert "Account forged0 created" in mail


def test_a_command_from_the_address_confirms_it(harness, clock):
    harness.configure(CAP)
    harness.signup("alice")
    clock("2026-04-01T10:00:00")
    both = "change address alice {} alice@example.org alice@work.example"
    harness.ok("add alice secret alice@work.example", sender="alice@example.org")
    [changed] = harness.new_mails("alice@work.example")
    assert "send any command with your password from it" in changed.get_content()
    for _ in range(4):
        harness.ok(both.format("secret"), sender="alice@example.org")
    assert len(harness.new_mails("alice@work.example")) == 2, "3 a day until confirmed"
    assert "Invalid password" in harness.refused(both.format("wrong"), sender="alice@work.example")
    harness.new_mails()
    harness.ok(both.format("secret"), sender="alice@example.org")
    assert harness.new_mails("alice@work.example") == [], "a wrong password confirms nothing"
    harness.ok(both.format("secret"), sender="alice@work.example")
    for _ in range(3):
        harness.ok(both.format("secret"), sender="alice@example.org")
    assert len(harness.new_mails("alice@work.example")) == 4, "confirmed: no cap any more"


def test_addresses_registered_before_the_upgrade_count_as_confirmed(tmp_path):
    db = sqlite_utils.Database(tmp_path / "pbm.db")
    core_migrations().apply(db, stop_before="m004_address_proofs")
    db["users"].insert(
        {
            "userid": "old",
            "password_hash": "x",
            "status": "active",
            "created_at": "2020-01-01T00:00:00",
        }
    )
    db["addresses"].insert({"userid": "old", "address": "Old@Example.org", "position": 0})
    core_migrations().apply(db)
    store = Store(sqlite3.connect(tmp_path / "pbm.db"))
    store.conn.row_factory = sqlite3.Row
    assert store.limits.address_proven("old", "old@example.org")
    assert not store.limits.address_proven("old", "new@example.org")


# -- generated variants ----------------------------------------------------------------

actions = st.lists(
    st.tuples(
        st.sampled_from(["change", "add", "signup", "challenge"]),
        st.sampled_from(["v1@t.example", "v2@t.example", "V1@T.example"]),
        st.integers(0, 23),
    ),
    min_size=1,
    max_size=20,
)


@settings(
    max_examples=5 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sequence=actions)
def test_generated_commands_never_send_a_stranger_more_than_the_cap(
    tmp_path_factory, monkeypatch, sequence
):
    harness = Harness(tmp_path_factory.mktemp("home"))
    harness.configure(CAP)
    harness.signup("alice", "bob")
    for n, (action, victim, hour) in enumerate(sequence):
        monkeypatch.setenv("PBM_NOW", f"2026-04-01T{hour:02d}:{n:02d}:00")
        text = {
            "change": f"change address alice secret alice@example.org {victim}",
            "add": f"add alice secret {victim}",
            "signup": f"signup farm{n} secret {victim}",
            "challenge": "knightpanic challenge alice bob",
        }[action]
        harness.run(text, sender="alice@example.org")
        if action == "add":
            harness.run("change address alice secret alice@example.org", sender="alice@example.org")
    for victim in ("v1@t.example", "v2@t.example"):
        received = [m for m in harness.mails() if victim in str(m["To"]).lower()]
        assert len(received) <= 3, (victim, [m["Subject"] for m in received])
    assert Config.load(harness.home).number("limits.mails_to_unconfirmed_address_per_day") == 3
