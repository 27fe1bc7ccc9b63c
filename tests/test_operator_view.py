"""Issue 16, the operator's view: every pbm.ini key is read by something, the outbox
listing says what it lists, a first mail can be sent into a new home from the command line."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from pbm.cli import cli
from pbm.config import DEFAULTS, Config, ConfigError, default_ini_text

ROOT = Path(__file__).resolve().parent.parent


def pbm_source() -> str:
    return "\n".join(p.read_text() for p in (ROOT / "pbm").rglob("*.py") if p.name != "config.py")


@pytest.mark.parametrize("key", [f"{s}.{k}" for s, keys in DEFAULTS.items() for k in keys])
def test_every_ini_key_is_read_somewhere(key):
    """A key nothing reads would look like a setting and do nothing: each is looked up
    by its full name, or (the daily limits, looked up per kind) by its own name."""
    name = key.split(".")[1]
    source = pbm_source()
    assert f'"{key}"' in source or f'"{name}"' in source, key


@pytest.mark.parametrize(
    "value",
    [
        "ftp://games.example.org/",
        "javascript:alert(1)",
        'https://games.example.org/"onmouseover=x',
        "https://games.example.org/a b",
        "games.example.org",
        "https://" + "g" * 60 + ".example.org",
    ],
)
def test_web_base_url_must_be_a_short_http_address_and_check_names_what_is_wrong(tmp_path, value):
    """It is written into every board mail and an HTML link (docs/spec/server.md §11.5)."""
    assert "[web]" in default_ini_text() and "# base_url = " in default_ini_text()
    (tmp_path / "pbm.ini").write_text(f"[web]\nbase_url = {value}\n")
    with pytest.raises(ConfigError, match=r"web\.base_url = .* (is not an http|is longer than)"):
        Config.load(tmp_path)
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "check"])
    assert result.exit_code == 1
    assert "problem: " in result.output and "web.base_url = " in result.output


def test_web_base_url_is_read_as_written(tmp_path):
    (tmp_path / "pbm.ini").write_text("[web]\nbase_url = https://games.example.org/pbm/\n")
    assert Config.load(tmp_path).get("web.base_url") == "https://games.example.org/pbm/"


def test_an_unknown_web_key_is_refused_and_pbm_check_names_it(tmp_path):
    """[web] holds the web view's keys (docs/spec/server.md §11.8); any other is refused."""
    assert "[web]" in default_ini_text() and "# threads = 4" in default_ini_text()
    (tmp_path / "pbm.ini").write_text("[web]\nbase_path = https://games.example.org/\n")
    with pytest.raises(ConfigError, match=r"unknown key base_path in \[web\]"):
        Config.load(tmp_path)
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "check"])
    assert result.exit_code == 1
    assert "problem: " in result.output and "unknown key base_path in [web]" in result.output


def test_an_ini_written_by_an_older_pbm_init_still_loads(tmp_path):
    """Older `pbm init`s wrote `[web]` with `# base_url =` under it: that sets nothing."""
    (tmp_path / "pbm.ini").write_text(
        "# pbm configuration\n\n[limits]\n# commands_per_hour = 60\n\n[web]\n# base_url = \n"
    )
    assert Config.load(tmp_path).number("limits.commands_per_hour") == 60


FIRST_MAIL = (
    b"From: alice@example.org\n"
    b"To: pbm@localhost\n"
    b"Subject: signup alice pear99 alice@example.org\n"
    b"Message-ID: <first@example.org>\n"
    b"\n"
)


def test_a_first_mail_into_a_new_home_from_a_file(tmp_path):
    """The README's first steps: pbm init, then pbm receive on a message file."""
    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    message = tmp_path / "first.eml"
    message.write_bytes(FIRST_MAIL)
    result = runner.invoke(cli, ["--home", str(home), "receive", str(message)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("To: alice@example.org\nSubject: Account alice created\n\n")
    assert "pear99" not in result.output
    # The same path as the pipe: the mail is in the Maildir, and the same mail again is
    # recognised as handled.
    assert len(list((home / "outbox" / "new").iterdir())) == 1
    again = runner.invoke(cli, ["--home", str(home), "receive", str(message)])
    assert again.output == "Already handled: a mail with this Message-ID was answered before.\n"
    bounce = runner.invoke(
        cli,
        ["--home", str(home), "receive", "--sender", "", "-"],
        input=FIRST_MAIL.replace(b"<first@", b"<second@"),
    )
    assert bounce.exit_code == 0 and bounce.output.startswith(
        "Dropped unanswered (a loop, a bounce"
    )


def test_receive_leaves_the_mail_waiting_when_the_home_is_not_ready(tmp_path):
    message = tmp_path / "first.eml"
    message.write_bytes(FIRST_MAIL)
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "none"), "receive", str(message)])
    assert result.exit_code == 75 and "pbm: try again later:" in result.output


def readme_block(after: str) -> list[str]:
    """The commands of the README's indented block that follows the paragraph starting
    with `after`, as written."""
    text = (ROOT / "README.md").read_text()
    rest = text[text.index(after) :].split("\n\n", 2)[1]
    return [line[4:] for line in rest.split("\n") if line.startswith("    ")]


def test_the_readmes_first_mails_work_as_typed(tmp_path, project_env):
    """The README's commands, run by a shell as written (docs/spec/server.md §3.10): two
    signups, a challenge, then alice's reply to her board mail by its Reply-To address."""
    import subprocess
    import sys

    home = tmp_path / "home"
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "pbm").symlink_to(Path(sys.executable).parent / "pbm")
    env = dict(project_env, PBM_HOME=str(home))
    for name in ("ORIGINAL_RECIPIENT", "RECIPIENT"):
        env.pop(name, None)

    def shell(lines):
        result = subprocess.run(
            ["bash", "-euc", "\n".join(lines)], cwd=tmp_path, env=env, capture_output=True
        )
        assert result.returncode == 0, result.stderr.decode()
        return result.stdout.decode()

    shell([".venv/bin/pbm init"])
    printed = shell(readme_block("To send the new home its first mails"))
    assert "Subject: Account bob created" in printed
    assert "Unknown userid" not in printed and "Invalid challenge" not in printed
    to_alice = printed[printed.index("To: alice@example.org\nReply-To: ") :]
    reply_address = to_alice.split("\n")[1].removeprefix("Reply-To: ")
    reply = readme_block("Alice's board mail asks for her move")
    assert "pbm+<token>@localhost" in reply[0]
    printed = shell([line.replace("pbm+<token>@localhost", reply_address) for line in reply])
    assert "It is bob's turn." in printed and "error" not in printed.lower()
    assert printed.count("Subject: KnightPanic Board 101: alice vs bob") == 2


def test_receive_takes_the_reply_address_from_recipient_or_the_environment(
    challenged_home, tmp_path, monkeypatch
):
    """A reply addressed only on the command line, or in $ORIGINAL_RECIPIENT as the pipe
    has it, plays as a reply: it is never read as a Subject command."""
    import email
    import email.policy

    newest = sorted((challenged_home / "outbox" / "new").iterdir())
    mails = [email.message_from_bytes(p.read_bytes(), policy=email.policy.default) for p in newest]
    to_alice = [m for m in mails if m["To"] == "alice@example.org" and m["Reply-To"]][-1]
    address = str(to_alice["Reply-To"])
    runner = CliRunner()
    message = tmp_path / "reply.eml"
    message.write_bytes(b"From: alice@example.org\nSubject: Re: board\n\na1-c5\n")
    args = ["--home", str(challenged_home), "receive", "--recipient", address, str(message)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0 and "It is bob's turn." in result.output, result.output
    to_bob = [line for line in result.output.split("\n") if line.startswith("Reply-To: ")]
    bob_address = to_bob[-1].removeprefix("Reply-To: ")
    message.write_bytes(b"From: bob@example.org\nSubject: Re: board\n\na7-c3\n")
    monkeypatch.setenv("ORIGINAL_RECIPIENT", bob_address)
    result = runner.invoke(cli, ["--home", str(challenged_home), "receive", str(message)])
    assert result.exit_code == 0 and "It is alice's turn." in result.output, result.output
