"""Tagalog affix inventory and the phonology tables the analyser and the affix application share.

Prefixes, infixes, suffixes and circumfixes as they surface; the nasal prefix families (mang-/man-/mam-) with
the root consonants they may swallow; roots that change before a suffix (syncope); small phonological helpers.
`filipino.FilipinoPack` reads words with these tables, `affixation.apply_affix` writes them.
"""

from __future__ import annotations

from morphcpt.morphology.syllabify import VOWELS, fold_letters

# Surface prefixes. Compound prefixes that behave as one unit (pinag-, ipinag-, napaka-) are listed whole, some to be
# cut into their parts (`PREFIX_PARTS`); the analyser may still stack up to three of these (pinaka- + ma- + ganda).
PREFIXES: tuple[str, ...] = (
    "i", "ika", "ikina", "ipa", "ipag", "ipang", "ipan", "ipam", "ipina", "ipinag", "ipinang", "ipinan", "ipinam",
    "isa", "isina", "isasa", "isinasa", "pagsasa", "magsa", "nagsa", "magsasa", "nagsasa",
    "ka", "kasing", "kasin", "kasim", "kanda", "nagkakanda", "magkakanda",
    "ma", "mag", "magka", "magpa", "magsi", "magsipag", "maka", "makapag", "maki", "makipag",
    "mang", "man", "mam", "mapa", "mapag",
    "na", "nag", "nagka", "nagpa", "nagsi", "nagsipag", "naka", "nakapag", "naki", "nakipag",
    "nang", "nan", "nam", "napa", "napag", "napaka",
    "pa", "pag", "pagka", "pagpa", "paka", "paki", "pakiki", "pakikipag",
    "pang", "pan", "pam", "pina", "pinag", "pinaka", "pinang", "pinan", "pinam",
    "sing", "sin", "sim", "tag", "taga", "tig", "pala", "mala",
    "nakaka", "makaka", "nakiki", "makiki", "nakikipag", "makikipag", "nagsisi", "magsisi", "nagsisipag", "magsisipag",
)  # fmt: skip
# ma-, ka- and pa- with the infix -in- inside them: m|in|a|buti (ma- + buti, perfective), k|in|a|takut|an
# (ka-...-an + takot), p|in|a|kain (causative pa- + kain). Cut around the infix; kina- stands only before -an.
# mina- and kina- are not in PREFIXES: mina (mine) and kina are words, and a gold set's morph "mina" is a root.
INFIXED_PREFIXES: dict[str, str] = {"mina": "ma", "kina": "ka", "pina": "pa"}
# Stacked prefixes read as one unit but cut into their parts: the CV copy of the ka-/ki- prefix (nakakatawa =
# naka|ka|tawa, nakikisama = naki|ki|sama), and maki- + pag- and maka- + pag-, which data/gold's rules do not list
# as one unit (nakipaglaro = naki|pag|laro, nakikipag-usap = naki|ki|pag-|usap, data/gold's maka|pag-|import).
PREFIX_PARTS: dict[str, tuple[tuple[str, str], ...]] = {
    "nakaka": (("naka", "prefix"), ("ka", "reduplicant")),
    "makaka": (("maka", "prefix"), ("ka", "reduplicant")),
    "nakiki": (("naki", "prefix"), ("ki", "reduplicant")),
    "makiki": (("maki", "prefix"), ("ki", "reduplicant")),
    "nakipag": (("naki", "prefix"), ("pag", "prefix")),
    "makipag": (("maki", "prefix"), ("pag", "prefix")),
    "nakikipag": (("naki", "prefix"), ("ki", "reduplicant"), ("pag", "prefix")),
    "makikipag": (("maki", "prefix"), ("ki", "reduplicant"), ("pag", "prefix")),
    "nakapag": (("naka", "prefix"), ("pag", "prefix")),
    "makapag": (("maka", "prefix"), ("pag", "prefix")),
    # kanda- (in a fluster: kanda|hulog, nag|kanda|hulog) after mag-/nag- with the ka copied: nag|ka|kanda|hulog
    "nagkakanda": (("nag", "prefix"), ("ka", "reduplicant"), ("kanda", "prefix")),
    "magkakanda": (("mag", "prefix"), ("ka", "reduplicant"), ("kanda", "prefix")),
    "nagsisi": (("nagsi", "prefix"), ("si", "reduplicant")),
    "magsisi": (("magsi", "prefix"), ("si", "reduplicant")),
    "nagsisipag": (("nagsi", "prefix"), ("si", "reduplicant"), ("pag", "prefix")),
    "magsisipag": (("magsi", "prefix"), ("si", "reduplicant"), ("pag", "prefix")),
    # isa- (isa|gawa, isina|gawa, and with mag-/nag- magsa|gawa, nagsa|gawa) repeats its sa as magpa- repeats its pa:
    # isa|sa|gawa, isina|sa|gawa, pagsa|sa|gawa, magsa|sa|gawa
    "isasa": (("isa", "prefix"), ("sa", "reduplicant")),
    "isinasa": (("isina", "prefix"), ("sa", "reduplicant")),
    "pagsasa": (("pagsa", "prefix"), ("sa", "reduplicant")),
    "magsasa": (("magsa", "prefix"), ("sa", "reduplicant")),
    "nagsasa": (("nagsa", "prefix"), ("sa", "reduplicant")),
}


def prefix_parts(prefix: str) -> tuple[tuple[str, str], ...]:
    """(text, kind) of the morphs `prefix` is cut into: its `PREFIX_PARTS`, or the prefix whole."""
    return PREFIX_PARTS.get(prefix, ((prefix, "prefix"),))


# The perfective n- prefixes (na-, nag-, nang-, naka-, naki-, napa-, ...) come first in a word: after another prefix
# only after di- (not), pinaka- (the most) and pag-/pagka- (when, the state of), which stand before a whole verb form
# (di-|na|kita, pinaka|na|apektu|han, pag|na|tapos, pagka|na|ri|rito). pa|na|tili, ka|na|gawa, i|na|probahan and
# i|na-|update are no such stacks (`realis_stacked`).
REALIS_PREFIXES = frozenset(p for p in PREFIXES if p.startswith("n"))
BEFORE_REALIS = frozenset({"di", "pinaka", "pag", "pagka"})


def realis_stacked(prefixes: tuple[str, ...] | list[str]) -> bool:
    """Whether `prefixes` (labels, outermost first) put a perfective n- prefix after one that never comes before
    one (`REALIS_PREFIXES`, `BEFORE_REALIS`): no Tagalog word has such a stack."""
    return any(
        p in REALIS_PREFIXES and q not in BEFORE_REALIS for q, p in zip(prefixes, prefixes[1:], strict=False)
    )


# isa- and its forms make verbs of Tagalog nouns and roots (isa|gawa, isina|puso, pagsa|sa|buhay): no loan reading
# takes them (`loans`), and the analyser ranks them after an i- reading of a root that starts with sa (isinauli is
# i|s|in|auli: sauli), on roots of common frequency only (`filipino.FilipinoPack._best_reading`).
ISA_PREFIXES = frozenset(
    {"isa", "isina", "isasa", "isinasa", "pagsasa", "magsa", "nagsa", "magsasa", "nagsasa"}
)
# the labels a reading with one of them carries (isa, isina, pagsa, magsa, nagsa)
ISA_LABELS = frozenset(t for p in ISA_PREFIXES for t, k in prefix_parts(p) if k == "prefix")
INFIXES: tuple[str, ...] = ("um", "in")
# -han/-hin after vowel-final roots, -nan/-nin in a few (tawanan), plain -an/-in elsewhere (and after a glottal stop).
# -ado (Spanish past participle) replaces the root's final vowel: sigurado <- siguro, imbitado <- imbita.
SUFFIXES: tuple[str, ...] = ("an", "han", "nan", "in", "hin", "nin", "ado")
CIRCUMFIXES: tuple[tuple[str, str], ...] = (
    ("ka", "an"), ("ka", "han"), ("pag", "an"), ("pag", "han"), ("pang", "an"), ("pam", "an"), ("pan", "an"),
    ("pa", "an"), ("pa", "han"), ("pa", "in"), ("pa", "hin"), ("ma", "an"), ("ma", "han"),
    ("pinag", "an"), ("pinag", "han"), ("ipag", "an"), ("magka", "an"),
)  # fmt: skip
# Prefixes too common at the start of a word to mark one alone as affixed (patibong is no pa|tibong, kamuning no
# ka|muning); with -um-/-in- or a CV copy they do (`filipino.FilipinoPack._headword_reading`, `rootlexicon`)
WEAK_PREFIXES = frozenset({"i", "ka", "pa", "ma", "na"})
LINKER = "ng"  # after a vowel (magandang); after n only -g is added (noon -> noong, atin -> ating)
LINKER_AFTER_N = "g"
# Prefixes ending in the syllable a CV reduplicant would copy: when the root starts with that syllable, the
# reading with a shorter affix plus the copy wins where it exists (nakikita = na|ki|kita, nagsisimula =
# nag|si|simula, nakakawili = naka|ka|wili, nagkakamay = nag|ka|kamay), and so for the
# prefixes whose last syllable may be a pa-/ka-initial root's copy after -in- or i- (pina|pansin is p|in|a|pansin,
# ipa|plantsa is i|pa|plantsa, ikina|kabit is i|k|in|a|kabit). Prefix -> the syllable it ends in, as a copy would
# spell it (-in- left out).
COPY_LIKE_PREFIXES: dict[str, str] = {
    **{p: p[-2:] for p in ("naki", "maki", "paki", "mala", "pala", "magsi", "nagsi", "naka", "maka", "nagka", "magka")},
    **{p: p[-2:] for p in ("ipa", "ika", "napa", "mapa")},
    "pina": "pa", "ipina": "pa", "ikina": "ka", "mina": "ma", "kina": "ka",
}  # fmt: skip

# Nasal-final prefix families. The allomorph agrees with the root's first sound; mang-/nang-/pang- (and the
# i-/pin- forms) may also swallow that sound, which the analyser restores.
NASAL_FAMILIES = {
    "mang": ("mang", "man", "mam"),
    "nang": ("nang", "nan", "nam"),
    "pang": ("pang", "pan", "pam"),
    "ipang": ("ipang", "ipan", "ipam"),
    "pinang": ("pinang", "pinan", "pinam"),
    "ipinang": ("ipinang", "ipinan", "ipinam"),
    "sing": ("sing", "sin", "sim"),
    "kasing": ("kasing", "kasin", "kasim"),
}
NASAL_OF = {allo: fam for fam, allos in NASAL_FAMILIES.items() for allo in allos}
DELETING = frozenset(
    a for f in ("mang", "nang", "pang", "ipang", "pinang", "ipinang") for a in NASAL_FAMILIES[f]
)
DELETED_BY_ENDING = {"ng": ("k",), "n": ("t", "s"), "m": ("b", "p")}
# mang-/nang-/pang- ... without their nasal: with CV reduplication the nasal-initial base is copied
# (na|mi|mili <- bili, pa|nga|ngailangan <- kailangan, na|ni|niwala <- tiwala).
NASAL_BARE = {fam[: -len("ng")]: fam for fam in ("mang", "nang", "pang", "ipang", "pinang")}
# root consonant a nasal stands for once substituted: m <- b/p, n <- t/s/d, ng <- k (ngailangan <- kailangan)
SUBSTITUTED = {"m": ("b", "p"), "n": ("t", "s", "d"), "ng": ("k",)}
LABIAL = frozenset("bp")
CORONAL = frozenset("dlrst")

# Irregular roots that lose their last vowel (or change) before -in/-an; the surface stem maps to the dictionary
# root. The regular syncope of a consonant-final root (takp|an <- takip) is undone by rule (`stems._lemma`), and so
# is a vowel-final root's before -han/-hin (sab|hin <- sabi: `evidence._lost_final_vowel`); dal and bil stay here for
# their -an/-in forms (dal|in, pag|bil|an). tign is tingn as it is often written (tignan).
SYNCOPE: dict[str, str] = {
    "gaw": "gawa", "dal": "dala", "bil": "bili", "sund": "sunod", "kun": "kuha", "tamn": "tanim",
    "saky": "sakay", "hing": "hingi", "tingn": "tingin", "tign": "tingin", "dingg": "dinig", "kingg": "dinig",
    "wal": "wala", "simul": "simula", "mul": "mula",
}  # fmt: skip


def fold(word: str) -> str:
    """Lowercase, diacritics removed, one character per input character (offsets stay valid)."""
    return fold_letters(word)


def is_vowel(ch: str) -> bool:
    return ch in VOWELS


def onset_len(s: str) -> int:
    """Length of the first consonant sound of `s` ("ng" counts as one); 0 if `s` starts with a vowel."""
    if not s or is_vowel(s[0]):
        return 0
    return 2 if s.startswith("ng") else 1


def an_ending(word: str) -> str:
    """The -an that ends `word`: -han after a vowel (basa|han), else -an (kain|an), or "" where it ends in neither."""
    if word.endswith("han") and is_vowel(word[-4:-3]):
        return "han"
    return "an" if word.endswith("an") else ""
