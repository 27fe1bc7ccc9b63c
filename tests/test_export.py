"""`export me`: a player's own data as JSON (docs/spec/server.md §3.2.4)."""

import json

from tests.conftest import body_of


def exported(mail) -> dict:
    text = body_of(mail)
    start = text.index("----- BEGIN JSON -----") + len("----- BEGIN JSON -----")
    return json.loads(text[start : text.index("----- END JSON -----")])


def test_export_me_mails_the_account_boards_and_results(harness):
    harness.signup("alice", "bob", "carol")
    harness.ok("add alice secret alice2@example.org")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    harness.ok("knightpanic move 101 bob secret g7-e3")
    harness.ok("knightpanic resign 101 alice secret")
    harness.challenge("knightpanic challenge carol alice")
    harness.challenge("knightpanic challenge bob carol")
    harness.ok("knightpanic limit alice secret 5")
    harness.new_mails()
    harness.ok("export me alice secret", sender="alice@example.org")
    [mail] = harness.new_mails()
    assert mail["Subject"] == "Data of alice"
    assert mail["To"] == "alice@example.org, alice2@example.org"
    data = exported(mail)
    account = data["account"]
    assert account["userid"] == "alice"
    assert account["addresses"] == ["alice@example.org", "alice2@example.org"]
    assert account["created"]
    assert account["settings"]["challenges"] == [
        {
            "game": "knightpanic",
            "max_active": 5,
            "seeking": 0,
            "inactive": False,
            "invitations": False,
        }
    ]
    boards = {b["number"]: b for b in data["boards"]}
    assert sorted(boards) == [101, 102], "only the boards alice sits at"
    finished = boards[101]
    assert finished["game"] == "knightpanic" and finished["status"] == "finished"
    assert finished["seats"] == ["alice", "bob"]
    assert [m["text"] for m in finished["moves"]][0] == "c1-e5"
    assert [m["text"] for m in finished["moves"]][1] == "g7-e3"
    assert finished["result"]["scores"] == {"alice": 0.0, "bob": 1.0}
    assert boards[102]["seats"] == ["carol", "alice"] and boards[102]["result"] is None
    assert [r["game"] for r in data["ratings"]] == ["knightpanic"]
    text = mail.as_string()
    for private in ("bob@example.org", "carol@example.org", "argon2", "secret"):
        assert private not in text, private


def test_export_me_needs_the_password(harness):
    harness.signup("alice")
    harness.new_mails()
    assert "Invalid password entered" in harness.refused("export me alice wrong1")
    assert [m["Subject"] for m in harness.new_mails()] == ["PBM error"]


def test_signoff_keeps_finished_boards_readable_with_the_name(harness):
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    harness.ok("knightpanic move 101 bob secret g7-e3")
    harness.ok("knightpanic resign 101 alice secret")
    harness.ok("signoff alice secret")
    text = harness.ok("knightpanic show 101", sender=None).printed[0].body
    assert "alice" in text
    harness.ok("export me bob secret", sender="bob@example.org")
    [board] = exported(harness.mails("bob@example.org")[-1])["boards"]
    assert board["seats"] == ["alice", "bob"]


def test_a_long_value_arrives_whole_so_the_json_still_parses(harness):
    long_address = "a" * 60 + "@" + "long-subdomain-of-the-mail-host." * 2 + "example.org"
    harness.signup("alice")
    harness.ok(f"add alice secret {long_address}")
    harness.new_mails()
    harness.ok("export me alice secret", sender="alice@example.org")
    [mail] = harness.new_mails()
    assert exported(mail)["account"]["addresses"] == ["alice@example.org", long_address]
