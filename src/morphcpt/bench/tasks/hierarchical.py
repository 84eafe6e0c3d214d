"""Hierarchical-only tasks: letters by position, roots, affix removal and multi-step derivations (built on the
affixation helpers). Registered in `TASKS` of this module; `morphcpt.bench.tasks.TASKS` gathers every family.
"""

from __future__ import annotations

from functools import partial

from morphcpt.bench.tasks.affixation import (
    affix_params,
    alternatives_attested,
    checked_spec,
    draw_affixed,
    spec_of,
)
from morphcpt.bench.tasks.base import (
    ALPHABET,
    Task,
    char_word,
    number_distractors,
    ordinal_en,
    ordinal_tl,
    pick_distractors,
    q,
)
from morphcpt.morphology import apply_affix, reduplicate
from morphcpt.morphology.affixation import AffixSpec


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
    checked_spec(word, params)
    return params["root"]


def make_root_extraction(rng, lex):
    a = draw_affixed(rng, lex, ("P", "I", "S", "PS", "PR", "IR"))
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
        **affix_params(a),
    )


AFFIX_NAMES = {"prefix": ("prefix", "unlapi"), "infix": ("infix", "gitlapi"), "suffix": ("suffix", "hulapi")}


def solve_removal(word, params):
    checked_spec(word, params)
    return params["remainder"]


def make_affix_removal(kind: str, rng, lex):
    a = draw_affixed(rng, lex, ({"prefix": "P", "infix": "I", "suffix": "S"}[kind],))
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
        **affix_params(a),
    )


def solve_multi_step(word, params):
    checked_spec(word, params)
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
    source = draw_affixed(rng, lex, ("P", "I", "S", "PS", "PR", "IR"))
    if not source:
        return None
    targets = [
        t for t in lex.by_root.get(source.root, []) if t.shape in ("P", "I", "S") and t.word != source.word
    ]
    if not targets:
        return None
    t = rng.choice(targets)
    if alternatives_attested(lex, t):
        return None
    en, tl = describe_spec(t.spec)
    r = source.root
    wrong = [apply_affix(source.word, t.spec), r, source.word, t.word[1:], t.word[:-1]]
    wrong += [apply_affix(r, other) for other in ("mag-", "-um-", "-in", "-an", "ma-", "pag-")]
    wrong = [w for w in wrong if not (lex.is_word(w) and spec_of(lex, w, r) == t.spec)]
    params = affix_params(source) | {
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


TASKS: dict[str, Task] = {
    "nth_letter": Task(make_nth_letter, lambda w, p: w[p["position"] - 1]),
    "letter_position": Task(make_letter_position, lambda w, p: str(w.index(p["letter"]) + 1)),
    "root_extraction": Task(make_root_extraction, solve_root),
    "prefix_removal": Task(partial(make_affix_removal, "prefix"), solve_removal),
    "infix_removal": Task(partial(make_affix_removal, "infix"), solve_removal),
    "suffix_removal": Task(partial(make_affix_removal, "suffix"), solve_removal),
    "multi_step": Task(make_multi_step, solve_multi_step),
}
