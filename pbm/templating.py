"""The Jinja2 text environment shared by mail templates and game boards.

A game's templates live in the templates/ folder of its own package, built-in or not, and
are named `<game>/<file>`: `knightpanic/board.txt` is games/knightpanic/templates/board.txt.
"""

import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import jinja2
import markupsafe

from .private import make_folders

# The game whose package holds the `<name>/` templates, by name; None if there is none.
GameFinder = Callable[[str], object | None]

_SOURCE_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def templates_dir() -> Path:
    """The top-level templates/: in the source tree, or installed under share/."""
    if _SOURCE_TEMPLATES.is_dir():
        return _SOURCE_TEMPLATES
    return Path(sys.prefix) / "share" / "pbm" / "templates"


class GameTemplateLoader(jinja2.BaseLoader):
    """`<game>/<file>` from the templates/ folder of the package that defines the game;
    find_game(name) says which game that is (None if unknown)."""

    def __init__(self, find_game: GameFinder):
        self._find_game = find_game
        self._loaders: dict[str, jinja2.PackageLoader] = {}

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        game_name, _, file_name = template.partition("/")
        loader = self._loaders.get(game_name)
        if loader is None:
            loader = self._package_loader(game_name)
            if loader is None:
                raise jinja2.TemplateNotFound(template)
            self._loaders[game_name] = loader
        return loader.get_source(environment, file_name)

    def _package_loader(self, game_name: str) -> jinja2.PackageLoader | None:
        game = self._find_game(game_name)
        if game is None:
            return None
        try:
            return jinja2.PackageLoader(type(game).__module__, "templates")
        except ValueError:  # the package has no templates/ folder
            return None


def _bytecode_cache(home: Path | None) -> jinja2.FileSystemBytecodeCache | None:
    """Compiled templates kept in $PBM_HOME/cache: a mail process need not compile them."""
    if home is None:
        return None
    folder = Path(home) / "cache" / "templates"
    try:
        make_folders(folder)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(folder))


@lru_cache(maxsize=8)
def text_environment(home: Path | None, find_game: GameFinder) -> jinja2.Environment:
    """Operator overrides in $PBM_HOME/templates win over ours, ours over the games';
    find_game(name) is the game whose package holds the `<name>/` templates."""
    loaders: list[jinja2.BaseLoader] = []
    if home is not None:
        loaders.append(jinja2.FileSystemLoader(str(Path(home) / "templates")))
    loaders.append(jinja2.FileSystemLoader(str(templates_dir())))
    loaders.append(GameTemplateLoader(find_game))
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        bytecode_cache=_bytecode_cache(home),
        autoescape=False,
        auto_reload=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def code_spans(text: str) -> markupsafe.Markup:
    """Text whose `quoted` commands and moves become <code> (the text part's backquotes
    say "type this"), everything escaped."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backquote: no span
        return markupsafe.escape(text)
    return markupsafe.Markup("").join(
        markupsafe.Markup("<code>{}</code>").format(part) if i % 2 else markupsafe.escape(part)
        for i, part in enumerate(parts)
    )


@lru_cache(maxsize=8)
def html_environment(home: Path | None, write_cache: bool = True) -> jinja2.Environment:
    """The HTML templates (templates/mail/*.html, templates/web/*.html), apart from the text
    environment: everything they show is escaped, since most of it comes from players.
    Operator overrides in $PBM_HOME/templates win. The web view reads its home read-only
    (write_cache False): it keeps its compiled templates in memory."""
    loaders: list[jinja2.BaseLoader] = []
    if home is not None:
        loaders.append(jinja2.FileSystemLoader(str(Path(home) / "templates")))
    loaders.append(jinja2.FileSystemLoader(str(templates_dir())))
    environment = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        bytecode_cache=_bytecode_cache(home) if write_cache else None,
        autoescape=True,
        auto_reload=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["code_spans"] = code_spans
    return environment
