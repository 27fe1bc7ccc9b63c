"""Fuzzing with hypothesis: the mail parser and every game's move parser raise nothing but
their documented refusals."""

import pickle
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm.dispatch import open_server
from pbm.game import MoveError
from pbm.htmltext import html_to_text
from pbm.intake import DirectServer, process_message, read_for_command
from pbm.mailin import body_text
from pbm.ownwords import own_lines
from pbm.plugins import get_games
from pbm.testing import random_game
from tests.conftest import STRESS_FACTOR

HEADER_NAMES = [
    "From",
    "Reply-To",
    "Subject",
    "Message-ID",
    "Content-Type",
    "Content-Transfer-Encoding",
    "MIME-Version",
    "Auto-Submitted",
    "Return-Path",
    "X-Junk",
    "List-Id",
    "Precedence",
]
CONTENT_TYPES = [
    "text/plain",
    "text/html",
    "multipart/mixed; boundary=b",
    "multipart/alternative",
    "message/rfc822",
    "text/plain; charset=x-bad",
    "application/octet-stream",
    "multipart/report; report-type=delivery-status",
]

header_value = st.one_of(
    st.text(max_size=80),
    st.sampled_from(CONTENT_TYPES),
    st.sampled_from(
        [
            "a@b.example",
            "<>",
            "Name <x@y.example>",
            "=?utf-8?q?help?=",
            "knightpanic show 101",
            "help games",
            "=?bad?x?zz?=",
        ]
    ),
)
structured_mail = st.builds(
    lambda headers, body: (
        "".join(f"{name}: {value}\r\n" for name, value in headers) + "\r\n" + body
    ).encode("utf-8", "surrogatepass"),
    st.lists(st.tuples(st.sampled_from(HEADER_NAMES), header_value), max_size=10),
    st.text(max_size=400),
)


@settings(
    max_examples=120 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(raw=st.one_of(st.binary(max_size=2000), structured_mail))
def test_the_mail_pipeline_never_raises(harness, raw):
    with open_server(harness.config) as server:
        outcome = process_message(raw, len(raw), None, DirectServer(server), harness.config)
    assert outcome.consumed, outcome.cause
    assert outcome.result is None or outcome.result.ok in (True, False)


class NoEarlyCheck:
    def early_check(self, config, request):
        return None


@settings(
    max_examples=120 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    raw=st.one_of(st.binary(max_size=2000), structured_mail),
    recipients=st.lists(
        st.sampled_from(
            ["pbm@localhost", "pbm+bounce-1-abc@localhost", "pbm+unsubscribe-xyz@localhost"]
        ),
        max_size=2,
    ),
)
def test_what_a_reader_process_reads_reaches_the_server_as_read(harness, raw, recipients):
    """`pbm serve`'s reader processes send what they read as pickles (issue 31): every
    request, refusal and service mail the reading gives crosses unchanged."""
    read = read_for_command(harness.config, raw, len(raw), None, recipients, NoEarlyCheck())
    assert pickle.loads(pickle.dumps(read)) == read


def test_an_early_check_crosses_with_its_verdict_and_without_its_cache():
    from pbm.security import EarlyCheck, PasswordCache, hash_password

    stored = hash_password("right")
    cache = PasswordCache()
    for password, verdict in (("right", True), ("wrong", False)):
        sent = EarlyCheck("alice", password, stored, cache=cache, background=False)
        received = pickle.loads(pickle.dumps(sent))
        assert received.verdict("alice", password, stored) is verdict
        assert received.verdict("alice", "other", stored) is None
        assert received._cache is None, "the cache of checks stays with the reader"


@settings(max_examples=300 * STRESS_FACTOR, deadline=None)
@given(st.text(max_size=500))
def test_body_extraction_never_raises(text):
    lines = own_lines(text)
    assert all("\n" not in line for line in lines)
    assert isinstance(html_to_text(text), str)


@settings(max_examples=200 * STRESS_FACTOR, deadline=None)
@given(st.binary(max_size=600))
def test_any_bytes_give_a_body_text(raw):
    import email
    import email.policy

    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(body_text(message), str)


def reachable_states(game, count, seed):
    """States met in random games: starts, middles and ends."""
    rng = random.Random(seed)
    states = []
    for players in range(game.min_players, game.max_players + 1):
        options = game.parse_options({}, players)
        for _ in range(count):
            moves, _ = random_game(
                game, options, players, rng.randrange(10**9), max_plies=rng.randrange(0, 60)
            )
            state = game.initial_state(options, players, 0)
            for move in moves:
                state = game.apply_move(state, game.to_move(state), move)
            states.append(state)
    return states


@settings(max_examples=150 * STRESS_FACTOR, deadline=None)
@given(
    text=st.one_of(
        st.text(max_size=40),
        st.from_regex(
            r"[a-zA-Z]{1,2}[0-9]{1,2}([-x*:,+][a-zA-Z]{0,2}[0-9]{0,2}){0,3}", fullmatch=True
        ),
    ),
    pick=st.integers(0, 10**6),
)
def test_every_games_move_parser_raises_only_move_error(text, pick):
    for name, game in get_games().items():
        states = _STATES.setdefault(name, reachable_states(game, 4, len(name)))
        state = states[pick % len(states)]
        seat = game.to_move(state)
        if seat is None:
            continue
        try:
            canonical = game.parse_move(state, seat, text)
        except MoveError as error:
            assert str(error), name
            continue
        assert canonical in set(game.legal_moves(state, seat)), (name, text, canonical)


_STATES: dict = {}
