"""The command grammar (docs/spec/server.md §2): normalisation, options, words, guards."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pbm.dispatch  # noqa: F401  (registers the commands)
from pbm.grammar import (
    GrammarError,
    extract_options,
    normalize,
    parse,
    parse_board,
    split_guard,
)
from pbm.plugins import get_games
from tests.conftest import STRESS_FACTOR

GAMES = get_games()


@pytest.mark.parametrize(
    "subject,expected",
    [
        ("Re: knightpanic show 101", "knightpanic show 101"),
        ("RE: Fwd: AW: knightpanic show 101", "knightpanic show 101"),
        ("Re[2]: Re^3: help", "help"),
        ("[pbm-list] Re: help", "help"),
        ("SV:VS:Antw: TR: WG: help", "help"),
        ("help\tgames\r\n tutorial", "help games   tutorial"),
        ("  help  ", "help"),
        ("Remove me", "Remove me"),
    ],
)
def test_normalize(subject, expected):
    assert normalize(subject) == expected


def test_options_anywhere_and_never_the_pass_token_or_numbers():
    positional, params, server = extract_options(
        [
            "knightpanic",
            "-size=6",
            "challenge",
            "alice",
            "-MOVER_LOSES",
            "--nagtime=3",
            "bob",
            "--",
            "-",
            "-2",
            "-3d",
        ]
    )
    assert positional == ["knightpanic", "challenge", "alice", "bob", "--", "-", "-2"]
    assert params == {"size": "6", "mover_loses": True, "3d": True}
    assert server == {"nag_days": 3}


def test_option_values_keep_their_case():
    _, params, _ = extract_options(["-Name=MixedCase"])
    assert params == {"name": "MixedCase"}


def test_command_words_are_case_insensitive_with_aliases_and_abbreviations():
    assert parse("KNIGHTPANIC MVOE 101 alice pw a1-c5", GAMES).spec.name == "move"
    assert parse("knightpanic board 101 alice pw a1-c5", GAMES).spec.name == "move"
    assert parse("KnightPanic chall alice bob", GAMES).spec.name == "challenge"
    assert parse("delete alice pw", GAMES).spec.name == "signoff"
    assert parse("knightpanic -- 101 alice pw", GAMES).spec.name == "pass"


def test_abbreviations_below_the_minimum_and_of_other_words_fail():
    with pytest.raises(GrammarError, match='Unknown command "chal"'):
        parse("knightpanic chal alice bob", GAMES)
    with pytest.raises(GrammarError, match='Unknown command "sho"'):
        parse("knightpanic sho 101", GAMES)


def test_game_names_are_never_abbreviated():
    with pytest.raises(GrammarError) as error:
        parse("knightpani show 101", GAMES)
    assert error.value.message == 'Unknown command "knightpani". Did you mean "knightpanic"?'


def test_did_you_mean_for_game_commands():
    with pytest.raises(GrammarError) as error:
        parse("knightpanic shwo 101", GAMES)
    assert error.value.message == 'Unknown command "shwo". Did you mean "show"?'
    assert error.value.game is GAMES["knightpanic"]


def test_no_suggestion_when_nothing_is_close():
    with pytest.raises(GrammarError) as error:
        parse("xyzzy", GAMES)
    assert error.value.message == 'Unknown command "xyzzy".'


@pytest.mark.parametrize(
    "text,message",
    [
        ("", "No command given"),
        ("** **", "No command given"),
        ("Re:", "No command given"),
        ("help " + "x " * 64, "Command too long"),
        ("help " + "x" * 600, "Command too long"),
        ("knightpanic", "No command given for KnightPanic"),
        ("knightpanic games -size=5", "The games command takes no options"),
        ("knightpanic challenge alice bob --nagtime=abc", "--nagtime must be between 1 and 365"),
    ],
)
def test_grammar_errors(text, message):
    with pytest.raises(GrammarError) as error:
        parse(text, GAMES)
    assert message in error.value.message


def test_stars_tokens_are_dropped():
    parsed = parse("knightpanic move 101 alice pw a1-c5 **", GAMES)
    assert parsed.args == ["101", "alice", "pw", "a1-c5"]


def test_syntax_error_names_the_game():
    with pytest.raises(GrammarError) as error:
        parse("knightpanic move 101 alice", GAMES)
    assert error.value.message == 'Syntax is "knightpanic move board userid password move[#n]"'


@pytest.mark.parametrize(
    "text,expected",
    [
        ("a1-c5#3", ("a1-c5", "3")),
        ("a1-c5#", ("a1-c5#", None)),
        ("a1#b#12", ("a1#b", "12")),
        ("a1-c5#x", ("a1-c5", "x")),
        ("a1-c5", ("a1-c5", None)),
    ],
)
def test_split_guard(text, expected):
    assert split_guard(text) == expected


def test_board_tokens():
    assert parse_board("0101") == (101, None)
    assert parse_board("101#3") is None
    assert parse_board("101#3", allow_ply=True) == (101, 3)
    assert parse_board("101#-2", allow_ply=True) == (101, -2)
    assert parse_board("x101") is None


@settings(max_examples=400 * STRESS_FACTOR, deadline=None)
@given(st.text(max_size=120))
def test_the_parser_only_raises_grammar_errors(text):
    try:
        parsed = parse(text, GAMES)
    except GrammarError as error:
        assert error.message
    else:
        assert parsed.spec.min_args <= len(parsed.args)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "knightpanic",
                "move",
                "show",
                "101",
                "alice",
                "-size=5",
                "--nagtime=3",
                "--",
                "#2",
                "challenge",
                "help",
                "Re:",
                "**",
                "pass",
                "signup",
                "x@y.org",
                "-3d",
                "a1-c5#1",
            ]
        ),
        max_size=10,
    )
)
def test_the_parser_on_plausible_words(words):
    try:
        parse(" ".join(words), GAMES)
    except GrammarError as error:
        assert error.message


@pytest.mark.parametrize(
    "text,expected",
    [
        ("knightpanic move 101 Alice s3cret a1-c5", ("alice", "s3cret")),
        ("Re: anygame queue 7 bob pw a1", ("bob", "pw")),
        ("change password carol old new", ("carol", "old")),
        ("lox accept 101 dave pw", ("dave", "pw")),
        ("lox accept dave pw", ("dave", "pw")),
        ("signup erin pw", None),
        ("knightpanic show 101", None),
        ("knightpanic move 101 alice", None),
        ("", None),
    ],
)
def test_password_of_reads_the_password_position_without_any_game(text, expected):
    from pbm.grammar import password_of

    assert password_of(text) == expected


def test_an_early_password_check_answers_only_for_itself():
    from pbm.security import EarlyCheck, hash_password

    stored = hash_password("right")
    early = EarlyCheck("alice", "right", stored)
    assert early.verdict("alice", "right", stored) is True
    assert early.verdict("alice", "right", "another hash") is None
    assert early.verdict("bob", "right", stored) is None
    assert EarlyCheck("alice", "wrong", stored).verdict("alice", "wrong", stored) is False


def test_the_password_cache_of_pbm_serve_remembers_only_successes():
    from pbm.security import EarlyCheck, PasswordCache, hash_password

    stored = hash_password("right")
    cache = PasswordCache(size=2)
    assert not cache.known("alice", "right", stored)
    assert EarlyCheck("alice", "right", stored, cache=cache, background=False).verdict(
        "alice", "right", stored
    )
    assert cache.known("alice", "right", stored)
    assert not cache.known("alice", "right", hash_password("right")), "a new hash misses"
    EarlyCheck("alice", "wrong", stored, cache=cache, background=False)
    assert not cache.known("alice", "wrong", stored)
    cache.remember("bob", "x", "h1")
    cache.remember("carol", "y", "h2")
    assert not cache.known("alice", "right", stored), "the oldest entry makes room"


def test_the_command_module_table_names_what_each_module_registers():
    """Issue 20.3: pbm.commands loads a module on demand by MODULES; it must be true."""
    from pbm.commands import MODULES, load_commands
    from pbm.grammar import specs_for

    load_commands()
    registered = {}
    for scope in ("global", "game"):
        for spec in specs_for(scope):
            module = spec.handler.__module__.rsplit(".", 1)[1]
            registered.setdefault(module, set()).update((spec.word, *spec.aliases))
    assert registered == {module: set(words) for module, words in MODULES.items()}


def test_no_word_or_abbreviation_resolves_into_two_modules():
    """So the order in which modules happen to load never changes what a word means."""
    from pbm.commands import MODULES, load_commands
    from pbm.grammar import _resolve, specs_for

    load_commands()
    for word in {w for words in MODULES.values() for w in words}:
        for end in range(1, len(word) + 1):
            for scope in ("global", "game"):
                matches = _resolve(word[:end], specs_for(scope))
                assert len({s.handler.__module__ for s in matches}) <= 1, (word[:end], scope)


def test_a_move_loads_only_the_command_modules_it_may_need():
    import subprocess
    import sys

    probe = (
        "import sys, pbm.dispatch\n"
        "from pbm.grammar import password_of\n"
        "assert password_of('lox move 101 alice secret a1') == ('alice', 'secret')\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('pbm.commands.'))))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    # "move" may abbreviate "moveq" (pending); votes imports play as a sibling, not here;
    # boardcommand declares the commands on one board and registers none of its own.
    declared = {"pbm.commands.play", "pbm.commands.pending", "pbm.commands.boardcommand"}
    assert set(loaded) <= declared, loaded
    assert "pbm.commands.play" in loaded
