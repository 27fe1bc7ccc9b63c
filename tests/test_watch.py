"""Watching and talking: chat, subscribe, unsubscribe, notify, message, broadcast, all show."""

import re

import pytest

from tests.conftest import body_of


@pytest.fixture
def game(harness):
    harness.signup("alice", "bob", "carol", "dave")
    harness.challenge("knightpanic challenge alice bob")
    harness.new_mails()
    return harness


def test_chat_reaches_the_audience_and_the_sender(game):
    game.ok("knightpanic chat 101 carol secret", sender="carol@example.org", body="Go alice!")
    mails = game.new_mails()
    assert sorted(m["To"] for m in mails) == [
        "alice@example.org",
        "bob@example.org",
        "carol@example.org",
    ]
    for mail in mails:
        assert mail["Subject"] == "KnightPanic Board 101: alice vs bob"
        assert body_of(mail) == "carol writes on KnightPanic Board 101:\nGo alice!\n"
    text = game.ok("knightpanic show 101", sender=None).printed[0].body
    assert "Go alice!" not in text
    assert "Nothing to send: the message body is empty" in game.refused(
        "knightpanic chat 101 carol secret"
    )


def test_subscribe_to_a_board_and_back(game):
    game.ok("knightpanic subscribe 101 carol secret", sender="carol@example.org")
    mails = game.new_mails()
    assert [m["Subject"] for m in mails] == [
        "KnightPanic Board 101: alice vs bob",
        "Subscription summary",
    ]
    assert body_of(mails[0]).startswith("Subscription Summary of KnightPanic Board 101")
    assert "Subscribed: 101" in body_of(mails[1])
    game.ok("knightpanic move 101 alice secret c1-e5")
    mails = game.new_mails()
    assert sorted(m["To"] for m in mails) == [
        "alice@example.org",
        "bob@example.org",
        "carol@example.org",
    ]
    assert "Subscribers: carol" in body_of(mails[0])
    game.ok("knightpanic unsub carol secret 101")
    assert "Unsubscribed: 101" in body_of(game.new_mails()[0])
    game.ok("knightpanic move 101 bob secret g7-e3")
    assert game.new_mails("carol@example.org") == []


def test_subscribe_refusals_per_board(game):
    game.challenge("knightpanic challenge carol dave")
    game.ok("knightpanic move 102 carol secret c1-e5")
    game.ok("knightpanic move 102 dave secret a7-c3")
    game.new_mails()
    game.ok("knightpanic sub alice secret 101 102 999")
    summary = body_of(game.new_mails()[-1])
    assert "Subscribed: none" in summary
    assert "101 (you are playing), 102 (game has ended), 999 (not found)" in " ".join(
        summary.split()
    )


def test_subscribe_all_covers_future_boards(game):
    game.ok("knightpanic subscribe dave secret all")
    assert "Subscribed: 101" in body_of(game.new_mails()[-1])
    game.challenge("knightpanic challenge alice carol")
    assert [m["Subject"] for m in game.new_mails("dave@example.org")] == [
        "KnightPanic Board 102: alice vs carol"
    ]
    game.ok("knightpanic unsubscribe dave secret all")
    assert "Unsubscribed: 101 102" in body_of(game.new_mails()[-1])
    game.challenge("knightpanic challenge alice carol")
    assert game.new_mails("dave@example.org") == []


def test_notify_for_the_game_and_for_boards(game):
    game.ok("knightpanic notify dave secret")
    [mail] = game.new_mails()
    assert mail["Subject"] == "KnightPanic notification started"
    game.ok("knightpanic notify carol secret 101 999")
    [mail] = game.new_mails()
    assert mail["Subject"] == "KnightPanic Notify summary"
    assert "Now notified: 101" in body_of(mail) and "999 (not found)" in body_of(mail)
    game.ok("knightpanic move 101 alice secret c1-e5", body="comment")
    assert "Notifiers: carol dave" in body_of(game.new_mails("alice@example.org")[0])
    game.ok("knightpanic move 101 bob secret a7-c3", body="secret plan")
    notes = [m for m in game.new_mails() if m["Subject"] == "Notification of KnightPanic Board 101"]
    assert sorted(m["To"] for m in notes) == ["carol@example.org", "dave@example.org"]
    assert "Game won by bob." in body_of(notes[0]) and "secret plan" not in body_of(notes[0])
    game.ok("knightpanic notify dave secret")
    assert game.new_mails()[0]["Subject"] == "KnightPanic notification cancelled"


def test_message_relays_privately(game):
    game.ok("message alice secret bob Carol", sender="alice@example.org", body="Hello both")
    mails = game.new_mails()
    by_to = {m["To"]: m for m in mails}
    assert by_to["alice@example.org"]["Subject"] == "Message sent"
    for address in ("bob@example.org", "carol@example.org"):
        body = body_of(by_to[address])
        assert by_to[address]["Subject"] == "Message from alice"
        assert "Hello both" in body and "message <your userid> <your password> alice" in body
        assert "alice@example.org" not in by_to[address].as_string().split("\n\n", 1)[1]
    assert "The message is empty" in game.refused("message alice secret bob")
    assert 'No such user "zed"' in game.refused("message alice secret bob zed", body="x")
    assert game.new_mails("bob@example.org") == []


def test_broadcast_once_a_day_to_the_list(game, clock):
    assert "Broadcasts are not enabled on this server" in game.refused(
        "broadcast alice secret", body="hi"
    )
    game.configure("[broadcast]\naddress = players@lists.example\n")
    clock("2026-06-01T10:00:00")
    game.ok("broadcast alice secret", body="Tournament on Friday!")
    mails = game.new_mails()
    to_list = [m for m in mails if m["To"] == "players@lists.example"]
    assert to_list[0]["Subject"] == "Broadcast from alice via PBM Server"
    assert "Tournament on Friday!" in body_of(to_list[0])
    clock("2026-06-01T20:00:00")
    assert "Only one broadcast per day is allowed" in game.refused(
        "broadcast alice secret", body="again"
    )
    clock("2026-06-02T10:30:00")
    game.ok("broadcast alice secret", body="again")


def test_all_show_covers_every_game(game):
    game.challenge("tally challenge bob alice")
    game.new_mails()
    game.ok("all show alice", sender="dave@example.org")
    [answer] = game.new_mails()
    assert answer["Subject"] == "Answers to: all show alice"
    assert re.findall(r"^--- (.*) ---$", body_of(answer), re.M) == [
        "KnightPanic Board 101: alice vs bob",
        "Tally Board 101: bob vs alice",
    ]
    game.ok("all show alice next", sender="dave@example.org")
    assert [m["Subject"] for m in game.new_mails()] == ["KnightPanic Board 101: alice vs bob"]
    game.ok("all show dave", sender="dave@example.org")
    [mail] = game.new_mails()
    assert mail["Subject"] == "Show summary" and "No boards found for dave" in body_of(mail)


def test_showas_is_the_players_own_view(game):
    game.ok("knightpanic queue 101 bob secret g7-e3")
    game.ok("knightpanic showas bob secret", sender="bob@example.org")
    mails = game.new_mails("bob@example.org")
    assert "You have the following move queued: g7-e3" in body_of(mails[-1])
    game.ok("knightpanic show 101", sender="bob@example.org")
    assert "queued" not in body_of(game.new_mails("bob@example.org")[-1])
    assert "Invalid password entered" in game.refused("knightpanic showas bob wrong 101")


def test_each_board_picture_is_drawn_once_per_perspective(game, monkeypatch):
    """Issue 20.2: two subscribers see the spectators' picture, drawn once for both."""
    from games.knightpanic import KnightPanic

    for watcher in ("carol", "dave"):
        game.ok(f"knightpanic subscribe 101 {watcher} secret", sender=f"{watcher}@example.org")
    game.new_mails()
    drawn = []
    original = KnightPanic.render_board

    def counted(self, state, perspective, **view):
        drawn.append(perspective)
        return original(self, state, perspective, **view)

    monkeypatch.setattr(KnightPanic, "render_board", counted)
    game.ok("knightpanic move 101 alice secret c1-e5")
    mails = game.new_mails()
    assert sorted(m["To"] for m in mails) == [
        "alice@example.org",
        "bob@example.org",
        "carol@example.org",
        "dave@example.org",
    ]
    assert len(drawn) == len(set(drawn)) < len(mails), drawn
    assert body_of(mails[2]).split("Subscribers")[0] == body_of(mails[3]).split("Subscribers")[0]
