"""The plugin surface is typed (docs/plugin-api.md): `mypy --strict` passes on the modules a
plugin author imports and on everything they import, and the rest of pbm/ has no more mypy
errors than tests/mypy-baseline.txt records.

Each run keeps its cache in a folder of its own under .mypy_cache: with one shared cache each
run would check again the modules the other checked with its other options."""

import re
import subprocess
import sys

from tests.conftest import ROOT

# What a game plugin imports; mypy follows their imports, so the closure is checked too.
PLUGIN_SURFACE = (
    "pbm/game.py",
    "pbm/drawing.py",
    "pbm/drawing_types.py",
    "pbm/palette.py",
    "pbm/engine.py",
    "pbm/testing/__init__.py",
)
BASELINE = ROOT / "tests" / "mypy-baseline.txt"
SUMMARY_RE = re.compile(r"Found (\d+) errors? in")


def mypy(*arguments: str) -> tuple[int, str]:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return result.returncode, result.stdout


def test_the_modules_a_plugin_imports_pass_mypy_strict():
    status, output = mypy("--cache-dir", ".mypy_cache/strict", "--strict", *PLUGIN_SURFACE)
    assert status == 0, output


def test_the_rest_of_pbm_has_no_more_mypy_errors_than_recorded():
    """pyproject.toml's [tool.mypy] (the pbm package, default options)."""
    status, output = mypy("--cache-dir", ".mypy_cache/plain")
    found = int(SUMMARY_RE.search(output).group(1)) if status else 0
    recorded = int(BASELINE.read_text())
    assert found <= recorded, (
        f"mypy finds {found} errors in pbm/, more than the {recorded} recorded in "
        f"{BASELINE.relative_to(ROOT)}: correct the new ones.\n{output}"
    )
    assert found == recorded, (
        f"mypy finds {found} errors in pbm/, fewer than the {recorded} recorded: write {found} "
        f"into {BASELINE.relative_to(ROOT)} so that they stay fixed."
    )
