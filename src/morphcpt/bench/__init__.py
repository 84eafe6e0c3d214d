"""Filipino morphology benchmarks: PACUTE-style subsets and the hierarchical levels 0-5, MCQ and GEN.

`python -m morphcpt.bench` (or `morphcpt benchmarks`, or `python scripts/generate_benchmarks.py`) generates them;
see `generate.py`. Modules: `lexicon` (real words), `tasks` (question types with answer solvers), `suites`
(tasks per subset/level), `gates` (quality gates), `io` (both JSONL formats), `config`.
"""

from __future__ import annotations

from morphcpt.bench.generate import generate, main

__all__ = ["generate", "main"]
