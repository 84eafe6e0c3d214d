"""Benchmark task types: each builds one question from real words and can recompute its answer.

A task is a pair in `TASKS`: `make(rng, lex) -> Question | None` draws a word and writes a bilingual prompt, the
answer and three wrong options; `solve(word, params) -> str` recomputes the answer from what the question
stores, without the lexicon, so the quality gates can check every item (and a corrupted file fails). `make`
returns None when the drawn word does not suit the task; the generator then draws again.

Prompts are shared by the MCQ and GEN forms: the options never appear in the prompt. Words with "ng" are kept
out of letter-position and letter-count tasks, because the Filipino alphabet counts Ng as one letter.

One module per task family — composition, manipulation, syllabification, affixation, hierarchical — each with its
own `TASKS`; the shared Question, Task and option helpers are in `base.py`. The order of `TASKS` below (family by
family) is the order the generator walks, so it is part of what the benchmark files' checksums depend on.
"""

from __future__ import annotations

from morphcpt.bench.tasks import affixation, composition, hierarchical, manipulation, syllabification
from morphcpt.bench.tasks.base import Question, Task, plausible

__all__ = ["TASKS", "Question", "Task", "plausible"]

TASKS: dict[str, Task] = {
    **composition.TASKS,
    **manipulation.TASKS,
    **syllabification.TASKS,
    **affixation.TASKS,
    **hierarchical.TASKS,
}
