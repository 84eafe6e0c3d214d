"""The hand-written gold segmentation (data/gold): well formed, drawn from the shipped lexicon, covering every
affix type, and the analyser's agreement with it (target: at least 98 % of words segmented exactly)."""

from __future__ import annotations

import json

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


# ---------------------------------------------------------------- generated sets and the evaluate command
HELDOUT_FILES = {name: paths.DATA_DIR / "gold_heldout" / f"{name}.tsv" for name in ("dev", "heldout")}


def test_the_generated_sets_are_separate_from_each_other_and_from_data_gold(gold):
    sets = {name: GoldSegmentation.load(path) for name, path in HELDOUT_FILES.items()}
    assert all(len(s) > 2000 for s in sets.values())
    roots = {name: {w.root for w in s.words.values()} for name, s in sets.items()}
    assert not roots["dev"] & roots["heldout"]
    for s in sets.values():
        assert not set(s.words) & set(gold.words)
        assert all(w.root and w.cls for w in s.words.values())


def test_form_and_segmentation_layout_reads_like_the_gold_layout(tmp_path):
    path = tmp_path / "fs.tsv"
    path.write_text("takpan\ttakp|an\ttakip\tLF-an:INF\tsyncope\nbahay\tbahay\n", encoding="utf-8")
    words = GoldSegmentation.load(path).words
    assert words["takpan"].morphs == ("takp", "an") and words["takpan"].root == "takip"
    assert words["takpan"].tags == ("syncope",) and words["bahay"].morphs == ("bahay",)


def test_root_key_accepts_only_the_regular_alternations():
    from morphcpt.morphology.evaluate import root_key

    assert root_key("inum") == root_key("inom") and root_key("lakar") == root_key("lakad")
    assert root_key("basah") == root_key("basa") and root_key("araw-") == root_key("araw")
    assert root_key("takp") != root_key("takip") and root_key("bili") != root_key("bil")


class _WholeWords:
    """A pack that never cuts: every word is one root."""

    def parse(self, word):
        from morphcpt.morphology.base import Analysis, Morph

        return Analysis(word, (Morph(word, "root", 0, len(word)),), word.lower())


def test_evaluate_scores_a_perfect_and_a_never_cutting_analyser(tmp_path):
    from morphcpt.morphology.evaluate import evaluate

    path = tmp_path / "g.tsv"
    path.write_text(
        "k|um|ain\tI\tkain\tAF\nbansa\t0\tbansa\troot\nmag|la|laro\tPR\tlaro\tAF\n", encoding="utf-8"
    )
    gold_set = GoldSegmentation.load(path)
    perfect = evaluate(FILIPINO, gold_set).total.figures()
    assert perfect["exact"] == perfect["root"] == perfect["affixes"] == perfect["f1"] == 1.0
    lazy = evaluate(_WholeWords(), gold_set)
    figures = lazy.total.figures()
    assert figures["exact"] == figures["root"] == pytest.approx(1 / 3) and figures["recall"] == 0.0
    assert lazy.by_class["root"].figures()["exact"] == 1.0 and lazy.by_class["AF"].figures()["exact"] == 0.0
    assert {f["word"] for f in lazy.failures} == {"kumain", "maglalaro"}


def test_evaluate_command_prints_figures_and_refuses_a_bad_file(tmp_path, capsys):
    from morphcpt.morphology.evaluate import main

    assert main([str(GOLD_FILE), "--failures", "3", "--json", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    assert "802 words" in out and "by class:" in out
    bad = tmp_path / "bad.tsv"
    bad.write_text("kumain\tkain|um\n", encoding="utf-8")
    assert main([str(bad)]) == 2
    assert f"{bad}:1: expected" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.tsv")]) == 2


def test_evaluate_command_pools_several_files_and_counts_a_lemma_once(tmp_path, capsys):
    from morphcpt.morphology.evaluate import main

    first, second = tmp_path / "a.tsv", tmp_path / "b.tsv"
    # the same root in two files is two lemmas; two forms of one root in a file are one
    first.write_text(
        "kumain\tk|um|ain\tkain\nkinain\tk|in|ain\tkain\nbansa\tbansa\tbansa\n", encoding="utf-8"
    )
    second.write_text("kumain\tk|um|ain\tkain\nnaglaro\tnag|laro\tlaro\n", encoding="utf-8")
    out_json = tmp_path / "pooled.json"
    assert main([str(first), str(second), "--failures", "0", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "pooled: 2 files, 5 words" in out and "bootstrap over 4 lemmas" in out
    document = json.loads(out_json.read_text())
    assert [f["file"] for f in document["files"]] == [str(first), str(second)]
    pooled = document["pooled"]
    assert pooled["total"]["words"] == 5 and pooled["root_intervals"]["lemmas"] == 4
    assert (
        pooled["root_intervals"]["wilson_low"]
        <= pooled["total"]["root"]
        <= pooled["root_intervals"]["wilson_high"]
    )
    assert document["files"][0]["root_intervals"]["lemmas"] == 2
    assert main([str(first), str(second), str(first)]) == 2  # a file twice would count its words twice
    assert f"given more than once: {first}" in capsys.readouterr().err


def test_pooling_sums_a_lemma_that_two_results_share():
    from morphcpt.morphology.evaluate import Evaluation

    one, other = Evaluation(), Evaluation()
    one.lemmas["a.tsv:kain"] = [1, 2]
    other.lemmas["a.tsv:kain"] = [2, 3]
    other.lemmas["a.tsv:laro"] = [1, 1]
    one.absorb(other)
    assert dict(one.lemmas) == {"a.tsv:kain": [3, 5], "a.tsv:laro": [1, 1]}
