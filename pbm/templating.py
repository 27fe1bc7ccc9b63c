"""The Jinja2 text environment shared by mail templates and game boards."""

import sys
from functools import lru_cache
from pathlib import Path

import jinja2

_SOURCE_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def templates_dir() -> Path:
    """The top-level templates/: in the source tree, or installed under share/."""
    if _SOURCE_TEMPLATES.is_dir():
        return _SOURCE_TEMPLATES
    return Path(sys.prefix) / "share" / "pbm" / "templates"


def _plugin_loaders():
    from .plugins import plugin_template_packages

    loaders = []
    for package in plugin_template_packages():
        try:
            loaders.append(jinja2.PackageLoader(package, "templates"))
        except (ValueError, ModuleNotFoundError):
            pass
    return loaders


def _bytecode_cache(home):
    """Compiled templates kept in $PBM_HOME/cache: a mail process need not compile them."""
    if home is None:
        return None
    folder = Path(home) / "cache" / "templates"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(folder))


@lru_cache(maxsize=8)
def text_environment(home: Path | None = None) -> jinja2.Environment:
    """Operator overrides in $PBM_HOME/templates win over ours, ours over plugins'."""
    loaders = []
    if home is not None:
        loaders.append(jinja2.FileSystemLoader(str(Path(home) / "templates")))
    loaders.append(jinja2.FileSystemLoader(str(templates_dir())))
    loaders.extend(_plugin_loaders())
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        bytecode_cache=_bytecode_cache(home),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
