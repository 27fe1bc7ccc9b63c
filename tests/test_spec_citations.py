"""The specs are the project's own documents (docs/spec/), and the code cites them by file
and section: `docs/spec/server.md §3.5.4`, `docs/spec/games/lox.md §7`. Every citation must
name a file that exists and a section that file has, and no citation may fall back to the
old forms that did not say which spec they meant."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = ROOT / "docs" / "spec"
SCANNED = ("pbm", "games", "tests", "templates", "docs")
SUFFIXES = (".py", ".md", ".txt", ".html", ".cfg", ".toml")

SECTION = r"(?:[A-Z]{2}-\d+|\d+(?:\.\d+)*)"
# A file, then its sections: `§3.3, §3.7`, `§4 and §6`, `§5.4 to §5.6`, possibly wrapped
# onto the next line of a comment or docstring.
CITATION = re.compile(
    rf"docs/spec/(?P<file>[\w/.-]+?\.md)"
    rf"(?P<sections>(?:(?:\s*,|\s+and|\s+to)?\s+(?:#\s+)?§{SECTION})*)"
)
SECTION_MARK = re.compile(rf"§({SECTION})")
HEADING = re.compile(rf"^#+\s+({SECTION})(?:[.\s]|$)", re.M)
SPEC_GAMES = ("hexgrid", "knightline", "knightpanic", "knightvision", "lox", "uknight")
OLD_FORMS = [
    # "spec 3.5.4", "server spec section 10", "Spec 5:", "spec (section 5)", "spec (2.3)"
    re.compile(r"\bspec(?:ification)?\s+\(?(?:section\s+)?\d", re.I),
    # "spec lox.md section 10", "spec games/hexgrid.md"
    re.compile(r"\bspec\s+(?:games/)?\w+\.md", re.I),
    # a game spec by its bare name or old path: "hexgrid.md 6.3", "games/uknight.md"
    re.compile(rf"(?<![\w/.-])(?:games/)?(?:{'|'.join(SPEC_GAMES)})\.md"),
]


def scanned_files():
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file() and "__pycache__" not in path.parts:
                yield path


def spec_headings() -> dict[str, set[str]]:
    return {
        str(path.relative_to(SPEC_DIR)): set(HEADING.findall(path.read_text()))
        for path in SPEC_DIR.rglob("*.md")
    }


def test_the_server_and_game_specs_are_in_the_repo():
    headings = spec_headings()
    expected = {"server.md", "README.md"} | {f"games/{name}.md" for name in SPEC_GAMES}
    assert expected <= set(headings)
    assert {"2.4", "3.5.4", "10.2", "12"} <= headings["server.md"]
    assert {"7", "KP-2"} <= headings["games/knightpanic.md"]


def test_every_citation_names_an_existing_spec_and_section():
    headings = spec_headings()
    cited, broken = 0, []
    for path in scanned_files():
        text = path.read_text(errors="replace")
        for match in CITATION.finditer(text):
            where = f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 1}"
            name = match.group("file")
            if name not in headings:
                broken.append(f"{where}: no file docs/spec/{name}")
                continue
            for section in SECTION_MARK.findall(match.group("sections")):
                cited += 1
                if section not in headings[name]:
                    broken.append(f"{where}: docs/spec/{name} has no section {section}")
    assert not broken, "\n".join(broken)
    assert cited > 100, "the scan found too few citations to be looking in the right place"


def test_a_section_sign_always_follows_a_spec_file():
    """`§3.5.4` alone does not say which spec it means."""
    loose = []
    for path in scanned_files():
        if SPEC_DIR in path.parents or path == Path(__file__).resolve():
            continue
        text = path.read_text(errors="replace")
        claimed = {
            m.start()
            for c in CITATION.finditer(text)
            for m in SECTION_MARK.finditer(text, c.start(), c.end())
        }
        for mark in SECTION_MARK.finditer(text):
            if mark.start() not in claimed:
                line = text.count("\n", 0, mark.start()) + 1
                loose.append(f"{path.relative_to(ROOT)}:{line}: {mark.group(0)}")
    assert not loose, "\n".join(loose)


def test_no_citation_in_an_old_form_remains():
    """Rewrite old forms as `docs/spec/<file>.md §<section>`."""
    old = []
    for path in scanned_files():
        if SPEC_DIR in path.parents or path == Path(__file__).resolve():
            continue
        text = path.read_text(errors="replace")
        for pattern in OLD_FORMS:
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                old.append(f"{path.relative_to(ROOT)}:{line}: {match.group(0)!r}")
    assert not old, "\n".join(old)
