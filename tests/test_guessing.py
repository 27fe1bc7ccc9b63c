"""Issue 13.5: password guessing is limited per account across all senders, and a command
that will not get as far as its password costs no argon2 work."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm import security
from pbm.config import Config
from pbm.mailin import start_password_check
from pbm.request import Request
from tests.conftest import STRESS_FACTOR, Harness

LIMITS = "[limits]\nfailed_logins_per_hour = 3\nfailed_logins_per_account_per_hour = 5\n"


class Argon2Counter:
    """Counts the argon2 verifications and hashes the server runs."""

    def __init__(self, hasher):
        self.verified = self.hashed = 0
        self._hasher = hasher

    def verify(self, *args):
        self.verified += 1
        return self._hasher.verify(*args)

    def hash(self, *args):
        self.hashed += 1
        return self._hasher.hash(*args)

    def check_needs_rehash(self, *args):
        return self._hasher.check_needs_rehash(*args)


def count_argon2(monkeypatch) -> Argon2Counter:
    security._dummy_hash()  # made once per process, not per command
    counter = Argon2Counter(security._hasher())
    monkeypatch.setattr(security, "_hasher", lambda: counter)
    return counter


def game(harness):
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    harness.new_mails()


def test_changing_the_sender_does_not_give_more_guesses(harness, clock):
    harness.configure(LIMITS)
    game(harness)
    clock("2026-04-01T10:00:00")
    for n in range(6):
        assert "Invalid password entered" in harness.refused(
            f"knightpanic move 101 alice guess{n} c1-e5", sender=f"evil{n}@example.net"
        )
    message = harness.refused("knightpanic move 101 alice secret c1-e5", sender="new@example.net")
    assert (
        "Too many failed password attempts for alice from addresses not registered to it; "
        "try again after 2026-04-01 11:00 UTC"
    ) in message
    [notice] = harness.new_mails("alice@example.org")
    assert notice["Subject"] == "Password guessing on alice"
    assert "6 wrong passwords" in notice.get_content()
    harness.ok("knightpanic move 101 alice secret c1-e5", sender="alice@example.org")
    harness.ok("knightpanic move 101 bob secret g7-e3", sender="new@example.net")
    clock("2026-04-01T10:30:00")
    harness.refused("knightpanic move 101 alice guess c1-e5", sender="other@example.net")
    assert not [m for m in harness.new_mails("alice@example.org") if "guessing" in m["Subject"]], (
        "the owner is told once"
    )
    clock("2026-04-01T11:00:01")
    harness.ok("knightpanic move 101 alice secret a1-c5", sender="new@example.net")


def test_a_flood_of_password_commands_costs_no_argon2(harness, clock, monkeypatch):
    harness.configure(LIMITS + "commands_per_hour = 20\n")
    game(harness)
    clock("2026-04-01T10:00:00")
    for n in range(6):
        harness.refused(f"knightpanic move 101 alice guess{n} c1-e5", sender=f"e{n}@example.net")
    counter = count_argon2(monkeypatch)
    for n in range(30):
        harness.refused(f"knightpanic move 101 alice guess{n} c1-e5", sender=f"f{n}@example.net")
    for n in range(30):
        harness.run(f"knightpanic chat 101 bob guess{n}", sender="flood@example.net")
    assert counter.verified == 3 + 1, "the pair lock and then the hourly limit stop argon2"
    assert counter.hashed == 0
    harness.run("knightpanic move 101 bob secret c1-e5", sender="bob@example.org", key="<k1@x>")
    verified = counter.verified
    for _ in range(5):
        assert harness.run("knightpanic move 101 bob secret c1-e5", key="<k1@x>").duplicate
    harness.run("signup zed pw1234", sender="flood@example.net")
    assert counter.verified == verified and counter.hashed == 0


def test_the_early_check_does_not_start_for_a_command_that_will_not_run(harness, clock):
    harness.configure(LIMITS)
    game(harness)
    clock("2026-04-01T10:00:00")
    config = Config.load(harness.home)
    text = "knightpanic move 101 alice secret c1-e5"
    assert start_password_check(config, Request(text=text, sender="alice@example.org")) is not None
    harness.run(text, sender="alice@example.org", key="<seen@x>")
    assert (
        start_password_check(config, Request(text=text, sender="a@b.org", key="<seen@x>")) is None
    )
    for n in range(6):
        harness.refused(f"knightpanic move 101 alice guess{n} c1-e5", sender=f"e{n}@example.net")
    assert start_password_check(config, Request(text=text, sender="x@example.net")) is None
    early = start_password_check(config, Request(text=text, sender="alice@example.org"))
    assert early is not None and early.verdict("alice", "secret", security_hash(harness, "alice"))


def security_hash(harness, userid):
    from pbm.store import Store

    store = Store.open(harness.home / "pbm.db")
    try:
        return store.users.password_hash(userid)
    finally:
        store.close()


# -- generated variants ----------------------------------------------------------------

attempts = st.lists(
    st.tuples(
        st.sampled_from(["owner", "stranger", "other-owner"]),
        st.integers(0, 40),
        st.booleans(),
        st.integers(0, 59),
    ),
    min_size=1,
    max_size=25,
)


@settings(
    max_examples=6 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sequence=attempts)
def test_generated_guessing_never_passes_the_account_limit(tmp_path_factory, monkeypatch, sequence):
    harness = Harness(tmp_path_factory.mktemp("home"))
    harness.configure(LIMITS + "commands_per_hour = 1000\n")
    harness.signup("alice", "bob")
    harness.ok("add alice secret alice@work.example", sender="alice@example.org")
    monkeypatch.setenv("PBM_NOW", "2026-04-01T10:00:00")
    counter = count_argon2(monkeypatch)
    stranger_guesses = 0
    for who, n, right, minute in sorted(sequence, key=lambda a: a[3]):
        monkeypatch.setenv("PBM_NOW", f"2026-04-01T10:{minute:02d}:00")
        sender = {
            "owner": "alice@example.org",
            "other-owner": "alice@work.example",
            "stranger": f"s{n}@example.net",
        }[who]
        before, locked = counter.verified, _pair_locked(harness, sender)
        password = "secret" if right else f"guess{n}"
        result = harness.run(
            f"change address alice {password} alice@example.org alice@work.example", sender=sender
        )
        if who != "stranger" and right and not locked:
            assert result.ok, "the owner's own addresses keep working"
        if who == "stranger" and not right:
            stranger_guesses += counter.verified - before
    assert stranger_guesses <= 5 + 1, "more than the account limit reached argon2 within the hour"
    notices = [m for m in harness.mails("alice@example.org") if "guessing" in str(m["Subject"])]
    assert len(notices) <= 1


def _pair_locked(harness, sender) -> bool:
    from pbm.clock import now
    from pbm.store import Store

    store = Store.open(harness.home / "pbm.db")
    try:
        return security.login_lock(store, harness.config, "alice", sender, now()) is not None
    finally:
        store.close()


def test_pbm_serve_starts_no_check_for_a_locked_account(harness, clock):
    from pbm.request import Request
    from pbm.serve import MailService

    harness.configure(LIMITS)
    game(harness)
    clock("2026-04-01T10:00:00")
    for n in range(6):
        harness.refused(f"knightpanic move 101 alice guess{n} c1-e5", sender=f"e{n}@example.net")
    service = MailService(Config.load(harness.home))
    try:
        text = "knightpanic move 101 alice secret c1-e5"
        config = service.config
        early = service.early_check(config, Request(text=text, sender="x@example.net"))
        assert early is None
        early = service.early_check(config, Request(text=text, sender="alice@example.org"))
        assert early is not None
    finally:
        service.close()


def test_pbm_serve_reads_the_limits_even_for_a_password_its_cache_knows(harness, clock):
    """While an account is locked, pbm serve's reader does the same work for its right
    password (which its cache of successful checks knows) as for a wrong one: no check
    starts for either, so neither the verdict nor the time it takes tells a guess right
    from wrong. (Skipping the limit reads for a known password was measured for issue 31
    and left out for this reason.)"""
    from pbm.serve import MailService

    harness.configure(LIMITS)
    game(harness)
    clock("2026-04-01T10:00:00")
    text = "knightpanic move 101 alice secret c1-e5"
    service = MailService(Config.load(harness.home))
    try:
        config = service.config
        stored = security_hash(harness, "alice")
        first = service.early_check(config, Request(text=text, sender="alice@example.org"))
        assert first.verdict("alice", "secret", stored) is True
        assert service.checks.passwords.known("alice", "secret", stored)
        for n in range(6):
            harness.refused(
                f"knightpanic move 101 alice guess{n} c1-e5", sender=f"e{n}@example.net"
            )
        for password in ("secret", "guess9"):
            stranger = Request(text=text.replace("secret", password), sender="x@example.net")
            assert service.early_check(config, stranger) is None
    finally:
        service.close()
