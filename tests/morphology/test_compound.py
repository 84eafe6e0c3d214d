"""Compounds of two words joined by a hyphen with affixes on the first (`morphology.compound`), read by
data/gold's rule 12, and the evaluator's two root morphs for such a compound."""

from __future__ import annotations

import pytest

from morphology_helpers import FIL, cut


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("ipagbigay-alam", ("ipag|bigay-alam", "bigay-alam")),  # affixes before a compound the lists hold
        ("nagbibigay-daan", ("nag|bi|bigay-daan", "bigay-daan")),  # and the copy of its first syllable
        (
            "pagmamay-ari",
            ("pag|ma|may-ari", "may-ari"),
        ),  # the shortest listed compound (the lists hold mamay-ari)
        ("ipinagwalang-bahala", ("ipinag|wala|ng-|bahala", "wala-bahala")),  # its linker cut
        ("nagbalik-aral", ("nag|balik-aral", "balik-aral")),
        ("walang-hiya", ("wala|ng-|hiya", "wala-hiya")),  # a linker alone ends the first word
        ("kapit-bahay", ("kapit-bahay", "kapit-bahay")),  # no affixes: one root, whole
        ("uulit-ulitin", ("uulit-ulitin", "uulit-ulitin")),  # a full reduplication is none
        ("matin-is", ("matin-is", "matin-is")),  # nor a glottal stop written with a hyphen
        ("Nagbibigay-daan", ("Nag|bi|bigay-daan", "bigay-daan")),  # a capital as at the start of a sentence
    ],
)
def test_a_compound_with_affixes_is_cut_before_it_or_after_its_linker(word, expected):
    assert cut(FIL, word) == expected


def test_the_evaluator_takes_both_words_of_a_compound_as_its_root(tmp_path):
    from morphcpt.morphology.evaluate import evaluate, gold_root_pieces
    from morphcpt.morphology.gold import GoldSegmentation

    path = tmp_path / "g.tsv"
    path.write_text(
        "walang-hiya\twala|ng-|hiya\twala-hiya\tlinker\n"
        "nagbalik-aral\tnag|balik-aral\tbalik-aral\taffixed\n"
        "pusong-bakal\tpuso|ng-|bakal\tpuso-bakal\tlinker\n",
        encoding="utf-8",
    )
    gold = GoldSegmentation.load(path)
    assert gold_root_pieces(gold.words["walang-hiya"]) == [0, 2]  # the linker between them is affix material
    assert gold_root_pieces(gold.words["nagbalik-aral"]) == [1]  # one morph: as any root
    figures = evaluate(FIL, gold).total.figures()
    assert figures["exact"] == figures["root"] == figures["affixes"] == 1.0
