"""Affixation tasks: name the prefix, infix, suffix or circumfix of an attested affixed word, or inflect a root
with one. The helpers that draw an affixed word and check its stored spec are shared with the hierarchical tasks.
Registered in `TASKS` of this module; `morphcpt.bench.tasks.TASKS` gathers every family.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from morphcpt.bench.tasks.base import (
    Task,
    pick_distractors,
    q,
    with_fixed,
)
from morphcpt.bench.words import CANONICAL_SUFFIX, AffixedWord, BenchLexicon
from morphcpt.morphology import apply_affix
from morphcpt.morphology.affixation import AffixSpec
from morphcpt.morphology.affixes import CIRCUMFIXES, PREFIXES
from morphcpt.morphology.syllabify import VOWELS


def affix_params(a: AffixedWord) -> dict:
    return {"root": a.root, "spec": str(a.spec), "glottal": a.glottal}


def checked_spec(word: str, params: dict) -> AffixSpec:
    """The stored spec, after checking that it rebuilds the word from the stored root."""
    spec = AffixSpec.parse(params["spec"])
    if apply_affix(params["root"], spec, glottal=params.get("glottal", False)) != word:
        raise ValueError(f"{params['root']!r} + {params['spec']!r} does not give {word!r}")
    return spec


def draw_affixed(rng, lex, shapes: Iterable[str], keep: Callable[[AffixedWord], bool] = lambda a: True):
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
    return checked_spec(word, params).prefixes[0] + "-"


def make_prefix_identification(rng, lex):
    a = draw_affixed(rng, lex, ("P", "PR"))
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
        **affix_params(a),
    )


def solve_infix(word, params):
    return f"-{checked_spec(word, params).infix}-"


def make_infix_identification(rng, lex):
    a = draw_affixed(rng, lex, ("I", "IR"))
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
        **affix_params(a),
    )


def solve_suffix(word, params):
    return f"-{checked_spec(word, params).suffix}"


def make_suffix_identification(rng, lex):
    a = draw_affixed(rng, lex, ("S",), _plain_suffix)
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
        **affix_params(a),
    )


def _circumfix(spec: AffixSpec) -> str:
    return f"{spec.prefixes[0]}-...-{spec.suffix}"


def solve_circumfix(word, params):
    return _circumfix(checked_spec(word, params))


def _is_circumfixed(a: AffixedWord) -> bool:
    return _plain_suffix(a) and (a.spec.prefixes[0], a.spec.suffix) in CIRCUMFIXES


def make_circumfix_identification(rng, lex):
    a = draw_affixed(rng, lex, ("PS",), _is_circumfixed)
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
        **affix_params(a),
    )


def solve_inflection(word, params):
    checked_spec(word, params)
    return word


def alternatives_attested(lex: BenchLexicon, a: AffixedWord) -> bool:
    """Another spelling of the same inflection is a real word too (basahin / basain): the item is ambiguous."""
    other = apply_affix(a.root, a.spec, glottal=not a.glottal)
    return other != a.word and lex.is_word(other)


def _inflection(rng, lex, task, a, en_affix, tl_affix, wrong):
    if a is None or alternatives_attested(lex, a):
        return None
    # A wrong option that the analyser reads as the same root + affixes would be a second right answer.
    wrong = [w for w in wrong if spec_of(lex, w, a.root) != a.spec]
    return q(
        task,
        a.word,
        f"Add the {en_affix} to the root '{a.root}'.",
        f"Ikabit ang {tl_affix} sa salitang-ugat na '{a.root}'.",
        a.word,
        pick_distractors(rng, a.word, wrong),
        **affix_params(a),
    )


def spec_of(lex: BenchLexicon, word: str, root: str) -> AffixSpec | None:
    p = lex.pack.parse(word)
    if p.root != root:
        return None
    return AffixSpec(p.prefixes, p.infix, CANONICAL_SUFFIX.get(p.suffix, ""), bool(p.reduplicant))


def make_prefix_inflection(rng, lex):
    a = draw_affixed(rng, lex, ("P",))
    if not a:
        return None
    p = a.spec.prefixes[0]
    wrong = [apply_affix(a.root, f"{o}-") for o in _prefix_pool(p)[:: max(1, len(_prefix_pool(p)) // 6)]]
    wrong += [p + "-" + a.root if "-" not in a.word else a.word.replace("-", ""), a.root + p, p[:-1] + a.root]
    return _inflection(rng, lex, "prefix_inflection", a, f"prefix {p}-", f"unlaping {p}-", wrong)


def make_infix_inflection(rng, lex):
    a = draw_affixed(rng, lex, ("I",), lambda x: x.root[0] not in "ly")
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
    a = draw_affixed(rng, lex, ("S",))
    if not a:
        return None
    s, r = a.spec.suffix, a.root
    other = "in" if s == "an" else "an"
    wrong = [r + s, r + "h" + s, r + "n" + s, apply_affix(r, f"-{other}"), s + r, a.word + s[-1]]
    wrong.append(apply_affix(r, f"-{s}", glottal=not a.glottal))
    return _inflection(rng, lex, "suffix_inflection", a, f"suffix -{s}", f"hulaping -{s}", wrong)


def make_circumfix_inflection(rng, lex):
    a = draw_affixed(rng, lex, ("PS",), lambda x: (x.spec.prefixes[0], x.spec.suffix) in CIRCUMFIXES)
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


TASKS: dict[str, Task] = {
    "prefix_identification": Task(make_prefix_identification, solve_prefix),
    "infix_identification": Task(make_infix_identification, solve_infix),
    "suffix_identification": Task(make_suffix_identification, solve_suffix),
    "circumfix_identification": Task(make_circumfix_identification, solve_circumfix),
    "prefix_inflection": Task(make_prefix_inflection, solve_inflection),
    "infix_inflection": Task(make_infix_inflection, solve_inflection),
    "suffix_inflection": Task(make_suffix_inflection, solve_inflection),
    "circumfix_inflection": Task(make_circumfix_inflection, solve_inflection),
}
