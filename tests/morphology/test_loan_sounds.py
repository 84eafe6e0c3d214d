"""The copy of a borrowed English root follows its sound (issue #40, loans' copies of a vowel pair or a cluster):
`loan_sounds.sound_copy` on its own, then the analyser's readings of such copies after a prefix, inside -in- and
after ni-, on the shipped lists. The words are chosen here; none is a word of a gold set, and their roots are in no
held-out set (data/gold_heldout/*heldout*.tsv)."""

from __future__ import annotations

import pytest

from morphcpt.morphology.loan_sounds import heard_vowels, sound_copy
from morphcpt.morphology.loans import sounded_roots, unhyphenated_reading
from morphology_helpers import FIL, cut


@pytest.mark.parametrize(
    ("copy", "root"),
    [
        ("mi", "meeting"),  # ee sounds i
        ("ri", "reach"),  # ea sounds i ...
        ("re", "reach"),  # ... and the written e stays a copy
        ("bu", "boost"),  # oo sounds u
        ("te", "train"),  # ai sounds e
        ("pe", "play"),  # ay too, after the cluster's first consonant
        ("ple", "play"),  # or the whole cluster
        ("lo", "launch"),  # au sounds o
        ("do", "draw"),  # aw too
        ("bi", "build"),  # ui sounds i
        ("ko", "call"),  # a before ll or lk sounds o, and c sounds k
        ("wo", "walk"),
        ("ba", "budget"),  # u in a closed syllable sounds a
        ("a", "update"),  # ... also as the copy of a vowel alone
        ("ki", "click"),  # c before l sounds k
        ("se", "save"),  # the silent e's rule, as before
        ("ta", "type"),  # y after a consonant is the vowel, as before
        ("ba", "biking"),  # -ing took the silent e's place: the i sounds as in bike
        ("ra", "riding"),
        ("bi", "biking"),  # ... and the written vowel stays a copy
    ],
)
def test_a_copy_of_the_sound(copy, root):
    assert sound_copy(copy, root)


@pytest.mark.parametrize(
    ("copy", "root"),
    [
        ("ma", "meeting"),  # no sound of the root's
        ("ka", "chat"),  # ch is no k
        ("ki", "cinema"),  # c before i sounds s
        ("ba", "music"),  # u before one consonant and a vowel is said u
        ("bo", "bike"),
        ("ba", "bring"),  # ing after a cluster is no silent e's place
        ("sto", "strong"),  # part of a cluster is no copy: its first consonant or all of it
    ],
)
def test_no_copy_of_the_sound(copy, root):
    assert not sound_copy(copy, root)


def test_the_vowels_a_copy_may_write():
    assert heard_vowels("meeting", 1) == {"e", "i"}
    assert heard_vowels("bike", 1) == {"i", "a"}
    assert heard_vowels("talk", 1) == {"a", "o"}
    assert heard_vowels("human", 1) == {"u"}  # an open syllable's u


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("nagmimeeting", ("nag|mi|meeting", "meeting")),  # a vowel pair's sound, after a prefix
        ("nagtitweet", ("nag|ti|tweet", "tweet")),  # ... after the first consonant of a cluster
        ("nagbubook", ("nag|bu|book", "book")),
        ("naglolaunch", ("nag|lo|launch", "launch")),
        ("nagkocall", ("nag|ko|call", "call")),
        ("nagkiclean", ("nag|ki|clean", "clean")),
        ("binubook", ("b|in|u|book", "book")),  # inside -in-
        ("tinetrain", ("t|in|e|train", "train")),
        ("kiniclick", ("k|in|i|click", "click")),  # c sounds k before l
        ("kinocoach", ("k|in|o|coach", "coach")),
        ("nilalike", ("ni|la|like", "like")),  # after ni-, on a root the lexicon holds that English uses
        ("shineshare", ("sh|in|e|share", "share")),
    ],
)
def test_the_analyser_reads_copies_of_the_sound(word, expected):
    assert cut(FIL, word) == expected


def test_a_tagalog_root_keeps_its_spelling_s_copy():
    # kain and sulat are no English roots: a copy of another vowel is no copy of theirs
    assert cut(FIL, "kinakain") == ("k|in|a|kain", "kain")
    assert cut(FIL, "kinekain")[1] != "kain"
    assert cut(FIL, "sinosulat")[1] != "sulat"


def test_sounded_roots_are_the_lexicon_s_english_roots():
    english = {"like": 6.0, "share": 5.2, "bahay": 3.1, "sana": 3.5, "tweet": 4.2}
    zipf = {"like": 4.8, "share": 4.7, "bahay": 5.5, "sana": 5.9}
    lexicon = frozenset({"like", "share", "bahay", "sana", "kain"})
    # bahay, sana: Filipino's own (far more frequent there); tweet: not in the lexicon
    assert sounded_roots(english, zipf, lexicon) == {"like", "share"}


def test_a_copy_of_the_sound_lets_filipino_use_the_root_more():
    # rowing as a Taglish sport: 0.6 more often in Filipino than in English here, past the bare prefix's margin (0.5)
    english, zipf = {"rowing": 3.4}, {"rowing": 4.0}
    copied = unhyphenated_reading("nagrorowing", english, zipf)
    assert copied is not None and copied.root == "rowing" and copied.reduplicant == "ro"
    assert unhyphenated_reading("nagrowing", english, zipf) is None  # no copy: the bare prefix's margin
    # past the copy's margin (1.0)
    assert unhyphenated_reading("nagrorowing", english, {"rowing": 4.5}) is None
