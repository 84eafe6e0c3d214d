"""The held-out gold sets' generator (scripts/gold_paradigms.py): its templates make the forms grammar books give,
cut by data/gold's conventions, and never import the analyser they judge."""

from __future__ import annotations

import subprocess
import sys

import pytest

from suite_paths import REPO

SCRIPTS = REPO / "scripts"
sys.path.insert(0, str(SCRIPTS))

from gold_paradigms import paradigm  # noqa: E402


@pytest.mark.parametrize(
    ("root", "cut"),
    [
        ("takip", "t|in|akp|an"),  # syncope
        ("dating", "d|um|a|rating"),  # CV copy after -um-, d -> r
        ("lakad", "lakar|in"),  # final d -> r before a suffix
        ("akusa", "nang-|a|akusa"),  # nasal prefix on a vowel-initial root
        ("prito", "nag|pri|prito"),  # cluster copy
        ("renta", "ni|renta"),  # -in- as ni- before r
        ("bili", "na|mi|mili"),  # substitution with a copy of the nasal
        ("inom", "inum|in"),  # o -> u
        ("laro", "naki|ki|pag|laro"),  # stacked prefixes
    ],
)
def test_templates_make_the_grammar_books_forms(root, cut):
    forms = {"|".join(f.morphs): f for f in paradigm(root)}
    assert cut in forms
    assert forms[cut].word == cut.replace("|", "")


def test_the_generator_does_not_import_the_analyser():
    code = f"import sys; sys.path.insert(0, {str(SCRIPTS)!r}); import gold_paradigms; print('morphcpt' in sys.modules)"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        == "False\n"
    )


# ---------------------------------------------------------------- which generated forms the gold sets keep
def test_syncope_forms_that_another_word_could_make_are_doubtful():
    from gold_selection import syncope_is_ambiguous

    assert not syncope_is_ambiguous("takip", {"takip", "takpan"})
    assert syncope_is_ambiguous("kamot", {"kamit"})  # kamt|an: kamit or kamot
    assert syncope_is_ambiguous("ulinig", {"uling"})  # uling|an
    assert syncope_is_ambiguous("hinog", {"hingi"})  # hing|an is hingi's


def test_a_form_that_another_word_makes_with_another_cut_is_left_out(tmp_path):
    from gold_selection import HEADWORDS, LISTS, Selection

    # "alam" and "paalam" are both roots by the lists: nagpaalam is nagpa|alam or nag|paalam, so it is no gold form
    forms = {f.word for r in ("alam", "paalam", "takip") for f in paradigm(r)}
    roots = {"alam", "paalam", "takip", "date"}
    for name in (*LISTS, *HEADWORDS):  # the forms in one list, the roots in every list and dictionary
        words = forms | roots if name == "fil_tesseract_words.txt" else roots
        (tmp_path / name).write_text("\n".join(sorted(words)) + "\n")
    selection = Selection(tmp_path, is_english=lambda word: word == "date")
    kept = {f.word for f in selection.unambiguous_forms("alam", set())}
    assert "nagpaalam" not in kept and "magpaalam" not in kept
    assert {"umalam", "nagaalam"} <= kept
    assert "alam" in selection.roots and "paalam" not in selection.roots  # pa + another root: derived
    assert "date" not in selection.roots  # English
    assert "takpan" in {f.word for f in selection.unambiguous_forms("takip", set())}
