"""Generation scoring: the answer is the prediction's first line, normalised, and matched exactly, as a prefix or
contained, at word boundaries."""

from __future__ import annotations

import pytest

from evaluate_helpers import OFFICIAL, OracleModel, all_items
from morphcpt.evaluate.answers import first_line, match, normalise
from morphcpt.evaluate.gen import score_gen


@pytest.mark.parametrize(
    ("text", "expected"),
    [("\n\n s i l a\nNext", ("s i l a", True)), ("kumain", ("kumain", False)), ("  \r\n", ("", False))],
)
def test_the_answer_is_the_first_line_after_leading_whitespace(text, expected):
    assert first_line(text) == expected


def test_normalisation_keeps_case_diacritics_and_inner_spaces():
    assert normalise('  "Kumáin."  ') == "Kumáin"
    assert normalise("s  i\tl a") == "s i l a"
    assert match("kumain", "Kumain")["exact"] is False  # case tasks need case
    assert match("Kumáin", "Kumain")["exact"] is False  # diacritic tasks need diacritics
    assert match("Kuma\u0301in", "Kumáin")["exact"] is True  # one Unicode form
    assert match("'", "'") == {"exact": True, "prefix": True, "contains": True}


def test_exact_prefix_and_contains():
    assert match("kumain siya", "kumain") == {"exact": False, "prefix": True, "contains": True}
    assert match("ang sagot ay kain", "kain") == {"exact": False, "prefix": False, "contains": True}
    assert match("“kain”.", "kain") == {"exact": True, "prefix": True, "contains": True}


@pytest.mark.parametrize(
    ("prediction", "answer"),
    [("10", "1"), ("kumain", "kain"), ("maganda", "ganda"), ("abcdefghijklmnopqrstuvwxyz 0123456789", "a")],
)
def test_prefix_and_contains_need_word_boundaries(prediction, answer):
    assert match(prediction, answer) == {"exact": False, "prefix": False, "contains": False}


def test_a_constant_alphabet_string_scores_nothing_on_the_fixtures():
    items = all_items(OFFICIAL, "pacute", "gen") + all_items(OFFICIAL, "hierarchical", "gen")
    constant = "abcdefghijklmnopqrstuvwxyz 0123456789"
    assert not any(any(match(constant, item.answer).values()) for item in items)
    assert match(constant + " 3", "3")["contains"]  # a separate "3" still counts


@pytest.mark.parametrize(
    ("prediction", "answer", "exact"),
    [
        ("‘tangna", "‘tangna", True),
        ("tangna", "‘tangna", False),
        ("“‘tangna”", "‘tangna", True),
        ("Naman!", "Naman!", True),
        ("Naman", "Naman!", False),
        ("Naman!.", "Naman!", True),
        ("Naman!", "Naman", True),  # sentence punctuation the answer lacks is a wrapper
    ],
)
def test_edge_stripping_keeps_the_answers_own_punctuation(prediction, answer, exact):
    assert match(prediction, answer)["exact"] is exact


def test_an_oracle_generator_is_exact_on_every_item():
    items = all_items(OFFICIAL, "pacute", "gen") + all_items(OFFICIAL, "hierarchical", "gen")
    predictions = score_gen(OracleModel(items), items)
    assert all(p.exact and p.prefix and p.contains for p in predictions)
    assert all("\n" not in p.prediction for p in predictions)
