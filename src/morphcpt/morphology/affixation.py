"""Affix application: inflect a Tagalog root with prefixes, an infix, a suffix and CV reduplication.

The benchmark generators use it to build inflected forms; it runs the analyser's phonology forwards (nasal
assimilation, h-insertion, o -> u raising, -in- as ni- before l/y, a hyphen before vowel-initial stems).

    apply_affix("laro", "nag- CV")   # -> "naglalaro"
"""

from __future__ import annotations

from dataclasses import dataclass

from morphcpt.morphology.affixes import CORONAL, INFIXES, LABIAL, NASAL_OF, is_vowel, onset_len
from morphcpt.morphology.syllabify import first_syllable_cv


@dataclass(frozen=True)
class AffixSpec:
    """What to attach to a root. Prefixes apply outermost-last: ("pinaka", "ma") gives pinakamaganda."""

    prefixes: tuple[str, ...] = ()
    infix: str = ""
    suffix: str = ""
    reduplicate: bool = False

    @classmethod
    def parse(cls, spec: str) -> AffixSpec:
        """Parse "mag-", "-um-", "-in", "ka-…-an" / "ka- -an", "nag- CV", "-um- CV" (CV = reduplication)."""
        prefixes: list[str] = []
        infix = suffix = ""
        redup = False
        for token in spec.replace("…", " ").replace("...", " ").split():
            if token.upper() == "CV":
                redup = True
            elif token.startswith("-") and token.endswith("-") and len(token) > 2:
                infix = token.strip("-")
            elif token.endswith("-"):
                prefixes.append(token[:-1])
            elif token.startswith("-"):
                suffix = token[1:]
            else:
                raise ValueError(f"bad affix token {token!r} in {spec!r}")
        if infix and infix not in INFIXES:
            raise ValueError(f"unknown infix {infix!r}")
        return cls(tuple(prefixes), infix, suffix, redup)

    def __str__(self) -> str:
        """The spec in the notation `parse` reads: "nag- CV", "-in- -an"."""
        parts = [p + "-" for p in self.prefixes] + ["CV"] * self.reduplicate
        parts += [f"-{self.infix}-"] * bool(self.infix) + [f"-{self.suffix}"] * bool(self.suffix)
        return " ".join(parts)


def reduplicate(stem: str) -> str:
    """CV reduplication: laro -> lalaro, alis -> aalis, trabaho -> tatrabaho."""
    return first_syllable_cv(stem) + stem


def raise_final_o(root: str) -> str:
    """o -> u in the root's last syllable before a suffix: inom -> inum(in), tapos -> tapus(in)."""
    i = root.rfind("o")
    if i >= 0 and not any(is_vowel(c) for c in root[i + 1 :]):
        return root[:i] + "u" + root[i + 1 :]
    return root


def lower_final_u(stem: str) -> str:
    """u -> o in the last syllable, `raise_final_o` undone: inum -> inom, tilapuk -> tilapok (the spelling a root
    has without the suffix); `stem` itself where its last vowel is no u."""
    i = stem.rfind("u")
    if i >= 0 and not any(is_vowel(c) for c in stem[i + 1 :]):
        return stem[:i] + "o" + stem[i + 1 :]
    return stem


def add_suffix(root: str, suffix: str, glottal: bool = False) -> str:
    """-an/-in with h-insertion after a vowel (basa -> basahin) unless the root ends in a glottal stop."""
    stem = raise_final_o(root)
    if suffix in ("an", "in") and is_vowel(stem[-1].lower()) and not glottal:
        suffix = "h" + suffix
    return stem + suffix


def add_infix(stem: str, infix: str) -> str:
    """-um-/-in- after the first consonant (s|um|ulat), before a vowel-initial stem (um|alis); -in- before l/y
    surfaces as ni- (niluto)."""
    if is_vowel(stem[0].lower()):
        return infix + stem
    if infix == "in" and stem[0].lower() in "ly":
        return "ni" + stem
    c = onset_len(stem.lower())
    return stem[:c] + infix + stem[c:]


def add_prefix(stem: str, prefix: str) -> str:
    """Prefix with the nasal allomorph that agrees with the stem (pang- + bansa -> pambansa) and a hyphen
    between a consonant-final, non-nasal prefix and a vowel-initial stem (mag-aral, but mangisda)."""
    family = NASAL_OF.get(prefix)
    initial = stem[0].lower()
    if family:
        base = family[: -len("ng")]
        prefix = base + ("m" if initial in LABIAL else "n" if initial in CORONAL else "ng")
    if not family and not is_vowel(prefix[-1]) and is_vowel(initial):
        return prefix + "-" + stem
    return prefix + stem


def apply_affix(root: str, spec: str | AffixSpec, glottal: bool = False) -> str:
    """Inflect `root`: reduplicate, then infix, then suffix, then prefixes (innermost first)."""
    s = AffixSpec.parse(spec) if isinstance(spec, str) else spec
    stem = reduplicate(root) if s.reduplicate else root
    if s.infix:
        stem = add_infix(stem, s.infix)
    if s.suffix:
        stem = add_suffix(stem, s.suffix, glottal)
    for p in reversed(s.prefixes):
        stem = add_prefix(stem, p)
    return stem
