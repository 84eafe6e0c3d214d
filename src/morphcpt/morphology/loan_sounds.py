"""How Filipino copies the first syllable of a borrowed English word: the copy follows the sound, not the spelling.

A CV copy repeats the root's first consonant (or its whole onset cluster) and the vowel it hears there: nag|se|save,
nag|ba|bike, nag|ko|code, k|in|i|click, and the vowel of a pair of letters as it sounds (nag|mi|meeting,
nag|bu|book, nag|te|train, nag|ko|call, nag|lo|launch, nag|ba|budget). `loans.unhyphenated_reading` and the
English-root search of `stems.StemReadings` ask `sound_copy` whether a syllable may be such a copy. Only English
roots are read this way: a Tagalog root's copy is its spelling's (`stems`).
"""

from __future__ import annotations

CONSONANTS = "bcdfghjklmnpqrstvwxyz"
# the vowel a and i sound before a consonant and a silent e, or the -ing that took its place: save, bike, hiking
_SOUNDED = {"a": "e", "i": "a"}
_SILENT_E_CONSONANTS = frozenset("bcdfgklmnprstvz")
# the vowel a pair of letters sounds, as a copy writes it: meeting, reach, book, train, play, launch, draw, build
_PAIR_SOUNDS = {"ee": "i", "ea": "i", "oo": "u", "ai": "e", "ay": "e", "au": "o", "aw": "o", "ui": "i"}


def leading_consonants(root: str) -> int:
    """How many letters of `CONSONANTS` start `root` (y among them)."""
    return len(root) - len(root.lstrip(CONSONANTS))


def sound_copy(copy: str, root: str) -> bool:
    """Whether `copy` is a CV copy of the English `root`'s first sounds: the vowel heard after all its first
    consonants or after the first of them (bre or be before breakfast), or that vowel alone (a before apply). The
    vowel is the letter's own or the one it sounds (`heard_vowels`); a c that sounds k may be copied as k
    (nag|ko|code, k|in|i|click), and y after a consonant is the vowel (nag|ta|type, pag|si|sync)."""
    onset = leading_consonants(root)
    if root[1:2] == "y" and onset >= 2 and copy in (root[0] + "a", root[0] + "i"):
        return True
    if onset == len(root) or root[onset] not in "aeiou":
        return False
    vowels = heard_vowels(root, onset)
    if not onset:
        return copy in vowels
    firsts = {root[0], "k"} if root[0] == "c" and root[1] not in "eihy" else {root[0]}
    return any(copy in (root[:onset] + v, first + v) for v in vowels for first in firsts)


def heard_vowels(root: str, at: int) -> set[str]:
    """The vowels a copy may write for the vowel letter at `root[at]`: the letter itself; e or a for a or i before
    one consonant and a silent e or the -ing that replaced it (save, bike, hiking); the sound of a pair of letters
    (`_PAIR_SOUNDS`: meeting's i); o for a before ll or lk (call, talk); a for u in a closed syllable (budget,
    lunch, update)."""
    v, after = root[at], root[at + 1 : at + 3]
    vowels = {v}
    if v in _SOUNDED and after[:1] in _SILENT_E_CONSONANTS and _silent_e(root, at + 2):
        vowels.add(_SOUNDED[v])
    if (pair := root[at : at + 2]) in _PAIR_SOUNDS:
        vowels.add(_PAIR_SOUNDS[pair])
    if v == "a" and after in ("ll", "lk"):
        vowels.add("o")
    if v == "u" and after and all(c in CONSONANTS for c in after):  # a final consonant or two before the next
        vowels.add("a")
    return vowels


def _silent_e(root: str, at: int) -> bool:
    """Whether `root` has a silent e at `at`: the last letter, or before a final r, s or d (gamer, saves, saved), or
    the e that -ing took away (hiking, saving: the vowel before it sounds as in hike, save)."""
    if root[at:] == "ing":
        return True
    return root[at : at + 1] == "e" and (at == len(root) - 1 or (at == len(root) - 2 and root[-1] in "rsd"))
