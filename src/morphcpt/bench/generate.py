"""Generate the PACUTE-style and hierarchical benchmarks, deterministically from a seed, and gate them.

    python scripts/generate_benchmarks.py --output-dir data/benchmarks --seed 0 [pacute.affixation=70 ...]

Writes `<out>/pacute/<subset>_{mcq,gen}.jsonl`, `<out>/hierarchical/level<N>_{mcq,gen}.jsonl` and
`<out>/manifest.json` (seed, configuration, counts per category, file hashes, what was skipped and why). The
manifest says `"complete": false` from before the first file is rewritten until the last one is written, so a
killed run is never mistaken for a finished set (evaluation checks the manifest and the files' hashes). Every
random choice comes from `random.Random("<seed>:<benchmark>:<subset>:<task>")`, so a subset does not change
when another one's size does. Each file passes the quality gates (`gates.py`) before it is written.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from omegaconf import OmegaConf

from morphcpt import paths
from morphcpt.bench import gates
from morphcpt.bench.io import Record, write_records
from morphcpt.bench.settings import BenchmarkConfig
from morphcpt.bench.suites import HIERARCHICAL_LEVELS, PACUTE_SUBSETS, SKIPPED, quotas
from morphcpt.bench.tasks import TASKS, Question
from morphcpt.bench.words import BenchLexicon

DEFAULT_CONFIG = paths.CONF_DIR / "benchmarks.yaml"


class GenerationError(RuntimeError):
    """A task could not produce its quota of distinct items from the lexicon."""


def draw_questions(task: str, n: int, key: str, lex: BenchLexicon, max_draws: int) -> list[Question]:
    """`n` distinct questions of one task (distinct prompts and distinct words)."""
    rng = random.Random(key)
    out: list[Question] = []
    prompts, words = set(), set()
    for _ in range(max(n, 1) * max_draws):
        if len(out) == n:
            break
        question = TASKS[task].make(rng, lex)
        if question is None or question.prompt_en in prompts or question.word in words:
            continue
        prompts.add(question.prompt_en)
        words.add(question.word)
        out.append(question)
    if len(out) < n:
        raise GenerationError(
            f"{key}: only {len(out)} of {n} distinct items; lower the size or enlarge the lexicon"
        )
    return out


def balanced_positions(n: int, rng: random.Random) -> list[int]:
    """Correct-option positions: every block of four items uses A, B, C, D once, in a random order."""
    positions: list[int] = []
    while len(positions) < n:
        positions += rng.sample(range(4), 4)
    return positions[:n]


def build_records(
    benchmark: str, subset: str, category: str, questions: list[Question], seed: int, level: int | None = None
) -> tuple[list[Record], list[Record]]:
    rng = random.Random(f"{seed}:positions:{benchmark}:{subset}")
    mcq, gen = [], []
    for i, (question, pos) in enumerate(zip(questions, balanced_positions(len(questions), rng), strict=True)):
        options = list(question.distractors)
        rng.shuffle(options)
        options.insert(pos, question.answer)
        common = {
            "id": f"{subset}-{i:04d}",
            "benchmark": benchmark,
            "subset": subset,
            "category": category or subset,
            "subcategory": question.label,
            "prompt_en": question.prompt_en,
            "prompt_tl": question.prompt_tl,
            "answer": question.answer,
            "word": question.word,
            "metadata": {"task": question.task, "params": question.params},
            "level": level,
        }
        mcq.append(Record(mode="mcq", options=tuple(options), **common))
        gen.append(Record(mode="gen", **common))
    return mcq, gen


def _write(out_dir: Path, rel: str, records: list[Record], files: dict[str, str]) -> None:
    gates.check(records, rel)
    write_records(out_dir / rel, records)
    files[rel] = hashlib.sha256((out_dir / rel).read_bytes()).hexdigest()


def generate(cfg: BenchmarkConfig) -> dict:
    """Build, gate and write every set; return the manifest (also written as manifest.json)."""
    out_dir = Path(cfg.output_dir or paths.DATA_DIR / "benchmarks")
    lex = BenchLexicon(Path(cfg.lexicon_dir or paths.LEXICON_DIR), pool_size=cfg.word_pool)
    files: dict[str, str] = {}
    counts: dict[str, dict] = {"pacute": {}, "hierarchical": {}}
    plan = [
        ("pacute", s, s, PACUTE_SUBSETS[s], cfg.pacute[s], None) for s in PACUTE_SUBSETS if cfg.pacute.get(s)
    ]
    plan += [
        ("hierarchical", f"level{n}", name, tasks, cfg.hierarchical[f"level{n}"], n)
        for n, (name, tasks) in HIERARCHICAL_LEVELS.items()
        if cfg.hierarchical.get(f"level{n}")
    ]
    # Mark the folder as being regenerated before the first file changes: a killed run leaves a manifest saying
    # so (evaluation refuses such a set), never an old manifest over a mix of old and new files.
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_manifest(out_dir, {"complete": False, "seed": cfg.seed, "config": asdict(cfg)})
    for benchmark, subset, category, tasks, size, level in plan:
        questions = [
            q
            for task, n in quotas(size, tasks).items()
            for q in draw_questions(
                task, n, f"{cfg.seed}:{benchmark}:{subset}:{task}", lex, cfg.max_draws_per_item
            )
        ]
        mcq, gen = build_records(benchmark, subset, category, questions, cfg.seed, level)
        _write(out_dir, f"{benchmark}/{subset}_mcq.jsonl", mcq, files)
        _write(out_dir, f"{benchmark}/{subset}_gen.jsonl", gen, files)
        positions = Counter("ABCD"[r.correct_index] for r in mcq)
        counts[benchmark][subset] = {
            "category": category,
            "items": len(mcq),
            "subcategories": dict(Counter(r.subcategory for r in mcq)),
            "mcq_positions": {k: positions[k] for k in "ABCD"},
        }
    manifest = {
        "complete": True,
        "seed": cfg.seed,
        "config": asdict(cfg),
        "counts": counts,
        "files": files,
        "skipped": SKIPPED,
        "lexicon": {"words": len(lex.words), "affixed": {k: len(v) for k, v in sorted(lex.affixed.items())}},
    }
    _write_manifest(out_dir, manifest)
    return manifest


def _write_manifest(out_dir: Path, manifest: dict) -> None:
    tmp = out_dir / "manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", "utf-8")
    os.replace(tmp, out_dir / "manifest.json")


def summary(manifest: dict) -> str:
    lines = []
    for benchmark, subsets in manifest["counts"].items():
        for subset, c in subsets.items():
            subs = ", ".join(f"{k} {v}" for k, v in c["subcategories"].items())
            pos = " ".join(f"{k}{v}" for k, v in c["mcq_positions"].items())
            lines.append(
                f"{benchmark}/{subset} ({c['category']}): {c['items']} MCQ + {c['items']} GEN [{pos}] — {subs}"
            )
    lines += [f"skipped {k}: {v}" for k, v in manifest["skipped"].items()]
    return "\n".join(lines)


def load_config(path: Path | None, overrides: list[str]) -> BenchmarkConfig:
    """Dataclass defaults <- YAML file <- `key=value` overrides; a key the dataclass lacks is an error."""
    merged = OmegaConf.structured(BenchmarkConfig)
    if path is not None:
        merged = OmegaConf.merge(merged, OmegaConf.load(path))
    merged = OmegaConf.merge(merged, OmegaConf.from_dotlist(overrides))
    cfg = OmegaConf.to_object(merged)
    check_sizes(cfg)
    return cfg


def check_sizes(cfg: BenchmarkConfig) -> None:
    """Sizes name known subsets and levels and are 0 (skip) or more: `pacute.affixaton=70` or `level2=-5` would
    otherwise be accepted and silently do nothing."""
    known = {"pacute": list(PACUTE_SUBSETS), "hierarchical": [f"level{n}" for n in HIERARCHICAL_LEVELS]}
    for group, names in known.items():
        for name, size in getattr(cfg, group).items():
            if name not in names:
                raise ValueError(
                    f"unknown {group} subset {name!r} in {group}.{name}; known: {', '.join(names)}"
                )
            if not isinstance(size, int) or size < 0:
                raise ValueError(f"{group}.{name} must be a size of 0 (skip) or more, got {size!r}")


def parse_args(argv: list[str] | None = None) -> tuple[Path | None, list[str]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--config", type=Path, default=DEFAULT_CONFIG, help="YAML file (default: %(default)s)"
    )
    parser.add_argument("--output-dir", help="where to write (default: data/benchmarks)")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--lexicon-dir", help="lexicon folder (default: data/lexicon)")
    parser.add_argument(
        "overrides", nargs="*", help="key=value, e.g. pacute.affixation=70 hierarchical.level2=100"
    )
    args = parser.parse_args(argv)
    extra = [
        f"{k}={v}"
        for k, v in (("output_dir", args.output_dir), ("seed", args.seed), ("lexicon_dir", args.lexicon_dir))
        if v is not None
    ]
    return args.config, [*args.overrides, *extra]


def main(argv: list[str] | None = None) -> int:
    config_path, overrides = parse_args(argv)
    try:
        cfg = load_config(config_path, overrides)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    manifest = generate(cfg)
    print(summary(manifest))
    return 0
