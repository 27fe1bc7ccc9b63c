"""Plugin discovery (docs/spec/server.md §10.1): games register through pluggy, checked on the way
in."""

import types

import pytest

from pbm import hookimpl
from pbm.plugins import PluginError, get_games, pm
from tests.toygame import Tally


def plugin_with(game):
    module = types.ModuleType(f"fake_{id(game)}")

    @hookimpl
    def register_games(register):
        register(game)

    module.register_games = register_games
    return module


class TwoSeatGame(Tally):
    """A complete game: only the names of the games below break the rules."""

    max_players = 2


class Copycat(TwoSeatGame):
    name = "knightpanic"
    display_name = "Copycat"
    player_names = ("A", "B")


class Spaced(TwoSeatGame):
    name = "spaced"
    display_name = "Has Spaces"
    player_names = ("A", "B")


@pytest.mark.parametrize(
    "game,message",
    [
        (Copycat(), 'Game "knightpanic" is registered by both'),
        (Spaced(), "display_name must be non-empty without whitespace"),
    ],
)
def test_a_bad_or_duplicate_game_stops_start_up(game, message):
    plugin = plugin_with(game)
    pm.register(plugin, name=f"bad-{game.name}")
    try:
        with pytest.raises(PluginError) as error:
            get_games()
        assert message in str(error.value)
    finally:
        pm.unregister(plugin)
    assert "knightpanic" in get_games()


def test_a_game_may_not_be_named_like_a_command():
    class Show(TwoSeatGame):
        name = "show"
        display_name = "Show"
        player_names = ("A", "B")

    plugin = plugin_with(Show())
    pm.register(plugin, name="bad-show")
    try:
        with pytest.raises(PluginError, match='name "show" is a command word'):
            get_games()
    finally:
        pm.unregister(plugin)


def test_the_subcommands_of_pbm_are_the_ones_no_game_may_take():
    from pbm.cli import cli
    from pbm.grammar import CLI_SUBCOMMANDS

    assert set(cli.commands) == CLI_SUBCOMMANDS


def test_two_games_may_not_share_a_display_name():
    class Twin(TwoSeatGame):
        name = "twinpanic"
        display_name = "KNIGHTPANIC"
        player_names = ("A", "B")

    plugin = plugin_with(Twin())
    pm.register(plugin, name="bad-twin")
    try:
        with pytest.raises(PluginError, match="share the name KNIGHTPANIC"):
            get_games()
    finally:
        pm.unregister(plugin)
