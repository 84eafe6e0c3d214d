"""Configuration of the benchmark generator: defaults here, overridden by conf/benchmarks.yaml, then the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field

from morphcpt.bench.suites import HIERARCHICAL_LEVELS, HIERARCHICAL_SIZE, PACUTE_SIZES


@dataclass
class BenchmarkConfig:
    output_dir: str = ""  # "" -> <data dir>/benchmarks
    seed: int = 0
    lexicon_dir: str = ""  # "" -> <data dir>/lexicon
    word_pool: int = 8000  # most frequent Tagalog words to draw letter and syllable items from
    pacute: dict[str, int] = field(default_factory=lambda: dict(PACUTE_SIZES))
    hierarchical: dict[str, int] = field(
        default_factory=lambda: {f"level{n}": HIERARCHICAL_SIZE for n in HIERARCHICAL_LEVELS}
    )
    max_draws_per_item: int = 200  # a task that needs more draws than this per item lacks data: fail loudly
