"""The server's home directory and its pbm.ini."""

import configparser
import os
from dataclasses import dataclass
from pathlib import Path

DEFAULTS = {
    "server": {
        "name": "PBeM Server",
        "address": "pbm@localhost",
        "operator_address": "",
        "bounce_address": "",
    },
    "smtp": {
        "host": "",
        "port": "25",
        "security": "none",
        "username": "",
        "password": "",
        "timeout": "30",
    },
    "listen": {"host": "127.0.0.1", "port": "2525"},
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
    },
    "timeouts": {
        "nag_days": "7",
        "forfeit_days": "21",
        "archive_days": "14",
        "vacation_days_per_year": "30",
    },
    "broadcast": {"address": ""},
    "web": {"base_url": ""},
}


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

    @classmethod
    def load(cls, home: str | os.PathLike | None = None) -> "Config":
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        parser.read_dict(DEFAULTS)
        home = resolve_home(home)
        parser.read(home / "pbm.ini", encoding="utf-8")
        return cls(home=home, parser=parser)

    def get(self, key: str) -> str:
        section, name = key.split(".", 1)
        return self.parser.get(section, name, fallback="").strip()

    def number(self, key: str) -> int:
        return int(self.get(key))

    @property
    def db_path(self) -> Path:
        return self.home / "pbm.db"

    @property
    def outbox_dir(self) -> Path:
        return self.home / "outbox"

    @property
    def server_domain(self) -> str:
        return self.get("server.address").rpartition("@")[2] or "localhost"


def default_ini_text() -> str:
    """The pbm.ini written by `pbm init`: every key, commented out at its default."""
    lines = ["# pbm configuration; uncomment a key to change it."]
    for section, values in DEFAULTS.items():
        lines.append(f"\n[{section}]")
        lines.extend(f"# {name} = {value}" for name, value in values.items())
    return "\n".join(lines) + "\n"
