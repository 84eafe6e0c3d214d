"""Tagalog affixes on borrowed words (`morphology/loans.py`), written without a hyphen and with one: the affixes read,
English words and Tagalog words stay whole (run: pytest tests/morphology/test_loans.py)."""

from __future__ import annotations

import pytest

from morphcpt.morphology import FilipinoPack
from morphcpt.morphology.loans import (
    ENGLISH_FILE,
    LOAN_PREFIXES,
    english_frequencies,
    english_roots,
    unhyphenated_reading,
)
from morphology_helpers import FIL, cut


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("nagtext", ("nag|text", "text")),
        ("nagtetext", ("nag|te|text", "text")),  # the copy of the root's first sounds is its own morph
        ("nagdadrawing", ("nag|da|drawing", "drawing")),  # the first consonant of a cluster and the vowel
        ("nagbrebreakfast", ("nag|bre|breakfast", "breakfast")),  # ... or the whole cluster
        ("nagaapply", ("nag|a|apply", "apply")),  # before a vowel the copy is the vowel
        ("nakakastress", ("naka|ka|stress", "stress")),  # nakaka- is cut as data/gold cuts it
        ("makapagsend", ("maka|pag|send", "send")),
        ("panghaharass", ("pang|ha|harass", "harass")),
        ("Nagreply", ("Nag|reply", "reply")),  # the case of the word is kept
        ("nagtatype", ("nag|ta|type", "type")),  # y after a consonant sounds a vowel: copied as a or i
        ("pagsisync", ("pag|si|sync", "sync")),
    ],
)
def test_affixes_on_an_english_word_without_a_hyphen(word, expected):
    assert cut(FIL, word) == expected


@pytest.mark.parametrize(
    "word",
    [
        "nagging",  # English uses the word itself (mag, nag and pag start English words)
        "magnet",
        "pageant",
        "magazine",
        "package",
        "parent",  # pa- is no loan prefix
        "iconic",  # nor is i-
    ],
)
def test_english_words_stay_whole(word):
    assert cut(FIL, word) == (word, word)


@pytest.mark.parametrize("word", ["manager", "manual", "karate", "hitman", "waking", "serbian"])
def test_an_english_word_takes_no_reading_on_a_weak_root(word):
    # English uses these at least as often as Filipino: a rare headword (nager, sual), an induced root or a rarely
    # written one (rate, waki) makes no reading
    assert cut(FIL, word) == (word, word)


@pytest.mark.parametrize(
    ("word", "guess"),
    [
        ("magkano", "mag|kano"),  # kano is more Filipino than English
        ("maging", "mag|ing"),  # an English root of three letters is too short to cut a Tagalog word
        ("panglaw", "pang|law"),
    ],
)
def test_tagalog_look_alikes_get_no_english_root(word, guess):
    assert cut(FIL, word)[0] != guess


def test_a_word_with_a_tagalog_reading_keeps_it():
    # nagsulat reads with the Tagalog root (sulat), not as an English guess
    assert cut(FIL, "nagsulat") == ("nag|sulat", "sulat")
    assert cut(FIL, "naglaro") == ("nag|laro", "laro")


def test_the_rule_itself_on_a_small_english_table():
    english = {"text": 5.0, "send": 4.8, "kano": 3.2, "sing": 4.5, "magnet": 3.7, "tawa": 3.1}
    zipf = {"kano": 4.0}
    read = lambda w: unhyphenated_reading(w, english, zipf)  # noqa: E731
    assert read("nagtext").spans == ((0, 3, "prefix"), (3, 7, "root"))
    assert read("nagsesend").reduplicant == "se"
    assert read("nagtisend") is None  # ti is no copy of send's first sounds
    assert read("magkano") is None  # far more frequent in Filipino than in English
    assert read("magnet") is None  # an English word itself
    assert read("nagpapatext").spans == (
        (0, 5, "prefix"),
        (5, 7, "reduplicant"),
        (7, 11, "root"),
    )  # nagpa|pa|
    assert read("nagpatext").prefixes == ("nagpa",)
    assert read("nagkakatext").reduplicant == "ka"  # nagka|ka|text
    assert read("nagkapatext") is None  # pa is no copy of nagka-
    assert read("nagsend-") is None  # letters only
    assert read("ipagsend").prefixes == ("ipag",)  # the longest prefix first
    english, zipf = {"bash": 3.8, "kano": 3.2}, {"bash": 4.1, "kano": 4.0}
    assert unhyphenated_reading("nangbash", english, zipf).prefixes == (
        "nang",
    )  # Filipino's own loan: 0.3 more
    assert unhyphenated_reading("magkano", english, zipf) is None  # 0.8 more: Filipino's word


def test_the_copy_follows_the_sound_of_the_english_root():
    english = {"bike": 4.5, "game": 5.0, "file": 4.8, "code": 4.9, "like": 6.0, "bikes": 3.5, "gamer": 3.5}
    read = lambda w: unhyphenated_reading(w, english, {})  # noqa: E731
    assert read("nagbabike").reduplicant == "ba"  # i before a consonant and a silent e sounds ai
    assert read("nagbibike").reduplicant == "bi"  # the written vowel, as before
    assert read("naggegame").reduplicant == "ge"  # a sounds ei
    assert read("nagfafile").reduplicant == "fa"
    assert read("nagbabikes").reduplicant == "ba"  # the e before a final s is silent too
    assert read("naggegamer").reduplicant == "ge"
    assert read("nagkocode").reduplicant == "ko"  # c before o copied as k
    assert read("nagbebike") is None  # no sound of bike's
    assert read("naglelike") is None
    english = {"bikini": 3.5, "cinema": 4.0}
    read = lambda w: unhyphenated_reading(w, english, {})  # noqa: E731
    assert read("nagbabikini") is None  # no silent e: the i is written and said
    assert read("nagkicinema") is None  # c before i sounds s


def test_the_copy_follows_the_sound_on_the_shipped_lists():
    assert cut(FIL, "naglalike") == ("nag|la|like", "like")
    assert cut(FIL, "naggegame") == ("nag|ge|game", "game")
    assert cut(FIL, "nagtetake") == ("nag|te|take", "take")


def test_the_shipped_table_and_the_prefixes():
    english = english_frequencies()
    assert ENGLISH_FILE.is_file() and len(english) > 20_000
    assert english["text"] >= 3.0 and english.get("bata", 0.0) < 3.0  # English by its figure, not Tagalog
    assert list(LOAN_PREFIXES) == sorted(LOAN_PREFIXES, key=len, reverse=True)
    assert not {"i", "ka", "ma", "na", "pa"} & set(LOAN_PREFIXES)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("gina-grab", ("g|in|a-|grab", "grab")),  # the copy keeps a cluster's first consonant, -in- inside
        ("nagta-translate", ("nag|ta-|translate", "translate")),
        ("tina-type", ("t|in|a-|type", "type")),  # y after a consonant sounds a vowel: the onset is t
        ("isi-style", ("i|si-|style", "style")),
        ("nire-require", ("ni|re-|require", "require")),  # -in- as ni- before r, then the copy
        ("nila-like", ("ni|la-|like", "like")),
        ("nag-aapply", ("nag-|a|apply", "apply")),  # a vowel-initial root's copy after the hyphen
        ("nag-eedit", ("nag-|e|edit", "edit")),
        ("ni-reset", ("ni-|reset", "reset")),  # ni- without a copy
        ("ini-report", ("i|ni-|report", "report")),
        ("kina-cast", ("k|in|a-|cast", "cast")),  # the copy follows the sound: c copied as k
        ("magki-click", ("mag|ki-|click", "click")),
        ("kino-compute", ("k|in|o-|compute", "compute")),
    ],
)
def test_a_hyphenated_copy_of_a_cluster_a_y_or_after_ni(word, expected):
    assert cut(FIL, word) == expected


@pytest.mark.parametrize(
    "word",
    [
        "pop-up",
        "e-mail",
        "third-party",
        "add-on",
        "built-in",
        "on-device",
        "picture-in-picture",
        "user-generated",
    ],
)
def test_english_compounds_with_a_hyphen_stay_whole(word):
    assert cut(FIL, word) == (word, word)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("umexit", ("um|exit", "exit")),  # -um- before a vowel: a prefix no loan rule had
        ("umaattend", ("um|a|attend", "attend")),  # ... with the vowel's copy
        ("idisplay", ("i|display", "display")),  # i- before a long, frequent root, in a word of the lists
        ("isesend", ("i|se|send", "send")),
        ("dineclare", ("d|in|eclare", "declare")),  # -in- inside the English root
        ("inendorse", ("in|endorse", "endorse")),
        ("tetext", ("te|text", "text")),  # the contemplative's copy alone
        ("magtweet", ("mag|tweet", "tweet")),  # Filipino writes tweet a little more often than English does
        ("kacheapan", ("ka|cheap|an", "cheap")),  # ka-...-an
        ("replayan", ("replay|an", "replay")),
        ("nafafall", ("na|fa|fall", "fall")),
        ("pinakalatest", ("pinaka|latest", "latest")),
        ("pinost", ("p|in|ost", "post")),  # a frequent root of one syllable takes -in- here
        ("itinext", ("i|t|in|ext", "text")),  # i- and -in-: the perfective, not a name's i- (issue #40)
        ("itinetext", ("i|t|in|e|text", "text")),
        ("ipinopost", ("i|p|in|o|post", "post")),
        ("tinetext", ("t|in|e|text", "text")),
        ("shinare", ("sh|in|are", "share")),  # after a digraph, one sound
        ("chineck", ("ch|in|eck", "check")),
        ("nagchat", ("nag|chat", "chat")),
    ],
)
def test_tagalog_morphology_on_an_english_root(word, expected):
    assert cut(FIL, word) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("tsinismis", ("ts|in|ismis", "tsismis")),  # ts spells one sound (ch): -in- and -um- go after it
        ("tsinismisan", ("ts|in|ismis|an", "tsismis")),
        ("tsumuper", ("ts|um|uper", "tsuper")),
        ("tsinelas", ("tsinelas", "tsinelas")),  # a root that starts so stays whole
        ("tsino", ("tsino", "tsino")),
    ],
)
def test_ts_is_one_sound_before_an_infix(word, expected):
    assert cut(FIL, word) == expected


@pytest.mark.parametrize(
    "word",
    [
        "jodian",  # a suffix alone needs a root of five letters (jodi|an)
        "minoan",  # so does -in- (m|in|oan)
        "tinale",  # (t|in|ale)
        "itinale",  # ... and i- and -in- (i|t|in|ale)
        "lalabs",  # a copy alone needs a frequent English root (la|labs)
        "maegan",  # after ma-, na-, ka-, pa-, i- the root needs five letters and frequency (ma|egan)
        "napoles",  # Filipino writes the word itself often: a name, not na|poles
        "kining",  # one syllable ending in ng, as Tagalog words end: no k|in|ing, l|in|ong
        "linong",
        "nagcarlan",  # a suffix needs a root of five letters: no nag|carl|an
        "iframe",  # no list holds it: after i-, ma-, na-, ka-, pa- that is a name's risk (i|frame)
        "add-on",  # a hyphen: the hyphenated rules had their turn
    ],
)
def test_names_and_look_alikes_get_no_english_root(word):
    assert cut(FIL, word) == (word, word)


def test_tag_and_isa_take_no_english_root():
    assert cut(FIL, "tagalong")[0] not in ("tag|along", "taga|long")  # tag- is for seasons, taga- for origins
    assert cut(FIL, "sindang")[0] != "sin|dang"
    assert cut(FIL, "isadora")[0] != "isa|dora"  # isa- takes Tagalog roots only


def test_english_roots_are_frequent_english_words_outside_the_lexicon():
    english = {"tweet": 4.17, "text": 5.0, "table": 5.0, "basketball": 4.56, "kano": 3.2, "sing": 4.5}
    english |= {"abs": 4.0, "rare": 2.5}
    zipf = {"tweet": 4.25, "basketball": 5.2, "kano": 4.0}
    roots = english_roots(english, zipf, frozenset({"text", "table"}))
    # table: a lexicon root that takes affixes there (text, of one syllable, does not); basketball, kano: far more
    # Filipino; sing: one syllable ending as Tagalog words do; abs: three letters; rare: too rare
    assert roots == {"tweet", "text"}


@pytest.mark.parametrize(
    ("word", "expected"),
    [("magtrak", ("mag|trak", "trak")), ("nagtses", ("nag|tses", "tses")), ("pagtrak", ("pag|trak", "trak"))],
)
def test_mag_nag_pag_on_a_borrowing_of_one_syllable(word, expected):
    pack = FilipinoPack(roots={"trak", "tses", "bata"})
    assert cut(pack, word) == expected


def test_a_one_syllable_root_takes_no_other_affix():
    pack = FilipinoPack(roots={"trak", "bay"})
    assert cut(pack, "magbay")[1] != "bay"  # three letters: too short
    assert cut(pack, "itrak") == ("itrak", "itrak")  # i- alone: no
    assert cut(pack, "magtrakan") == ("magtrakan", "magtrakan")  # no suffix with it


def test_one_syllable_borrowings_on_the_shipped_lists():
    assert cut(FIL, "maggolp") == ("mag|golp", "golp")  # a headword until the lexicon read it
    assert cut(FIL, "magtses") == ("mag|tses", "tses")
    assert cut(FIL, "magdyip") == ("mag|dyip", "dyip")
