"""The hand-written gold segmentation (data/gold): well formed, drawn from the shipped lexicon, covering every
affix type, and the analyser's agreement with it (target: at least 98 % of words segmented exactly)."""

from __future__ import annotations

import pytest

from morphcpt import paths
from morphcpt.morphology import FILIPINO
from morphcpt.morphology.gold import GOLD_FILE, TYPES, GoldSegmentation, analyser_accuracy


@pytest.fixture(scope="module")
def gold() -> GoldSegmentation:
    return GoldSegmentation.load()


def lexicon_words() -> set[str]:
    """First field of every line of every shipped lexicon file, lowercased."""
    words = set()
    for path in paths.LEXICON_DIR.iterdir():
        for line in path.read_text(encoding="utf-8").splitlines():
            fields = line.split()
            if fields and not line.startswith("#"):
                words.add(fields[0].lower())
    return words


def test_the_gold_set_is_large_and_covers_every_affix_type(gold):
    assert len(gold) >= 500
    assert set().union(*(set(w.types) for w in gold.words.values())) == TYPES
    assert sum(w.types == "0" for w in gold.words.values()) >= 100  # roots that must stay whole
    for entry in gold.words.values():
        assert ("0" in entry.types) == (len(entry.morphs) == 1), entry.word


def test_every_gold_word_is_in_the_shipped_lexicon(gold):
    lexicon = lexicon_words()
    missing = sorted(w for w in gold.words if w not in lexicon)
    assert missing == []


def test_boundaries_are_character_offsets_and_unknown_words_are_none(gold):
    assert gold.boundaries("kumain") == [1, 3]
    assert gold.boundaries("Nakikita") == [2, 4]
    assert gold.boundaries("taga-Maynila") == gold.boundaries("taga-maynila") == [5]
    assert gold.boundaries("computer") is None


@pytest.mark.parametrize(
    ("line", "message"), [("ka|ganda|han\tQ", "expected"), ("ka||han\tC", "expected"), ("kain", "expected")]
)
def test_malformed_lines_are_errors_with_their_line(tmp_path, line, message):
    path = tmp_path / "gold.tsv"
    path.write_text(f"# comment\n{line}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"{path}:2: {message}"):
        GoldSegmentation.load(path)


def test_a_word_listed_twice_is_an_error(tmp_path):
    path = tmp_path / "gold.tsv"
    path.write_text("k|um|ain\tI\nK|um|ain\tI\n", encoding="utf-8")
    with pytest.raises(ValueError, match="listed twice"):
        GoldSegmentation.load(path)


def test_the_analyser_agrees_with_the_gold_set(gold):
    score = analyser_accuracy(FILIPINO, gold)
    shown = "\n".join(f"{word}: gold {want}, analyser {got}" for word, want, got in score.failures)
    assert score.accuracy >= 0.98, f"{score.exact}/{score.words} = {score.accuracy:.2%}\n{shown}"


def test_the_shipped_file_is_the_default():
    assert GOLD_FILE == paths.DATA_DIR / "gold" / "tl_segmentation.tsv" and GOLD_FILE.is_file()
