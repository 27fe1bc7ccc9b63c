"""The server's home directory and its pbm.ini."""

import configparser
import os
import re
import secrets
import textwrap
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

# The free disk space a home needs: `pbm check` asks for it, a restore leaves it free.
MIN_FREE_BYTES = 50 * 1024 * 1024

DEFAULTS = {
    "server": {
        "name": "PBeM Server",
        "address": "pbm@localhost",
        "operator_address": "",
        "bounce_address": "",
        "seek_pairing": "on",
        "player_tournaments": "off",
    },
    "smtp": {
        "host": "",
        "port": "25",
        "security": "none",
        "username": "",
        "password": "",
        "timeout": "30",
    },
    "listen": {
        "host": "127.0.0.1",
        "port": "2525",
        "max_sessions": "32",
        "idle_timeout": "120",
        "max_recipients": "100",
        "max_stalling_commands": "20",
        "max_session_seconds": "600",
    },
    "limits": {
        "max_message_bytes": "1048576",
        "commands_per_hour": "60",
        "signups_per_day": "5",
        "challenges_per_day": "30",
        "boards_per_user_per_day": "20",
        "mails_per_user_per_day": "200",
        "mails_to_unconfirmed_address_per_day": "3",
        "failed_logins_per_hour": "5",
        "failed_logins_per_account_per_hour": "20",
        "max_show_mails": "20",
        "max_multiple_lines": "50",
        "reset_requests_per_day": "5",
        "reset_mails_per_account_per_day": "3",
        "reset_mail_window_minutes": "15",
        "answers_per_address_per_hour": "10",
        "answers_per_address_per_day": "30",
        "answers_per_confirmed_address_per_hour": "60",
        "answers_per_confirmed_address_per_day": "300",
        "mails_per_incoming_mail": "100",
        "bytes_per_incoming_mail": "1048576",
    },
    "timeouts": {
        "nag_days": "7",
        "forfeit_days": "21",
        "archive_days": "14",
        "vacation_days_per_year": "30",
    },
    "broadcast": {"address": ""},
    "mail": {"html": "on", "authserv_id": ""},
    # `pbm web`, the read-only web view (docs/spec/server.md §11.8), behind a reverse proxy;
    # base_url is where board mails link to it.
    "web": {"base_url": "", "host": "127.0.0.1", "port": "8080", "threads": "4"},
    "backup": {"dir": "", "keep": "7", "max_restore_megabytes": "1024"},
    # The DKIM key the MTA's milter signs with, for the DNS records `pbm check` prints
    # (docs/delivery.md); pbm itself never signs.
    "dkim": {"selector": "", "public_key": ""},
    # Continuous replication by Litestream (docs/reliability.md): its configuration, and
    # whether a mail is acknowledged only once Litestream has shipped its commit.
    "replica": {"config": "/etc/litestream.yml", "wait": "off", "timeout": "10"},
    "status": {
        "max_queued": "100",
        "max_failed": "0",
        "max_mail_age_minutes": "60",
        "max_cleanup_age_hours": "26",
        "max_wal_megabytes": "256",
        "max_replica_lag_seconds": "60",
    },
}
# What `pbm init` writes above a key, where its name alone does not say enough.
NOTES = {
    "limits.answers_per_address_per_hour": "Answers (one per incoming mail) to one address "
    "in an hour and in a day; past them the answer is not sent, the command still runs. "
    "An address confirmed for an account has the higher caps below.",
    "limits.mails_per_incoming_mail": "The mail one incoming mail can make the server send, "
    "in mails and bytes; past it the rest of a `multiple` body is not run. A board mail to "
    "a player of a board the mail moves or starts counts as one mail and no bytes.",
    "mail.html": "on|off: whether new accounts get their board mails with an HTML part "
    "showing the board's picture; each user changes it with `html U P on|off`.",
    "dkim.public_key": "The public half of the milter's DKIM key: a PEM public key, or "
    "the <selector>.txt record opendkim-genkey writes; `pbm check` prints the DNS records.",
    "mail.authserv_id": "The authserv-id (e.g. mx.example.org) of the MTA in front of pbm "
    "that checks DMARC and adds Authentication-Results (Postfix with OpenDMARC, rspamd): a mail "
    "it says fails DMARC for its From domain is a stranger's, runs nothing and gets one short "
    "answer (docs/security.md). Empty: no Authentication-Results header is read.",
    "web.base_url": "The http(s) address of the web view: when set, every board mail "
    "links to <base_url>/<game>/<board>.",
    "listen.max_recipients": "RCPT TO accepted in one message of `pbm serve` (452 past "
    "it); RFC 5321 asks for at least 100.",
    "listen.max_stalling_commands": "Commands that do not move a message on (NOOP, RSET, "
    "HELP, VRFY, a refused MAIL or RCPT...) that a `pbm serve` session may send between "
    "two messages; past it the session is closed with 421.",
    "listen.max_session_seconds": "A `pbm serve` session is closed with 421 at its first "
    "command after this long, however busy it keeps.",
    "backup.max_restore_megabytes": "The largest database `pbm restore` unpacks; "
    "`pbm backup` warns when the database has outgrown it.",
    "server.seek_pairing": "on|off: whether open seeks (<game> seek U P N) pair themselves "
    "and start boards; off, seek is only the number the standings show.",
    "replica.config": "Litestream's configuration: when it names this home's pbm.db, "
    "`pbm status` and `pbm check` show how far the replica lags.",
    "replica.wait": "on|off: on acknowledges a mail only after Litestream has shipped "
    "the commit that holds it to the replica; a replica it cannot reach makes mail wait.",
    "replica.timeout": "Seconds a mail waits for Litestream's confirmation before it is "
    "left with the MTA to retry.",
    "server.player_tournaments": "on|off: whether players may create round-robin "
    "tournaments by mail (tournament create NAME GAME U P ...); the operator always can.",
}


# Keys whose values must read as whole numbers (>= 0), and keys with a fixed set of values.
TEXT_KEYS = {
    "server.name",
    "server.address",
    "server.operator_address",
    "server.bounce_address",
    "smtp.host",
    "smtp.username",
    "smtp.password",
    "listen.host",
    "broadcast.address",
    "smtp.security",
    "backup.dir",
    "web.base_url",
    "mail.html",
    "mail.authserv_id",
    "web.host",
    "dkim.selector",
    "dkim.public_key",
    "server.seek_pairing",
    "replica.config",
    "replica.wait",
    "server.player_tournaments",
}
CHOICES = {
    "smtp.security": ("none", "ssl", "starttls"),
    "mail.html": ("on", "off"),
    "server.seek_pairing": ("on", "off"),
    "replica.wait": ("on", "off"),
    "server.player_tournaments": ("on", "off"),
}
# Whole numbers where 0 would stop the service rather than lift a limit.
AT_LEAST_ONE = {
    "listen.max_recipients",
    "listen.max_stalling_commands",
    "listen.max_session_seconds",
    "backup.max_restore_megabytes",
    "limits.mails_per_incoming_mail",
    "limits.bytes_per_incoming_mail",
}
# Limits that must not be above another: an hour's cap within the day's, and an unconfirmed
# address never allowed more than a confirmed one.
ORDERED_LIMITS = (
    ("answers_per_address_per_hour", "answers_per_address_per_day"),
    ("answers_per_confirmed_address_per_hour", "answers_per_confirmed_address_per_day"),
    ("answers_per_address_per_hour", "answers_per_confirmed_address_per_hour"),
    ("answers_per_address_per_day", "answers_per_confirmed_address_per_day"),
)
# A base URL: http(s), a host, an optional port and path; no query, fragment, space or quote,
# since it is written into every board mail and into an HTML attribute.
MAX_BASE_URL_CHARS = 48
# RFC 8601's authserv-id as MTAs write it: a host name.
AUTHSERV_ID_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,253})")
BASE_URL_RE = re.compile(r"https?://[A-Za-z0-9.-]+(?::\d{1,5})?(?:/[A-Za-z0-9._~%/+-]*)?")


class ConfigError(Exception):
    """pbm.ini cannot be used as written: the operator must correct it (mail waits, exit 75)."""


def resolve_home(home: str | os.PathLike | None = None) -> Path:
    if home:
        return Path(home)
    if os.environ.get("PBM_HOME"):
        return Path(os.environ["PBM_HOME"])
    return Path.home() / ".pbm"


@dataclass
class Config:
    home: Path
    parser: configparser.ConfigParser
    _values: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)
    _secret: bytes | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def load(cls, home: str | os.PathLike | None = None, strict: bool = True) -> "Config":
        """The home's configuration. A pbm.ini that cannot be read, or names a section or key
        pbm does not know, or gives a value pbm cannot use, raises ConfigError: a typo must
        stop the server, not silently fall back to a default. strict=False gives the defaults
        for whatever is wrong (used only to tell the operator about it)."""
        home = resolve_home(home)
        defaults = configparser.ConfigParser(interpolation=None)
        defaults.read_dict(DEFAULTS)
        try:
            problems, parser = _read_ini(home / "pbm.ini")
        except ConfigError:
            if strict:
                raise
            return cls(home=home, parser=defaults)
        if problems and strict:
            raise ConfigError(f"{home / 'pbm.ini'}: " + "; ".join(problems))
        for section, values in parser.items():
            if section == "DEFAULT" or section not in DEFAULTS:
                continue
            for name, value in values.items():
                if name in DEFAULTS[section] and not _value_problem(f"{section}.{name}", value):
                    defaults.set(section, name, value)
        return cls(home=home, parser=defaults)

    def get(self, key: str) -> str:
        # A loaded configuration never changes; a move asks for about forty values.
        value = self._values.get(key)
        if value is None:
            section, name = key.split(".", 1)
            value = self._values[key] = self.parser.get(section, name, fallback="").strip()
        return value

    def number(self, key: str) -> int:
        return int(self.get(key))

    @property
    def db_path(self) -> Path:
        return self.home / "pbm.db"

    @cached_property  # a move's mail files ask for it several times
    def outbox_dir(self) -> Path:
        return self.home / "outbox"

    @property
    def secret_key(self) -> bytes:
        """The key of the server's HMACs (reply tokens), made on first use when `pbm init`
        did not make it; two processes making it at once agree on the first one written.
        Read once per loaded configuration: a move signs several tokens."""
        if self._secret is None:
            self._secret = self._read_or_make_secret()
        return self._secret

    def _read_or_make_secret(self) -> bytes:
        path = self.home / "secret.key"
        try:
            return path.read_bytes()
        except FileNotFoundError:
            pass
        # Written whole under a private name, then linked into place: a process that loses
        # the race reads the winner's complete key, never a half-written file.
        draft = path.with_name(f".secret.key.{os.getpid()}.{secrets.token_hex(4)}")
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(secrets.token_bytes(32))
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
        return path.read_bytes()

    @property
    def server_domain(self) -> str:
        return self.get("server.address").rpartition("@")[2] or "localhost"


def _read_ini(path: Path):
    """(problems, parser) for one pbm.ini; a missing file is no problem."""
    # A section or key given twice is not an error: the later one wins, as tests and
    # operators appending a setting expect.
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], parser
    except (OSError, UnicodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from error
    try:
        parser.read_string(text, source=str(path))
    except configparser.Error as error:
        raise ConfigError(" ".join(str(error).split())) from error
    problems = _order_problems(parser)
    for section in parser.sections():
        if section not in DEFAULTS:
            problems.append(f"unknown section [{section}]")
            continue
        for name, value in parser.items(section, raw=True):
            key = f"{section}.{name}"
            if name not in DEFAULTS[section]:
                problems.append(f"unknown key {name} in [{section}]")
            elif problem := _value_problem(key, value):
                problems.append(problem)
    return problems, parser


def _order_problems(parser) -> list[str]:
    """ORDERED_LIMITS broken by the values given (a value with a problem of its own is
    reported as such)."""
    problems = []
    for low, high in ORDERED_LIMITS:
        values = [parser.get("limits", k, fallback=DEFAULTS["limits"][k]) for k in (low, high)]
        if any(_value_problem(f"limits.{k}", v) for k, v in zip((low, high), values)):
            continue
        if int(values[0]) > int(values[1]):
            problems.append(f"limits.{low} = {values[0]} is more than limits.{high} = {values[1]}")
    return problems


def _value_problem(key: str, value: str) -> str | None:
    value = value.strip()
    if key in CHOICES and value not in CHOICES[key]:
        return f"{key} = {value!r} is not one of {', '.join(CHOICES[key])}"
    if key not in TEXT_KEYS and not (value.isascii() and value.isdigit()):
        return f"{key} = {value!r} is not a whole number"
    if key in AT_LEAST_ONE and int(value) < 1:
        return f"{key} = {value!r} must be at least 1"
    if key == "server.address" and "@" not in value:
        return f"server.address = {value!r} is not a mail address"
    if key == "mail.authserv_id" and value and not AUTHSERV_ID_RE.fullmatch(value):
        return (
            f"mail.authserv_id = {value!r} is not an authserv-id such as mx.example.org (the "
            "first word of the Authentication-Results headers your MTA adds)"
        )
    if key == "web.base_url" and value and not BASE_URL_RE.fullmatch(value):
        return (
            f"web.base_url = {value!r} is not an http(s) address such as "
            "https://games.example.org/pbm"
        )
    if key == "web.base_url" and len(value) > MAX_BASE_URL_CHARS:
        return (
            f"web.base_url = {value!r} is longer than {MAX_BASE_URL_CHARS} characters: a board "
            "mail's `Web:` line with the game and board added must fit in 76"
        )
    return None


def default_ini_text() -> str:
    """The pbm.ini written by `pbm init`: every key, commented out at its default."""
    lines = ["# pbm configuration; uncomment a key to change it."]
    for section, values in DEFAULTS.items():
        lines.append(f"\n[{section}]")
        for name, value in values.items():
            note = NOTES.get(f"{section}.{name}", "")
            lines.extend(f"# {line}" for line in textwrap.wrap(note, 76))
            lines.append(f"# {name} = {value}")
    return "\n".join(lines) + "\n"
