"""A mail reads which module registers its game from the entry points kept in the home's
cache, not from every installed distribution's metadata (docs/performance.md, issue 31);
any change to what is installed makes it read them again."""

import json
import os
import stat
import sys

import pytest

from pbm import plugins


@pytest.fixture
def kept(tmp_path, monkeypatch):
    monkeypatch.setattr(plugins, "_entry_point_file", None)
    plugins.keep_entry_points_in(tmp_path / "cache")
    return tmp_path / "cache" / "entry-points.json"


def test_the_first_reading_is_kept_privately(kept):
    found = plugins._entry_points()
    assert found["lox"] == "games.lox" and found["knightpanic"] == "games.knightpanic"
    assert json.loads(kept.read_text())["entry_points"] == found
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700


def test_a_kept_reading_is_used_while_nothing_was_installed(kept):
    plugins._entry_points()
    content = json.loads(kept.read_text())
    content["entry_points"] = {"lox": "games.knightline"}
    kept.write_text(json.dumps(content))
    assert plugins._entry_points() == {"lox": "games.knightline"}


def test_an_installed_distribution_makes_it_read_again(kept, tmp_path, monkeypatch):
    plugins._entry_points()
    content = json.loads(kept.read_text())
    content["entry_points"] = {"lox": "games.knightline"}
    kept.write_text(json.dumps(content))
    site = tmp_path / "site"
    (site / "newgame-1.0.dist-info").mkdir(parents=True)
    (site / "newgame-1.0.dist-info" / "entry_points.txt").write_text("[pbm]\n")
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    assert plugins._entry_points()["lox"] == "games.lox"
    assert [str(site / "newgame-1.0.dist-info")] == [
        path for path, _ in json.loads(kept.read_text())["installed"] if path.startswith(str(site))
    ]


def test_an_edited_entry_point_file_makes_it_read_again(kept, tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "newgame-1.0.dist-info").mkdir(parents=True)
    entry_points = site / "newgame-1.0.dist-info" / "entry_points.txt"
    entry_points.write_text("[pbm]\n")
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    plugins._entry_points()
    before = entry_points.stat().st_mtime_ns
    entry_points.write_text("[pbm]\nnewgame = games.knightline\n")
    os.utime(entry_points, ns=(before + 10**9, before + 10**9))
    assert plugins._entry_points()["newgame"] == "games.knightline"


@pytest.mark.parametrize("damage", ["", "{", "[]", '{"installed": 3}', "\x00\xff"])
def test_a_damaged_copy_is_read_again_and_replaced(kept, damage):
    kept.parent.mkdir(parents=True)
    kept.write_text(damage, errors="surrogateescape")
    assert plugins._entry_points()["lox"] == "games.lox"
    assert json.loads(kept.read_text())["entry_points"]["lox"] == "games.lox"


@pytest.mark.parametrize("entry_points", [[], "games.lox", {"lox": 3}, None])
def test_a_copy_of_the_right_paths_but_no_table_of_names_is_read_again(kept, entry_points):
    plugins._entry_points()
    content = json.loads(kept.read_text())
    content["entry_points"] = entry_points
    kept.write_text(json.dumps(content))
    assert plugins._entry_points()["lox"] == "games.lox"


def test_an_unwritable_cache_only_costs_the_reading(tmp_path, monkeypatch):
    monkeypatch.setattr(plugins, "_entry_point_file", None)
    (tmp_path / "file").write_text("not a folder")
    plugins.keep_entry_points_in(tmp_path / "file" / "cache")
    assert plugins._entry_points()["lox"] == "games.lox"
    assert list(tmp_path.iterdir()) == [tmp_path / "file"]


def test_an_entry_point_names_a_module_or_an_attribute_inside_one():
    import games.lox

    assert plugins._load_entry_point("games.lox") is games.lox
    assert plugins._load_entry_point("games.lox : Lox") is games.lox.Lox
