"""Plugin discovery (docs/spec/server.md §10.1): games register through pluggy, checked on the way
in."""

import re
import types

import click
import pytest
from click.testing import CliRunner

from pbm import hookimpl
from pbm.plugins import PluginError, get_games, load_game, pm
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


class Counted(TwoSeatGame):
    name = "counted"
    display_name = "Counted"
    player_names = ("A", "B")


def test_a_game_is_made_once_for_a_set_of_plugins_not_once_for_every_mail():
    """Every mail asks for its game by name (and the pasted-password scan for every game
    word it reads): the plugin's game object is made when the plugins change, not again."""
    made = []
    module = types.ModuleType("fake_counted")

    @hookimpl
    def register_games(register):
        made.append(Counted())
        register(made[-1])

    module.register_games = register_games
    pm.register(module, name="counted")
    try:
        first = load_game("counted")
        assert load_game("counted") is first
        assert get_games()["counted"] is first
        assert made == [first]
    finally:
        pm.unregister(module)
    assert load_game("counted") is None
    assert "counted" not in get_games()
    pm.register(module, name="counted")
    try:
        assert load_game("counted") is made[-1] is not first
    finally:
        pm.unregister(module)


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


# -- commands a plugin adds to the command line (hook register_commands) --------------------


@pytest.fixture
def command_plugin():
    """register(name, declare): a plugin whose register_commands hook calls declare(cli);
    afterwards pbm's command line and plugins are as before."""
    from pbm.cli import cli

    commands, asked, added = dict(cli.commands), set(cli.plugins_asked), []

    def register(name, declare):
        module = types.ModuleType(name)

        @hookimpl
        def register_commands(cli):
            declare(cli)

        module.register_commands = register_commands
        pm.register(module, name=name)
        added.append(module)

    yield register
    for module in added:
        pm.unregister(module)
    cli.commands.clear()
    cli.commands.update(commands)
    cli.plugins_asked = asked


def greet_command(cli):
    @cli.command()
    @click.argument("userid")
    @click.pass_obj
    def greet(obj, userid):
        """Says hello from the server's home."""
        click.echo(f"Hello {userid}, from {obj['config'].home.name}")


def test_a_plugin_adds_a_command_to_the_command_line(command_plugin, tmp_path):
    from pbm.cli import cli

    command_plugin("pbm-greeting", greet_command)
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "myhome"), "greet", "alice"])
    assert result.exit_code == 0, result.output
    assert result.output == "Hello alice, from myhome\n"
    listing = CliRunner().invoke(cli, ["--help"]).output
    assert re.search(r"\n  greet +Says hello from the server's home\.\n", listing)


def test_a_game_command_loads_no_plugin_commands(command_plugin, harness):
    from pbm.cli import cli

    asked = []
    command_plugin("pbm-watcher", asked.append)
    home = str(harness.home)
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    result = CliRunner().invoke(cli, ["--home", home, "knightpanic", "show", "101"])
    assert result.exit_code == 0, result.output
    assert asked == []
    CliRunner().invoke(cli, ["--home", home, "no-such-command"])
    assert len(asked) == 1


@pytest.mark.parametrize(
    ("name", "hidden"),
    [("init", "a subcommand of pbm"), ("show", "a command word"), ("knightpanic", "a game")],
)
def test_a_plugin_command_may_not_hide_a_subcommand_command_word_or_game(
    command_plugin, tmp_path, name, hidden
):
    from pbm.cli import cli

    def declare(cli):
        cli.command(name)(lambda: None)

    command_plugin("pbm-hider", declare)
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "--help"])
    assert result.exit_code == 1
    assert f'pbm-hider adds the command "{name}", which is {hidden}' in result.output
    assert CliRunner().invoke(cli, ["--home", str(tmp_path), "init"]).exit_code == 0
