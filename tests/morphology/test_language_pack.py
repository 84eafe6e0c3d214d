"""Tests for the Filipino language pack and the Tagalog syllabifier (run: pytest tests/morphology/test_language_pack.py)."""

from __future__ import annotations

import pytest

from morphcpt.morphology import (
    LANGUAGE_PACKS,
    FilipinoPack,
    LanguagePack,
    Morph,
    apply_affix,
    get_language_pack,
    syllabify,
)
from morphcpt.morphology.affixation import AffixSpec, reduplicate
from morphcpt.morphology.filipino import load_roots
from morphcpt.morphology.syllabify import first_syllable_cv, fold_letters, folded_first_syllable_cv
from morphcpt.paths import LEXICON_DIR

FIL = get_language_pack("fil")


def split(word: str) -> str:
    return "|".join(m.text for m in FIL.analyze(word))


@pytest.mark.parametrize(
    ("word", "expected", "root"),
    [
        ("kumain", "k|um|ain", "kain"),
        ("sumulat", "s|um|ulat", "sulat"),
        ("umalis", "um|alis", "alis"),
        ("inalis", "in|alis", "alis"),
        ("kinain", "k|in|ain", "kain"),
        ("nagluto", "nag|luto", "luto"),
        ("magluto", "mag|luto", "luto"),
        ("naglalaro", "nag|la|laro", "laro"),
        ("sumusulat", "s|um|u|sulat", "sulat"),
        ("kinakain", "k|in|a|kain", "kain"),
        ("umaalis", "um|a|alis", "alis"),
        ("gaganda", "ga|ganda", "ganda"),
        ("kainan", "kain|an", "kain"),
        ("basahin", "basa|hin", "basa"),
        ("tawanan", "tawa|nan", "tawa"),
        ("pagsulatan", "pag|sulat|an", "sulat"),
        ("pinagsulatan", "pinag|sulat|an", "sulat"),
        ("sinulatan", "s|in|ulat|an", "sulat"),
        ("maganda", "ma|ganda", "ganda"),
        ("napakaganda", "napaka|ganda", "ganda"),
        ("pinakamaganda", "pinaka|ma|ganda", "ganda"),
        ("inumin", "inum|in", "inom"),
        ("tapusin", "tapus|in", "tapos"),
        ("gawin", "gaw|in", "gawa"),
        ("dalhin", "dal|hin", "dala"),
        ("mamili", "mam|ili", "bili"),
        ("manahi", "man|ahi", "tahi"),
        ("mangisda", "mang|isda", "isda"),
        ("pamilihan", "pam|ili|han", "bili"),
        ("mag-aral", "mag-|aral", "aral"),
        ("nag-aaral", "nag-|a|aral", "aral"),
        ("ibinigay", "i|b|in|igay", "bigay"),
        ("niluto", "ni|luto", "luto"),
        ("ipinagluto", "ipinag|luto", "luto"),
        ("nakakatawa", "naka|ka|tawa", "tawa"),
        ("kaibigan", "ka|ibig|an", "ibig"),
        ("magandang", "ma|ganda|ng", "ganda"),
        ("araw-araw", "araw-|araw", "araw"),
        # issue 11: -g after n-final words, naki-/maki- vs CV reduplication, pag-, pala-/mala-, -ado,
        # capitalised roots after a hyphen, nasal prefixes with reduplication and substitution, d -> r
        ("noong", "noon|g", "noon"),
        ("ating", "atin|g", "atin"),
        ("panahong", "panahon|g", "panahon"),
        ("kaibigang", "ka|ibig|an|g", "ibig"),
        ("malaking", "ma|laki|ng", "laki"),
        ("nakikita", "na|ki|kita", "kita"),
        ("makikita", "ma|ki|kita", "kita"),
        ("nakikain", "naki|kain", "kain"),
        ("pagkain", "pag|kain", "kain"),
        ("palabiro", "pala|biro", "biro"),
        ("palaaway", "pala|away", "away"),
        ("sigurado", "sigur|ado", "siguro"),
        ("taga-Leyte", "taga-|Leyte", "leyte"),
        ("maka-Amerikano", "maka-|Amerikano", "amerikano"),
        ("mala-Marcos", "mala-|Marcos", "marcos"),
        ("nangyayari", "nang|ya|yari", "yari"),
        ("pangangailangan", "pa|nga|ngailangan", "kailangan"),
        ("kinakailangan", "k|in|a|kailangan", "kailangan"),
        ("naniniwala", "na|ni|niwala", "tiwala"),
        ("namimili", "na|mi|mili", "bili"),
        ("nararamdaman", "na|ra|ramdam|an", "damdam"),
        ("marunong", "ma|runong", "dunong"),
        # found against the gold set (data/gold): reduplication over magsi-/nagsi-, a d-copy of an r-initial
        # base, syncope after reduplication, -ng or -g by the more frequent stem
        ("nagsisimula", "nag|si|simula", "simula"),
        ("darating", "da|rating", "dating"),
        ("pagdiriwang", "pag|di|riwang", "diwang"),
        ("dadalhin", "da|dal|hin", "dala"),
        ("unang", "una|ng", "una"),
        ("bagong", "bago|ng", "bago"),
    ],
)
def test_affixed_words(word, expected, root):
    assert split(word) == expected
    assert FIL.parse(word).root == root


@pytest.mark.parametrize(
    "word", ["bansa", "bayan", "ganda", "kabayo", "umaga", "tinapay", "ulan", "halaman", "x"]
)
def test_words_without_affixes_stay_whole(word):
    assert FIL.analyze(word) == [Morph(word, "root", 0, len(word))]
    assert FIL.boundaries(word) == []


def test_affix_substrings_inside_unknown_words_are_not_split():
    # "an", "in", "um" appear inside these, but no reading leaves a lexicon root.
    for word in ["bantay", "lindol", "bundok", "kumot", "sinulid", "mangga", "tulungan-xyz", "computer"]:
        assert FIL.parse(word).is_affixed is False, word


def test_labels_of_a_reading():
    a = FIL.parse("sumusulat")
    assert (a.infix, a.reduplicant, a.prefixes, a.suffix) == ("um", "su", (), "")
    assert [m.kind for m in a.morphs] == ["reduplicant", "infix", "reduplicant", "root"]
    b = FIL.parse("pagsulatan")
    assert (b.prefixes, b.suffix, b.root) == (("pag",), "an", "sulat")
    assert ("pag", "an") in FIL.circumfixes


@pytest.mark.parametrize("word", ["NagLaLaro", "KUMAIN", "Mag-Aral", "kumáin", "Pinakamagandang"])
def test_case_and_diacritics_keep_original_text(word):
    morphs = FIL.analyze(word)
    assert len(morphs) > 1
    assert "".join(m.text for m in morphs) == word
    assert all(word[m.start : m.end] == m.text for m in morphs)


@pytest.mark.parametrize("word", ["", "a", "kumain", "pag-aaral", "ABC123", "hello-world", "ñ" * 50, "isang"])
def test_morphs_cover_the_word_in_order(word):
    morphs = FIL.analyze(word)
    assert "".join(m.text for m in morphs) == word
    assert all(a.end == b.start for a, b in zip(morphs, morphs[1:], strict=False))
    bounds = FIL.boundaries(word)
    assert bounds == sorted(bounds) and all(0 < b < len(word) for b in bounds)
    assert all(m.kind in ("prefix", "infix", "suffix", "root", "reduplicant") for m in morphs)


def _lexicon_sample(every: int = 7) -> list[str]:
    """Every `every`-th headword of the shipped dictionary, plain, capitalised and upper-case."""
    lines = (LEXICON_DIR / "tgl_words.txt").read_text(encoding="utf-8").split()[::every]
    return [v for w in lines for v in (w, w.capitalize(), w.upper())]


def test_spans_are_the_morphs_of_analyze():
    """The pack's own `spans` (patok's path, which builds no `Morph`) answers what the generic one reads off
    `analyze`, over a sample of the dictionary and the special cases."""
    words = _lexicon_sample() + [
        "",
        "a",
        "taga-Leyte",
        "maka-Amerikano",
        "ñ" * 50,
        "kumáin",
        "ABC123",
        "isang",
    ]
    mismatched = [w for w in words if FIL.spans(w) != LanguagePack.spans(FIL, w)]
    assert not mismatched, mismatched[:10]
    assert FIL.spans("naglalaro") == ((0, 3, "prefix"), (3, 5, "reduplicant"), (5, 9, "root"))


def test_words_without_an_affix_pattern_skip_the_search(sample_corpus):
    """`spans` answers a word with no affix pattern (`_bare`) as one root without searching: the same spans as
    the search gives, on every headword of the shipped dictionary and every word of the sample corpus, in three
    casings; the shortcut served a good part of them and the search the rest."""
    import json
    import re

    from morphcpt.morphology.filipino import _bare

    words = set((LEXICON_DIR / "tgl_words.txt").read_text(encoding="utf-8").split())
    with open(sample_corpus, encoding="utf-8") as f:
        for line in f:
            words.update(re.findall(r"[^\W\d_]+(?:-[^\W\d_]+)*", json.loads(line)["text"]))
    words = sorted(v for w in words for v in (w, w.capitalize(), w.upper()))
    mismatched = [w for w in words if FIL.spans(w) != FIL._reading(w).spans]
    assert not mismatched, mismatched[:10]
    bare = sum(_bare(fold_letters(w)) for w in words)
    assert len(words) // 5 < bare < len(words) - len(words) // 5, (bare, len(words))
    assert (
        not any(map(_bare, ("naglalaro", "kumain", "halo-halo", "bansang")))
        and _bare("bahay")
        and _bare("computer")
    )


def test_folded_first_syllable_cv_is_first_syllable_cv_of_a_folded_word():
    words = [fold_letters(w) for w in _lexicon_sample(3)] + [
        "",
        "ng",
        "ngiti",
        "trabaho",
        "aalis",
        "brr",
        "sya",
    ]
    assert [folded_first_syllable_cv(w) for w in words] == [first_syllable_cv(w) for w in words]
    assert folded_first_syllable_cv("ngiti") == "ngi" and folded_first_syllable_cv("trabaho") == "ta"


def test_pack_registry():
    assert LANGUAGE_PACKS["tl"] is LANGUAGE_PACKS["fil"] is FIL
    assert {"mag", "nag", "pag", "ma", "na", "pa", "ka", "i", "ipag", "ipina", "maka", "naka"} <= set(
        FIL.prefixes
    )
    assert {
        "makapag",
        "nakapag",
        "pinag",
        "pina",
        "mang",
        "man",
        "mam",
        "pang",
        "sing",
        "kasing",
        "tag",
    } <= set(FIL.prefixes)
    assert FIL.infixes == ("um", "in")
    with pytest.raises(ValueError):
        get_language_pack("xx")


def test_custom_root_lexicon_controls_the_analysis():
    pack = FilipinoPack(roots=["sulat"])
    assert [m.text for m in pack.analyze("sumulat")] == ["s", "um", "ulat"]
    assert pack.analyze("kumain") == [Morph("kumain", "root", 0, 6)]


def test_each_folded_word_is_searched_once(monkeypatch):
    """The analysis is cached by folded word: a word met again, in any case, costs a lookup, not a search
    (patok asks for every word of a corpus; its speed is measured in benchmarks/, not here)."""
    pack = FilipinoPack(roots=FIL.roots)
    searched = []
    readings = pack._readings
    monkeypatch.setattr(pack, "_readings", lambda folded: searched.append(folded) or readings(folded))
    words = ["naglalaro", "Naglalaro", "kumain", "KUMAIN", "bansa", "pinagsulatan", "magandang", "computer"]
    first = [pack.boundaries(w) for w in words]
    assert [pack.boundaries(w) for w in words * 500] == first * 500
    assert first[0] == first[1] == [3, 5] and first[2] == first[3] == [1, 3]
    assert searched and len(searched) == len(set(searched))  # "bansa" is a root: no search at all
    # the words themselves, and a curated root once, to ask whether it is derived from another (`_read_through`)
    roots = {pack.parse(w).root for w in words}
    assert set(searched) <= {fold_letters(w) for w in words} | roots


@pytest.mark.parametrize(
    ("root", "spec", "word"),
    [
        ("laro", "nag- CV", "naglalaro"),
        ("sulat", "-um- CV", "sumusulat"),
        ("kain", "-in- CV", "kinakain"),
        ("kain", "-um-", "kumain"),
        ("alis", "-um-", "umalis"),
        ("alis", "-in-", "inalis"),
        ("ngiti", "-um-", "ngumiti"),
        ("luto", "-in-", "niluto"),
        ("bigay", "i- -in-", "ibinigay"),
        ("basa", "-in", "basahin"),
        ("kain", "-an", "kainan"),
        ("inom", "-in", "inumin"),
        ("sulat", "pag-…-an", "pagsulatan"),
        ("sulat", "-in- -an", "sinulatan"),
        ("ganda", "ka- -an", "kagandahan"),
        ("aral", "mag-", "mag-aral"),
        ("aral", "nag- CV", "nag-aaral"),
        ("bansa", "pang-", "pambansa"),
        ("laki", "kasing-", "kasinlaki"),
        ("isda", "mang-", "mangisda"),
        ("ganda", "pinaka- ma-", "pinakamaganda"),
        ("ganda", "napaka-", "napakaganda"),
    ],
)
def test_apply_affix(root, spec, word):
    assert apply_affix(root, spec) == word


def test_apply_affix_then_analyze_round_trips():
    for root, spec in [
        ("laro", "nag- CV"),
        ("sulat", "-um- CV"),
        ("kain", "-an"),
        ("basa", "-in"),
        ("alis", "-um-"),
    ]:
        word = apply_affix(root, spec)
        assert FIL.parse(word).root == root
    assert apply_affix("luto", "-in", glottal=True) == "lutuin"
    assert reduplicate("trabaho") == "tatrabaho"
    with pytest.raises(ValueError):
        AffixSpec.parse("-xy-")


@pytest.mark.parametrize(
    ("word", "syllables"),
    [
        ("ngayon", ["nga", "yon"]),
        ("sanggol", ["sang", "gol"]),
        ("matanggal", ["ma", "tang", "gal"]),
        ("mangga", ["mang", "ga"]),
        ("pangalan", ["pa", "nga", "lan"]),
        ("aalis", ["a", "a", "lis"]),
        ("buo", ["bu", "o"]),
        ("bahay", ["ba", "hay"]),
        ("araw", ["a", "raw"]),
        ("kutsara", ["kut", "sa", "ra"]),
        ("kontra", ["kon", "tra"]),
        ("angkla", ["ang", "kla"]),
        ("eksperto", ["eks", "per", "to"]),
        ("ekstra", ["eks", "tra"]),
        ("tren", ["tren"]),
        ("plato", ["pla", "to"]),
        ("mag-aral", ["mag", "a", "ral"]),
        ("Ngipin", ["Ngi", "pin"]),
        ("kumáin", ["ku", "má", "in"]),
    ],
)
def test_syllabify(word, syllables):
    assert syllabify(word) == syllables


def test_spec_notation_round_trips():
    for spec in ["nag- CV", "-um- CV", "ka- -an", "i- -in-", "pinaka- ma-", "-hin"]:
        assert AffixSpec.parse(str(AffixSpec.parse(spec))) == AffixSpec.parse(spec)
    assert str(AffixSpec.parse("nag- CV")) == "nag- CV"
    assert AffixSpec.parse("ka-…-an") == AffixSpec.parse("ka- -an")


def test_headword_roots_are_derived_and_cached(tmp_path):
    lexicon, cache = tmp_path / "lexicon", tmp_path / "cache"
    lexicon.mkdir()
    # "tulog" is a curated root, so "natulog" is derived; "saka" has no affixed reading, so it is a root.
    (lexicon / "tgl_words.txt").write_text("natulog\nsaka\npagsasaka\n", encoding="utf-8")
    cache.mkdir()
    (cache / "tl_underived_0123456789abcdef0123.txt").write_text("stale\n", encoding="utf-8")  # older rules
    roots = load_roots(lexicon, cache)
    assert "saka" in roots and "natulog" not in roots and "pagsasaka" not in roots and "stale" not in roots
    assert len(list(cache.iterdir())) == 1  # the stale one is gone
    assert load_roots(lexicon, cache) == roots  # read back from the cache
    assert [m.text for m in FilipinoPack(roots=roots).analyze("pagsasaka")] == ["pag", "sa", "saka"]


def test_a_ka_headword_the_lists_inflect_with_um_or_in_is_a_root(tmp_path):
    lexicon, cache = tmp_path / "lexicon", tmp_path / "cache"
    lexicon.mkdir()
    # every ka- word reads as ka- on the headword after it; which are roots of their own?
    (lexicon / "tgl_words.txt").write_text(
        "kalimbot\nlimbot\nkatumpa\ntumpa\nkalumpaw\nlumpaw\nkasama\n", encoding="utf-8"
    )
    (lexicon / "forms.txt").write_text("kumalimbot\nkumatumpa\nkinasama\n", encoding="utf-8")
    (lexicon / "fil_wordfreq.tsv").write_text(
        "kalimbot\t3.5\nlimbot\t2.0\nkatumpa\t2.0\ntumpa\t3.5\nkalumpaw\t3.5\nkasama\t6.0\nsama\t5.0\n",
        encoding="utf-8",
    )
    roots = load_roots(lexicon, cache)
    assert {"limbot", "tumpa", "lumpaw"} <= roots
    assert "kalimbot" in roots  # kumalimbot is listed, and kalimbot is written more often than limbot
    assert "katumpa" not in roots  # tumpa is written more often: ka- on it
    assert "kalumpaw" not in roots  # no -um- or -in- form listed
    assert "kasama" not in roots  # sama is a curated root: ka- on it
    # on the shipped lists: kalinga (kumalinga) is a root, kasama (kinasama) is not
    assert [m.text for m in FIL.analyze("pagkalinga")] == ["pag", "kalinga"]
    assert [m.text for m in FIL.analyze("kasama")] == ["ka", "sama"]
