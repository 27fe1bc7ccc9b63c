"""Replies as people write them (docs/spec/server.md §4.3, §11.3): the move is the first line
of the player's own text once greetings, attribution lines and quoted blocks are set aside;
signatures, client footers and inline PGP signatures are neither the move nor a comment; no
later line is ever played in place of the first."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbm.ownwords import after_greetings, is_greeting, own_lines
from tests.replying import STYLES, reply_mail
from tests.test_replies import board_state, latest_reply_to, send_reply

ALICE, BOB = "alice@example.org", "bob@example.org"
STARS = "*" * 60


@pytest.fixture
def board(harness):
    """Knight Panic board 101, alice on move."""
    harness.signup("alice", "bob")
    harness.ok("knightpanic challenge alice bob", sender=ALICE)
    return harness


def comment_in(mail, author="alice") -> str:
    """The comment a board mail passes on, exactly: up to the timing block or the end."""
    body = mail.get_body(("plain",)).get_content()
    after = body.split(f"{author} writes:\n", 1)[1]
    return after.split("\n\n" + STARS, 1)[0].rstrip("\n")


def refusal(result) -> str:
    [error] = [m for _, m in result.queued if m.kind == "error"]
    return error.body


# -- every client's reply plays, and only the comment reaches the opponent ---------------


@pytest.mark.parametrize("style", STYLES)
def test_each_clients_reply_plays_its_move_and_passes_on_only_the_comment(board, style):
    original = latest_reply_to(board, ALICE)
    result = send_reply(board, original, ALICE, "a1-c5", style, comment="Good luck, Bob\nSee you")
    assert result.ok, board.last_error_text(result)
    position, _, _ = board_state(board, "knightpanic", 101)
    assert [ply.text for ply in position.plies] == ["a1-c5"]
    # No attribution, quote, signature, footer or PGP armor goes with it.
    assert comment_in(board.mails(BOB)[-1]) == "Good luck, Bob\nSee you"


@pytest.mark.parametrize("style", ["top", "mutt", "alpine", "gmail", "iphone", "outlook"])
@pytest.mark.parametrize(
    "greeting", ["Hi Bob,", "Hello", "Dear bob", "Hallo Bob!", "Bonjour Bob,", "Hola,"]
)
def test_a_greeting_above_the_move_is_set_aside(board, style, greeting):
    for layout in (f"{greeting}\n\n{{}}", f"{greeting}\n{{}}"):
        for player, address in (("alice", ALICE), ("bob", BOB)):
            position, game, _ = board_state(board, "knightpanic", 101)
            move = min(game.legal_moves(position.state, position.to_move()))
            original = latest_reply_to(board, address)
            answer = layout.format(move) if player == "alice" else move
            result = send_reply(board, original, address, answer, style, comment="Your turn")
            assert result.ok, board.last_error_text(result)
            assert board_state(board, "knightpanic", 101)[0].plies[-1].text == move
            if player == "alice":
                assert comment_in(board.mails(BOB)[-1]) == "Your turn"


def test_a_first_line_that_is_no_move_is_refused_quoted_as_written(board):
    original = latest_reply_to(board, ALICE)
    result = send_reply(board, original, ALICE, "Nice to meet you", "top", comment="a1-c5")
    assert not result.ok
    text = refusal(result)
    assert text.startswith('Invalid move "Nice to meet you"')
    assert "The first line of your reply is read as your move" in text
    assert "e.g. `" in text
    # The later line that is a move was not played, nor any other.
    assert board_state(board, "knightpanic", 101)[0].plies_made == 0


@pytest.mark.parametrize("style", ["top", "mutt", "thunderbird", "outlook"])
def test_a_move_inside_the_comment_or_the_quote_is_never_played(board, style):
    original = latest_reply_to(board, ALICE)
    for first, comment in (
        ("Thinking about it, maybe later.", "a1-c5 looks good though"),
        ("Hi Bob,", ""),
        ("Hi Bob,", "Nice game so far\na1-c5"),
    ):
        result = send_reply(board, original, ALICE, first, style, comment=comment)
        assert not result.ok
    assert board_state(board, "knightpanic", 101)[0].plies_made == 0


def test_a_long_first_line_is_refused_with_the_same_advice(board):
    original = latest_reply_to(board, ALICE)
    line = "Thanks for the game, Bob: I really look forward to it, and I wish you the best of luck"
    text = refusal(send_reply(board, original, ALICE, line, "gmail"))
    assert "A move is at most 64 characters long" in text
    assert f'The first line of your reply reads: "{line}"' in text
    assert "write the move alone on that line" in text


def test_a_whole_command_on_the_first_line_runs_as_it_and_its_password_is_masked(board):
    """The classic command as a reply's first line runs as that command (issue 27 item 4):
    its refusal is the game's, and its password is masked in the whole answer, quote too."""
    original = latest_reply_to(board, ALICE)
    result = send_reply(board, original, ALICE, "knightpanic move 101 alice secret b2-c4")
    assert not result.ok
    message = refusal(result)
    assert '"b2" is not a cell of this board' in message
    assert "> knightpanic move 101 alice ******** b2-c4" in message
    assert "secret" not in message


def test_the_error_mail_quotes_the_replys_subject_and_its_lines(board):
    original = latest_reply_to(board, ALICE)
    result = send_reply(board, original, ALICE, "Hi Bob,\n\nz9-z9", "top", comment="ok?")
    quoted = refusal(result).split("Original message follows:\n\n", 1)[1].split("\n")
    assert [line.rstrip() for line in quoted[:6]] == [
        "> Subject: KnightPanic Board 101: alice vs bob",
        "> Hi Bob,",
        ">",
        "> z9-z9",
        ">",
        "> ok?",
    ]


def test_a_reset_reply_takes_a_greeting_word_as_the_password(harness):
    harness.signup("alice")
    harness.ok("forgot alice", sender="stranger@example.net")
    original = [m for m in harness.mails(ALICE) if m["Reply-To"]][-1]
    result = harness.deliver(
        reply_mail(original, ALICE, "Hello", "mutt"),
        envelope_recipients=[str(original["Reply-To"])],
    ).result
    assert result.ok, harness.last_error_text(result)
    assert harness.run("vacation alice Hello", sender=ALICE).ok


# -- the reading itself ------------------------------------------------------------------


ATTRIBUTIONS = [
    "On Fri, Nov 27, 2026 at 04:33:10PM +0000, PBeM Server wrote:",
    "Am Fri, Nov 27, 2026 at 04:33:10PM +0000 schrieb PBeM Server:",
    "Am Fr., 27. Nov. 2026 um 16:33 Uhr schrieb PBeM Server <pbm@localhost>:",
    "* PBeM Server <pbm@localhost> [2026-11-27 16:33]:",
    "Le ven. 27 nov. 2026 à 16:33, PBeM Server <pbm@localhost> a écrit :",
    "El vie, 27 nov 2026 a las 16:33, PBeM Server (<pbm@localhost>) escribió:",
    "Il giorno ven 27 nov 2026 alle ore 16:33 PBeM Server ha scritto:",
    "Op vr 27 nov. 2026 om 16:33 schreef PBeM Server <pbm@localhost>:",
    "Quoting PBeM Server <pbm@localhost>:",
    "PBeM Server <pbm@localhost> writes:",
    "On Fri, Nov 27, 2026 at 4:33 PM PBeM Server <pbm@localhost>\nwrote:",
]
FOOTERS = [
    "Sent from my iPhone",
    "Sent from my iPad",
    "Get Outlook for Android",
    "Get Outlook for iOS<https://aka.ms/o0ukef>",
    "Sent from Yahoo Mail on Android",
    "Sent from Mail for Windows",
    "Sent with Proton Mail secure email.",
    "Von meinem iPhone gesendet",
    "Envoyé de mon iPhone",
    "Enviado desde mi iPhone",
    "Inviato da iPhone",
    "Sent from my Galaxy",
]
QUOTE = ["> Summary of KnightPanic Board 101", ">", "> It is alice's turn.", "> c7-a3"]
GREETINGS = ["Hi Alice,", "Hello", "Dear bob", "Hey there!", "Good morning Bob,", "Hallo Bob,"]
GREETINGS += ["Bonjour,", "Salut Bob !", "Hola Bob,", "Ciao", "Hej Bob", "Hi all,"]
MOVES = ["a1-c5", "e5", "pass", "resign", "queue c5-a1", "swap", "b2 - c4", "rem E3"]


def test_greetings_and_moves_are_told_apart():
    assert all(is_greeting(g) for g in GREETINGS)
    assert not any(is_greeting(m) for m in MOVES)
    assert not is_greeting("Hi Bob, I play a1-c5 today")


@given(
    greeting=st.lists(st.sampled_from(GREETINGS), max_size=2),
    attribution=st.sampled_from(ATTRIBUTIONS),
    layout=st.sampled_from(["above", "below", "inline"]),
    gap=st.sampled_from(["", "\n"]),
    footer=st.sampled_from([None, *FOOTERS, "-- \nAlice", "--\nAlice Example\nsomewhere"]),
    move=st.sampled_from(MOVES),
    comment=st.sampled_from(["", "Good luck", "Your move, Bob.\n\nc7-a3 was a good one"]),
)
def test_the_move_is_found_after_greetings_attributions_and_quotes(
    greeting, attribution, layout, gap, footer, move, comment
):
    mine = greeting + ([""] if greeting and gap else []) + [move]
    mine += ["", *comment.split("\n")] if comment else []
    quoted = [attribution] + ([""] if gap else []) + QUOTE
    if layout == "above":
        body = mine + ([] if footer is None else ["", footer]) + [""] + quoted
    elif layout == "below":
        body = quoted + [""] + mine + ([] if footer is None else ["", footer])
    else:
        body = quoted[:-2] + [""] + mine + [""] + QUOTE[-2:]
        body += [] if footer is None else ["", footer]
    own = own_lines("\n".join(body), "Alice Example", "alice@example.org")
    lines = after_greetings(own)
    assert lines[0] == move
    rest = "\n".join(lines[1:]).strip("\n")
    assert rest == comment
    assert not any(line.startswith(">") for line in own)


@given(
    first=st.sampled_from(["I'll think about it", "Not sure yet.", "Thanks!", "What now?"]),
    attribution=st.sampled_from(ATTRIBUTIONS),
    move=st.sampled_from(MOVES),
    where=st.sampled_from(["comment", "quote", "both"]),
)
def test_a_move_only_in_a_comment_or_a_quote_is_never_the_first_line(
    first, attribution, move, where
):
    quote = [attribution, "> " + move] if where in ("quote", "both") else [attribution] + QUOTE
    comment = [move] if where in ("comment", "both") else ["later"]
    for body in ([first, "", *comment, "", *quote], [*quote, "", first, *comment]):
        assert after_greetings(own_lines("\n".join(body)))[0] == first


@given(st.text(max_size=400), st.text(max_size=30), st.text(max_size=30))
def test_any_text_reads_as_lines_of_itself(text, name, address):
    lines = own_lines(text, name, address)
    assert all("\n" not in line and not line.lstrip().startswith(">") for line in lines)
    assert not lines or (lines[0].strip() and lines[-1].strip())


def test_an_inline_pgp_signature_leaves_the_signed_text():
    body = "\n".join(
        [
            "-----BEGIN PGP SIGNED MESSAGE-----",
            "Hash: SHA512",
            "",
            "a1-c5",
            "",
            "- -- a dash-escaped line",
            "- -- ",
            "Alice",
            "-----BEGIN PGP SIGNATURE-----",
            "",
            "iQIzBAEBCgAdFiEE",
            "-----END PGP SIGNATURE-----",
        ]
    )
    assert own_lines(body) == ["a1-c5", "", "-- a dash-escaped line"]


def test_a_signature_without_dashes_is_known_by_the_senders_name():
    body = "a1-c5\n\nnice one\n\nAlice Example\nExample University\n\nOn Fri, X wrote:\n\n> q"
    assert own_lines(body, "Alice Example", "alice@example.org") == ["a1-c5", "", "nice one"]
    # Below the quote too; and never the first paragraph, even if it starts with the name.
    assert own_lines("> q\n\na1-c5\n\nAlice", "Alice Example", "") == ["a1-c5"]
    assert own_lines("> q\n\nAlice", "Alice Example", "") == ["Alice"]
    assert own_lines("alice\n\nAlice", "", "alice@example.org") == ["alice"]
    assert own_lines("Alice is winning\n\nok", "Alice Example", "") == [
        "Alice is winning",
        "",
        "ok",
    ]


def test_a_line_ending_with_a_colon_is_an_attribution_only_above_a_quote():
    assert own_lines("a1-c5\n\nMy plan:\nwin") == ["a1-c5", "", "My plan:", "win"]
    assert own_lines("a1-c5\n\nYou wrote:\n> c7-a3\nnice") == ["a1-c5", "", "nice"]


def test_only_the_first_lines_of_a_body_are_read():
    from pbm.ownwords import MAX_LINES

    assert own_lines("> q\n" * (MAX_LINES - 1) + "mine") == ["mine"]
    assert own_lines("> q\n" * MAX_LINES + "mine") == []


def test_a_refused_reply_stays_in_the_boards_thread_only_for_its_player(board):
    """Errors keep the board's subject (docs/spec/server.md §5.3), so Gmail files them in
    the thread; a stranger's Subject is never sent back as ours."""
    board.signup("mallory")
    original = latest_reply_to(board, ALICE)
    thread = "KnightPanic Board 101: alice vs bob"
    for answer in ("", "z9-z9"):
        result = send_reply(board, original, ALICE, answer, "thunderbird")
        [error] = [m for _, m in result.queued]
        assert (error.kind, error.subject) == ("error", thread)
    stranger = send_reply(board, original, "mallory@example.org", "a1-c5")
    assert [m.subject for _, m in stranger.queued] == ["PBM error"]


def test_a_reply_to_an_ended_or_old_board_says_which_and_what_to_send(board, clock):
    original = latest_reply_to(board, ALICE)  # board 101, mailed today
    clock("2026-11-01T12:00:00")
    board.ok("knightpanic challenge alice bob", sender=ALICE)
    old = [m for m in board.mails(ALICE) if m["Reply-To"]][-1]  # board 102
    clock("2026-12-01T12:00:01")
    text = " ".join(refusal(send_reply(board, old, ALICE, "a1-c5")).split())
    assert text.startswith(
        "This reply address has expired: it was mailed more than 30 days ago. Reply to your "
        'latest mail about KnightPanic Board 102, send "knightpanic show 102" for the board '
        "as it is now"
    )
    board.ok("knightpanic move 101 alice secret a1-c5", sender=ALICE)
    board.ok("knightpanic move 101 bob secret a7-c3", sender=BOB)
    board.ok("knightpanic resign 101 alice secret", sender=ALICE)
    text = " ".join(refusal(send_reply(board, original, ALICE, "c1-a5")).split())
    assert text.startswith(
        "This reply address has expired: KnightPanic Board 101 has ended. Game won by bob. "
        'Send "knightpanic show 101" for the final board, or "knightpanic challenge alice '
        'bob" to play again.'
    )
    board.ok("knightpanic challenge alice bob", sender=ALICE)
    original = latest_reply_to(board, ALICE)  # board 103
    board.ok("knightpanic resign 103 bob secret", sender=BOB)  # before any move: removed
    text = " ".join(refusal(send_reply(board, original, ALICE, "a1-c5")).split())
    assert text.startswith(
        "This reply address has expired: KnightPanic Board 103 was removed before its game "
        'began. To play, send "knightpanic challenge alice <opponent>".'
    )
