"""Quality gates run on every generated file; any violation stops the generation with a list of what failed.

Checked per file: ids unique; prompts present in both languages; each answer recomputed by its task's solver
(so a wrong answer fails); GEN answers one line and each prompt asked once (one answer per question); MCQ items
have four distinct options of which exactly one is the answer (also after case folding, except for the case
tasks), distractors plausible (a number for a number, similar length for text); the correct option's
position balanced across A-D (counts differ by at most one).
"""

from __future__ import annotations

from collections import Counter

from morphcpt.bench.io import Record
from morphcpt.bench.tasks import TASKS, plausible

N_OPTIONS = 4


class GateError(ValueError):
    """A generated benchmark file failed a quality gate."""


def item_problems(r: Record) -> list[str]:
    where = f"{r.id}"
    problems = []
    if not r.prompt_en.strip() or not r.prompt_tl.strip():
        problems.append(f"{where}: missing English or Tagalog prompt")
    if not r.answer.strip() or "\n" in r.answer:
        problems.append(f"{where}: empty or multi-line answer {r.answer!r}")
    task = TASKS.get(r.metadata.get("task", ""))
    if task is None:
        problems.append(f"{where}: unknown task {r.metadata.get('task')!r}")
    else:
        try:
            expected = task.solve(r.word, r.metadata.get("params", {}))
        except (KeyError, ValueError, IndexError) as err:
            expected = f"<unsolvable: {err}>"
        if expected != r.answer:
            problems.append(f"{where}: recorded answer {r.answer!r} but the task gives {expected!r}")
    if r.mode == "gen":
        return problems
    if len(r.options) != N_OPTIONS:
        problems.append(f"{where}: {len(r.options)} options instead of {N_OPTIONS}")
    if len(set(r.options)) != len(r.options):
        problems.append(f"{where}: duplicate options {list(r.options)}")
    fold = (lambda s: s.strip()) if task and task.case_sensitive else (lambda s: s.strip().casefold())
    correct = sum(fold(o) == fold(r.answer) for o in r.options)
    if correct != 1:
        problems.append(f"{where}: {correct} options match the answer {r.answer!r}: {list(r.options)}")
    for o in r.options:
        if o != r.answer and not plausible(r.answer, o):
            problems.append(f"{where}: implausible distractor {o!r} for answer {r.answer!r}")
    return problems


def file_problems(records: list[Record]) -> list[str]:
    problems = [p for r in records for p in item_problems(r)]
    ids = Counter(r.id for r in records)
    problems += [f"duplicate id {i!r}" for i, n in ids.items() if n > 1]
    prompts = Counter((r.prompt_en, r.prompt_tl) for r in records)
    problems += [f"duplicate item (prompt asked {n} times): {p[0]!r}" for p, n in prompts.items() if n > 1]
    mcq = [r for r in records if r.mode == "mcq"]
    if mcq:
        positions = Counter(r.options.index(r.answer) for r in mcq if r.answer in r.options)
        counts = [positions.get(i, 0) for i in range(N_OPTIONS)]
        if max(counts) - min(counts) > 1:
            problems.append(f"correct-answer positions unbalanced across A-D: {counts}")
    return problems


def check(records: list[Record], name: str = "") -> None:
    """Raise GateError listing every violation (the first 30) in `records` (one file)."""
    problems = file_problems(records)
    if problems:
        shown = "\n  ".join(problems[:30])
        more = f"\n  ... and {len(problems) - 30} more" if len(problems) > 30 else ""
        raise GateError(f"{name or 'benchmark'}: {len(problems)} quality-gate violation(s):\n  {shown}{more}")
