"""Benchmark task types: each builds one question from real words and can recompute its answer.

A task is a pair in `TASKS`: `make(rng, lex) -> Question | None` draws a word and writes a bilingual prompt, the
answer and three wrong options; `solve(word, params) -> str` recomputes the answer from what the question
stores, without the lexicon, so the quality gates can check every item (and a corrupted file fails). `make`
returns None when the drawn word does not suit the task; the generator then draws again.

Prompts are shared by the MCQ and GEN forms: the options never appear in the prompt. Words with "ng" are kept
out of letter-position and letter-count tasks, because the Filipino alphabet counts Ng as one letter.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial

from morphcpt.bench.lexicon import CANONICAL_SUFFIX, AffixedWord, BenchLexicon
from morphcpt.morphology import apply_affix, reduplicate, syllabify
from morphcpt.morphology.affixation import AffixSpec
from morphcpt.morphology.affixes import CIRCUMFIXES, PREFIXES
from morphcpt.morphology.syllabify import ONSET_CLUSTERS, VOWELS

ALPHABET = "abdeghiklmnoprstuwy"  # the native Abakada letters used for inserted and substituted letters
TL_ORDINALS = ("una", "ikalawa", "ikatlo", "ikaapat", "ikalima", "ikaanim", "ikapito", "ikawalo", "ikasiyam")


@dataclass(frozen=True)
class Question:
    task: str
    prompt_en: str
    prompt_tl: str
    answer: str
    distractors: tuple[str, ...]
    word: str
    params: dict = field(default_factory=dict, compare=False, hash=False)
    subcategory: str = ""  # defaults to the task name

    @property
    def label(self) -> str:
        return self.subcategory or self.task


@dataclass(frozen=True)
class Task:
    make: Callable[[random.Random, BenchLexicon], Question | None]
    solve: Callable[[str, dict], str]
    case_sensitive: bool = False  # options may differ only in case (the case tasks)


# ------------------------------------------------------------------------------------------------ helpers


def ordinal_en(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def ordinal_tl(n: int) -> str:
    """Tagalog ordinal with its linker, ready to precede "titik": "ikatlong", "ikaapat na"."""
    word = TL_ORDINALS[n - 1] if n <= len(TL_ORDINALS) else f"ika-{n}"
    if word == "una":
        return "unang"
    return word + "ng" if word[-1] in VOWELS else word + " na"


def _prompt(en: str, tl: str) -> tuple[str, str]:
    return f"{en} Answer:", f"{tl} Sagot:"


def plausible(answer: str, option: str) -> bool:
    """A wrong option looks like an answer: a number for a number, text of similar length for text."""
    if not option.strip():
        return False
    if answer.isdigit() or option.isdigit():
        return answer.isdigit() and option.isdigit()
    return abs(len(option) - len(answer)) <= max(3, len(answer) // 2)


def pick_distractors(
    rng: random.Random, answer: str, candidates: Iterable[str], k: int = 3
) -> tuple[str, ...] | None:
    """k distinct plausible wrong options from `candidates`, drawn with `rng`, or None if there are too few."""
    pool = sorted({c for c in candidates if c != answer and plausible(answer, c)})
    if len(pool) < k:
        return None
    return tuple(rng.sample(pool, k))


def number_distractors(rng: random.Random, n: int, low: int = 0) -> tuple[str, ...]:
    near = [m for m in (n - 2, n - 1, n + 1, n + 2, n + 3) if m >= low]
    return tuple(str(m) for m in rng.sample(near, 3))


def char_word(rng: random.Random, lex: BenchLexicon, min_len: int = 4, max_len: int = 10) -> str | None:
    w = rng.choice(lex.words)
    return w if min_len <= len(w) <= max_len and "ng" not in w else None


def has_diacritic(ch: str) -> bool:
    return len(unicodedata.normalize("NFD", ch)) > 1


def strip_diacritics(text: str) -> str:
    return "".join(unicodedata.normalize("NFD", c)[0] for c in text)


def q(
    task: str, word: str, en: str, tl: str, answer: str, distractors, sub: str = "", **params
) -> Question | None:
    if distractors is None:
        return None
    prompt_en, prompt_tl = _prompt(en, tl)
    return Question(task, prompt_en, prompt_tl, answer, tuple(distractors), word, params, sub)


def with_fixed(rng: random.Random, answer: str, fixed: str, pool: Iterable[str]) -> tuple[str, ...] | None:
    """One chosen wrong option plus two drawn from `pool`."""
    rest = pick_distractors(rng, answer, [p for p in pool if p != fixed], 2)
    return None if rest is None or fixed == answer or not plausible(answer, fixed) else (fixed, *rest)


# ------------------------------------------------------------------------------------------ composition


def make_spelling(rng, lex):
    w = char_word(rng, lex)
    if not w:
        return None
    answer = "-".join(w)
    i = rng.randrange(len(w) - 1)
    wrong = [
        "-".join(w[:i] + w[i + 1] + w[i] + w[i + 2 :]),  # two letters swapped
        "-".join(w[:i] + w[i + 1 :]),  # one letter dropped
        "-".join(w[: i + 1] + w[i:]),  # one letter doubled
        "-".join(w[:-1]),
        "-".join(w[1:]),
    ]
    return q(
        "spelling",
        w,
        f"Spell the word '{w}' letter by letter, separating the letters with hyphens.",
        f"Baybayin ang salitang '{w}' nang titik por titik, na pinaghihiwalay ng gitling ang mga titik.",
        answer,
        pick_distractors(rng, answer, wrong),
    )


def make_letter_count(rng, lex):
    w = char_word(rng, lex)
    if not w:
        return None
    letter = rng.choice(sorted(set(w)))
    n = w.count(letter)
    return q(
        "letter_count",
        w,
        f"How many times does the letter '{letter}' appear in the word '{w}'?",
        f"Ilang beses lumalabas ang titik na '{letter}' sa salitang '{w}'?",
        str(n),
        number_distractors(rng, n, low=1),
        letter=letter,
    )


def make_length(rng, lex):
    w = char_word(rng, lex, 3, 12)
    if not w:
        return None
    return q(
        "length",
        w,
        f"How many letters does the word '{w}' have?",
        f"Ilang titik mayroon ang salitang '{w}'?",
        str(len(w)),
        number_distractors(rng, len(w), low=1),
    )


def accented_phrase(rng, lex) -> str | None:
    """Two or three real words, at least one with an accent mark (stress-marked words are rare in the data)."""
    marked = [w for w in lex.accented if "ñ" not in w]
    if not marked:
        return None
    words = [rng.choice(marked)] + [rng.choice(marked + lex.words[:300]) for _ in range(rng.randint(1, 2))]
    rng.shuffle(words)
    return " ".join(words)


def make_diacritic_count(rng, lex):
    text = accented_phrase(rng, lex)
    if not text:
        return None
    n = sum(has_diacritic(c) for c in text)
    return q(
        "diacritic_count",
        text,
        f"How many letters with an accent mark are in '{text}'?",
        f"Ilang titik na may tuldik ang nasa '{text}'?",
        str(n),
        number_distractors(rng, n, low=0),
    )


def make_uppercase_count(rng, lex):
    w = char_word(rng, lex, 4, 12)
    if not w:
        return None
    upper = set(rng.sample(range(len(w)), rng.randint(1, min(4, len(w) - 1))))
    text = "".join(c.upper() if i in upper else c for i, c in enumerate(w))
    n = sum(c.isupper() for c in text)
    return q(
        "uppercase_count",
        text,
        f"How many uppercase letters are in '{text}'?",
        f"Ilang malalaking titik ang nasa '{text}'?",
        str(n),
        number_distractors(rng, n, low=0),
    )


# ----------------------------------------------------------------------------------------- manipulation


def make_insert(rng, lex):
    w = char_word(rng, lex)
    if not w:
        return None
    pos = rng.randint(1, len(w) - 1)
    letter = rng.choice(ALPHABET)
    answer = w[:pos] + letter + w[pos:]
    wrong = [w[:p] + letter + w[p:] for p in range(len(w) + 1)] + [w[:pos] + c + w[pos:] for c in ALPHABET]
    return q(
        "insert",
        w,
        f"Insert the letter '{letter}' after the {ordinal_en(pos)} letter of '{w}'.",
        f"Isingit ang titik na '{letter}' pagkatapos ng {ordinal_tl(pos)} titik ng '{w}'.",
        answer,
        pick_distractors(rng, answer, [c for c in wrong if len(c) == len(answer)]),
        letter=letter,
        position=pos,
    )


def make_delete(rng, lex):
    w = char_word(rng, lex)
    if not w:
        return None
    pos = rng.randint(1, len(w))
    answer = w[: pos - 1] + w[pos:]
    wrong = [w[: p - 1] + w[p:] for p in range(1, len(w) + 1)] + [w]
    return q(
        "delete",
        w,
        f"Remove the {ordinal_en(pos)} letter of '{w}'.",
        f"Tanggalin ang {ordinal_tl(pos)} titik ng '{w}'.",
        answer,
        pick_distractors(rng, answer, wrong),
        position=pos,
    )


def make_substitute(rng, lex):
    w = char_word(rng, lex)
    if not w:
        return None
    old = rng.choice(sorted(set(w)))
    new = rng.choice([c for c in ALPHABET if c != old])
    answer = w.replace(old, new)
    others = [c for c in sorted(set(w)) if c != old]
    wrong = [
        w.replace(old, new, 1),
        w[::-1].replace(old, new, 1)[::-1],
        w,
        *(w.replace(o, new) for o in others),
        *(w.replace(old, c) for c in ALPHABET if c != new),
    ]
    return q(
        "substitute",
        w,
        f"Replace every '{old}' in '{w}' with '{new}'.",
        f"Palitan ng '{new}' ang bawat '{old}' sa '{w}'.",
        answer,
        pick_distractors(rng, answer, wrong),
        old=old,
        new=new,
    )


def _swap(w: str, i: int, j: int) -> str:
    chars = list(w)
    chars[i - 1], chars[j - 1] = chars[j - 1], chars[i - 1]
    return "".join(chars)


def make_permute(rng, lex):
    w = char_word(rng, lex)
    if not w:
        return None
    i, j = sorted(rng.sample(range(1, len(w) + 1), 2))
    if w[i - 1] == w[j - 1]:
        return None
    answer = _swap(w, i, j)
    wrong = [_swap(w, a, b) for a in range(1, len(w) + 1) for b in range(a + 1, len(w) + 1)] + [w[::-1]]
    return q(
        "permute",
        w,
        f"Swap the {ordinal_en(i)} and the {ordinal_en(j)} letters of '{w}'.",
        f"Pagpalitin ang {ordinal_tl(i)} titik at ang {ordinal_tl(j)} titik ng '{w}'.",
        answer,
        pick_distractors(rng, answer, wrong),
        i=i,
        j=j,
    )


def make_duplicate(rng, lex):
    w = char_word(rng, lex)
    if not w:
        return None
    pos = rng.randint(1, len(w))
    answer = w[:pos] + w[pos - 1 :]
    wrong = [w[:p] + w[p - 1 :] for p in range(1, len(w) + 1)] + [w + w[-1], w[0] + w]
    return q(
        "duplicate",
        w,
        f"Double the {ordinal_en(pos)} letter of '{w}' (write it twice in a row).",
        f"Ulitin ang {ordinal_tl(pos)} titik ng '{w}' (isulat ito nang dalawang beses nang magkasunod).",
        answer,
        pick_distractors(rng, answer, wrong),
        position=pos,
    )


CASE_MODES = {
    "upper": ("all uppercase letters", "malalaking titik lahat"),
    "lower": ("all lowercase letters", "maliliit na titik lahat"),
    "capitalize": ("only its first letter in uppercase", "malaki lamang ang unang titik"),
}


def _recase(text: str, mode: str) -> str:
    return {"upper": text.upper(), "lower": text.lower(), "capitalize": text[:1].upper() + text[1:].lower()}[
        mode
    ]


def make_case(rng, lex):
    w = char_word(rng, lex, 4, 12)
    if not w:
        return None
    mode = rng.choice(sorted(CASE_MODES))
    shown = w if mode != "lower" else "".join(c.upper() if rng.random() < 0.5 else c for c in w.capitalize())
    answer = _recase(shown, mode)
    wrong = [_recase(shown, m) for m in CASE_MODES] + [shown, w.swapcase(), w[:-1] + w[-1].upper()]
    wrong += [w[:i] + w[i].upper() + w[i + 1 :] for i in range(len(w))]
    wrong += [w.upper()[:i] + w[i] + w.upper()[i + 1 :] for i in range(len(w))]
    en, tl = CASE_MODES[mode]
    return q(
        "case",
        shown,
        f"Write '{shown}' in {en}." if mode != "capitalize" else f"Write '{shown}' with {en}.",
        f"Isulat ang '{shown}' sa {tl}." if mode != "capitalize" else f"Isulat ang '{shown}' na {tl}.",
        answer,
        pick_distractors(rng, answer, wrong),
        mode=mode,
    )


def make_diacritic_normalisation(rng, lex):
    text = accented_phrase(rng, lex)
    if not text:
        return None
    answer = strip_diacritics(text)
    marks = [i for i, c in enumerate(text) if has_diacritic(c)]
    wrong = [text]
    for i in marks:
        wrong.append(text[:i] + strip_diacritics(text[i]) + text[i + 1 :])  # one mark kept or removed alone
        base = strip_diacritics(text[i])
        wrong += [answer[:i] + v + answer[i + 1 :] for v in "aeiou" if v != base]
    return q(
        "diacritic_normalisation",
        text,
        f"Remove all accent marks from '{text}'.",
        f"Alisin ang lahat ng tuldik sa '{text}'.",
        answer,
        pick_distractors(rng, answer, wrong),
    )


# ---------------------------------------------------------------------------------------- syllabification


def clear_syllables(word: str) -> bool:
    """Native-looking words only: no cluster whose split rules differ between sources (kut-sa-ra / ku-tsa-ra)."""
    syl = syllabify(word)
    for a, b in zip(syl, syl[1:], strict=False):
        if a[-1] not in VOWELS and (a[-1] + b[0]) in ONSET_CLUSTERS:
            return False
    return all(s[0] in VOWELS or len(s) < 2 or s[1] in VOWELS or s.startswith("ng") for s in syl)


def make_syllable_count(rng, lex):
    w = rng.choice(lex.words)
    if not clear_syllables(w):
        return None
    n = len(syllabify(w))
    return q(
        "syllable_count",
        w,
        f"How many syllables does the word '{w}' have?",
        f"Ilang pantig mayroon ang salitang '{w}'?",
        str(n),
        number_distractors(rng, n, low=1),
    )


def _shifted_splits(word: str) -> list[str]:
    """Hyphenations with one syllable boundary moved by one letter."""
    syl = syllabify(word)
    cuts = [sum(len(s) for s in syl[:k]) for k in range(1, len(syl))]
    out = []
    for k, c in enumerate(cuts):
        for d in (-1, 1):
            moved = sorted({*cuts[:k], c + d, *cuts[k + 1 :]})
            if all(0 < m < len(word) for m in moved) and len(moved) == len(cuts):
                bounds = [0, *moved, len(word)]
                out.append("-".join(word[a:b] for a, b in zip(bounds, bounds[1:], strict=False)))
    return out


def make_syllable_split(rng, lex):
    w = rng.choice(lex.words)
    if not clear_syllables(w) or len(syllabify(w)) < 2:
        return None
    answer = "-".join(syllabify(w))
    wrong = _shifted_splits(w) + ["-".join(w[i : i + 2] for i in range(0, len(w), 2))]
    return q(
        "syllable_split",
        w,
        f"Divide the word '{w}' into syllables, separated by hyphens.",
        f"Hatiin sa mga pantig ang salitang '{w}', na pinaghihiwalay ng gitling ang mga pantig.",
        answer,
        pick_distractors(rng, answer, wrong),
    )


def make_cv_reduplication(rng, lex):
    items = lex.affixed.get("PR", []) + lex.affixed.get("IR", []) + lex.affixed.get("R", [])
    if not items:
        return None
    root = rng.choice(items).root
    answer = reduplicate(root)
    first = syllabify(root)[0]
    vowel = next(c for c in root if c in VOWELS)
    wrong = [
        first + root,
        root + syllabify(root)[-1],
        answer[:-1],
        root[0] + root,
        vowel + root,
        answer + root[-1],
    ]
    return q(
        "cv_reduplication",
        root,
        f"Reduplicate the first consonant and vowel of the root '{root}' (CV reduplication, as in the future form).",
        f"Ulitin ang unang katinig at patinig ng salitang-ugat na '{root}' (pag-uulit na KP, gaya ng sa aspektong "
        f"kontemplatibo).",
        answer,
        pick_distractors(rng, answer, wrong),
    )


# --------------------------------------------------------------------------------------------- affixation


def _affix_params(a: AffixedWord) -> dict:
    return {"root": a.root, "spec": str(a.spec), "glottal": a.glottal}


def _checked(word: str, params: dict) -> AffixSpec:
    """The stored spec, after checking that it rebuilds the word from the stored root."""
    spec = AffixSpec.parse(params["spec"])
    if apply_affix(params["root"], spec, glottal=params.get("glottal", False)) != word:
        raise ValueError(f"{params['root']!r} + {params['spec']!r} does not give {word!r}")
    return spec


def _draw(rng, lex, shapes: Iterable[str], keep: Callable[[AffixedWord], bool] = lambda a: True):
    items = [a for s in shapes for a in lex.affixed.get(s, [])]
    if not items:
        return None
    a = rng.choice(items)
    return a if keep(a) else None


def _plain_suffix(a: AffixedWord) -> bool:
    """The suffix follows a consonant-final root, so its written form is the basic -an/-in (no -han/-hin)."""
    return bool(a.spec.suffix) and a.root[-1] not in VOWELS and a.word.endswith(a.spec.suffix)


def _prefix_pool(prefix: str) -> list[str]:
    return [p for p in PREFIXES if abs(len(p) - len(prefix)) <= 2 and p != prefix and "nakaka" not in p]


def solve_prefix(word, params):
    return _checked(word, params).prefixes[0] + "-"


def make_prefix_identification(rng, lex):
    a = _draw(rng, lex, ("P", "PR"))
    if not a:
        return None
    answer = a.spec.prefixes[0] + "-"
    wrong = [p + "-" for p in _prefix_pool(a.spec.prefixes[0]) if a.word.startswith(p)]
    wrong += [p + "-" for p in rng.sample(_prefix_pool(a.spec.prefixes[0]), 6)]
    return q(
        "prefix_identification",
        a.word,
        f"What is the prefix in the word '{a.word}'?",
        f"Ano ang unlapi sa salitang '{a.word}'?",
        answer,
        pick_distractors(rng, answer, wrong[:5]),
        **_affix_params(a),
    )


def solve_infix(word, params):
    return f"-{_checked(word, params).infix}-"


def make_infix_identification(rng, lex):
    a = _draw(rng, lex, ("I", "IR"))
    if not a:
        return None
    answer = f"-{a.spec.infix}-"
    inner = {a.word[i : i + 2] for i in range(1, len(a.word) - 2)} - {a.spec.infix}
    wrong = ["-um-" if a.spec.infix == "in" else "-in-", *(f"-{s}-" for s in sorted(inner))]
    return q(
        "infix_identification",
        a.word,
        f"What is the infix in the word '{a.word}'?",
        f"Ano ang gitlapi sa salitang '{a.word}'?",
        answer,
        with_fixed(rng, answer, wrong[0], wrong[1:]),
        **_affix_params(a),
    )


def solve_suffix(word, params):
    return f"-{_checked(word, params).suffix}"


def make_suffix_identification(rng, lex):
    a = _draw(rng, lex, ("S",), _plain_suffix)
    if not a:
        return None
    answer = f"-{a.spec.suffix}"
    endings = [f"-{a.word[-k:]}" for k in (1, 3, 4) if len(a.word) - k >= 2]
    wrong = ["-in" if a.spec.suffix == "an" else "-an", *endings]
    return q(
        "suffix_identification",
        a.word,
        f"What is the suffix in the word '{a.word}'?",
        f"Ano ang hulapi sa salitang '{a.word}'?",
        answer,
        with_fixed(rng, answer, wrong[0], wrong[1:]),
        **_affix_params(a),
    )


def _circumfix(spec: AffixSpec) -> str:
    return f"{spec.prefixes[0]}-...-{spec.suffix}"


def solve_circumfix(word, params):
    return _circumfix(_checked(word, params))


def _is_circumfixed(a: AffixedWord) -> bool:
    return _plain_suffix(a) and (a.spec.prefixes[0], a.spec.suffix) in CIRCUMFIXES


def make_circumfix_identification(rng, lex):
    a = _draw(rng, lex, ("PS",), _is_circumfixed)
    if not a:
        return None
    answer = _circumfix(a.spec)
    p, s = a.spec.prefixes[0], a.spec.suffix
    wrong = [f"{cp}-...-{cs}" for cp, cs in CIRCUMFIXES if cs in ("an", "in")]
    wrong.append(f"{p}-...-{'in' if s == 'an' else 'an'}")
    return q(
        "circumfix_identification",
        a.word,
        f"What circumfix (a prefix and a suffix together) does the word '{a.word}' have?",
        f"Ano ang kabilaang panlapi (unlapi at hulapi) ng salitang '{a.word}'?",
        answer,
        pick_distractors(rng, answer, wrong),
        **_affix_params(a),
    )


def solve_inflection(word, params):
    _checked(word, params)
    return word


def _alternatives_attested(lex: BenchLexicon, a: AffixedWord) -> bool:
    """Another spelling of the same inflection is a real word too (basahin / basain): the item is ambiguous."""
    other = apply_affix(a.root, a.spec, glottal=not a.glottal)
    return other != a.word and lex.is_word(other)


def _inflection(rng, lex, task, a, en_affix, tl_affix, wrong):
    if a is None or _alternatives_attested(lex, a):
        return None
    # A wrong option that the analyser reads as the same root + affixes would be a second right answer.
    wrong = [w for w in wrong if _spec_of(lex, w, a.root) != a.spec]
    return q(
        task,
        a.word,
        f"Add the {en_affix} to the root '{a.root}'.",
        f"Ikabit ang {tl_affix} sa salitang-ugat na '{a.root}'.",
        a.word,
        pick_distractors(rng, a.word, wrong),
        **_affix_params(a),
    )


def _spec_of(lex: BenchLexicon, word: str, root: str) -> AffixSpec | None:
    p = lex.pack.parse(word)
    if p.root != root:
        return None
    return AffixSpec(p.prefixes, p.infix, CANONICAL_SUFFIX.get(p.suffix, ""), bool(p.reduplicant))


def make_prefix_inflection(rng, lex):
    a = _draw(rng, lex, ("P",))
    if not a:
        return None
    p = a.spec.prefixes[0]
    wrong = [apply_affix(a.root, f"{o}-") for o in _prefix_pool(p)[:: max(1, len(_prefix_pool(p)) // 6)]]
    wrong += [p + "-" + a.root if "-" not in a.word else a.word.replace("-", ""), a.root + p, p[:-1] + a.root]
    return _inflection(rng, lex, "prefix_inflection", a, f"prefix {p}-", f"unlaping {p}-", wrong)


def make_infix_inflection(rng, lex):
    a = _draw(rng, lex, ("I",), lambda x: x.root[0] not in "ly")
    if not a:
        return None
    inf, r = a.spec.infix, a.root
    wrong = [
        inf + r,
        r[:2] + inf + r[2:],
        r[:3] + inf + r[3:],
        r + inf,
        apply_affix(r, "-um-" if inf == "in" else "-in-"),
    ]
    return _inflection(rng, lex, "infix_inflection", a, f"infix -{inf}-", f"gitlaping -{inf}-", wrong)


def make_suffix_inflection(rng, lex):
    a = _draw(rng, lex, ("S",))
    if not a:
        return None
    s, r = a.spec.suffix, a.root
    other = "in" if s == "an" else "an"
    wrong = [r + s, r + "h" + s, r + "n" + s, apply_affix(r, f"-{other}"), s + r, a.word + s[-1]]
    wrong.append(apply_affix(r, f"-{s}", glottal=not a.glottal))
    return _inflection(rng, lex, "suffix_inflection", a, f"suffix -{s}", f"hulaping -{s}", wrong)


def make_circumfix_inflection(rng, lex):
    a = _draw(rng, lex, ("PS",), lambda x: (x.spec.prefixes[0], x.spec.suffix) in CIRCUMFIXES)
    if not a:
        return None
    p, s, r = a.spec.prefixes[0], a.spec.suffix, a.root
    other = "in" if s == "an" else "an"
    wrong = [
        apply_affix(r, f"{p}-"),
        apply_affix(r, f"-{s}"),
        apply_affix(r, f"{p}- -{other}"),
        apply_affix(r, f"{p}- -{s}", glottal=not a.glottal),
        p + r + s if p + r + s != a.word else p + r + "h" + s,
        *(apply_affix(r, f"{cp}- -{s}") for cp, cs in CIRCUMFIXES if cs == s and cp != p),
    ]
    circ = f"{p}-...-{s}"
    return _inflection(
        rng, lex, "circumfix_inflection", a, f"circumfix {circ}", f"kabilaang panlaping {circ}", wrong
    )


# --------------------------------------------------------------------------------- hierarchical-only tasks


def make_nth_letter(rng, lex):
    w = char_word(rng, lex)
    if not w:
        return None
    pos = rng.randint(1, len(w))
    answer = w[pos - 1]
    in_word = sorted(set(w) - {answer})
    wrong = in_word if len(in_word) >= 3 else in_word + rng.sample([c for c in ALPHABET if c not in w], 3)
    return q(
        "nth_letter",
        w,
        f"What is the {ordinal_en(pos)} letter of '{w}'?",
        f"Ano ang {ordinal_tl(pos)} titik ng '{w}'?",
        answer,
        pick_distractors(rng, answer, wrong),
        position=pos,
    )


def make_letter_position(rng, lex):
    w = char_word(rng, lex)
    if not w:
        return None
    letter = rng.choice(sorted(set(w)))
    n = w.index(letter) + 1
    return q(
        "letter_position",
        w,
        f"At which position does the letter '{letter}' first appear in '{w}'? (Count from 1.)",
        f"Sa anong posisyon unang lumabas ang titik na '{letter}' sa '{w}'? (Magbilang mula 1.)",
        str(n),
        number_distractors(rng, n, low=1),
        letter=letter,
    )


def wrong_cuts(word: str, target: str) -> list[str]:
    """Pieces of `word` about as long as `target`: the wrong places to cut off an affix."""
    w = word.replace("-", "")
    n = len(target)
    return [w[i:j] for i in range(len(w)) for j in range(i + max(2, n - 2), min(len(w), i + n + 2) + 1)]


def solve_root(word, params):
    _checked(word, params)
    return params["root"]


def make_root_extraction(rng, lex):
    a = _draw(rng, lex, ("P", "I", "S", "PS", "PR", "IR"))
    if not a:
        return None
    w, r = a.word, a.root
    wrong = wrong_cuts(w, r) + [r[:-1], r + r[-1], reduplicate(r)]
    return q(
        "root_extraction",
        w,
        f"What is the root of the word '{w}'?",
        f"Ano ang salitang-ugat ng '{w}'?",
        r,
        pick_distractors(rng, r, wrong),
        **_affix_params(a),
    )


AFFIX_NAMES = {"prefix": ("prefix", "unlapi"), "infix": ("infix", "gitlapi"), "suffix": ("suffix", "hulapi")}


def solve_removal(word, params):
    _checked(word, params)
    return params["remainder"]


def make_affix_removal(kind: str, rng, lex):
    a = _draw(rng, lex, ({"prefix": "P", "infix": "I", "suffix": "S"}[kind],))
    if not a:
        return None
    w = a.word
    if kind == "prefix":
        surface = w[: len(w) - len(a.root)]
        remainder, plain = w[len(surface) :], w.endswith(a.root) and surface.rstrip("-") == a.spec.prefixes[0]
    elif kind == "infix":
        remainder, plain = a.root, a.spec.infix in w
    else:
        surface = w[len(a.root) :]
        remainder, plain = a.root, w.startswith(a.root)
    if not plain:
        return None  # nasal deletion, o->u raising or syncope: "removal" would be ambiguous
    wrong = wrong_cuts(w, remainder) + [remainder[:-1], remainder[1:]]
    en, tl = AFFIX_NAMES[kind]
    return q(
        f"{kind}_removal",
        w,
        f"Remove the {en} from '{w}'.",
        f"Alisin ang {tl} sa '{w}'.",
        remainder,
        pick_distractors(rng, remainder, wrong),
        remainder=remainder,
        **_affix_params(a),
    )


def solve_multi_step(word, params):
    _checked(word, params)
    target = apply_affix(params["root"], params["target_spec"], glottal=params.get("target_glottal", False))
    if target != params["target"]:
        raise ValueError(f"{params['root']!r} + {params['target_spec']!r} does not give {params['target']!r}")
    return target


def describe_spec(spec: AffixSpec) -> tuple[str, str]:
    if spec.prefixes:
        return f"the prefix {spec.prefixes[0]}-", f"ang unlaping {spec.prefixes[0]}-"
    if spec.infix:
        return f"the infix -{spec.infix}-", f"ang gitlaping -{spec.infix}-"
    return f"the suffix -{spec.suffix}", f"ang hulaping -{spec.suffix}"


def make_multi_step(rng, lex):
    source = _draw(rng, lex, ("P", "I", "S", "PS", "PR", "IR"))
    if not source:
        return None
    targets = [
        t for t in lex.by_root.get(source.root, []) if t.shape in ("P", "I", "S") and t.word != source.word
    ]
    if not targets:
        return None
    t = rng.choice(targets)
    if _alternatives_attested(lex, t):
        return None
    en, tl = describe_spec(t.spec)
    r = source.root
    wrong = [apply_affix(source.word, t.spec), r, source.word, t.word[1:], t.word[:-1]]
    wrong += [apply_affix(r, other) for other in ("mag-", "-um-", "-in", "-an", "ma-", "pag-")]
    wrong = [w for w in wrong if not (lex.is_word(w) and _spec_of(lex, w, r) == t.spec)]
    params = _affix_params(source) | {
        "target": t.word,
        "target_spec": str(t.spec),
        "target_glottal": t.glottal,
    }
    return q(
        "multi_step",
        source.word,
        f"Find the root of '{source.word}', then add {en} to that root.",
        f"Hanapin ang salitang-ugat ng '{source.word}', saka ikabit dito {tl}.",
        t.word,
        pick_distractors(rng, t.word, wrong),
        **params,
    )


# ----------------------------------------------------------------------------------------------- registry


def _solve_count(word, params):
    return str(word.count(params["letter"]))


TASKS: dict[str, Task] = {
    "spelling": Task(make_spelling, lambda w, p: "-".join(w)),
    "letter_count": Task(make_letter_count, _solve_count),
    "length": Task(make_length, lambda w, p: str(len(w))),
    "diacritic_count": Task(make_diacritic_count, lambda w, p: str(sum(has_diacritic(c) for c in w))),
    "uppercase_count": Task(make_uppercase_count, lambda w, p: str(sum(c.isupper() for c in w)), True),
    "insert": Task(make_insert, lambda w, p: w[: p["position"]] + p["letter"] + w[p["position"] :]),
    "delete": Task(make_delete, lambda w, p: w[: p["position"] - 1] + w[p["position"] :]),
    "substitute": Task(make_substitute, lambda w, p: w.replace(p["old"], p["new"])),
    "permute": Task(make_permute, lambda w, p: _swap(w, p["i"], p["j"])),
    "duplicate": Task(make_duplicate, lambda w, p: w[: p["position"]] + w[p["position"] - 1 :]),
    "case": Task(make_case, lambda w, p: _recase(w, p["mode"]), True),
    "diacritic_normalisation": Task(make_diacritic_normalisation, lambda w, p: strip_diacritics(w)),
    "syllable_count": Task(make_syllable_count, lambda w, p: str(len(syllabify(w)))),
    "syllable_split": Task(make_syllable_split, lambda w, p: "-".join(syllabify(w))),
    "cv_reduplication": Task(make_cv_reduplication, lambda w, p: reduplicate(w)),
    "prefix_identification": Task(make_prefix_identification, solve_prefix),
    "infix_identification": Task(make_infix_identification, solve_infix),
    "suffix_identification": Task(make_suffix_identification, solve_suffix),
    "circumfix_identification": Task(make_circumfix_identification, solve_circumfix),
    "prefix_inflection": Task(make_prefix_inflection, solve_inflection),
    "infix_inflection": Task(make_infix_inflection, solve_inflection),
    "suffix_inflection": Task(make_suffix_inflection, solve_inflection),
    "circumfix_inflection": Task(make_circumfix_inflection, solve_inflection),
    "nth_letter": Task(make_nth_letter, lambda w, p: w[p["position"] - 1]),
    "letter_position": Task(make_letter_position, lambda w, p: str(w.index(p["letter"]) + 1)),
    "root_extraction": Task(make_root_extraction, solve_root),
    "prefix_removal": Task(partial(make_affix_removal, "prefix"), solve_removal),
    "infix_removal": Task(partial(make_affix_removal, "infix"), solve_removal),
    "suffix_removal": Task(partial(make_affix_removal, "suffix"), solve_removal),
    "multi_step": Task(make_multi_step, solve_multi_step),
}
