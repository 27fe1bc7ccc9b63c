"""Discovery of game plugins through the "pbm" entry-point group."""

import os
import sys
from collections.abc import Mapping
from importlib.metadata import entry_points

import pluggy

from . import hookspecs
from .game import GAME_NAME_RE, SEAT_SYMBOL_MAX, SEAT_SYMBOL_RE, Number
from .grammar import CLI_SUBCOMMANDS, reserved_command_words

pm = pluggy.PluginManager("pbm")
pm.add_hookspecs(hookspecs)

_loaded = False
_games_cache = (None, None)


class PluginError(RuntimeError):
    """A plugin set that cannot start: a duplicate or malformed game."""


def validate_game(game) -> None:
    """Refuse a plugin that breaks the naming rules of the contract."""
    problems = []
    if not isinstance(getattr(game, "name", None), str) or not GAME_NAME_RE.fullmatch(game.name):
        problems.append("name must match [a-z][a-z0-9]{1,19}")
    elif game.name in reserved_command_words() | CLI_SUBCOMMANDS:
        problems.append(f'name "{game.name}" is a command word')
    display = getattr(game, "display_name", "")
    if not display or any(c.isspace() for c in display):
        problems.append("display_name must be non-empty without whitespace")
    elif display.lower() in reserved_command_words() | CLI_SUBCOMMANDS:
        problems.append(f'display_name "{display}" is a command word')
    if len(getattr(game, "player_names", ())) < getattr(game, "max_players", 0):
        problems.append("player_names must name every seat")
    problems.extend(_symbol_problems(game))
    if not 1 <= game.min_players <= game.max_players:
        problems.append("min_players and max_players are inconsistent")
    if game.move_layout not in ("columns", "lines"):
        problems.append('move_layout must be "columns" or "lines"')
    problems.extend(_option_problems(getattr(game, "options", ())))
    if problems:
        raise PluginError(f"Game {getattr(game, 'name', game)!r}: " + "; ".join(problems))


def _symbol_problems(game) -> list[str]:
    symbols = getattr(game, "seat_symbols", ())
    if not symbols:
        return []
    if not isinstance(symbols, tuple) or len(symbols) != game.max_players:
        return ["seat_symbols must give one symbol per seat"]
    if not all(isinstance(s, str) and SEAT_SYMBOL_RE.fullmatch(s) for s in symbols):
        return [f"seat_symbols must be 1 to {SEAT_SYMBOL_MAX} printable characters without spaces"]
    if len(set(symbols)) != len(symbols):
        return ["two seats share a symbol"]
    return []


def _option_problems(options) -> list[str]:
    problems, keys = [], []
    for option in options:
        keys.extend(option.keys)
        if isinstance(option, Number):
            ranged = option.low is not None and option.high is not None
            if ranged == bool(option.choices):
                problems.append(f"option {option.name} needs either low and high or choices")
            elif not option.allows(option.default):
                problems.append(f"option {option.name}: the default is not allowed")
            elif option.unit and option.example is None:
                problems.append(f"option {option.name}: a unit needs an example")
    if len(set(keys)) != len(keys):
        problems.append("two options share a name")
    return problems


def load_plugins():
    """Load entry points once; under tests, the tests register their games."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    if getattr(sys, "_called_from_test", False):
        return
    wanted = os.environ.get("PBM_LOAD_PLUGINS")
    if wanted is None:
        pm.load_setuptools_entrypoints("pbm")
        return
    for name in filter(None, (n.strip() for n in wanted.split(","))):
        for entry_point in entry_points(group="pbm", name=name):
            if pm.get_plugin(name) is None:
                pm.register(entry_point.load(), name=name)


def _distribution(plugin):
    for candidate, dist in pm.list_plugin_distinfo():
        if candidate is plugin:
            return dist.project_name, dist.version
    return getattr(plugin, "__name__", pm.get_name(plugin) or repr(plugin)), ""


def _registrations(load_all=True):
    """(game, plugin) for every game every plugin registers; with load_all false, only the
    plugins loaded so far."""
    if load_all:
        load_plugins()
    found = []
    for impl in pm.hook.register_games.get_hookimpls():
        impl.function(lambda game, plugin=impl.plugin: found.append((game, plugin)))
    return found


def get_games():
    """All registered games by command name, checked against the contract."""
    global _games_cache
    load_plugins()
    key = tuple(id(p) for p in pm.get_plugins())
    if _games_cache[0] == key:
        return _games_cache[1]
    games, owners, displays = {}, {}, {}
    for game, plugin in _registrations():
        validate_game(game)
        owner = _distribution(plugin)[0]
        if game.name in games and games[game.name] is not game:
            raise PluginError(
                f'Game "{game.name}" is registered by both {owners[game.name]} and {owner}'
            )
        other = displays.get(game.display_name.lower())
        if other is not None and other is not game:
            raise PluginError(
                f'Games "{other.name}" and "{game.name}" share the name {game.display_name}'
            )
        games[game.name] = game
        owners[game.name] = owner
        displays[game.display_name.lower()] = game
    games = dict(sorted(games.items()))
    _games_cache = (key, games)
    return games


def plugin_listing():
    """(game name, display name, distribution, version) for `pbm plugins`."""
    return sorted(
        (game.name, game.display_name, *_distribution(plugin)) for game, plugin in _registrations()
    )


def load_game(name: str):
    """The game registered as `name`, importing only its own entry point when plugins are
    not loaded yet: a mail about one game should not import every game. None if unknown."""
    if _loaded or getattr(sys, "_called_from_test", False):
        return _registered(name, load_all=True)
    game = _registered(name, load_all=False)
    if game is not None:
        return game
    wanted = os.environ.get("PBM_LOAD_PLUGINS")
    if wanted is not None and name not in {n.strip() for n in wanted.split(",")}:
        return None
    for entry_point in entry_points(group="pbm", name=name):
        if pm.get_plugin(name) is None:
            pm.register(entry_point.load(), name=name)
    game = _registered(name, load_all=False)
    if game is not None:
        validate_game(game)
    return game


def _registered(name: str, load_all: bool):
    for game, _plugin in _registrations(load_all):
        if game.name == name:
            return game
    return None


class GameCatalog(Mapping):
    """The games by command name, loaded as they are asked for: one game by its name, all
    of them for anything that looks at the whole set."""

    def __init__(self, on_load):
        self._games = {}
        self._complete = False
        self._on_load = on_load

    def _add(self, game):
        if game.name not in self._games:
            self._games[game.name] = game
            self._on_load(game)

    def _load_all(self):
        if not self._complete:
            for game in get_games().values():
                self._add(game)
            self._complete = True

    def __getitem__(self, name):
        if name not in self._games and not self._complete:
            game = load_game(name)
            if game is not None:
                self._add(game)
            else:
                self._load_all()
        return self._games[name]

    def __iter__(self):
        self._load_all()
        return iter(sorted(self._games))

    def __len__(self):
        self._load_all()
        return len(self._games)


def add_plugin_commands(group, asked: set) -> None:
    """Let every plugin not in `asked` declare its subcommands (hook register_commands) and
    add them to `group`, the click group of `pbm`; the plugin joins `asked`. A command named
    like a subcommand `group` has, a command word or a game would hide it: PluginError, and
    none of that plugin's commands is added."""
    import click  # deferred: only the command line asks for commands

    load_plugins()
    games = set(get_games())
    for impl in pm.hook.register_commands.get_hookimpls():
        if impl.plugin in asked:
            continue
        asked.add(impl.plugin)
        declared = click.Group()
        impl.function(cli=declared)
        for name in declared.commands:
            hidden = _hidden_by_command(name, group.commands, games)
            if hidden is not None:
                owner = _distribution(impl.plugin)[0]
                raise PluginError(f'{owner} adds the command "{name}", which is {hidden}')
        group.commands.update(declared.commands)


def _hidden_by_command(name: str, commands, games) -> str | None:
    """What a plugin's command of this name would hide on the command line, or None."""
    if name in commands:
        return "a subcommand of pbm"
    if name in games:
        return "a game"
    if name in reserved_command_words():
        return "a command word"
    return None


def get_migration_sets(load_all=True):
    """Migration sets registered by plugins, in registration order; with load_all false,
    those of the plugins loaded so far (a mail needs only its own game's tables)."""
    if load_all:
        load_plugins()
    sets = []
    pm.hook.register_migrations(register=sets.append)
    return sets
