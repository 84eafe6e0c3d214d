"""Manipulation tasks: change a word as asked (insert, delete, substitute, swap or double a letter, recase, strip
accent marks). Registered in `TASKS` of this module; `morphcpt.bench.tasks.TASKS` gathers every family.
"""

from __future__ import annotations

from morphcpt.bench.tasks.base import (
    ALPHABET,
    Task,
    accented_phrase,
    char_word,
    has_diacritic,
    ordinal_en,
    ordinal_tl,
    pick_distractors,
    q,
    strip_diacritics,
)


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


TASKS: dict[str, Task] = {
    "insert": Task(make_insert, lambda w, p: w[: p["position"]] + p["letter"] + w[p["position"] :]),
    "delete": Task(make_delete, lambda w, p: w[: p["position"] - 1] + w[p["position"] :]),
    "substitute": Task(make_substitute, lambda w, p: w.replace(p["old"], p["new"])),
    "permute": Task(make_permute, lambda w, p: _swap(w, p["i"], p["j"])),
    "duplicate": Task(make_duplicate, lambda w, p: w[: p["position"]] + w[p["position"] - 1 :]),
    "case": Task(make_case, lambda w, p: _recase(w, p["mode"]), True),
    "diacritic_normalisation": Task(make_diacritic_normalisation, lambda w, p: strip_diacritics(w)),
}
