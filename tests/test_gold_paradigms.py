"""The held-out gold sets' generator (scripts/gold_paradigms.py): its templates make the forms grammar books give,
cut by data/gold's conventions, and never import the analyser they judge."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
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
