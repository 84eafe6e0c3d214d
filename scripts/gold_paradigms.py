"""Tagalog paradigms written from grammar rules, for the held-out gold sets (`scripts/build_gold_heldout.py`).

Build-time only, and written without the analyser (`morphcpt.morphology`): nothing here imports it, so the gold
segmentations it writes are not the analyser's readings played back. A template turns a root into candidate
forms, each already cut into morphs by the conventions of `data/gold/README.md` (a hyphen stays with the morph
before it; a CV copy is its own morph; the root keeps the spelling it has in the word). Only candidates that the
shipped word lists attest are kept, so the rules may over-generate (both -hin and -in after a vowel, both a
cluster copy and a simplified one) and usage picks the real form.

    forms = paradigm("takip")  # [Form(("takp", "an"), "S", "LF-an:INF", ("syncope",)), ...]
"""

from __future__ import annotations

from typing import NamedTuple

VOWELS = frozenset("aeiou")
CLUSTER_SECOND = frozenset("lrwy")  # pr, bl, tr, kw, sy: the onsets borrowings bring


class Form(NamedTuple):
    morphs: tuple[str, ...]
    types: str  # data/gold's affix types: P I S C R F N L H, "0" for a bare root
    template: str  # e.g. "AF-um:IPFV", "noun:ka-an"
    tags: tuple[str, ...] = ()  # phenomena: syncope, d-r, o-u, cluster-copy, vowel-initial, ni, ...

    @property
    def word(self) -> str:
        return "".join(self.morphs)


def onset(r: str) -> str:
    """The root's first consonant sound ("ng" counts as one); "" before a vowel."""
    if not r or r[0] in VOWELS:
        return ""
    return "ng" if r.startswith("ng") else r[0]


def copies(r: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(copy, base, tags) for CV reduplication of `r`: the first consonant(s) and vowel copied; a d-initial base
    may turn d to r after the copy (da|rating); a cluster is copied whole (pri|prito) or as its first consonant
    (pi|prito)."""
    if not r:
        return []
    if r[0] in VOWELS:
        return [(r[0], r, ("vowel-initial",))]
    c = onset(r)
    rest = r[len(c) :]
    if rest[:1] in VOWELS:
        out = [(c + rest[0], r, ())]
        if r[0] == "d":
            out.append((c + rest[0], "r" + r[1:], ("d-r",)))
        return out
    if rest[:1] in CLUSTER_SECOND and rest[1:2] in VOWELS:
        return [(r[:3], r, ("cluster-copy",)), (r[0] + rest[1], r, ("cluster-copy",))]
    return []


def infixed(base: str, copy: str, infix: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """Morphs of `infix` placed in copy+base (copy may be ""): after the first consonant, before a vowel-initial
    word, and -in- as ni- before l, r and y (ni|linis, ni|renta). The tags say which placement it was."""
    word = copy + base
    if not word:
        return None
    if word[0] in VOWELS:
        return ((infix, copy, base) if copy else (infix, base)), ("vowel-initial",)
    if infix == "in" and word[0] in "lry":
        return (("ni", copy, base) if copy else ("ni", base)), ("ni",)
    c = onset(word)
    if copy:
        if len(copy) <= len(c):
            return None
        return (c, infix, copy[len(c) :], base), ()
    return (c, infix, base[len(c) :]), ()


def suffixed(r: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(stem, suffix, tags) of `r` before -in/-an: o -> u in the last syllable, final d -> r after a vowel,
    syncope of the last vowel between two consonants (takip -> takp|an, dating -> datn|an); after a vowel both
    -hin/-han and -in/-an (a final glottal stop takes the plain forms)."""
    out: list[tuple[str, str, tuple[str, ...]]] = []
    raised, tags = r, ()
    last = max(r.rfind(v) for v in VOWELS)
    if last >= 0 and r[last] == "o":
        raised, tags = r[:last] + "u" + r[last + 1 :], ("o-u",)
    if r[-1] in VOWELS:
        for sfx in ("hin", "han", "in", "an"):
            out.append((raised, sfx, tags))
        return out
    stems = [(raised, tags)]
    if r.endswith("d") and len(r) > 2 and r[-2] in VOWELS:
        stems.append((raised[:-1] + "r", (*tags, "d-r")))
    # syncope: C V C V C -> C V C C (the last vowel lost between two consonants)
    tail = 2 if r.endswith("ng") else 1
    v = len(r) - tail - 1
    if v >= 2 and r[v] in VOWELS and r[v - 1] not in VOWELS and r[v - 2] in VOWELS:
        lost = r[:v] + r[v + 1 :]
        stems.append((lost, ("syncope",)))
        if tail == 2:  # dating -> datnan: the velar nasal turns n after the lost vowel
            stems.append((r[:v] + "n", ("syncope",)))
    for stem, t in stems:
        for sfx in ("in", "an"):
            out.append((stem, sfx, t))
    return out


def nasal(prefix: str, r: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Morph heads of a nasal prefix (mang-, nang-, pang-) on `r`: the nasal agrees with the root's first sound
    (pam|bansa, pan|labas, mang|yari, mang-|akusa before a vowel), or replaces it, the root starting after the
    nasal (mam|ili <- bili, pan|ulat <- sulat, mang|ailangan <- kailangan). Returns (morphs, tags)."""
    stem = prefix[:-2]
    first = r[0]
    if first in VOWELS:  # mang-|akusa, mang|ako; the copy then repeats ng + vowel (na|nga|ngako)
        return [((prefix + "-", r), ("vowel-initial",)), ((prefix, r), ("vowel-initial", "substitution"))]
    nasal_of = "m" if first in "bp" else "n" if first in "tdsl" else "ng"
    out = [((stem + nasal_of, r), ())]
    swallowed = {"b": "m", "p": "m", "t": "n", "s": "n", "d": "n", "k": "ng"}.get(first)
    if swallowed and r[1:2] in VOWELS:
        out.append(((stem + swallowed, r[1:]), ("substitution",)))
    return out


def paradigm(r: str) -> list[Form]:
    """Every candidate form the templates make of the root `r` (letters only, two syllables or more)."""
    out: list[Form] = []

    def add(morphs, types, template, tags=()):
        morphs = tuple(m for m in morphs if m)
        out.append(Form(morphs, types, template, tuple(tags)))

    vowel_initial = r[0] in VOWELS
    # actor focus -um-
    if (m := infixed(r, "", "um")) and m[0][0] != "ni":
        add(m[0], "I", "AF-um:PFV", m[1])
    for copy, base, ct in copies(r):
        if (m := infixed(base, copy, "um")) and m[0][0] != "ni":
            add(m[0], "IR", "AF-um:IPFV", (*ct, *m[1]))
        add((copy, base), "R", "AF:CTPL", ct)
    # actor focus mag- (a hyphen before a vowel-initial root; usage decides whether it is written)
    heads = (("mag-", "nag-"), ("mag", "nag")) if vowel_initial else (("mag", "nag"),)
    for mag, nag in heads:
        types = "PH" if mag.endswith("-") else "P"
        vt = ("vowel-initial",) if vowel_initial else ()
        add((mag, r), types, "AF-mag:INF", vt)
        add((nag, r), types, "AF-mag:PFV", vt)
        for copy, base, ct in copies(r):
            add((nag, copy, base), types + "R", "AF-mag:IPFV", ct)
            add((mag, copy, base), types + "R", "AF-mag:CTPL", ct)
    # patient focus -in, locative focus -an
    for stem, sfx, st in suffixed(r):
        focus = "PF-in" if sfx.endswith("in") else "LF-an"
        add((stem, sfx), "S", f"{focus}:INF", st)
        if (m := infixed(stem, "", "in")) and focus == "LF-an":
            add((*m[0], sfx), "IS", "LF-an:PFV", (*st, *m[1]))
        for copy, _base, ct in copies(r):
            # the copy is of the root's first syllable; the base keeps the suffixed spelling (d -> r after it)
            cbase = "r" + stem[1:] if "d-r" in ct else stem
            add((copy, cbase, sfx), "RS", f"{focus}:CTPL", (*st, *ct))
            if focus == "LF-an" and (m := infixed(cbase, copy, "in")):
                add((*m[0], sfx), "IRS", "LF-an:IPFV", (*st, *ct, *m[1]))
    if m := infixed(r, "", "in"):
        add(m[0], "I", "PF-in:PFV", m[1])
    for copy, base, ct in copies(r):
        if "d-r" in ct:
            continue
        if m := infixed(base, copy, "in"):
            add(m[0], "IR", "PF-in:IPFV", (*ct, *m[1]))
    # conveyance focus i-
    add(("i", r), "P", "CF-i:INF")
    if (m := infixed(r, "", "in")) and not vowel_initial:
        add(("i", *m[0]), "PI", "CF-i:PFV", m[1])
    for copy, base, ct in copies(r):
        if "d-r" in ct or vowel_initial:
            continue
        add(("i", copy, base), "PR", "CF-i:CTPL", ct)
        if m := infixed(base, copy, "in"):
            add(("i", *m[0]), "PIR", "CF-i:IPFV", (*ct, *m[1]))
    # potential / stative ma-, abilitative maka-, social maki-, makipag-, causative magpa-, magka-
    add(("ma", r), "P", "ma:INF")
    add(("na", r), "P", "ma:PFV")
    for copy, base, ct in copies(r):
        add(("na", copy, base), "PR", "ma:IPFV", ct)
        add(("ma", copy, base), "PR", "ma:CTPL", ct)
    add(("naka", r), "P", "maka:PFV")
    add(("maka", r), "P", "maka:INF")
    add(("naka", "ka", r), "PR", "maka:IPFV")
    add(("maka", "ka", r), "PR", "maka:CTPL")
    add(("naki", r), "P", "maki:PFV")
    add(("naki", "ki", r), "PR", "maki:IPFV", ("stacked",))
    add(("maki", "ki", r), "PR", "maki:CTPL", ("stacked",))
    pag = ("pag-",) if vowel_initial else ("pag",)
    add(("naki", *pag, r), "PH" if vowel_initial else "P", "makipag:PFV", ("stacked",))
    add(("maki", *pag, r), "PH" if vowel_initial else "P", "makipag:INF", ("stacked",))
    add(("naki", "ki", *pag, r), "PR", "makipag:IPFV", ("stacked",))
    add(("maki", "ki", *pag, r), "PR", "makipag:CTPL", ("stacked",))
    add(("nagpa", r), "P", "magpa:PFV")
    add(("magpa", r), "P", "magpa:INF")
    add(("nagpa", "pa", r), "PR", "magpa:IPFV")
    add(("magpa", "pa", r), "PR", "magpa:CTPL")
    add(("nagka", r), "P", "magka:PFV")
    add(("magka", r), "P", "magka:INF")
    # nasal prefixes, with and without CV reduplication
    for prefix, template in (("mang", "mang:INF"), ("nang", "mang:PFV"), ("pang", "noun:pang")):
        for (head, base), nt in nasal(prefix, r):
            add((head, base), "PH" if head.endswith("-") else "N", template, nt)
            if prefix == "pang":
                continue
            aspect = "mang:IPFV" if prefix == "nang" else "mang:CTPL"
            if (
                "substitution" in nt
            ):  # ma|mi|mili <- bili: the copy repeats the nasal that replaced the consonant
                whole = head[len(prefix) - 2 :]
                grown = whole + base
                for copy, gbase, ct in copies(grown):
                    if not ct:
                        add((head[: -len(whole)], copy, gbase), "NR", aspect, (*nt, *ct))
            else:
                for copy, cbase, ct in copies(base):
                    add((head, copy, cbase), "NR" if not head.endswith("-") else "PHR", aspect, (*nt, *ct))
    # nominalisations and other nouns
    add((*pag, r), "PH" if vowel_initial else "P", "noun:pag")
    add(("pagka", r), "P", "noun:pagka")
    add(("taga", r), "P", "noun:taga")
    for stem, sfx, st in suffixed(r):
        if sfx.endswith("an"):
            add(("ka", stem, sfx), "C", "noun:ka-an", st)
            add(("pa", stem, sfx), "C", "noun:pa-an", st)
    # adjectives
    add(("pinaka", "ma", r), "P", "adj:pinaka")
    add(("napaka", r), "P", "adj:napaka")
    # linker and full reduplication
    if r[-1] in VOWELS:  # (the builder never counts these as evidence that r is a root: sulo|ng vs sulong)
        add((r, "ng"), "L", "linker")
        add(("ma", r, "ng"), "PL", "linker")
    elif r.endswith(
        "n"
    ):  # (both cuts are made: maalon|g of alon must meet ma|alo|ng of alo, see the builder)
        add((r, "g"), "L", "linker")
        add(("ma", r, "g"), "PL", "linker")
    add((r + "-", r), "F", "full-redup")
    return out
