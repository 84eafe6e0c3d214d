"""The analyser's fallbacks for a word with no reading (`morphology/fallback.py`, issue #40): di- before a word that
reads on its own, the linker after a stem no list holds (both moved here from test_affix_classes.py), a root no
list holds as a root, read where the lists hold another verbal form of it (`shown_root_reading`) or, for a word no
list holds, by its affixes alone (`unlisted_root_reading`: nag|bulgot), and the plural of a verbal prefix
(`plural.plural_reading`: nangag|sabi). Over small root lexicons with chosen list words, so that the
pattern, not the shipped lists, decides. The roots of the shown-root tests over a small lexicon are in no held-out
set (data/gold_heldout/*heldout*.tsv); of the shipped-list words, pumasuk and pagkatapus misspell pasok and tapos,
common roots of other words of the generated held-out sets."""

from __future__ import annotations

import pytest

from morphcpt.morphology import FilipinoPack
from morphology_helpers import FIL, cut


def _pack(listed: str) -> FilipinoPack:
    """A small lexicon, with the comma-separated `listed` as the words of the lists."""
    pack = FilipinoPack(roots={"kain", "gawa", "gulat"})
    pack._known = frozenset(listed.split(","))
    return pack


@pytest.mark.parametrize(
    ("word", "listed", "expected"),
    [
        ("naghamlay", "hinamlay", ("nag|hamlay", "hamlay")),  # a verbal prefix
        ("ipaghamlay", "humamlay", ("ipag|hamlay", "hamlay")),
        ("nagpasulbo", "isulbo", ("nagpa|sulbo", "sulbo")),  # the longest prefix whose root fits
        ("humamlay", "ihamlay", ("h|um|amlay", "hamlay")),  # -um- after the first consonant
        ("umisbok", "magisbok", ("um|isbok", "isbok")),  # or before a first vowel
        ("hinamlayan", "maghamlay", ("h|in|amlay|an", "hamlay")),  # -in- and -an
        ("tinilapukan", "magtilapok", ("t|in|ilapuk|an", "tilapok")),  # the u before -an lowered to o
        ("ihinamlay", "naghamlay", ("i|h|in|amlay", "hamlay")),  # i- before -in-
        ("tilapukin", "tumilapok", ("tilapuk|in", "tilapok")),  # -in alone
        ("paghamlayan", "hinamlay", ("pag|hamlay|an", "hamlay")),  # pag- and -an
        ("nahamlay", "hinamlay,ihamlay", ("na|hamlay", "hamlay")),  # ma-/na- with two forms listed
        ("nakipaghamlay", "hinamlay", ("naki|pag|hamlay", "hamlay")),  # cut as the search cuts naki|pag-
    ],
)
def test_a_root_its_other_forms_show(word, listed, expected):
    assert cut(_pack(listed), word) == expected


@pytest.mark.parametrize(
    ("word", "listed"),
    [
        ("naghamlay", ""),  # no other form listed
        ("naghamlay", "naghamlay"),  # the word itself is no evidence
        ("naghamlay", "mahamlay"),  # ma- shows no verb (madrigal)
        ("nahamlay", "hinamlay"),  # na- needs two forms (malabon)
        ("naghamlay", "hamlay"),  # nor does the bare word (dayao, a name)
        ("hamlayan", "maghamlay"),  # -an alone ends too many nouns and names
        ("pagkatapus", "itapus"),  # pagka- is a prefix of its own: no pag- on katapus
        ("kinagulat", "magkagulat"),  # ka before a lexicon root: kina- on gulat, not -in- on kagulat
        ("ginagwa", "maggagwa"),  # a consonant its vowel repeats: a copy, not a root
        ("nakapagpa", "magpagpa"),  # a root that starts as a prefix (makapag-)
        ("magnolya", "inolya"),  # n after g
        ("nagtuka", "ituka"),  # a root of four letters
    ],
)
def test_no_guess_without_evidence_or_shape(word, listed):
    assert cut(_pack(listed), word) == (word, word)


def test_shown_roots_on_the_shipped_lists():
    assert cut(FIL, "nagprisinta") == ("nag|prisinta", "prisinta")  # iprisinta, magprisinta are listed
    assert cut(FIL, "pumasuk") == ("p|um|asuk", "pasuk")  # a misspelled pasok: its forms are listed too
    assert cut(FIL, "magdalena") == ("magdalena", "magdalena")  # a name stays whole
    assert cut(FIL, "pagkatapus") == ("pagkatapus", "pagkatapus")


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("di-matinag", ("di-|ma|tinag", "tinag")),
        ("di-sanay", ("di-|sanay", "sanay")),
        ("di-sinasanay", ("di-|s|in|a|sanay", "sanay")),
        ("di-xyzqw", ("di-xyzqw", "di-xyzqw")),  # nothing after di- reads: the word stays whole
    ],
)
def test_di_negates_a_word_that_reads_on_its_own(word, expected):
    pack = FilipinoPack(roots={"tinag", "sanay"})
    assert cut(pack, word) == expected
    if "|" in expected[0]:
        assert pack.parse(word).prefixes[0] == "di"


def test_di_on_the_shipped_lists():
    assert cut(FIL, "di-tuwirang") == ("di-|tuwir|an|g", "tuwid")
    assert cut(FIL, "di-umano") == ("di-|umano", "umano")  # umano (reportedly) is a particle, no um|ano
    assert cut(FIL, "umano") == ("umano", "umano")


def test_the_linker_after_a_stem_no_list_holds():
    pack = FilipinoPack(roots={"hiwaga", "lubha", "bulo", "gigi", "ipo", "ipon"})
    pack._known = frozenset({"hiwaga", "lubha", "bulo", "naipon", "ipon"})
    pack._zipf = {"hiwaga": 3.5, "lubha": 4.0, "bulo": 1.0, "gigi": 4.0, "ipo": 3.5, "ipon": 4.0}
    pack._rare = frozenset({"bulo"})  # a root only a dictionary or the lists' paradigms show
    assert cut(pack, "mahihiwagang") == ("ma|hi|hiwaga|ng", "hiwaga")  # mahihiwaga is no listed word
    assert cut(pack, "malulubhang") == ("ma|lu|lubha|ng", "lubha")
    assert pack.parse("malulubhang").linker == "ng"
    assert cut(pack, "mabubulong")[0] == "mabubulong"  # a rare root: the -ng may be the root's own
    assert cut(pack, "pagiging")[0] == "pagiging"  # gigi, one syllable twice, is no root under a linker
    assert cut(pack, "naipong")[0] != "na|ipo|ng"  # naipon is a listed word: its -g, not ipo's -ng
    pack = FilipinoPack(roots={"garbo", "bulo", "bulong"})
    pack._known = frozenset({"garbo", "magarbo", "bulo", "bulong"})
    assert cut(pack, "magagarbong") == ("ma|ga|garbo|ng", "garbo")  # a root of no frequency that is not rare
    assert cut(pack, "mabubulong") == ("ma|bu|bulong", "bulong")  # bulong is a root: the -ng is its own
    pack = FilipinoPack(roots={"garbo"})
    pack._known = frozenset({"garbo", "magarbo", "garbong"})
    assert (
        cut(pack, "magagarbong")[0] == "magagarbong"
    )  # garbong a word of its own: its -ng may be the root's


def test_the_linker_after_an_unlisted_stem_on_the_shipped_lists():
    assert cut(FIL, "matatalinghagang") == ("ma|ta|talinghaga|ng", "talinghaga")
    assert cut(FIL, "pinakamodernong") == ("pinaka|moderno|ng", "moderno")
    assert cut(FIL, "palumpong")[0] == "palumpong"  # a headword: its -ng is its own


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("nangaghamlay", ("nangag|hamlay", "nangag")),  # the plural of nag|hamlay
        ("nangaghahamlay", ("nangag|ha|hamlay", "nangag")),  # and of its copy
        ("mangaghamlay", ("mangag|hamlay", "mangag")),
        ("nangahamlay", ("nanga|hamlay", "nanga")),  # na-
        ("nangakahamlay", ("nangaka|hamlay", "nangaka")),  # naka-
        ("nangagsihamlay", ("nangagsi|hamlay", "nangagsi")),  # nagsi-
        ("mangagkahamlay", ("mangagka|hamlay", "mangagka")),  # magka-
    ],
)
def test_the_plural_of_a_verbal_prefix(word, expected):
    pack = FilipinoPack(roots={"hamlay"})
    assert cut(pack, word) == (expected[0], "hamlay")
    assert pack.parse(word).prefixes[0] == expected[1]


def test_the_plural_yields_to_every_other_reading():
    pack = FilipinoPack(roots={"kahamlay", "asar", "hamlay"})
    assert cut(pack, "mangahamlay") == ("mang|ahamlay", "kahamlay")  # mang- on kahamlay, not manga- on hamlay
    assert cut(pack, "nangaasar") == ("nang|a|asar", "asar")  # nang- and a copy, not nanga- on asar
    assert cut(pack, "nangagsulbo")[0] == "nangagsulbo"  # nagsulbo reads on no root: the word stays whole
    assert cut(pack, "nangahamlayxq")[0] == "nangahamlayxq"
    assert cut(FilipinoPack(roots={"hamlay"}), "nangahamlay") == ("nanga|hamlay", "hamlay")  # alone, it reads


def test_a_plural_headword_is_affixed_though_its_singular_is_a_headword_too():
    # the root lexicon asks this of every headword, over a pack where each headword is a root (magkatipon too)
    pack = FilipinoPack(roots={"tipon", "magkatipon", "mangagkatipon"})
    assert pack.has_affixed_reading("mangagkatipon")
    assert not FilipinoPack(roots={"tipon", "mangagkatipon"}).has_affixed_reading("mangagkasulbo")


def test_plurals_on_the_shipped_lists():
    assert cut(FIL, "nangagsasabi") == ("nangag|sa|sabi", "sabi")
    assert cut(FIL, "nangakaupo") == ("nangaka|upo", "upo")
    assert cut(FIL, "mangagkatipon") == ("mangagka|tipon", "tipon")  # a tglstemmer headword, a root no more
    assert cut(FIL, "nangangamba")[0] == "na|nga|ngamba"  # nang- and a copy, as before


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("nagbulgot", ("nag|bulgot", "bulgot")),  # bulgot: a root no shipped list holds, nor any form of it
        ("bumulgot", ("b|um|ulgot", "bulgot")),
        ("binulgutan", ("b|in|ulgut|an", "bulgot")),  # the u before the suffix lowered
        ("bulgutin", ("bulgut|in", "bulgot")),
        ("ipinagbulgot", ("ipinag|bulgot", "bulgot")),  # the frame with the most affix letters
        ("pinagbulgutan", ("pinag|bulgut|an", "bulgot")),
        ("nakapagbulgot", ("naka|pag|bulgot", "bulgot")),  # cut into its parts, as data/gold cuts maka|pag-
        ("bubulgot", ("bu|bulgot", "bulgot")),  # a copy alone: the future of -um-
        ("bubulgutin", ("bu|bulgut|in", "bulgot")),  # and of -in
        # a prefix's last syllable copied: the imperfective of magpa-, maki-, maka-
        ("nagpapabulgot", ("nagpa|pa|bulgot", "bulgot")),
        ("nakikibulgot", ("naki|ki|bulgot", "bulgot")),
        ("nakakabulgot", ("naka|ka|bulgot", "bulgot")),
        ("pagkabulgot", ("pagka|bulgot", "bulgot")),  # the nouns of pagka- and taga-
        ("tagabulgot", ("taga|bulgot", "bulgot")),
        ("pagpapatirapa", ("pagpapatirapa", "pagpapatirapa")),  # not where the lists hold magpatirapa whole
        ("nakakaulgot", ("nakakaulgot", "nakakaulgot")),  # nor before a vowel
        ("pinakamabulgot", ("pinaka|ma|bulgot", "bulgot")),  # the superlative of a ma- adjective
        ("pinakabulgot", ("pinaka|bulgot", "bulgot")),
        ("kabulgutan", ("ka|bulgut|an", "bulgot")),  # the abstract noun ka-...-an
        ("kabulgotahan", ("ka|bulgota|han", "bulgota")),  # -han after a vowel
        ("mambulgot", ("mam|bulgot", "bulgot")),  # mang- where it keeps the root's first consonant
        ("nambubulgot", ("nam|bu|bulgot", "bulgot")),  # and a copy
        ("manghulgot", ("mang|hulgot", "hulgot")),
        ("mamulgot", ("mamulgot", "mamulgot")),  # not where it takes it: mam|ulgot may be on pulgot or bulgot
        ("mandulgot", ("mandulgot", "mandulgot")),  # nor before d, as loans start (mandolina, mandatoryo)
        ("mabulgot", ("mabulgot", "mabulgot")),  # ma- alone: too many look-alikes
        ("ibulgot", ("ibulgot", "ibulgot")),
        ("dinamismo", ("dinamismo", "dinamismo")),  # -in- alone before a Spanish ending: a loan
        ("Binulgot", ("Binulgot", "binulgot")),  # a capital: a name's, perhaps
        ("Kabulgutan", ("Kabulgutan", "kabulgutan")),
        ("Mambulgot", ("Mambulgot", "mambulgot")),
        ("kinabulgutan", ("k|in|a|bulgut|an", "bulgot")),  # ka-...-an with -in-, what one felt at
        ("kinabubulgutan", ("k|in|a|bu|bulgut|an", "bulgot")),  # and its copy
        ("kinaismakan", ("k|in|a|ismak|an", "ismak")),  # before a vowel too
        ("kinaiismakan", ("k|in|a|i|ismak|an", "ismak")),
        ("kinabulgotahan", ("k|in|a|bulgota|han", "bulgota")),  # -han after a vowel
        ("sinulgaran", ("s|in|ulgar|an", "sulgad")),  # an r before a suffix after a or i: the d it spells
        ("hulgirin", ("hulgir|in", "hulgid")),
        ("hinulguran", ("h|in|ulgur|an", "hulgor")),  # not after o: roots in -or are loans as often (tambor)
        ("namumulgot", ("na|mu|mulgot", "pulgot")),  # nang- whose m took a p (or b), and its copy
        ("mamumulgot", ("ma|mu|mulgot", "pulgot")),
        ("nangungulgot", ("na|ngu|ngulgot", "kulgot")),  # ng took a k
        ("panunulgutan", ("pa|nu|nulgut|an", "sulgot")),  # pang-...-an, n took an s (or t)
        ("nanunusib", ("na|nu|nusib", "tusib")),  # not susib, which repeats its s: t
        ("mamimipuk", ("ma|mi|mipuk", "bipuk")),  # not pipuk: b
        ("Namumulgot", ("Namumulgot", "namumulgot")),  # a capital: a name's, perhaps
        ("nakaulgot", ("naka|ulgot", "ulgot")),  # a prefix that ends in a vowel before a vowel-initial root
        ("pagkaulgot", ("pagka|ulgot", "ulgot")),
        ("nagpaulgot", ("nagpa|ulgot", "ulgot")),
        ("nagulgot", ("nagulgot", "nagulgot")),  # not nag- unhyphenated (magaslaw, maginoo: look-alikes)
        ("maulgot", ("maulgot", "maulgot")),  # nor ma- alone
        ("iniulgot", ("i|ni|ulgot", "ulgot")),  # i- and -in- before a vowel, as data/gold writes i|ni|abot
        ("iniuulgot", ("i|ni|u|ulgot", "ulgot")),  # and the root's first vowel copied
        ("inaalgot", ("in|a|algot", "algot")),  # -in- alone and its copy, as before
        ("nabubulgot", ("na|bu|bulgot", "bulgot")),  # ma-/na- and a copy: the imperfective of ma-
        ("mabubulgot", ("ma|bu|bulgot", "bulgot")),
        ("mabubulgutan", ("ma|bu|bulgut|an", "bulgot")),  # and of ma-...-an
        ("nahuhulgot", ("na|hu|hulgot", "hulgot")),
        ("nauulgot", ("na|u|ulgot", "ulgot")),  # and a copy of a vowel
        ("maaalgutan", ("ma|a|algut|an", "algot")),
        ("nagbulgutan", ("nag|bulgut|an", "bulgot")),  # the reciprocal mag-...-an
        ("magbulgutan", ("mag|bulgut|an", "bulgot")),
        ("magbulgotahan", ("mag|bulgota|han", "bulgota")),  # -han after a vowel
        ("makipagbulgutan", ("maki|pag|bulgut|an", "bulgot")),  # makipag-...-an
        ("nakikipagbulgutan", ("naki|ki|pag|bulgut|an", "bulgot")),  # and its copy
        ("nakikipagbulgot", ("naki|ki|pag|bulgot", "bulgot")),
        ("magpabulgutan", ("magpa|bulgutan", "bulgutan")),  # not after magpa-, magsi- (their roots' own -an)
        ("nagsibulgutan", ("nagsi|bulgutan", "bulgutan")),
        ("napagbulgutan", ("napag|bulgut|an", "bulgot")),  # napag-...-an, maka-...-an
        ("nakabulgutan", ("naka|bulgut|an", "bulgot")),
        ("pinagbulgot", ("pinag|bulgot", "bulgot")),  # pinag- alone where no suffix ends the word
        ("naipabulgot", ("na|ipa|bulgot", "bulgot")),  # the abilitative na-/ma- before ipa-, ipag-
        ("maipagbulgot", ("ma|ipag|bulgot", "bulgot")),
        ("naibulgot", ("naibulgot", "naibulgot")),  # not before i- alone (ma|ibig|an is ma- on ibig)
        ("tagapagbulgot", ("taga|pag|bulgot", "bulgot")),  # taga|pag-, nagsipag-, pakikipag-
        ("nagsipagbulgot", ("nagsipag|bulgot", "bulgot")),
        ("pakikipagbulgutan", ("pakikipag|bulgut|an", "bulgot")),
        ("pakikibulgot", ("pakiki|bulgot", "bulgot")),  # pakiki- whole, as the lists' words read it
        ("pagkakabulgot", ("pagka|ka|bulgot", "bulgot")),  # pagka- and its own ka copied
        ("ngumulgot", ("ng|um|ulgot", "ngulgot")),  # a root that starts with ng: -um-, -in- after the ng
        ("nginulgot", ("ng|in|ulgot", "ngulgot")),
        ("nginulgutan", ("ng|in|ulgut|an", "ngulgot")),
        ("ngulgutin", ("ngulgut|in", "ngulgot")),
        ("ngungulgot", ("ngu|ngulgot", "ngulgot")),
        ("inginulgot", ("i|ng|in|ulgot", "ngulgot")),
        ("nagngulgot", ("nag|ngulgot", "ngulgot")),  # after a prefix that ends in a consonant
        ("nakangulgot", ("naka|ngulgot", "ngulgot")),  # and after naka-: there is no nakang-
        ("nangulgot", ("nangulgot", "nangulgot")),  # not where the ng may be a nasal prefix's (nang|ulgot)
        ("napangulgot", ("napangulgot", "napangulgot")),  # or hold one (na|pang|ulgot)
        ("magpangulgot", ("magpangulgot", "magpangulgot")),
        (
            "ipabubulgot",
            ("ipa|bu|bulgot", "bulgot"),
        ),  # the causative's copy: ipa-, ipina-, pa-...-in, p-in-a-
        ("ipinabubulgot", ("ipina|bu|bulgot", "bulgot")),
        ("pinahuhulgot", ("p|in|a|hu|hulgot", "hulgot")),
        ("pinabubulgutan", ("p|in|a|bu|bulgut|an", "bulgot")),
        ("pabubulgutin", ("pa|bu|bulgut|in", "bulgot")),
        ("kabubulgot", ("ka|bu|bulgot", "bulgot")),  # the recent perfective
        ("ipakakulgot", ("ipakakulgot", "ipakakulgot")),  # not a copy of k, m, n (paki-'s, a nasal's)
        ("pinamamulgot", ("pinamamulgot", "pinamamulgot")),
        ("kabubulgotang", ("kabubulgotang", "kabubulgotang")),  # nor ka- before -ng or -an
        ("pinabulgot", ("p|in|abulgot", "pabulgot")),  # without a copy, -in- in a root as before
        ("nabulgutan", ("na|bulgut|an", "bulgot")),  # the abilitative ma-/na- with -an
        ("mabulgutan", ("ma|bulgut|an", "bulgot")),
        ("nabulgotahan", ("na|bulgota|han", "bulgota")),
        ("namulgutan", ("namulgutan", "namulgutan")),  # not before m, n, g (mam-, nan-, mag-: other prefixes)
        ("mapabulgutan", ("mapa|bulgutan", "bulgutan")),  # nor ka, ki, pa (maka-, maki-, mapa-)
        (
            "ipauulgot",
            ("ipa|u|ulgot", "ulgot"),
        ),  # the causative's and the recent perfective's copy of a vowel
        ("ipinaaalgot", ("ipina|a|algot", "algot")),
        ("pinauulgutan", ("p|in|a|u|ulgut|an", "ulgot")),
        ("paaalgutin", ("pa|a|algut|in", "algot")),
        ("kauulgot", ("ka|u|ulgot", "ulgot")),
        ("naalgutan", ("na|algut|an", "algot")),  # ma-/na- with -an before a or u
        ("maulgutan", ("ma|ulgut|an", "ulgot")),
        ("naismakan", ("naismakan", "naismakan")),  # not before i (ma|i|... is i-'s abilitative), e or o
        ("maolgutan", ("maolgutan", "maolgutan")),
    ],
)
def test_a_root_no_list_holds_guessed_by_its_affixes_alone_for_a_word_no_list_holds(word, expected):
    assert cut(FIL, word) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("bulgot-bulgot", ("bulgot-|bulgot", "bulgot")),  # a root no list holds, copied whole
        ("kabulgot-bulgot", ("ka|bulgot-|bulgot", "bulgot")),  # after ka- (kaawa-awa's pattern)
        ("nagbubulgot-bulgot", ("nag|bu|bulgot-|bulgot", "bulgot")),  # after a prefix and a CV copy
        ("bulgut-bulgutan", ("bulgut-|bulgut|an", "bulgot")),  # with -an: the copy as it stands before it
        ("nagbubulgut-bulgutan", ("nag|bu|bulgut-|bulgut|an", "bulgot")),
        ("bulgota-bulgotahan", ("bulgota-|bulgota|han", "bulgota")),  # -han after a vowel
        ("Bulgut-bulgutan", ("Bulgut-bulgutan", "bulgut-bulgutan")),  # a capital: a name's, perhaps
        ("Kabulgot-bulgot", ("Kabulgot-bulgot", "kabulgot-bulgot")),  # a capital: a name's, perhaps
        ("bulgot-bulgut", ("bulgot-bulgut", "bulgot-bulgut")),  # no copy
        ("bye-bye", ("bye-bye", "bye-bye")),  # an English word
        ("kaawa-awa", ("ka|awa-|awa", "awa")),  # a listed root, as before
    ],
)
def test_a_root_no_list_holds_copied_whole_across_a_hyphen(word, expected):
    assert cut(FIL, word) == expected


def test_the_guess_without_list_evidence_is_only_for_unlisted_words():
    pack = FilipinoPack(roots={"kain"})  # no shipped lists: every word would be unlisted, so no guess at all
    assert cut(pack, "nagbulgot") == ("nagbulgot", "nagbulgot")
    assert "nagbulgot" not in FIL._known and "bulgot" not in FIL.roots
