"""Composition tasks: what a word is made of, letter by letter (spelling, letter and length counts, accent marks,
capitals). Registered in `TASKS` of this module; `morphcpt.bench.tasks.TASKS` gathers every family.
"""

from __future__ import annotations

from morphcpt.bench.tasks.base import (
    Task,
    accented_phrase,
    char_word,
    has_diacritic,
    number_distractors,
    pick_distractors,
    q,
)


def _solve_count(word, params):
    return str(word.count(params["letter"]))


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


TASKS: dict[str, Task] = {
    "spelling": Task(make_spelling, lambda w, p: "-".join(w)),
    "letter_count": Task(make_letter_count, _solve_count),
    "length": Task(make_length, lambda w, p: str(len(w))),
    "diacritic_count": Task(make_diacritic_count, lambda w, p: str(sum(has_diacritic(c) for c in w))),
    "uppercase_count": Task(make_uppercase_count, lambda w, p: str(sum(c.isupper() for c in w)), True),
}
