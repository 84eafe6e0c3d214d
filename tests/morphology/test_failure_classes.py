"""The failure classes of issue #25, each fixed by a rule (moved from test_language_pack.py): missing roots, the
linker, syncope and d -> r undone by rule, enclitics in running text, Taglish before a hyphen, the choice between
roots of one cut and the roots the word lists show inflecting."""

from __future__ import annotations

import pytest

from morphcpt.morphology import FilipinoPack
from morphcpt.morphology.filipino import FILIPINO, load_root_tiers
from morphology_helpers import FIL, cut


@pytest.mark.parametrize(
    ("failure_class", "word", "cut", "root"),
    [
        ("missing root (dictionary headwords)", "inakusahan", "in|akusa|han", "akusa"),
        ("missing -ng root read as root + linker", "magsumbong", "mag|sumbong", "sumbong"),
        ("missing -ng root read as root + linker", "sulong", "sulong", "sulong"),
        ("syncope before a suffix", "datnan", "datn|an", "dating"),
        ("final d -> r before a suffix", "lakarin", "lakar|in", "lakad"),
        ("final d -> r before a suffix", "bayaran", "bayar|an", "bayad"),
        ("CV copy after an infix, d -> r", "dumarating", "d|um|a|rating", "dating"),
        ("CV copy after an infix, d -> r", "dinaragdagan", "d|in|a|ragdag|an", "dagdag"),
        ("nasal prefix on a vowel-initial root", "nang-aakusa", "nang-|a|akusa", "akusa"),
        ("stacked prefixes", "nakikisama", "naki|ki|sama", "sama"),
        ("stacked prefixes", "nakikipaglaro", "naki|ki|pag|laro", "laro"),
        ("ni- before r", "nirenta", "ni|renta", "renta"),
        ("over-segmentation guard", "bansa", "bansa", "bansa"),
        ("over-segmentation guard", "bayan", "bayan", "bayan"),
        ("over-segmentation guard", "kabayo", "kabayo", "kabayo"),
        ("over-segmentation guard", "pansin", "pansin", "pansin"),
        ("linker after a known word", "magandang", "ma|ganda|ng", "ganda"),
        ("linker after a common word", "kanyang", "kanya|ng", "kanya"),
        ("cluster CV copy", "nagpriprito", "nag|pri|prito", "prito"),
        ("cluster CV copy", "magplaplantsa", "mag|pla|plantsa", "plantsa"),
        ("cluster CV copy", "nagpiprito", "nag|pi|prito", "prito"),
        ("pa-/ka-initial root after a copy-like prefix", "pinapansin", "p|in|a|pansin", "pansin"),
        ("pa-/ka-initial root after a copy-like prefix", "ipinapalit", "i|p|in|a|palit", "palit"),
        ("pa-/ka-initial root after a copy-like prefix", "ikinakabit", "i|k|in|a|kabit", "kabit"),
        ("pa-/ka-initial root after a copy-like prefix", "ipaplantsa", "i|pa|plantsa", "plantsa"),
        ("pa-/ka-initial root after a copy-like prefix", "nagkakamay", "nag|ka|kamay", "kamay"),
        ("nasal substitution, the more frequent root", "nanguha", "nang|uha", "kuha"),
        ("nasal substitution with a copy", "namimili", "na|mi|mili", "bili"),
        ("nasal prefix on a vowel-initial root", "nangangaral", "na|nga|ngaral", "aral"),
        ("nasal prefix on a vowel-initial root", "nangingisda", "na|ngi|ngisda", "isda"),
        ("CV copy after a nasal prefix, d -> r", "mandaragat", "man|da|ragat", "dagat"),
        ("syncope before a suffix", "kaibgan", "ka|ibg|an", "ibig"),
        ("syncope before a suffix", "kamtan", "kamt|an", "kamit"),
        ("syncope before a suffix", "masdan", "masd|an", "masid"),
        ("syncope before a suffix", "saktan", "sakt|an", "sakit"),
        ("root the word lists show inflecting", "bumubulong", "b|um|u|bulong", "bulong"),
        ("root the word lists show inflecting", "libangan", "libang|an", "libang"),
        ("noun: ka-...-an", "kagandahan", "ka|ganda|han", "ganda"),
        ("noun: pa-...-an", "paaralan", "pa|aral|an", "aral"),
        ("noun: pag-", "pagkain", "pag|kain", "kain"),
        ("noun: -an place", "tindahan", "tinda|han", "tinda"),
        ("adjective: pinaka-", "pinakamaganda", "pinaka|ma|ganda", "ganda"),
        ("adjective: napaka-", "napakaganda", "napaka|ganda", "ganda"),
        ("adjective: ma- plural copy", "magaganda", "ma|ga|ganda", "ganda"),
        ("reduplicated noun", "bahay-bahay", "bahay-|bahay", "bahay"),
        ("stacked prefix against a CV copy", "nagigipit", "na|gi|gipit", "gipit"),
    ],
)
def test_issue_25_failure_classes(failure_class, word, cut, root):
    analysis = FILIPINO.parse(word)
    assert ("|".join(m.text for m in analysis.morphs), analysis.root) == (cut, root), failure_class


def test_syncope_and_d_to_r_are_undone_by_rule_not_by_a_table():
    pack = FilipinoPack(roots={"tikim", "lipad", "kaway"})  # none of them in affixes.SYNCOPE
    assert [m.text for m in pack.analyze("tikman")] == ["tikm", "an"] and pack.parse("tikman").root == "tikim"
    assert pack.parse("liparin").root == "lipad" and pack.parse("kawyan").root == "kaway"
    assert [m.text for m in pack.analyze("tikmang")] != [
        "tikman",
        "g",
    ]  # no root "tikman": no -g linker reading


def test_a_linker_reading_needs_the_unlinked_word_to_be_known():
    pack = FilipinoPack(roots={"sumbo", "ganda"})
    pack._known = frozenset({"sumbo", "ganda", "maganda"})
    pack._rare = frozenset({"sumbo"})  # (nor is sumbo a root the linker fallback takes: `fallback`)
    assert pack.analyze("magsumbong")[-1].text != "ng"  # "magsumbo" is no word
    assert [m.text for m in pack.analyze("magandang")] == ["ma", "ganda", "ng"]


def test_enclitics_in_running_text_stay_whole_and_the_linker_is_cut():
    """Patok analyses the words of `alignment.WORD_PATTERN`: an enclitic (ba, na, pa, daw, raw, din, po) is a word
    of its own, never read as an affix, and a contraction's 'y is cut off by the pattern."""
    from morphcpt.tokenization.alignment import WORD_PATTERN

    text = (
        "Kumain ka na ba? Aalis na raw sila, at ako'y naglinis din po. Talagang magandang bahay, hindi pa ba?"
    )
    cuts = ["|".join(m.text for m in FILIPINO.analyze(w.group())) for w in WORD_PATTERN.finditer(text)]
    assert cuts == [
        "K|um|ain", "ka", "na", "ba", "A|alis", "na", "raw", "sila", "at", "ako", "y", "nag|linis", "din", "po",
        "Talaga|ng", "ma|ganda|ng", "bahay", "hindi", "pa", "ba",
    ]  # fmt: skip
    for enclitic in (
        "ba",
        "na",
        "pa",
        "daw",
        "raw",
        "din",
        "rin",
        "nga",
        "lang",
        "naman",
        "pala",
        "muna",
        "yata",
    ):
        assert [m.kind for m in FILIPINO.analyze(enclitic)] == ["root"], enclitic
    # an enclitic takes the linker too; a short one stays whole (pang, bang), a longer one is cut
    assert [m.text for m in FILIPINO.analyze("namang")] == ["naman", "g"]
    assert [m.text for m in FILIPINO.analyze("pang")] == ["pang"]


@pytest.mark.parametrize(
    ("word", "cut"),
    [
        ("mag-cast", "mag-|cast"),
        ("naka-block", "naka-|block"),
        ("mai-update", "ma|i-|update"),
        ("madi-disable", "ma|di-|disable"),  # prefix and the copy of the borrowed root
        ("nag-nanavigate", "nag-|na|navigate"),  # the copy after the hyphen
        ("sine-save", "s|in|e-|save"),  # -in- inside the copy, whose vowel follows the sound
        ("in-import", "in-|import"),
        ("pop-up", "pop-up"),  # English compounds: no affix before the hyphen
        ("third-party", "third-party"),
        ("e-mail", "e-mail"),
        ("-ako", "-ako"),  # a stray hyphen at either end: no reading, no error
        ("mag-", "mag-"),
    ],
)
def test_taglish_affixes_before_a_hyphen_on_a_borrowed_root(word, cut):
    pack = FilipinoPack(roots={"aral"})  # none of the borrowed roots is in the lexicon
    assert "|".join(m.text for m in pack.analyze(word)) == cut


def test_same_cut_takes_the_more_frequent_root_and_syncope_the_likelier_vowel():
    pack = FilipinoPack(roots={"kuha", "uha", "ibig", "ibag", "kamit", "kamot"})
    pack._zipf = {"kuha": 4.6, "ibig": 5.8, "kamot": 3.2}
    pack._known = frozenset({"kamutin"})  # kamot keeps its vowel before a suffix
    assert pack.parse("nanguha").root == "kuha" and pack.parse("kaibgan").root == "ibig"
    assert pack.parse("kamtan").root == "kamit"


def test_same_cut_takes_the_root_the_lists_show_as_a_verb_before_the_more_frequent():
    pack = FilipinoPack(roots={"patay", "batay", "tita", "sita"})
    pack._zipf = {"batay": 5.2, "patay": 5.1, "pinatay": 4.8, "tita": 4.0, "sita": 3.0}
    # pinatay shows patay as a verb; batay (based on) has no such form
    assert pack.parse("namatay").root == "patay"
    assert pack.parse("manita").root == "tita"  # neither shows a verb: the more frequent
    pack = FilipinoPack(roots={"tita", "sita"})
    pack._zipf = {"tita": 4.0, "sita": 3.0, "sinita": 2.5}
    assert pack.parse("manita").root == "sita" and pack.parse("naninita").root == "sita"
    # on the shipped lists (pumuna, pinuna against muna, first)
    assert [FILIPINO.parse(w).root for w in ("mamatay", "pamumuna", "nanalo", "mamili")] == [
        "patay",
        "puna",
        "talo",
        "bili",
    ]


def test_a_mag_form_shows_a_verb_too():
    pack = FilipinoPack(roots={"tumbong", "sumbong"})
    pack._zipf = {"tumbong": 3.8, "sumbong": 3.7}
    assert pack.parse("manumbong").root == "tumbong"  # neither shows a verb: the more frequent
    pack = FilipinoPack(roots={"tumbong", "sumbong"})
    pack._zipf = {"tumbong": 3.8, "sumbong": 3.7, "nagsumbong": 3.5}
    assert pack.parse("manumbong").root == "sumbong"  # nagsumbong shows sumbong as a verb
    # the shipped lists hold magsumbong and isumbong, and no verbal form of tumbong
    assert FILIPINO.parse("manumbong").root == "sumbong"


def test_of_two_cuts_that_tie_the_root_the_lists_show_as_a_verb_wins():
    # na|kawan (a flock) and nakaw|an tie up to the frequency of their roots; ninakaw shows nakaw as a verb
    pack = FilipinoPack(roots={"kawan", "nakaw"})
    pack._zipf = {"kawan": 4.0, "nakaw": 3.7}
    assert pack.parse("nakawan").root == "kawan"
    pack = FilipinoPack(roots={"kawan", "nakaw"})
    pack._zipf = {"kawan": 4.0, "nakaw": 3.7, "ninakaw": 3.5}
    assert pack.parse("nakawan").morphs[0].text == "nakaw" and pack.parse("nakawan").root == "nakaw"
    assert FILIPINO.parse("nakawan").root == "nakaw"


def _tiers(tmp_path, headwords: str, forms: str, zipf: dict[str, float]):
    """`load_root_tiers` over a made-up lexicon folder: `headwords` (tglstemmer's list), `forms` (the form list) and
    `zipf` (the frequency list), each list given as words split by spaces; returns (roots, induced, folders)."""
    lexicon, cache = tmp_path / "lexicon", tmp_path / "cache"
    lexicon.mkdir()
    (lexicon / "tgl_words.txt").write_text("\n".join(headwords.split()) + "\n", encoding="utf-8")
    (lexicon / "fil_tesseract_words.txt").write_text("\n".join(forms.split()) + "\n", encoding="utf-8")
    rows = "".join(f"{word}\t{z}\n" for word, z in zipf.items())
    (lexicon / "fil_wordfreq.tsv").write_text("word\tzipf\n" + rows, encoding="utf-8")
    return (*load_root_tiers(lexicon, cache), (lexicon, cache))


def test_a_headword_root_counts_as_a_form_by_an_infix_or_a_strong_prefix_only(tmp_path):
    # tglstemmer lists the inflected humagulgol (a root of the second tier: hagulgol is no headword) and kadena
    forms = "hagulgol humagulgol humahagulgol napahagulgol dena kadena idena madena"
    roots, induced, _ = _tiers(
        tmp_path, "humagulgol kadena saka", forms, {"hagulgol": 3.0, "humagulgol": 3.3}
    )
    assert "hagulgol" in induced  # humahagulgol, napahagulgol and the headword's h|um|agulgol
    # and the headword, an -um- form of the induced root, is a root no more, though written more often
    assert "humagulgol" not in roots
    assert FilipinoPack(roots=roots).parse("humagulgol").root == "hagulgol"
    assert "dena" not in roots  # i|dena, ma|dena, and ka- alone on the headword kadena is no third form


def test_roots_the_word_lists_show_inflecting_join_the_lexicon(tmp_path):
    forms = "bulong bumulong bumubulong ibinulong pagbulong bulungan isang nagisang pinakaisang ikaisang"
    roots, induced, (lexicon, cache) = _tiers(tmp_path, "saka isa", forms, {"isa": 6.3, "isang": 6.5})
    assert "bulong" in induced and "bulong" in roots
    assert "bulungan" not in roots  # bulung|an, a form of the new root
    assert "isang" not in roots  # isa|ng: a common word plus the linker
    pack = FilipinoPack(roots=roots)
    assert [m.text for m in pack.analyze("bumubulong")] == ["b", "um", "u", "bulong"]
    assert load_root_tiers(lexicon, cache) == (roots, induced)  # read back from the cache


def test_a_word_that_starts_as_no_root_may_is_no_new_root(tmp_path):
    # the lists hold OCR pieces (sgkahulugan of kasingkahulugan): sg, gg, gh start no root, whatever its look-alikes
    forms = "sgbalita nagsgbalita isgbalita sgbalitahan stbalita nagstbalita istbalita stbalitahan"
    roots, induced, _ = _tiers(tmp_path, "saka", forms, {})
    assert "sgbalita" not in roots
    assert "stbalita" in induced  # st starts English loans' roots (start, status)


def test_a_dictionarys_verb_in_hin_gives_its_stem_as_a_root(tmp_path):
    # tglstemmer lists Spanish loans' verbs in -hin (areglahin, kumanduhin) and mag- forms (magkansela), not the stems
    headwords = "areglahin kanselahin magkansela kumanduhin bulgatahan lulihin saka"
    roots, induced, _ = _tiers(tmp_path, headwords, "inaregla ikansela", {})
    assert {"aregla", "kansela", "kumando"} <= induced  # kumandu|hin: the last u lowered
    assert not {"areglahin", "kanselahin", "kumanduhin", "magkansela"} & roots  # forms of the stems, no roots
    assert "bulgatahan" in roots  # -han, not -hin
    assert (
        "lulihin" in roots and "luli" not in roots
    )  # a stem of two syllables: a native root's -hin is listed
    pack = FilipinoPack(roots=roots)
    assert [m.text for m in pack.analyze("areglahin")] == ["aregla", "hin"]
    assert [m.text for m in pack.analyze("inaregla")] == ["in", "aregla"]
    assert [m.text for m in pack.analyze("magkansela")] == ["mag", "kansela"]
    assert pack.parse("kumanduhin").root == "kumando"


def test_verbs_of_spanish_loans_on_the_shipped_lists():
    assert [m.text for m in FILIPINO.analyze("konsumihin")] == ["konsumi", "hin"]
    assert FILIPINO.parse("kinontrola").root == "kontrola"
    assert FILIPINO.parse("magklasipika").root == "klasipika"
    assert FILIPINO.parse("kalabasa").root == "kalabasa"


def _linker_pack(zipf: dict[str, float]) -> FilipinoPack:
    pack = FilipinoPack(roots={"pili", "piling", "tulo", "tulong"})
    pack._zipf = zipf
    pack._known = frozenset(zipf)
    return pack


def test_the_linker_after_an_affixed_word_the_lists_hold():
    # napili is a common word, so napiling is napili with the linker, not na- on piling (a bunch; beside)
    pack = _linker_pack({"napili": 4.5, "pinili": 4.9, "piling": 4.7, "pili": 4.2})
    assert pack.parse("napiling").morphs[-1].text == "ng" and pack.parse("napiling").root == "pili"
    assert pack.parse("piniling").root == "pili"
    # a rare napili: the longer root, as before
    pack = _linker_pack({"napili": 2.0, "piling": 4.7, "pili": 4.2})
    assert pack.parse("napiling").root == "piling"


def test_the_linker_yields_to_a_root_the_lists_show_as_a_verb():
    # tumulo (dripped) is a word, but tulungan shows tulong (help) as a verb, which no linker reading explains
    pack = _linker_pack({"tumulo": 4.0, "tulo": 3.8, "tulong": 5.0, "tumulong": 4.7})
    assert pack.parse("tumulong").root == "tulo"  # tumulong alone is no evidence: tumulo|ng explains it
    pack = _linker_pack({"tumulo": 4.0, "tulo": 3.8, "tulong": 5.0, "tumulong": 4.7, "tulungan": 4.0})
    assert pack.parse("tumulong").root == "tulong"


def test_the_linker_after_affixed_words_on_the_shipped_lists():
    cuts = {
        w: "|".join(m.text for m in FILIPINO.parse(w).morphs) for w in ("mahabang", "napiling", "itinakdang")
    }
    assert cuts == {"mahabang": "ma|haba|ng", "napiling": "na|pili|ng", "itinakdang": "i|t|in|akda|ng"}
    assert (
        FILIPINO.parse("tumulong").root == "tulong" and FILIPINO.parse("gumalang").root == "galang"
    )  # igalang


def test_words_that_only_look_like_a_weak_prefix_on_a_root_are_curated():
    # a dictionary's rare headword under them (tatas, labok, lugit, buya) made them pa- forms
    assert cut(FIL, "patatas") == ("patatas", "patatas")
    assert cut(FIL, "palabok") == ("palabok", "palabok")
    assert cut(FIL, "palugitan") == ("palugit|an", "palugit")
    assert cut(FIL, "magpabuya") == ("mag|pabuya", "pabuya")
    # and loans and names that look like ka-, ma- or i- on one (labasa, wani, estra, talya)
    assert cut(FIL, "kalabasa") == ("kalabasa", "kalabasa")
    assert cut(FIL, "kawanihan") == ("kawani|han", "kawani")
    assert cut(FIL, "maestra") == ("maestra", "maestra")
    assert cut(FIL, "italya") == ("italya", "italya")
    assert cut(FIL, "iparada") == ("i|parada", "parada")  # to park, not ipa- on dada
    # a root spelled as a prefix (mapa-) takes affixes only when curated: mapa, a map
    assert cut(FIL, "magmapa") == ("mag|mapa", "mapa")
    assert cut(FIL, "ipinagmamapa") == ("ipinag|ma|mapa", "mapa")
    assert cut(FIL, "mapahina") == ("mapa|hina", "hina")  # the prefix still reads before a root
    # to have a massage: pamasahe (a fare) is no curated root
    assert cut(FIL, "magpamasahe") == ("magpa|masahe", "masahe")
    # a pa- noun whose root's meaning runs through it stays cut, as data/gold cuts it (nagpa|pa|hiwatig)
    assert cut(FIL, "pahiwatig") == ("pa|hiwatig", "hiwatig")
