"""What every benchmark task is made of: the Question it writes, the Task pair (make, solve), and the helpers
that draw words and wrong options. The task families (one module each) build on these; see __init__.py.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from morphcpt.bench.words import BenchLexicon
from morphcpt.morphology.syllabify import VOWELS

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


def accented_phrase(rng, lex) -> str | None:
    """Two or three real words, at least one with an accent mark (stress-marked words are rare in the data)."""
    marked = [w for w in lex.accented if "ñ" not in w]
    if not marked:
        return None
    words = [rng.choice(marked)] + [rng.choice(marked + lex.words[:300]) for _ in range(rng.randint(1, 2))]
    rng.shuffle(words)
    return " ".join(words)
