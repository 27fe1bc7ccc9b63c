"""Issue 16, the operator's view: every pbm.ini key is read by something, the outbox
listing says what it lists, a first mail can be sent into a new home from the command line."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from pbm.cli import cli
from pbm.config import DEFAULTS, Config, ConfigError, default_ini_text

ROOT = Path(__file__).resolve().parent.parent


def pbm_source() -> str:
    return "\n".join(p.read_text() for p in (ROOT / "pbm").rglob("*.py")
                     if p.name != "config.py")


@pytest.mark.parametrize("key", [f"{s}.{k}" for s, keys in DEFAULTS.items() for k in keys])
def test_every_ini_key_is_read_somewhere(key):
    """A key nothing reads would look like a setting and do nothing: each is looked up
    by its full name, or (the daily limits, looked up per kind) by its own name."""
    name = key.split(".")[1]
    source = pbm_source()
    assert f'"{key}"' in source or f'"{name}"' in source, key


def test_web_base_url_is_gone_and_an_old_ini_naming_it_is_told_how_to_cure_it(tmp_path):
    assert "[web]" not in default_ini_text() and "base_url" not in default_ini_text()
    (tmp_path / "pbm.ini").write_text("[web]\nbase_url = https://games.example.org/\n")
    with pytest.raises(ConfigError, match=r"\[web\] base_url is no longer a setting of pbm.ini"
                                          r" .*delete the \[web\] section"):
        Config.load(tmp_path)
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "check"])
    assert result.exit_code == 1
    assert "problem: " in result.output and "[web] base_url is no longer" in result.output


def test_an_ini_written_by_an_older_pbm_init_still_loads(tmp_path):
    """Older `pbm init`s wrote `[web]` with `# base_url =` under it: that sets nothing."""
    (tmp_path / "pbm.ini").write_text("# pbm configuration\n\n[limits]\n# commands_per_hour = 60"
                                      "\n\n[web]\n# base_url = \n")
    assert Config.load(tmp_path).number("limits.commands_per_hour") == 60
