"""`benchmarks/analyser_readings.py`, the check of what a change to the analyser moves: its diff counts every word
read otherwise and never shows one a held-out gold set holds as a form or a root."""

from __future__ import annotations

import importlib.util

import pytest

from morphcpt import paths

_SPEC = importlib.util.spec_from_file_location(
    "analyser_readings", paths.REPO_ROOT / "benchmarks" / "analyser_readings.py"
)
readings = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(readings)


def _dump(path, rows):
    path.write_text("".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_diff_counts_every_change_and_hides_held_out_forms_and_roots(tmp_path, capsys):
    heldout = tmp_path / "gold"
    heldout.mkdir()
    (heldout / "x_heldout.tsv").write_text(
        "# a held-out set\nnagbulgot\tnag|bulgot\tbulgot\n", encoding="utf-8"
    )
    (heldout / "x_dev.tsv").write_text("tinarok\tt|in|arok\ttarok\n", encoding="utf-8")  # tuning: shown
    before = _dump(
        tmp_path / "before.tsv",
        [
            ("made-up", "nagbulgot", "nagbulgot", "nagbulgot"),  # a held-out form
            ("made-up", "bubulgot", "bubulgot", "bubulgot"),  # on a held-out root
            ("made-up", "tinarok", "tinarok", "tinarok"),
            ("lists", "kumain", "k|um|ain", "kain"),
        ],
    )
    after = _dump(
        tmp_path / "after.tsv",
        [
            ("made-up", "nagbulgot", "nag|bulgot", "bulgot"),
            ("made-up", "bubulgot", "bu|bulgot", "bulgot"),
            ("made-up", "tinarok", "t|in|arok", "tarok"),
            ("lists", "kumain", "k|um|ain", "kain"),
        ],
    )
    assert readings.diff(before, after, show=10, heldout=heldout) == 0
    out = capsys.readouterr().out
    assert "made-up       3 of 3 read otherwise (2 on held-out words or roots, not shown)" in out
    assert "lists         0 of 1 read otherwise" in out
    assert "tinarok" in out and "bubulgot" not in out and "nagbulgot" not in out


def test_diff_refuses_dumps_of_other_words_or_another_format(tmp_path, capsys):
    one = _dump(tmp_path / "one.tsv", [("lists", "kumain", "k|um|ain", "kain")])
    other = _dump(tmp_path / "other.tsv", [("lists", "kinain", "k|in|ain", "kain")])
    assert readings.main(["diff", str(one), str(other)]) == 2
    assert "hold other words" in capsys.readouterr().err
    bad = tmp_path / "bad.tsv"
    bad.write_text("kumain\tk|um|ain\n", encoding="utf-8")
    assert readings.main(["diff", str(bad), str(one)]) == 2
    assert "bad.tsv:1: expected" in capsys.readouterr().err


def test_the_made_up_words_hold_the_frames_of_words_no_list_holds():
    words = readings.made_up_words()
    for word in (
        "nagbulgot",
        "bumulgot",
        "ipabubulgot",
        "kinabulgutan",
        "pabubulgutin",
        "ipinauulgot",
        "bulgutin",
    ):
        assert word in words
    assert "bulgotin" not in words  # o -> u before a suffix
    assert len(words) == pytest.approx(26_000, rel=0.1)
