"""The Tagalog root lexicon the analyser (`filipino.FilipinoPack`) checks its readings against.

Three tiers, from the word lists `lexicon.py` reads:
- the curated roots (`morphology/data/tl_roots.txt`) and any `*root*` file of `data/lexicon/`, trusted most;
- the dictionary headwords (tglstemmer's `tgl_words.txt`, Wiktionary's `tl_wiktionary_headwords.txt`) that have no
  affixed reading even when every headword may serve as a root ("bansa", "saka"; "kumain" is k|um|ain), and those
  whose only affixed reading is ka- on a root but which the lists show with -um-/-in- (`_ka_root`: kalinga, with
  kumalinga);
- words of the frequency and form lists that no dictionary lists as roots but that the lists show inflecting
  (bulong: bumubulong, ibinulong, pagbulong), and the stems of the dictionaries' verbs in -hin that no list holds
  (aregla: areglahin, `_hin_verb_stem`), ranked below the others (`_paradigm_roots`).

Sorting the lists needs the analyser's reading search, which the caller passes in (`make_pack`: roots, word
frequencies and known words -> a pack), so this module imports nothing of `filipino.py`. The result is built once
(a few seconds with the shipped lists) and cached in `data/cache/morphology/`, keyed by the inputs and the
analyser's source.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from morphcpt.morphology.affixation import lower_final_u
from morphcpt.morphology.affixes import LINKER, PREFIXES, SUBSTITUTED
from morphcpt.morphology.lexicon import (
    FREQUENCY_FILE,
    HEADWORD_FILES,
    curated_roots,
    list_words,
    read_words,
    word_frequencies,
)
from morphcpt.morphology.reading import SYNCOPATED
from morphcpt.morphology.root_evidence import infixed_forms
from morphcpt.morphology.stems import _MAX_WORD, CLUSTER_SECOND, COMMON_ZIPF, _syllable_ok
from morphcpt.morphology.syllabify import vowel_groups

# roots, word frequencies, every listed word -> a pack over exactly those roots (`filipino._lexicon_pack`)
MakePack = Callable[[Any, dict[str, float], frozenset[str]], Any]
# A word the lists show inflecting is a root (`_paradigm_roots`): this many affixed forms, with this many affix sets.
PARADIGM_WORDS, PARADIGM_AFFIXES = 3, 2
_PARADIGM_MARK = "# roots the lists show inflecting\n"  # in the cache file, before `_paradigm_roots`' words


def load_root_tiers(
    lexicon_dir: Path | None, cache_dir: Path | None, make_pack: MakePack
) -> tuple[frozenset[str], frozenset[str]]:
    """(every root, the roots only the lists' inflected forms show): the curated roots and `*root*` files, the
    underived headwords of `lexicon_dir`, and the words the lists show inflecting (see the module docstring).

    The derived part is cached in `cache_dir` under a hash of every input, including the analyser's own source, so
    a change to the rules or the lists recomputes it, and the file written then replaces those of earlier inputs;
    an unwritable cache is skipped.
    """
    roots = set(curated_roots(lexicon_dir))
    if lexicon_dir is None or not Path(lexicon_dir).is_dir():
        return frozenset(roots), frozenset()
    lexicon_dir = Path(lexicon_dir)
    headword_files = [lexicon_dir / n for n in HEADWORD_FILES if (lexicon_dir / n).is_file()]
    if not headword_files:
        return frozenset(roots), frozenset()
    lists = list_words(lexicon_dir)
    digest = hashlib.sha256("\n".join(sorted(roots)).encode())
    for path in [
        *(lexicon_dir / name for name in lists),
        *(
            Path(__file__).with_name(n)
            for n in (
                "filipino.py",
                "fallback.py",
                "full_copy.py",
                "plural.py",
                "rootlexicon.py",
                "stems.py",
                "root_evidence.py",
                "affixation.py",
                "affixes.py",
                "syllabify.py",
                "lexicon.py",
                "loans.py",
                "loan_sounds.py",
                "nasal.py",
                "ranking.py",
                "reading.py",
            )
        ),
    ]:
        digest.update(path.name.encode() + path.read_bytes())
    cache = Path(cache_dir) / f"tl_underived_{digest.hexdigest()[:20]}.txt" if cache_dir else None
    if cache is not None and cache.is_file():
        underived, _, induced = cache.read_text(encoding="utf-8").partition(_PARADIGM_MARK)
        return frozenset(roots | set(underived.split()) | set(induced.split())), frozenset(induced.split())
    headwords = {w for path in headword_files for w in read_words(path)}
    zipf = word_frequencies(lexicon_dir / FREQUENCY_FILE)
    known = frozenset().union(*lists.values())
    everything = make_pack(roots | headwords, zipf, known)
    underived = {w for w in headwords - roots if not everything.has_affixed_reading(w)}
    underived |= {w for w in headwords - roots - underived if _ka_root(w, everything, roots, zipf, known)}
    # a dictionary's verb in -hin on a stem of three syllables that no list holds (areglahin, konsumihin, kanselahin:
    # Spanish loans) is that stem's form, not a root; the stem joins the lowest tier, so its other forms read too
    verbs = {w: stem for w in underived if (stem := _hin_verb_stem(w))}
    underived -= set(verbs)
    stems = set(verbs.values())
    attested = frozenset().union(*(words for name, words in lists.items() if name not in HEADWORD_FILES))
    induced = _paradigm_roots(roots | underived | stems, attested, zipf, known, make_pack) | stems
    if induced:
        # a headword that is an affixed form of a root the lists show, and rarer or infixed, is none (salpakan;
        # humagulgol, though written more often than hagulgol)
        wider = make_pack(roots | underived | induced, zipf, known)
        underived = {
            w
            for w in underived
            if not any(
                r.root in induced and (r.infix or zipf.get(r.root, 0.0) >= zipf.get(w, 0.0))
                for r in wider._readings(w)
            )
        }
    if cache is not None:
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
            text = "\n".join(sorted(underived)) + "\n" + _PARADIGM_MARK + "\n".join(sorted(induced)) + "\n"
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, cache)
            for stale in cache.parent.glob("tl_underived_*.txt"):  # other rules or lists: never read again
                if stale != cache:
                    stale.unlink(missing_ok=True)
        except OSError:
            pass  # a read-only data folder: recompute next time
    return frozenset(roots | underived | induced), frozenset(induced)


def _paradigm_roots(
    roots: frozenset[str] | set[str],
    attested: frozenset[str],
    zipf: dict[str, float],
    known: frozenset[str],
    make_pack: MakePack,
) -> set[str]:
    """Words of the frequency and form lists (`attested`) that no dictionary lists as roots but that the lists show
    inflecting: a word of four letters or more with no affixed reading by `roots` becomes a root when at least
    `PARADIGM_WORDS` other attested words read as affixed forms of it, with at least `PARADIGM_AFFIXES`
    different affix sets (bulong: bumubulong, ibinulong, pagbulong; salpak: isinalpak, sinasalpak, salpakan).
    Evidence is a prefix, -um-/-in- or -an/-in (not a linker, nor the rare -nan/-nin), on the word as spelled or
    with a vowel-final alternation undone (no swallowed consonant put back: pang|anak is no evidence for kanak). A
    dictionary headword the lexicon already holds as a root counts as well, by -um-/-in-, a CV copy or a prefix not
    in `affixes.WEAK_PREFIXES` (tglstemmer lists humagulgol: with humahagulgol and napahagulgol it shows hagulgol). A
    word that is the raised spelling of another (batu <- bato), an affixed form of another new root (bulungan) or
    one that starts as no root may (`_onset_ok`: sgkahulugan) is none."""
    base = make_pack(roots, zipf, known)
    plain = set()
    for w in attested:
        if len(w) < 4 or not w.isalpha() or w in roots or w in PREFIXES or not _syllable_ok(w):
            continue
        if not _onset_ok(w):  # sgkahulugan, ggawa, ghapon: pieces of kasingkahulugan, ginagawa, kahapon
            continue
        if _raised(w) in known or _looks_inflected(w, roots):
            continue
        if w.endswith(LINKER) and max(zipf.get(w[:-2], 0.0), zipf.get(w[:-1], 0.0)) >= COMMON_ZIPF:
            continue  # a common word plus the linker (dalawa|ng, ilan|g), however often the lists inflect it
        if not _affixed(base, w):
            plain.add(w)
    wider = make_pack(set(roots) | plain, zipf, known)
    evidence: dict[str, set[tuple[str, tuple]]] = {}
    for w in sorted(attested):
        if not w.isalpha() or len(w) > _MAX_WORD:
            continue
        if w.endswith(LINKER) and (w[:-2] in known or w[:-1] in known):
            continue  # it may be a word plus the linker (pinakaunang): no evidence for unang
        for r in wider._readings(w):
            if (
                r.root in plain
                and r.root != w
                and not r.linker
                and r.restored in (0, SYNCOPATED)
                and r.suffix in ("", "an", "in", "han", "hin")
                and (r.prefixes or r.infix or r.suffix)
                # a headword root counts only by -um-/-in-, a CV copy or a strong prefix (humagulgol for hagulgol;
                # kadena, ka- alone, is no evidence for a dena)
                and (w not in roots or r.strongly_affixed)
            ):
                evidence.setdefault(r.root, set()).add((w, (r.prefixes[:1], r.infix, r.suffix.lstrip("h"))))
    found = {
        root
        for root, seen in evidence.items()
        if len({w for w, _ in seen}) >= PARADIGM_WORDS and len({a for _, a in seen}) >= PARADIGM_AFFIXES
    }
    final = make_pack(set(roots) | found, zipf, known)
    return {w for w in found if not _affixed(final, w)}


def _hin_verb_stem(word: str) -> str:
    """The root of a headword that is a verb in -hin on a stem of three syllables or more (aregla|hin; kumandu|hin
    <- kumando, the last u lowered), or "". Only for a headword with no affixed reading: its stem is no root."""
    stem = word[:-3]
    if not word.endswith("hin") or len(stem) < 5 or stem[-1] not in "aeiou" or not stem.isalpha():
        return ""
    return lower_final_u(stem) if vowel_groups(stem) >= 3 else ""


def _ka_root(word: str, pack: Any, curated: set[str], zipf: dict[str, float], known: frozenset[str]) -> bool:
    """Whether the headword `word`, whose only affixed reading is ka- on a root (kalinga as ka|linga), is a root of
    its own: the lists hold it with -um- or -in- (kumalinga), the root after ka- is no curated one (kasama, kausap
    stay ka- on sama, usap) and `word` is written at least as often as it (kalinga 4.3 Zipf, linga 3.5; kalabog
    and kasabwat, whose labog and sabwat no frequency list holds)."""
    rest = word[2:]
    if not word.startswith("ka") or rest in curated or zipf.get(word, 0.0) < zipf.get(rest, 0.0):
        return False
    if not any(form in known for form in infixed_forms(word)):
        return False
    affixed = [r for r in pack._readings(word) if len(r.spans) > 1]
    return bool(affixed) and all(
        r.prefixes == ("ka",) and r.root == rest and not (r.infix or r.suffix or r.linker or r.restored)
        for r in affixed
    )


def left_out_headwords(lexicon_dir: Path, roots: frozenset[str]) -> frozenset[str]:
    """The dictionary headwords of four letters or more that the lexicon `roots` does not hold: mostly those the
    second tier left out as affixed (ibabaw: i|babaw), which `FilipinoPack` tries as roots for a word that has no
    reading at all."""
    words = {w for name in HEADWORD_FILES for w in read_words(Path(lexicon_dir) / name)}
    return frozenset(w for w in words if len(w) >= 4 and w.isalpha() and w not in roots and _syllable_ok(w))


# two consonants a root may start with besides a consonant and l, r, w or y (pr|ito, ky|ut): ng, ts, and those of
# English loans (sh|are, st|art); not sg, gg, gh
_ONSET_PAIRS = frozenset(
    {"ng", "ts", "sh", "ch", "th", "ph", "sk", "sp", "st", "sm", "sn", "sw", "sc", "kn", "wh"}
)


def _onset_ok(word: str) -> bool:
    """Whether `word` starts as a root may (`_ONSET_PAIRS`): the lists hold pieces of words that do not (the OCR's
    sgkahulugan of kasingkahulugan), and their affixed look-alikes must not make them roots."""
    first, second = word[:1], word[1:2]
    return first in "aeiou" or second in "aeiou" or second in "lrwy" or word[:2] in _ONSET_PAIRS


def _affixed(pack, word: str) -> bool:
    """Whether `pack` reads `word` with a prefix, an infix or a suffix: a linker reading does not count, as the
    evidence of the word's own affixed forms outweighs it (bulong is no bulon|g)."""
    return any(r.prefixes or r.infix or r.suffix for r in pack._readings(word) if len(r.spans) > 1)


def _looks_inflected(word: str, roots: frozenset[str] | set[str]) -> bool:
    """Whether `word` starts with a CV copy (sesend, tratrabaho, tatrabaho, darating), is a root plus -n (tawan,
    paan), a root with its d as r after a vowel (ramdam <- damdam), or a root's spelling after a nasal prefix took its
    first consonant (mili <- bili, nalo <- talo): a stem, not a root."""
    for k in (1, 2, 3):  # la|laro, pri|prito, da|rating, ta|trabaho
        copy, rest = word[:k], word[k:]
        if copy[-1] in "aeiou" and (
            rest.startswith(copy)
            or (copy[0] == "d" and rest.startswith("r" + copy[1:]))
            or (k == 2 and rest[:1] == copy[0] and rest[1:2] in CLUSTER_SECOND and rest[2:3] == copy[1])
        ):
            return True
    if (word.endswith("n") and word[:-1] in roots) or (word[0] == "r" and "d" + word[1:] in roots):
        return True
    nasal = "ng" if word.startswith("ng") else word[0]
    return any(c + word[len(nasal) :] in roots for c in SUBSTITUTED.get(nasal, ()))


def _raised(word: str) -> str:
    """`word` with the u of its last syllable as o (batu -> bato): the spelling a root has before a suffix."""
    lowered = lower_final_u(word)
    return lowered if lowered != word else ""
