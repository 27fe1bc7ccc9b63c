"""Discovery of game plugins through the "pbm" entry-point group."""

import json
import os
import sys
from collections.abc import Mapping
from importlib import import_module
from pathlib import Path

import pluggy

from . import hookspecs
from .game import GAME_NAME_RE, SEAT_SYMBOL_MAX, SEAT_SYMBOL_RE, Number
from .grammar import CLI_SUBCOMMANDS, reserved_command_words
from .private import make_folders, private_opener

pm = pluggy.PluginManager("pbm")
pm.add_hookspecs(hookspecs)

_loaded = False
# The register_games implementations last asked, and the (game, plugin) pairs they gave: a
# game is made once per plugin set, not again for every mail that names one.
_registered_games: tuple[list, tuple] = ([], ())
# get_games' checked catalogue, with the pairs it was made from.
_games_cache: tuple[tuple | None, dict] = (None, {})
METADATA_FOLDERS = (".dist-info", ".egg-info")
# Where load_game keeps the entry points it read (keep_entry_points_in); None: not kept.
_entry_point_file: Path | None = None


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
    named = _entry_points()
    for name in filter(None, (n.strip() for n in wanted.split(","))):
        if name in named and pm.get_plugin(name) is None:
            pm.register(_load_entry_point(named[name]), name=name)


def _distribution(plugin):
    for candidate, dist in pm.list_plugin_distinfo():
        if candidate is plugin:
            return dist.project_name, dist.version
    return getattr(plugin, "__name__", pm.get_name(plugin) or repr(plugin)), ""


def _registrations(load_all=True):
    """(game, plugin) for every game every plugin registers; with load_all false, only the
    plugins loaded so far."""
    global _registered_games
    if load_all:
        load_plugins()
    impls = list(pm.hook.register_games.get_hookimpls())
    if impls != _registered_games[0]:
        found = []
        for impl in impls:
            impl.function(lambda game, plugin=impl.plugin: found.append((game, plugin)))
        _registered_games = (impls, tuple(found))
    return _registered_games[1]


def get_games():
    """All registered games by command name, checked against the contract."""
    global _games_cache
    registered = _registrations()
    if _games_cache[0] is registered:
        return _games_cache[1]
    games, owners, displays = {}, {}, {}
    for game, plugin in registered:
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
    _games_cache = (registered, games)
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
    target = _entry_points().get(name)
    if target is not None and pm.get_plugin(name) is None:
        pm.register(_load_entry_point(target), name=name)
    game = _registered(name, load_all=False)
    if game is not None:
        validate_game(game)
    return game


def keep_entry_points_in(folder: Path) -> None:
    """Let load_game keep the "pbm" entry points it reads in folder (the home's cache):
    reading them imports importlib.metadata and every installed distribution's metadata,
    a sixth of what a move mail cost through the pipe (docs/performance.md)."""
    global _entry_point_file
    _entry_point_file = Path(folder) / "entry-points.json"


def _installed_paths() -> list[tuple[str, int]]:
    """Each installed distribution's entry-point file on the import path, with its change
    time: installing, upgrading or removing a distribution, or editing the file, changes
    the list. Only looked at, never read: importlib.metadata reads them."""
    found = set()
    for entry in sys.path:
        try:
            with os.scandir(os.path.abspath(entry or ".")) as folder:
                metadata = [item.path for item in folder if item.name.endswith(METADATA_FOLDERS)]
        except OSError:
            continue
        for path in metadata:
            try:
                found.add((path, os.stat(os.path.join(path, "entry_points.txt")).st_mtime_ns))
            except OSError:
                continue
    return sorted(found)


def _entry_points() -> dict[str, str]:
    """The "pbm" entry points by name ("module:attribute"), from the kept copy while the
    import paths are as they were when it was read."""
    installed = _installed_paths()
    if _entry_point_file is not None:
        try:
            kept = json.loads(_entry_point_file.read_text())
            named = kept["entry_points"]
            if kept["installed"] == [list(pair) for pair in installed] and all(
                isinstance(name, str) and isinstance(target, str) for name, target in named.items()
            ):
                return named
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass
    from importlib.metadata import entry_points  # deferred: the kept copy spares it

    found = {entry_point.name: entry_point.value for entry_point in entry_points(group="pbm")}
    if _entry_point_file is not None:
        _keep(_entry_point_file, {"installed": installed, "entry_points": found})
    return found


def _keep(path: Path, content: dict) -> None:
    """Write path whole or not at all (a concurrent mail reads either copy), private; a
    home that cannot be written only costs the next mail the reading again."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}")
    try:
        make_folders(path.parent)
        with open(temporary, "w", opener=private_opener) as out:
            json.dump(content, out)
        os.replace(temporary, path)
    except OSError:
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            pass


def _load_entry_point(target: str):
    """What an entry point's value names: a module, or an attribute path inside one."""
    module, _, attribute = target.partition(":")
    loaded = import_module(module.strip())
    for part in filter(None, attribute.strip().split(".")):
        loaded = getattr(loaded, part)
    return loaded


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
