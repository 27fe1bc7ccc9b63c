"""The game contract as code (docs/spec/server.md §10): what a game must implement, the options the
core parses from a game's declarations, and the help that lists them."""

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pbm.game import BaseGame, Flag, Number, OptionError, Outcome, Switch
from pbm.mailin import build_request
from pbm.plugins import PluginError, get_games, validate_game
from pbm.serve import MailService
from tests.conftest import STRESS_FACTOR


class Declared(BaseGame):
    """Every kind of option, on a game whose rules do not matter here."""

    name = "declared"
    display_name = "Declared"
    player_names = ("A", "B")
    options = (
        Number("size", 5, "board size", low=3, high=9, example=7),
        Number("base", 6, "board base", choices=(5, 6, 7)),
        Number("stack", 20, "tiles per player,", low=10, high=30, unit="tiles", example=15),
        Switch("3d", "2d", "the flat game or the 3D variant"),
        Flag("blocker", "a grey tile blocks", excludes="wildcard", why="there is one grey tile"),
        Flag("wildcard", "a grey tile counts for all"),
    )

    def initial_state(self, options, players, seed):
        return {"options": options, "to_move": 0, "winner": None, "reason": ""}

    def parse_move(self, state, seat, text):
        return text

    def legal_moves(self, state, seat):
        return []

    def apply_move(self, state, seat, move):
        return dict(state, to_move=1 - seat)


game = Declared()
DEFAULTS = {"size": 5, "base": 6, "stack": 20, "3d": False, "blocker": False, "wildcard": False}


def refusal(raw):
    with pytest.raises(OptionError) as error:
        game.parse_options(raw, 2)
    return str(error.value)


# -- what a game must implement -------------------------------------------------------------


def test_a_game_without_the_rules_cannot_be_made():
    class Partial(BaseGame):
        name = "partial"
        display_name = "Partial"
        player_names = ("A", "B")

        def initial_state(self, options, players, seed):
            return {}

    with pytest.raises(TypeError) as error:
        Partial()
    for method in ("apply_move", "legal_moves", "parse_move"):
        assert method in str(error.value)


def test_to_move_and_outcome_read_the_state_by_default():
    state = game.initial_state(DEFAULTS, 2, 0)
    assert game.to_move(state) == 0 and game.outcome(state) is None
    won = dict(state, winner=1, reason="B took the last stone")
    assert game.to_move(won) is None
    assert game.outcome(won) == Outcome(winners=(1,), reason="B took the last stone")


@pytest.mark.parametrize(
    ("winners", "outcome"),
    [
        (None, None),
        ([], Outcome(winners=(), reason="the end")),
        ([1], Outcome(winners=(1,), reason="the end")),
        ([0, 2], Outcome(winners=(0, 2), reason="the end")),
    ],
)
def test_a_winners_key_gives_draws_and_several_winners_without_an_override(winners, outcome):
    """docs/spec/server.md §10.4: a state with "winners" instead of "winner"."""
    state = {"to_move": None if winners is not None else 2, "winners": winners, "reason": "the end"}
    assert game.outcome(state) == outcome
    assert game.to_move(state) == (2 if outcome is None else None)


class Rows(Declared):
    """A check across options: the row the game is played to must fit the board."""

    options = (
        Number("size", 5, "board size", low=3, high=9),
        Number("row", 4, "stones in a row that win", low=3, high=6),
    )

    def check_options(self, options, players):
        if options["row"] > options["size"]:
            raise self.option_error(
                f"-row={options['row']}",
                f"a row of {options['row']} does not fit a board of "
                f"{options['size']}: give at most -row={options['size']}",
            )


def test_checks_across_options_come_after_each_options_own():
    rows = Rows()
    assert rows.parse_options({"size": "3", "row": "3"}, 2) == {"size": 3, "row": 3}
    with pytest.raises(OptionError) as error:
        rows.parse_options({"size": "3"}, 2)
    assert str(error.value) == (
        'Invalid Declared parameter "-row=4": a row of 4 does not fit a board of 3: give at '
        "most -row=3"
    )
    with pytest.raises(OptionError) as error:
        rows.parse_options({"size": "3", "row": "7"}, 2)
    assert "row must be from 3 to 6" in str(error.value), "the option's own check first"


# -- options: parsed, validated and refused by the core ------------------------------------


def test_the_defaults_and_the_values_given():
    assert game.parse_options({}, 2) == DEFAULTS
    assert game.parse_options({"size": "9", "base": "5", "3d": True, "wildcard": True}, 2) == dict(
        DEFAULTS, size=9, base=5, **{"3d": True}, wildcard=True
    )
    assert game.parse_options({"2d": True, "stack": "+15"}, 2) == dict(DEFAULTS, stack=15)


@pytest.mark.parametrize(
    "raw,message",
    [
        ({"size": "10"}, '"-size=10": size must be from 3 to 9, e.g. -size=7'),
        ({"size": True}, '"-size": size must be from 3 to 9, e.g. -size=7'),
        ({"base": "4"}, '"-base=4": base must be 5, 6 or 7'),
        ({"stack": "many"}, '"-stack=many": write the number of tiles, e.g. -stack=15'),
        ({"stack": "31"}, '"-stack=31": stack must be from 10 to 30 tiles'),
        ({"3d": "yes"}, '"-3d=yes": -3d takes no value'),
        ({"2d": True, "3d": True}, '"-2d": give only one of -2d and -3d'),
        (
            {"wildcard": True, "blocker": True},
            '"-blocker": give only one of -blocker and -wildcard: there is one grey tile',
        ),
        (
            {"colour": "red"},
            '"-colour=red": unknown option; the options are -size=N (3 to 9, '
            "default 5), -base=N (5, 6 or 7, default 6), -stack=N (10 to 30 tiles, "
            "default 20), -2d | -3d, -blocker and -wildcard",
        ),
    ],
)
def test_refusals_share_one_wording(raw, message):
    assert refusal(raw) == f"Invalid Declared parameter {message}"


def test_a_game_without_options_takes_none():
    class Bare(Declared):
        options = ()

    with pytest.raises(
        OptionError, match='Invalid Declared parameter "-size=5": Declared takes no options'
    ):
        Bare().parse_options({"size": "5"}, 2)


OPTION_NAMES = st.sampled_from(["size", "base", "stack", "2d", "3d", "blocker", "wildcard", "x"])
OPTION_VALUES = st.one_of(st.just(True), st.text(max_size=12), st.integers(-5, 40).map(str))


@settings(max_examples=300 * STRESS_FACTOR, deadline=None)
@given(st.dictionaries(OPTION_NAMES, OPTION_VALUES, max_size=4))
@example({"size": "5\x1f"})  # strip() drops \x1f, int() did not: a ValueError, not a refusal
def test_any_options_are_parsed_within_their_declarations_or_refused(raw):
    try:
        options = game.parse_options(raw, 2)
    except OptionError as error:
        name = next(n for n in raw if f'"-{n}' in str(error))
        assert str(error).startswith(f'Invalid Declared parameter "-{name}')
        return
    assert set(options) == set(DEFAULTS)
    assert 3 <= options["size"] <= 9 and options["base"] in (5, 6, 7)
    assert 10 <= options["stack"] <= 30
    assert not (options["blocker"] and options["wildcard"])
    for name, value in raw.items():
        if name in ("size", "base", "stack"):
            assert options[name] == int(value.strip())
        elif name != "2d":
            assert options[name] is True


@pytest.mark.parametrize(
    "option,problem",
    [
        (
            Number("size", 11, "board size", low=3, high=9),
            "option size: the default is not allowed",
        ),
        (Number("size", 5, "board size"), "option size needs either low and high or choices"),
        (Number("stack", 20, "tiles", low=10, high=30, unit="tiles"), "a unit needs an example"),
        (Flag("2d", "flat"), "two options share a name"),
    ],
)
def test_bad_declarations_stop_start_up(option, problem):
    class Misdeclared(Declared):
        options = (Switch("3d", "2d", "the flat game or the 3D variant"), option)

    with pytest.raises(PluginError, match=problem):
        validate_game(Misdeclared())


@pytest.mark.parametrize(
    "symbols,problem",
    [
        (("o",), "seat_symbols must give one symbol per seat"),
        (("o", "x", "+"), "seat_symbols must give one symbol per seat"),
        (("o", ""), "seat_symbols must be 1 to 3 printable characters"),
        (("o", "x x"), "seat_symbols must be 1 to 3 printable characters"),
        (("o", "long"), "seat_symbols must be 1 to 3 printable characters"),
        (("o", "\x1b"), "seat_symbols must be 1 to 3 printable characters"),
        (("o", "o"), "two seats share a symbol"),
    ],
)
def test_bad_seat_symbols_stop_start_up(symbols, problem):
    class Misdeclared(Declared):
        seat_symbols = symbols

    with pytest.raises(PluginError, match=problem):
        validate_game(Misdeclared())


def test_seat_symbols_are_optional():
    assert Declared.seat_symbols == ()
    validate_game(Declared())


# -- help <game> lists the declared options -----------------------------------------------


def test_options_help_lists_name_values_default_and_help():
    assert game.options_help().split("\n") == [
        "  -size=N     board size 3 to 9 (default 5)",
        "  -base=N     board base 5, 6 or 7 (default 6)",
        "  -stack=N    tiles per player, 10 to 30 (default 20)",
        "  -2d | -3d   the flat game or the 3D variant (default -2d)",
        "  -blocker    a grey tile blocks (off by default)",
        "  -wildcard   a grey tile counts for all (off by default)",
    ]


@pytest.mark.parametrize("name", ["knightline", "knightpanic", "knightvision", "lox", "uknight"])
def test_help_by_mail_lists_every_declared_option(harness, name):
    played = get_games()[name]
    [mail] = harness.ok(f"help {name}", sender=None).printed
    for line in played.options_help().split("\n"):
        assert line in mail.body
    for option in played.options:
        assert f"default {option.default}" in mail.body or option.default is False


def test_an_operator_template_wins_over_the_games_own(harness):
    folder = harness.home / "templates" / "knightpanic"
    folder.mkdir(parents=True)
    (folder / "help.txt").write_text("Our house rules for {{ game.display_name }}.\n")
    [mail] = harness.ok("help knightpanic", sender=None).printed
    assert "Our house rules for KnightPanic." in mail.body


def test_pbm_serve_reads_a_template_once_until_it_is_restarted(harness):
    """README: `pbm serve` reads pbm.ini and each template once, so an edited template
    takes effect in the next process (a restart, or the pipe's next mail), not halfway
    through a server's commands."""
    harness.signup("alice")
    folder = harness.home / "templates" / "knightpanic"
    folder.mkdir(parents=True)
    (folder / "help.txt").write_text("First rules.\n")

    def help_text(service, key):
        result = service.run(
            build_request("help knightpanic", "", "alice@example.org", key), None, None
        )
        [(_, mail)] = result.queued
        return mail.body

    service = MailService(harness.config)
    try:
        assert "First rules." in help_text(service, "t-1")
        (folder / "help.txt").write_text("Second rules.\n")
        assert "First rules." in help_text(service, "t-2")
    finally:
        service.close()
    restarted = subprocess.run(
        [Path(sys.executable).parent / "pbm", "--home", harness.home, "help", "knightpanic"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Second rules." in restarted.stdout, restarted.stdout + restarted.stderr


BUILT_IN = ["knightline", "knightpanic", "knightvision", "lox", "uknight"]


@pytest.mark.parametrize("name", BUILT_IN)
@settings(max_examples=100 * STRESS_FACTOR, deadline=None)
@given(data=st.data())
def test_every_built_in_game_parses_or_refuses_any_options(name, data):
    played = get_games()[name]
    keys = [key for option in played.options for key in option.keys]
    raw = data.draw(
        st.dictionaries(st.sampled_from(keys + ["x", "swap"]), OPTION_VALUES, max_size=4)
    )
    defaults = played.parse_options({}, 2)
    try:
        options = played.parse_options(raw, 2)
    except OptionError as error:
        assert str(error).startswith(f'Invalid {played.display_name} parameter "-')
        return
    assert set(options) == set(defaults)
    state = played.initial_state(options, 2, 0)
    assert played.to_move(state) == 0


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_built_in_game_declares_the_symbols_its_board_legend_shows(name):
    played = get_games()[name]
    validate_game(played)
    seats = played.max_players
    state = played.initial_state(played.parse_options({}, seats), seats, 0)
    legend = f"{' '.join(played.seat_symbols)}  {', '.join(played.player_names[:seats])} "
    assert any(line.startswith(legend) for line in played.render_board(state, None).split("\n"))


@pytest.mark.parametrize("name", BUILT_IN)
def test_a_game_that_shows_everyone_the_same_board_does(name):
    """same_view_for_all lets the server draw a state once for every reader: each
    perspective's text board and picture must then be the same, all along a random game."""
    import random

    played = get_games()[name]
    assert played.same_view_for_all
    seats = played.max_players
    rng = random.Random(name)
    state = played.initial_state(played.parse_options({}, seats), seats, 3)
    last = None
    for _ in range(30):
        views = [None, *range(seats)]
        assert len({played.render_board(state, view) for view in views}) == 1
        assert len({repr(played.drawing(state, view, last)) for view in views}) == 1
        seat = played.to_move(state)
        if seat is None:
            break
        moves = list(played.legal_moves(state, seat)) or [played.forced_move(state)]
        last = rng.choice(moves)
        state = played.apply_move(state, seat, last)
