"""Pictures in the board mail (issue 18, docs/spec/server.md §11.5): for a user with `html on`
a board mail is multipart/alternative, the same text part as before and an HTML part with
the board's picture inline; `[web] base_url` links every board mail to its board's page."""

import email
import email.policy
import io
import json
import random
import re

import pytest
from click.testing import CliRunner
from PIL import Image

from pbm.cli import cli
from pbm.dispatch import open_server
from pbm.pictures import board_png, picture_size
from pbm.position import canonical_ply, replay
from pbm.store import Store
from tests.conftest import free_port
from tests.mailpipe import command_mail, inbox, pipe
from tests.test_delivery import start_relay

ALICE, BOB, CAROL, DAVE = (f"{u}@example.org" for u in ("alice", "bob", "carol", "dave"))
HTML_ON = "[mail]\nhtml = on\n"


def parts(message):
    """(text/plain, text/html, image/png) of a board mail with pictures; asserts the shape
    multipart/alternative(text/plain, multipart/related(text/html, image/png))."""
    assert message.get_content_type() == "multipart/alternative"
    text, related = message.get_payload()
    assert text.get_content_type() == "text/plain"
    assert related.get_content_type() == "multipart/related"
    html, image = related.get_payload()
    assert html.get_content_type() == "text/html"
    assert image.get_content_type() == "image/png"
    return text, html, image


def html_of(message) -> str:
    return parts(message)[1].get_content()


def stored_position(harness, game_name, number=101):
    """(game, position) of a board as its move log has it."""
    with open_server(harness.config) as server:
        game = server.games[game_name]
        row = server.store.boards.get(game_name, number)
        holders = server.store.boards.seat_userids(row.id)
        plies = server.store.boards.plies(row.id)
        return game, replay(game, json.loads(row.options), holders, row.seed, plies)


def mail_command(harness, sender, subject, body=""):
    """One real RFC 822 mail through the intake (process_message), as the pipe runs it."""
    result = harness.deliver(command_mail(sender, subject, body)).result
    assert result.ok, harness.last_error_text(result)
    return result


def start_board(harness, *options):
    harness.signup("alice", "bob")
    mail_command(harness, ALICE, "knightpanic challenge alice bob " + " ".join(options))


def test_html_on_and_off_change_what_the_next_board_mail_is(harness):
    start_board(harness)
    harness.new_mails()
    mail_command(harness, ALICE, "html alice secret")
    [shown] = harness.new_mails(ALICE)
    assert shown["Subject"] == "HTML off for alice" and "plain text only" in shown.get_content()
    mail_command(harness, ALICE, "html alice secret on")
    [notice] = harness.new_mails(ALICE)
    assert notice["Subject"] == "HTML on for alice" and "secret" not in notice.as_string()

    harness.new_mails()
    mail_command(harness, ALICE, "knightpanic move 101 alice secret a1-c5")
    fresh = harness.new_mails()
    [to_alice] = [m for m in fresh if ALICE in str(m["To"])]
    [to_bob] = [m for m in fresh if BOB in str(m["To"])]
    text, _, _ = parts(to_alice)
    assert "It is bob's turn." in text.get_content()
    assert to_bob.get_content_type() == "text/plain"  # bob kept html off

    mail_command(harness, ALICE, "html alice secret off")
    mail_command(harness, BOB, "knightpanic move 101 bob secret a7-c3")
    assert harness.mails(ALICE)[-1].get_content_type() == "text/plain"
    refusal = harness.refused("html alice secret sometimes", sender=ALICE)
    assert 'Syntax is "html userid password [on|off]"' in refusal


def test_the_text_part_is_exactly_the_text_only_mail_and_the_html_names_its_picture(harness, clock):
    """carol (html on) and dave (off) watch the same board: the same mail but for the HTML."""
    clock("2026-03-01T10:00:00")
    start_board(harness, "-size=7")
    harness.signup("carol", "dave")
    mail_command(harness, CAROL, "html carol secret on")
    for userid in ("carol", "dave"):
        mail_command(harness, f"{userid}@example.org", f"knightpanic subscribe 101 {userid} secret")
    harness.new_mails()
    mail_command(harness, ALICE, "knightpanic move 101 alice secret a1-c5", body="Hello")
    [to_carol], [to_dave] = harness.mails(CAROL)[-1:], harness.mails(DAVE)[-1:]
    text, html_part, image = parts(to_carol)
    assert to_dave.get_content_type() == "text/plain"
    assert text.get_content() == to_dave.get_content()
    assert bytes(text).split(b"\n\n", 1)[1] == bytes(to_dave).split(b"\n\n", 1)[1]

    html = html_part.get_content()
    content_id = image["Content-ID"]
    assert re.fullmatch(r"<board-[0-9a-f]{24}@localhost>", content_id)
    assert re.findall(r'src="cid:([^"]+)"', html) == [content_id[1:-1]]
    assert re.findall(r"cid:", html) == ["cid:"]
    assert image.get_content_disposition() == "inline"
    assert "<b>alice</b> writes:" in html and ">Hello</pre>" in html
    assert "It is bob&#39;s turn." in html
    assert 'alt="KnightPanic Board 101 after move 1 (last move a1-c5). It is bob' in html

    game, position = stored_position(harness, "knightpanic")
    drawing = game.drawing(position.state, None, "a1-c5")
    picture = Image.open(io.BytesIO(image.get_content()))
    picture.load()
    assert picture.format == "PNG" and picture.size == picture_size(drawing)


def test_user_text_is_escaped_in_the_html_part(harness):
    start_board(harness)
    mail_command(harness, ALICE, "html alice secret on")
    hostile = '<script>alert("x")</script> & <img src=x onerror=alert(1)>'
    mail_command(harness, ALICE, "knightpanic move 101 alice secret a1-c5")
    mail_command(harness, BOB, "knightpanic move 101 bob secret a7-c3", body=hostile)
    html = html_of(harness.mails(ALICE)[-1])
    assert "<script" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;img src=x" in html
    assert "secret" not in harness.mails(ALICE)[-1].as_string()


def test_the_reply_instructions_are_those_of_the_text_part_and_never_the_password(harness):
    start_board(harness)
    mail_command(harness, BOB, "html bob secret on")
    mail_command(harness, ALICE, "knightpanic move 101 alice secret a1-c5")
    to_bob = harness.mails(BOB)[-1]
    text, html_part, _ = parts(to_bob)
    asked = [line for line in text.get_content().splitlines() if "`" in line]
    assert asked and asked[0].startswith("Reply with your move")
    html = html_part.get_content()
    # What the text quotes in backquotes the HTML shows as code, never the backquotes.
    for line in asked:
        escaped = line.replace("<", "&lt;").replace(">", "&gt;")
        assert re.sub(r"`([^`]*)`", r"<code>\1</code>", escaped) in html
    assert "`" not in html
    assert "You are Black (x)." in html and "secret" not in to_bob.as_string()
    assert to_bob["Reply-To"].startswith("pbm+")


def test_new_accounts_follow_the_pbm_ini_default(harness):
    harness.configure(HTML_ON)
    start_board(harness)
    assert harness.mails(ALICE)[-1].get_content_type() == "multipart/alternative"
    harness.configure("[mail]\nhtml = off\n")
    harness.signup("carol")
    mail_command(harness, CAROL, "html carol secret")
    assert harness.mails(CAROL)[-1]["Subject"] == "HTML off for carol"
    mail_command(harness, ALICE, "html alice secret")
    assert harness.mails(ALICE)[-1]["Subject"] == "HTML on for alice"


def test_pbm_init_writes_the_default_and_refuses_a_value_that_is_not_on_or_off(tmp_path):
    home = tmp_path / "home"
    assert CliRunner().invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    ini = (home / "pbm.ini").read_text()
    assert "[mail]\n# on|off:" in ini and "# html = on" in ini
    (home / "pbm.ini").write_text("[mail]\nhtml = yes\n")
    result = CliRunner().invoke(cli, ["--home", str(home), "check"])
    assert result.exit_code == 1 and "mail.html = 'yes' is not one of on, off" in result.output


def test_base_url_links_every_board_mail_in_both_parts(harness):
    harness.configure(HTML_ON + "[web]\nbase_url = https://games.example.org/pbm/\n")
    start_board(harness)
    url = "https://games.example.org/pbm/knightpanic/101"
    for message in (harness.mails(ALICE)[-1], harness.mails(BOB)[-1]):
        text, html_part, _ = parts(message)
        assert text.get_content().endswith(f"\n\nWeb: {url}\n")
        assert f'<a href="{url}">{url}</a>' in html_part.get_content()
    harness.configure(HTML_ON)
    mail_command(harness, ALICE, "knightpanic move 101 alice secret a1-c5")
    text, html_part, _ = parts(harness.mails(ALICE)[-1])
    assert "Web:" not in text.get_content() and "<a href" not in html_part.get_content()


def test_a_game_without_a_drawing_shows_the_text_board_in_pre(harness):
    harness.configure(HTML_ON)
    harness.signup("alice", "bob")
    mail_command(harness, ALICE, "tally challenge alice bob")
    message = harness.mails(ALICE)[-1]
    assert message.get_content_type() == "multipart/alternative"
    text, html_part = message.get_payload()
    assert html_part.get_content_type() == "text/html"
    board_text = text.get_content().split("\n\n\n", 1)[1].split("\n\n")[0]
    html = html_part.get_content()
    assert "<pre>" in html and "cid:" not in html and "<img" not in html
    assert board_text.strip().splitlines()[0] in html


def test_the_cli_and_the_mail_pipe_carry_the_same_choice(project_env, tmp_path):
    """`pbm` on the command line (CliRunner) and a mail through mail_handler.py."""
    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    for userid in ("alice", "bob"):
        words = ["--from", f"{userid}@example.org", "signup", userid, "pw-" + userid]
        result = runner.invoke(cli, ["--home", str(home), *words])
        assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["--home", str(home), "html", "bob", "pw-bob", "off"])
    assert result.exit_code == 0 and "HTML off for bob" in result.output
    raw = command_mail(ALICE, "knightpanic challenge alice bob")
    assert pipe(project_env, raw).returncode == 0
    got = inbox(home, set())
    [to_alice] = [m for m in got.get(ALICE, []) if "Board 101" in m["Subject"]]
    [to_bob] = [m for m in got.get(BOB, []) if "Board 101" in m["Subject"]]
    assert to_bob.get_content_type() == "text/plain"
    alice_text, _, _ = parts(to_alice)
    assert "Please start the game alice." in alice_text.get_content()


# -- the picture is drawn once per board, perspective and move ----------------------------


@pytest.mark.parametrize("same_view", [True, False])
def test_one_picture_per_perspective_whatever_the_number_of_recipients(
    harness, monkeypatch, same_view
):
    """And one text board per perspective: each is drawn once in a run, however many
    players and subscribers get it; once for all of them when the game shows every
    perspective the same board (BaseGame.same_view_for_all, as Knight Panic does)."""
    import pbm.pictures
    from games.knightpanic import KnightPanic

    drawn, written = [], []
    real_png, real_text = pbm.pictures.board_png, KnightPanic.render_board

    def counting_png(game, state, perspective=None, last_move=None):
        drawn.append((perspective, last_move))
        return real_png(game, state, perspective=perspective, last_move=last_move)

    def counting_text(self, state, perspective=None, **view):
        written.append(perspective)
        return real_text(self, state, perspective, **view)

    monkeypatch.setattr(pbm.pictures, "board_png", counting_png)
    monkeypatch.setattr(KnightPanic, "render_board", counting_text)
    monkeypatch.setattr(KnightPanic, "same_view_for_all", same_view)
    harness.configure(HTML_ON)
    start_board(harness)
    spectators = ["carol", "dave", "erin", "frank"]
    harness.signup(*spectators)
    for userid in spectators:
        mail_command(harness, f"{userid}@example.org", f"knightpanic subscribe 101 {userid} secret")
    drawn.clear()
    written.clear()
    mail_command(harness, ALICE, "knightpanic move 101 alice secret a1-c5")
    if same_view:
        assert len(drawn) == 1 and drawn[0][1] == "a1-c5"
        assert len(written) == 1
    else:
        expected = [(0, "a1-c5"), (1, "a1-c5"), (None, "a1-c5")]
        assert sorted(drawn, key=str) == sorted(expected, key=str)
        assert sorted(written, key=str) == sorted([0, 1, None], key=str)
    cids = {
        parts(m)[2]["Content-ID"]
        for u in spectators
        for m in harness.mails(f"{u}@example.org")[-1:]
    }
    assert len(cids) == 1


# -- size: every board mail, the largest board of each game, late in the game -------------

LARGEST = [
    ("knightvision", ["alice", "bob"], "-size=14", 60),
    ("lox", ["alice", "bob"], "-size=19", 120),
    ("uknight", ["alice", "bob"], "-size=7", 60),
    ("knightpanic", ["alice", "bob"], "-size=7", 30),
    ("knightpanic", ["alice", "bob"], "-size=7 -3d", 30),
    ("knightline", ["alice", "bob", "carol"], "-stack=30 -wildcard", 60),
]


def play_late(harness, game_name, userids, options, plies):
    """The board after `plies` random plies (or as many as keep the game going) written
    straight into its log (the board is replayed from it, docs/spec/server.md §1.6), then
    one more by mail, whose board mails are read."""
    mail_command(harness, ALICE, f"{game_name} challenge {' '.join(userids)} {options}")
    rng = random.Random(18)
    store = Store.open(harness.config.db_path)
    try:
        with open_server(harness.config) as server:
            game = server.games[game_name]
        row = store.boards.get(game_name, 101)
        holders = store.boards.seat_userids(row.id)
        position = replay(game, json.loads(row.options), holders, row.seed, [])
        with store.write():
            for number in range(1, plies + 1):
                seat = position.to_move()
                moves = list(game.legal_moves(position.state, seat))
                if seat is None or not moves:
                    break
                kind, text = canonical_ply(game, position.state, seat, rng.choice(moves))
                probe = position.copy()
                probe.try_text(seat, text)
                if probe.to_move() is None:
                    break
                position = probe
                store.boards.append_ply(
                    row.id,
                    ply=number,
                    seat=seat,
                    userid=holders[seat],
                    kind=kind,
                    text=text,
                    auto=0,
                    charged=0,
                    at=row.created_at,
                )
    finally:
        store.close()
    seat = position.to_move()
    move = sorted(game.legal_moves(position.state, seat))[0]
    mover = position.holders[seat]
    harness.new_mails()
    mail_command(harness, f"{mover}@example.org", f"{game_name} move 101 {mover} secret {move}")
    return position.plies_made + 1


@pytest.mark.parametrize(("game_name", "userids", "options", "plies"), LARGEST)
def test_every_board_mail_stays_well_under_100_kb(harness, game_name, userids, options, plies):
    harness.configure(HTML_ON)
    harness.signup(*userids)
    harness.signup("watcher")
    made = play_late(harness, game_name, userids, options, plies)
    assert made > 10, f"only {made} plies"  # random play stops a ply before the end
    mails = [m for m in harness.new_mails() if "Board 101" in str(m["Subject"])]
    assert len(mails) == len(userids)
    for message in mails:
        parts(message)
        assert len(message.as_bytes()) < 100_000


# -- delivery through a real SMTP relay ---------------------------------------------------


def test_a_board_mail_with_its_picture_crosses_a_real_smtp_relay_intact(harness):
    port = free_port()
    harness.configure(HTML_ON + f"[smtp]\nhost = 127.0.0.1\nport = {port}\n")
    recorder, controller = start_relay(port)
    try:
        start_board(harness)
    finally:
        controller.stop()
    received = {}
    for envelope in recorder.messages:
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        if "Board 101" in message["Subject"]:
            received[envelope.rcpt_tos[0]] = message
    assert sorted(received) == [ALICE, BOB]
    game, position = stored_position(harness, "knightpanic")
    state = position.state
    for address, seat in ((ALICE, 0), (BOB, 1)):
        text, html_part, image = parts(received[address])
        assert "Please start the game alice." in text.get_content()
        assert image["Content-ID"][1:-1] in html_part.get_content()
        assert image.get_content() == board_png(game, state, perspective=seat, last_move=None)


def test_help_names_the_html_command(harness):
    result = harness.ok("help html")
    [(_, mail)] = result.queued
    assert "html userid password [on|off]" in mail.body and "picture" in mail.body


def test_the_nag_carries_its_reminder_and_the_picture(harness, clock):
    """The cleanup run's nag (docs/spec/server.md §5.8) is a board mail too."""
    harness.signup("alice", "bob")
    clock("2026-01-01T12:00:00")
    mail_command(harness, ALICE, "html alice secret on")
    mail_command(harness, ALICE, "knightpanic challenge alice bob")
    harness.new_mails()
    clock("2026-01-08T13:00:00")
    result = CliRunner().invoke(cli, ["--home", str(harness.home), "cleanup"])
    assert result.exit_code == 0, result.output
    [nag] = harness.new_mails()
    text, html_part, image = parts(nag)
    reminder = "Reminder: it is your move on KnightPanic Board 101."
    assert text.get_content().startswith(reminder)
    html = html_part.get_content()
    assert html.index(reminder) < html.index("cid:" + image["Content-ID"][1:-1])
    assert "Deadline........" in html  # the nag's timing block
