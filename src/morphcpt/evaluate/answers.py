"""GEN answer matching, shared verbatim by our evaluator and the exported lm-eval tasks.

This module imports nothing but the standard library: `lm_eval.export_lm_eval` copies this very file next to the
task YAMLs (as `morphcpt_answers.py`) and the tasks call its `process_results`, so both evaluators cut, normalise
and match answers with the same code.

* The answer is the first line of the continuation once leading whitespace is dropped.
* Both texts are put in NFC and runs of whitespace become one space; case, diacritics, hyphens and inner
  spacing ("s i l a") are kept, because the tasks test them.
* Quotes and sentence punctuation around the prediction are a wrapper and ignored, except the ones the answer
  itself has at that edge: "“kain”." is exactly "kain", but "tangna" is not "‘tangna" and "Naman" is not "Naman!".
* `prefix` and `contains` only count the answer where it starts and ends on a word boundary (a word character is
  a letter, digit or combining mark), so "10" is no prefix of "1" and a constant "abc…xyz 0123456789" contains
  neither "a" nor "3".

    match("“kain”.", "kain")  ->  {"exact": True, "prefix": True, "contains": True}
"""

from __future__ import annotations

import re
import unicodedata

EDGE_CHARACTERS = " \t\"'`“”‘’«».,;:!?"
GEN_METRICS = ("exact", "prefix", "contains")


def first_line(text: str) -> tuple[str, bool]:
    """(first line after leading whitespace, whether that line is finished by a newline)."""
    body = text.lstrip()
    line, newline, _ = body.partition("\n")
    return line.rstrip("\r"), bool(newline)


def collapse(text: str) -> str:
    """NFC, whitespace runs as one space, no surrounding whitespace."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip()


def split_edges(text: str) -> tuple[str, str, str]:
    """(leading edge characters, core, trailing edge characters); an all-edge text is all lead."""
    core = text.lstrip(EDGE_CHARACTERS)
    lead = text[: len(text) - len(core)]
    stripped = core.rstrip(EDGE_CHARACTERS)
    return lead, stripped, core[len(stripped) :]


def normalise(text: str) -> str:
    """The core of a text: collapsed, quotes and sentence punctuation around it dropped."""
    return split_edges(collapse(text))[1]


def unwrap(prediction: str, answer: str) -> str:
    """The collapsed prediction with its edge characters dropped, except those the answer has at that edge."""
    got, want = collapse(prediction), collapse(answer)
    lead_w, _, trail_w = split_edges(want)
    lead_g, core_g, trail_g = split_edges(got)
    lead = lead_w if lead_g.endswith(lead_w) else lead_g
    trail = trail_w if trail_g.startswith(trail_w) else trail_g
    return lead + core_g + trail


def _is_word(character: str) -> bool:
    return character.isalnum() or unicodedata.category(character).startswith("M")


def _bounded(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] neither continues a word on its left nor runs into one on its right."""
    left = start == 0 or not (_is_word(text[start - 1]) and _is_word(text[start]))
    right = end == len(text) or not (_is_word(text[end - 1]) and _is_word(text[end]))
    return left and right


def match(prediction: str, answer: str) -> dict[str, bool]:
    want = collapse(answer)
    got = collapse(prediction)
    lead_w, _, _ = split_edges(want)
    lead_g, _, _ = split_edges(got)
    # For prefix, only the leading wrapper is dropped: whatever follows the answer may be anything.
    front = (lead_w if lead_g.endswith(lead_w) else lead_g) + got[len(lead_g) :]
    starts = [m.start() for m in re.finditer(f"(?={re.escape(want)})", got)] if want else []
    return {
        "exact": unwrap(prediction, answer) == want,
        "prefix": bool(want) and front.startswith(want) and _bounded(front, 0, len(want)),
        "contains": any(_bounded(got, start, start + len(want)) for start in starts),
    }


def process_results(doc: dict, results: list[str]) -> dict[str, float]:
    """lm-evaluation-harness hook for `generate_until` tasks: the same stop rule and matching as ours."""
    line, _ = first_line(results[0])
    return {metric: float(value) for metric, value in match(line, doc["answer"]).items()}
