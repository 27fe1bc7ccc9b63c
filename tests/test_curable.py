"""Issue 13 part 3: a mail is answered or retried, never swallowed. Each failure an operator
can cure is made to really happen; mail_handler.py then exits 75 with one line naming the
cause and the cure, the operator hears of it at most once an hour, and once the cause is
cured the same mail is answered. `pbm check` names the same causes beforehand.

Tests may run as root, whom permission bits do not stop: the processes under test then run
without CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER, so the bits bind them as
they bind a service user."""

import ctypes
import os
import shutil
import signal
import smtplib
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pbm.cli import cli
from pbm.config import (
    AT_LEAST_ONE,
    AUTHSERV_ID_RE,
    BASE_URL_RE,
    CHOICES,
    DEFAULTS,
    MAX_BASE_URL_CHARS,
    ORDERED_LIMITS,
    TEXT_KEYS,
    Config,
    ConfigError,
)
from tests.conftest import GENEROUS_LIMITS, ROOT, free_port
from tests.mailpipe import command_mail, inbox

PBM = Path(sys.executable).parent / "pbm"
EX_TEMPFAIL = 75
PR_CAPBSET_DROP = 24
PERMISSION_OVERRIDES = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
OPERATOR = "operator@example.org"


def as_service_user():
    """preexec_fn: a root process gives up what lets it ignore permission bits."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in PERMISSION_OVERRIDES:
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "cannot drop the permission overrides")


def run_as_service_user(args, env, raw=b""):
    return subprocess.run(
        args,
        input=raw,
        env=env,
        cwd=ROOT,
        capture_output=True,
        timeout=120,
        preexec_fn=as_service_user,
    )


def pipe(env, raw):
    return run_as_service_user([sys.executable, str(ROOT / "mail_handler.py")], env, raw)


def check(env):
    return run_as_service_user([str(PBM), "check"], env)


@pytest.fixture
def home(project_env, tmp_path):
    home = Path(project_env["PBM_HOME"])
    assert CliRunner().invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS + f"[server]\noperator_address = {OPERATOR}\n")
    result = check(project_env)
    assert result.returncode == 0 and b"is ready for mail" in result.stdout, result
    return home


def make_readonly_db(home):
    (home / "pbm.db").chmod(0o444)


def leave_readonly_shm(home):
    """A -shm left behind 0444 by another user's process, beside a WAL database."""
    (home / "pbm.db-shm").write_bytes(b"\0" * 32768)
    (home / "pbm.db-shm").chmod(0o444)


def make_readonly_home(home):
    home.chmod(0o555)


def corrupt_db(home):
    data = bytearray((home / "pbm.db").read_bytes())
    data[:4096] = b"this is not a database " * 178 + b"xx"
    (home / "pbm.db").write_bytes(bytes(data))


def remove_db(home):
    (home / "pbm.db").rename(home / "pbm.db.away")


def unknown_ini_key(home):
    with open(home / "pbm.ini", "a") as ini:
        ini.write("[limits]\ncomands_per_hour = 10\n")


def bad_ini_value(home):
    with open(home / "pbm.ini", "a") as ini:
        ini.write("[limits]\nmax_message_bytes = 1MB\n")


def broken_ini_syntax(home):
    (home / "pbm.ini").write_text("operator_address = " + OPERATOR + "\n" + GENEROUS_LIMITS)


def unreadable_ini(home):
    (home / "pbm.ini").chmod(0o000)


def unmigrated_db(home):
    """A database file nobody ran the migrations on (created by hand, or restored wrongly)."""
    from pbm.store import Store

    (home / "pbm.db").unlink()
    Store.open(home / "pbm.db").close()


# (name, cause it, the words of the pipe's line, the words of `pbm check`'s)
CAUSES = [
    ("database file read-only", make_readonly_db, "read-only", "pbm.db: Permission denied"),
    ("-shm left 0444", leave_readonly_shm, "read-only", "pbm.db-shm: Permission denied"),
    ("home not writable", make_readonly_home, "write access to the home", "cannot write in"),
    ("database corrupt", corrupt_db, "damaged", "restore"),
    ("database missing", remove_db, "No database", "run `pbm init`"),
    (
        "unknown key in pbm.ini",
        unknown_ini_key,
        "unknown key comands_per_hour",
        "unknown key comands_per_hour",
    ),
    ("unparsable value in pbm.ini", bad_ini_value, "not a whole number", "not a whole number"),
    ("pbm.ini without a section", broken_ini_syntax, "no section headers", "no section headers"),
    ("pbm.ini unreadable", unreadable_ini, "cannot read", "cannot read"),
]


def cure(home):
    """Put everything back as `pbm init` left it."""
    home.chmod(0o700)
    if (home / "pbm.db.away").exists():
        (home / "pbm.db.away").rename(home / "pbm.db")
    for name in ("pbm.db", "pbm.db-wal", "pbm.db-shm", "pbm.ini"):
        if (home / name).exists():  # sqlite makes -shm as the database is: 0444 too
            (home / name).chmod(0o600)
    (home / "pbm.ini").write_text(GENEROUS_LIMITS + f"[server]\noperator_address = {OPERATOR}\n")


@pytest.mark.parametrize("name,cause,words,check_words", CAUSES, ids=[c[0] for c in CAUSES])
def test_a_curable_failure_keeps_the_mail_until_cured(
    home, project_env, name, cause, words, check_words
):
    seen = set()
    inbox(home, seen)
    backup = (home / "pbm.db").read_bytes()
    cause(home)
    raw = command_mail("alice@example.org", "help")
    first = pipe(project_env, raw)
    assert first.returncode == EX_TEMPFAIL, (name, first)
    line = first.stderr.decode()
    assert line.startswith("pbm: try again later:") and words in line and " -- " in line, line
    checked = check(project_env)
    assert checked.returncode == 1 and check_words in checked.stdout.decode(), checked
    second = pipe(project_env, raw)
    assert second.returncode == EX_TEMPFAIL
    cure(home)
    if name == "database corrupt":
        (home / "pbm.db").write_bytes(backup)
    assert check(project_env).returncode == 0, check(project_env).stdout
    mails = inbox(home, seen)
    alerts = mails.get(OPERATOR, [])
    # Told once for the two mails, when pbm.ini still named the operator.
    assert len(alerts) <= 1
    if "ini" not in name and name != "home not writable":
        assert len(alerts) == 1 and "Cure:" in alerts[0].get_content(), (name, mails)
    assert "alice@example.org" not in mails
    third = pipe(project_env, raw)
    assert third.returncode == 0, third
    answer = inbox(home, seen)
    assert list(answer) == ["alice@example.org"], answer


def test_pbm_check_names_each_cause_with_its_cure(home, project_env):
    make_readonly_db(home)
    unknown_ini_key(home)
    (home / "outbox" / "new").chmod(0o555)
    result = check(project_env)
    lines = result.stdout.decode().splitlines()
    assert result.returncode == 1
    assert any("unknown key comands_per_hour" in line for line in lines), lines
    assert any("cannot write" in line and "pbm.db" in line for line in lines), lines
    assert any("outbox/new" in line and "write access" in line for line in lines), lines
    assert all(line.startswith("problem: ") and " -- " in line for line in lines), lines


def test_pbm_check_finds_pending_migrations_and_a_missing_home(home, project_env, tmp_path):
    unmigrated_db(home)
    lines = check(project_env).stdout.decode()
    assert "migrations pending -- run `pbm migrate`" in lines, lines
    env = dict(project_env, PBM_HOME=str(tmp_path / "nowhere"))
    result = check(env)
    assert result.returncode == 1 and b"run `pbm init`" in result.stdout


def test_a_failing_alert_still_gives_the_log_line_and_the_retry(home, project_env):
    """Even the alert state cannot be written (home and log read-only): 75 and the line."""
    make_readonly_db(home)
    (home / "log").chmod(0o555)
    (home / "outbox" / "new").chmod(0o555)
    result = pipe(project_env, command_mail("alice@example.org", "help"))
    assert result.returncode == EX_TEMPFAIL
    assert b"read-only" in result.stderr


def test_serve_answers_451_while_the_disk_is_full_then_250(home, project_env):
    """A full disk, made real for the running listener with a file size limit (EFBIG, as a
    quota gives), then lifted: 451 while it lasts, 250 after, nothing lost."""
    import resource

    port = free_port()
    process = subprocess.Popen(
        [str(PBM), "serve", "--port", str(port)],
        env=project_env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        preexec_fn=as_service_user,
    )
    seen = set()
    try:
        assert b"listening" in process.stdout.readline()
        inbox(home, seen)
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
            client.send_message(command_mail_message("help"))
            resource.prlimit(process.pid, resource.RLIMIT_FSIZE, (1, resource.RLIM_INFINITY))
            waiting = command_mail_message("help")
            with pytest.raises(smtplib.SMTPDataError) as refused:
                client.send_message(waiting)
            assert refused.value.smtp_code == 451
            resource.prlimit(
                process.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
            )
            assert client.send_message(waiting) == {}
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    answers = inbox(home, seen).get("alice@example.org", [])
    assert len(answers) == 2  # the first mail and the one that waited, once each


def command_mail_message(subject):
    import email
    import email.policy

    return email.message_from_bytes(
        command_mail("alice@example.org", subject), policy=email.policy.default
    )


INI_VALUES = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)


def usable(section, key, value) -> bool:
    """The rule of pbm/config.py, restated: a known key, a whole number unless it is a text
    setting, one of the choices where there are choices, an address for server.address, a
    short http(s) address (or nothing) for web.base_url, at least 1 where 0 would stop the
    service, a host-name token (or nothing) for mail.authserv_id, an answer cap in order with
    the others (an hour's within its day's, an unconfirmed address's within a confirmed
    one's)."""
    name = f"{section}.{key}"
    value = value.strip()
    if key not in DEFAULTS[section]:
        return False
    if name in CHOICES:
        return value in CHOICES[name]
    if name == "server.address":
        return "@" in value
    if name == "web.base_url":
        return not value or (
            BASE_URL_RE.fullmatch(value) is not None and len(value) <= MAX_BASE_URL_CHARS
        )
    if name in AT_LEAST_ONE:
        return value.isascii() and value.isdigit() and int(value) >= 1
    if name == "mail.authserv_id":
        return not value or AUTHSERV_ID_RE.fullmatch(value) is not None
    if name in TEXT_KEYS:
        return True
    if not (value.isascii() and value.isdigit()):
        return False
    return section != "limits" or all(
        _in_order(key, value, low, high) for low, high in ORDERED_LIMITS if key in (low, high)
    )


def _in_order(key, value, low, high) -> bool:
    """An ordered pair of limits still in order with this one value and the other default."""
    given = {low: DEFAULTS["limits"][low], high: DEFAULTS["limits"][high], key: value}
    return int(given[low]) <= int(given[high])


@settings(max_examples=150, deadline=None)
@given(
    section=st.sampled_from(sorted(DEFAULTS)),
    key=st.one_of(
        st.sampled_from(sorted({k for v in DEFAULTS.values() for k in v})),
        st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=20),
    ),
    value=st.one_of(INI_VALUES, st.integers(0, 10**6).map(str)),
)
def test_any_ini_setting_is_used_or_refused_never_ignored(tmp_path_factory, section, key, value):
    """Hypothesis: a setting pbm does not know or cannot use raises ConfigError; one it can
    use is the value it reads."""
    home = tmp_path_factory.mktemp("ini")
    (home / "pbm.ini").write_text(f"[{section}]\n{key} = {value}\n", encoding="utf-8")
    if not usable(section, key, value):
        with pytest.raises(ConfigError):
            Config.load(home)
        return
    assert Config.load(home).get(f"{section}.{key}") == value.strip()


def test_a_setting_given_twice_takes_the_later_value(tmp_path):
    (tmp_path / "pbm.ini").write_text(
        "[limits]\ncommands_per_hour = 5\n[limits]\ncommands_per_hour = 7\n"
    )
    assert Config.load(tmp_path).number("limits.commands_per_hour") == 7


def test_the_operator_is_told_again_after_an_hour(home, project_env):
    """The once-an-hour memory is per kind of cause, kept in log/alerts.json."""
    import json

    seen = set()
    inbox(home, seen)
    make_readonly_db(home)
    assert pipe(project_env, command_mail("alice@example.org", "help")).returncode == EX_TEMPFAIL
    assert len(inbox(home, seen).get(OPERATOR, [])) == 1
    assert pipe(project_env, command_mail("alice@example.org", "help")).returncode == EX_TEMPFAIL
    assert inbox(home, seen) == {}
    state_file = home / "log" / "alerts.json"
    state = json.loads(state_file.read_text())
    state_file.write_text(json.dumps({kind: at - 3601 for kind, at in state.items()}))
    assert pipe(project_env, command_mail("alice@example.org", "help")).returncode == EX_TEMPFAIL
    assert len(inbox(home, seen).get(OPERATOR, [])) == 1


def test_with_a_relay_the_operator_alert_goes_over_smtp(home, project_env):
    """The alert cannot use the outbox table, so it is sent straight to the relay."""
    from tests.test_delivery import start_relay

    port = free_port()
    with open(home / "pbm.ini", "a") as ini:
        ini.write(f"[smtp]\nhost = 127.0.0.1\nport = {port}\n")
    recorder, controller = start_relay(port)
    try:
        remove_db(home)
        assert pipe(project_env, command_mail("alice@example.org", "help")).returncode == 75
    finally:
        controller.stop()
    [envelope] = recorder.messages
    assert envelope.rcpt_tos == [OPERATOR]
    assert b"No database" in envelope.original_content


def test_the_maildir_alert_makes_the_outbox_folders_it_needs(home, project_env):
    shutil.rmtree(home / "outbox", ignore_errors=True)
    remove_db(home)
    assert pipe(project_env, command_mail("alice@example.org", "help")).returncode == 75
    [alert] = (home / "outbox" / "new").iterdir()
    assert b"No database" in alert.read_bytes()
