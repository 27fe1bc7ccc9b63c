"""`<game> export B [txt|json]`: a board's record mailed as an attachment
(docs/spec/server.md §11.6), the same file the web view serves (docs/spec/server.md §11.8)."""

import json

from pbm.web import make_app
from tests.mailpipe import command_mail, inbox, pipe
from tests.test_web import get

NOW = "2026-05-04T10:00:00"


def attachment(message):
    [part] = list(message.iter_attachments())
    return part.get_filename(), part.get_content_type(), part.get_payload(decode=True)


def test_export_by_mail_attaches_what_the_web_view_serves(harness, project_env, monkeypatch):
    monkeypatch.setenv("PBM_NOW", NOW)
    env = dict(project_env, PBM_HOME=str(harness.home), PBM_NOW=NOW)
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic move 101 alice secret c1-e5", body="<b>good luck</b>")
    harness.ok("knightpanic move 101 bob secret g7-e3")
    seen = set(p.name for p in harness.outbox_files())
    app = make_app(harness.config)
    for words, kind, mime in (
        ("knightpanic export 101 json", "json", "application/json"),
        ("knightpanic export 101", "txt", "text/plain"),
        ("knightpanic EXPORT 101 TXT", "txt", "text/plain"),
    ):
        result = pipe(env, command_mail("watcher@example.net", words), sender="watcher@example.net")
        assert result.returncode == 0, result.stderr.decode()
        [message] = inbox(harness.home, seen)["watcher@example.net"]
        assert message["Subject"] == "KnightPanic Board 101 export"
        assert "Reply-To" not in message
        assert f"attached as knightpanic-101.{kind}" in message.get_body(("plain",)).get_content()
        name, content_type, data = attachment(message)
        assert (name, content_type) == (f"knightpanic-101.{kind}", mime)
        served = get(app, f"/knightpanic/101.{kind}").body
        assert data == served
        if kind == "json":
            record = json.loads(data)
            assert [p["text"] for p in record["plies"]] == ["c1-e5", "g7-e3"]
            assert record["seats"] == ["alice", "bob"] and record["status"] == "active"
        else:
            text = data.decode("utf-8")
            assert text.startswith("Summary of KnightPanic Board 101\n")
            assert "It is alice's turn." in text and "Time used by players:" in text
        for private in (b"@example.org", b"secret", b"argon2"):
            assert private not in data


def test_export_of_a_finished_board_has_its_result(harness):
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    harness.ok("knightpanic move 101 bob secret g7-e3")
    harness.ok("knightpanic resign 101 alice secret")
    harness.new_mails()
    harness.ok("knightpanic export 101 json", sender="carol@example.net")
    [message] = harness.new_mails()
    record = json.loads(attachment(message)[2])
    assert record["status"] == "finished" and isinstance(record["seed"], int)
    assert record["result"]["scores"][1] == {"seat": 1, "userid": "bob", "score": 1.0}
    assert record["plies"][-1]["kind"] == "resign"


def test_export_refuses_what_it_cannot_do(harness):
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    assert "knightpanic board 999 not found" in harness.refused("knightpanic export 999").lower()
    syntax = 'Syntax is "knightpanic export board [txt|json]"'
    assert syntax in harness.refused("knightpanic export 101 pdf")
    assert syntax in harness.refused("knightpanic export x101")
    assert syntax in harness.refused("knightpanic export")


def test_export_me_still_mails_the_players_own_data(harness):
    harness.signup("alice")
    harness.new_mails()
    harness.ok("export me alice secret", sender="alice@example.org")
    [mail] = harness.new_mails()
    assert mail["Subject"] == "Data of alice"


def test_export_by_the_operator_prints_the_record_it_would_attach(harness):
    """On the command line there is no mail to open: the file follows the answer."""
    from click.testing import CliRunner

    from pbm.cli import cli

    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    runner = CliRunner()
    home = ["--home", str(harness.home)]
    result = runner.invoke(cli, [*home, "knightpanic", "export", "101", "json"])
    assert result.exit_code == 0, result.output
    assert "attached as knightpanic-101.json" in result.output
    printed = result.output.split("----- knightpanic-101.json -----\n", 1)[1]
    record = json.loads(printed.split("\n----- end of knightpanic-101.json -----")[0])
    assert record["board"] == 101 and record["plies"][0]["text"] == "c1-e5"
    text = runner.invoke(cli, [*home, "knightpanic", "export", "101"]).output
    assert "----- knightpanic-101.txt -----\nSummary of KnightPanic Board 101" in text
