"""The whole pipeline on the shipped sample with a tiny Gemma 3, on CPU (`make demo`).

    python -m morphcpt.demo [--output-dir outputs/demo] [--workers 2] [--eval-limit 40]

The same library code the cluster runs, on embedded defaults: split the sample corpus (holding out a canonical
validation set), preprocess every chunk three ways into Megatron indexed datasets, audit them side by side,
pretrain a tiny random Gemma 3 briefly on vanilla data (the "base"), continue pretraining it on each scheme, grow it
by an EEVE-expanded tokenizer and train it through the seven EEVE stages (a few steps each), export all five
models to Hugging Face folders, generate the Filipino morphology benchmarks, evaluate every model and
write the analysis report. Every stage resumes: a rerun skips finished work. Outputs go under `--output-dir`.

A tiny model trained for a few minutes cannot tell the schemes apart on morphology: the demo shows that every
stage works and what each prints, not the research answer (that needs the cluster run).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from morphcpt import paths
from morphcpt.jsonio import read_json

SCHEMES = ("vanilla", "stochastok", "patok")
# Small benchmark sizes: the demo evaluates four models on CPU in a couple of minutes.
DEMO_PACUTE_SIZES = {"affixation": 40, "composition": 60, "manipulation": 56, "syllabification": 48}
DEMO_LEVEL_SIZE = 40
DEMO_EEVE_NEW = 256  # new pieces of the demo's EEVE tokenizer (2,048 on the cluster)


@dataclass
class DemoConfig:
    output_dir: Path = paths.OUTPUTS_DIR / "demo"
    num_chunks: int = 2
    holdout_lines: int = 160
    workers: int = 2
    seed: int = 1234
    eval_limit: int | None = None
    eval_batch_size: int = 32
    # Extra training-plan overrides for every run (the tests shorten the runs with them).
    train_overrides: list[str] = field(default_factory=list)


class Stages:
    """Prints a numbered header per stage and the time it took."""

    def __init__(self, total: int) -> None:
        self.total, self.index, self.started = total, 0, time.perf_counter()

    def __call__(self, title: str) -> None:
        self.index += 1
        elapsed = time.perf_counter() - self.started
        print(f"\n[{self.index}/{self.total}] {title}   (t={elapsed:.0f}s)", flush=True)


def split_sample(cfg: DemoConfig) -> Path:
    from morphcpt.corpus.split import MANIFEST, split_jsonl

    chunks = cfg.output_dir / "chunks"
    if not (chunks / MANIFEST).exists():
        split_jsonl(paths.SAMPLE_CORPUS, chunks, cfg.num_chunks, holdout_lines=cfg.holdout_lines)
    manifest = read_json(chunks / MANIFEST, fix=f"delete {chunks} and rerun the demo")
    for entry in [*manifest["chunks"], manifest["validation"]]:
        print(f"  {entry['file']:<18} {entry['lines']:>5} lines  {entry['bytes']:>8,} bytes")
    return chunks


def preprocess_all(cfg: DemoConfig, chunks: Path) -> Path:
    from morphcpt import preprocess

    processed = cfg.output_dir / "processed"
    common = [f"output_dir={processed}", f"workers={cfg.workers}", f"seed={cfg.seed}", "progress=false"]
    for scheme in SCHEMES:
        for chunk in sorted(chunks.glob("chunk_*.jsonl")):
            stats = preprocess.run(preprocess.compose_config([f"scheme={scheme}", f"input={chunk}", *common]))
            print(f"  {scheme:<11} {chunk.stem}: {_stats_line(stats)}")
    stats = preprocess.run(
        preprocess.compose_config(["validation=true", f"input={chunks / 'validation.jsonl'}", *common])
    )
    print(f"  validation  (canonical, shared by every scheme): {_stats_line(stats)}")
    eeve_data(cfg, chunks, processed, common)
    return processed


def eeve_data(cfg: DemoConfig, chunks: Path, processed: Path, common: list[str]) -> None:
    """The fourth arm: an EEVE tokenizer trained on the chunks, then the eeve scheme's chunks and validation."""
    from morphcpt import preprocess
    from morphcpt.tokenization.eeve import EXPANSION_FILE, Expansion, expand

    folder = cfg.output_dir / "tokenizers" / "demo-eeve"
    if not (folder / EXPANSION_FILE).exists() or Expansion.load(folder).num_new != DEMO_EEVE_NEW:
        expand(
            sorted(chunks.glob("chunk_*.jsonl")), paths.SAMPLE_TOKENIZER_DIR, folder, num_new=DEMO_EEVE_NEW
        )
    expansion = Expansion.load(folder)
    print(
        f"  eeve tokenizer: {expansion.num_new} new pieces (e.g. {', '.join(expansion.pieces[:6])}), tokens/byte "
        f"{expansion.base_tokens / expansion.corpus_bytes:.3f} -> {expansion.expanded_tokens / expansion.corpus_bytes:.3f}"
    )
    eeve = ["scheme=eeve", f"tokenizer={folder}", *common]
    for chunk in sorted(chunks.glob("chunk_*.jsonl")):
        stats = preprocess.run(preprocess.compose_config([f"input={chunk}", *eeve]))
        print(f"  {'eeve':<11} {chunk.stem}: {_stats_line(stats)}")
    stats = preprocess.run(
        preprocess.compose_config(["validation=true", f"input={chunks / 'validation.jsonl'}", *eeve])
    )
    print(f"  validation  (the same held-out text in the eeve tokenizer's ids): {_stats_line(stats)}")


def _stats_line(stats: dict) -> str:
    if stats.get("skipped"):
        return "already done, skipped"
    changed = f", {stats['changed_documents']} changed by the scheme" if stats["changed_documents"] else ""
    return (
        f"{stats['documents']} documents, {stats['tokens']:,} tokens "
        f"({stats['canonical_tokens']:,} canonical){changed}, {stats['read_report']['bad_total']} bad lines"
    )


def audit_table(processed: Path) -> str:
    from morphcpt.audit import audit, format_table

    return format_table(audit(processed))


def train_and_export(cfg: DemoConfig, processed: Path) -> dict[str, dict]:
    """Base pretraining on vanilla, then CPT per scheme; returns validation figures and export folders."""
    from morphcpt.export import export_run
    from morphcpt.plan.compose import load_plan
    from morphcpt.train.hf.engine import train

    common = [
        f"data.root={processed}",
        f"output_root={cfg.output_dir}",
        f"data.num_chunks={cfg.num_chunks}",
        *cfg.train_overrides,
    ]
    runs: dict[str, dict] = {}
    base_plan = load_plan(["recipe=demo_base", *common])
    base = train(base_plan)
    base_export = _export(export_run, base, cfg.output_dir / "exports" / "demo-base")
    runs["base"] = _run_summary(base, base_export)
    print(f"  base: {base.final_step} steps, val loss {base.val_loss:.4f}, exported to {_rel(base_export)}")
    for scheme in SCHEMES:
        plan = load_plan(
            ["recipe=demo_cpt", f"data.scheme={scheme}", f"model.pretrained={base_export}", *common]
        )
        result = train(plan)
        export = _export(export_run, result, cfg.output_dir / "exports" / plan.run_name)
        runs[scheme] = _run_summary(result, export)
        print(
            f"  {scheme}: {result.final_step} CPT steps, val loss {result.val_loss:.4f}, exported to {_rel(export)}"
        )
    runs["eeve"] = train_eeve(cfg, base_export, common)
    return runs


def train_eeve(cfg: DemoConfig, base_export: Path, common: list[str]) -> dict:
    """The base grown by the EEVE tokenizer, through the seven stages (each resumable, skipped when done)."""
    from morphcpt.plan.compose import load_plan
    from morphcpt.train.eeve import engine

    folder = cfg.output_dir / "tokenizers" / "demo-eeve"
    plan = load_plan(
        ["recipe=demo_eeve", f"model.pretrained={base_export}", f"model.tokenizer={folder}", *common]
    )
    result = engine.run(plan)
    last = read_json(engine.stage_dir(plan, result.stages_run[-1]) / engine.STAGE_DONE)
    steps = sum(plan.eeve.steps[k - 1] for k in result.stages_run)
    final = SimpleNamespace(  # the last stage's run, with the steps of every stage
        run_dir=engine.stage_dir(plan, result.stages_run[-1]),
        val_loss=last["val_loss"],
        val_bpb=last["val_bpb"],
        final_step=steps,
    )
    print(
        f"  eeve: stages {result.stages_run}, {steps} steps, val loss {last['val_loss']:.4f}, "
        f"exported to {_rel(result.export)}"
    )
    return _run_summary(final, result.export)


def _export(export_run, result, output: Path) -> Path:
    """Export a run's final checkpoint, unless a rerun finds that very export already there (a new export would
    carry a new creation time, and the evaluation would score the unchanged model again)."""
    from morphcpt.export import METADATA_FILE

    existing = output / METADATA_FILE
    if existing.exists() and read_json(existing).get("step") == result.final_step:
        return output
    return export_run(result.run_dir, output=output).output


def _run_summary(result, export: Path) -> dict:
    """What the comparison shows of a run, including proof of the data it read (its data fingerprint)."""
    fingerprint = read_json(Path(result.run_dir) / "data_fingerprint.json")
    folders = sorted({Path(prefix).parent.name for prefix in fingerprint["indexes"]} - {"validation"})
    return {
        "val_loss": result.val_loss,
        "val_bpb": result.val_bpb,
        "export": export,
        "steps": result.final_step,
        "data": ", ".join(folders),
        "train_tokens_per_byte": fingerprint["train_tokens_per_byte"],
    }


def comparison_table(runs: dict[str, dict]) -> str:
    """Every run validates on the same canonical ids, so both validation columns compare across schemes (EEVE
    validates on the same text in its own tokenizer's ids: for it only bits per byte compares); the training
    tokens/byte (from each run's data fingerprint) shows which scheme's ids it really read."""
    lines = [
        "| model | data read | steps | training tokens/byte | validation loss (nats/token) | validation bits/byte |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, run in runs.items():
        lines.append(
            f"| {name} | {run['data']} | {run['steps']} | {run['train_tokens_per_byte']:.3f} "
            f"| {run['val_loss']:.4f} | {run['val_bpb']:.4f} |"
        )
    return "\n".join(lines)


def benchmarks(cfg: DemoConfig) -> Path:
    from morphcpt.bench.generate import generate, load_config, summary

    out = cfg.output_dir / "benchmarks"
    overrides = [f"output_dir={out}", f"seed={cfg.seed}"]
    overrides += [f"pacute.{name}={size}" for name, size in DEMO_PACUTE_SIZES.items()]
    overrides += [f"hierarchical.level{n}={DEMO_LEVEL_SIZE}" for n in range(6)]
    manifest = generate(load_config(None, overrides))
    print(summary(manifest))
    return out


def evaluate_all(cfg: DemoConfig, runs: dict[str, dict], bench_dir: Path) -> Path:
    from morphcpt.evaluate.runner import EvalConfig, run_evaluation

    results = cfg.output_dir / "results"
    eval_cfg = EvalConfig(
        models=[str(run["export"]) for run in runs.values()],
        model_names=list(runs),
        benchmarks=["pacute", "hierarchical"],
        eval_mode="both",
        benchmark_dir=bench_dir,
        output_dir=results,
        limit=cfg.eval_limit,
        batch_size=cfg.eval_batch_size,
        device="cpu",
    )
    run_evaluation(eval_cfg)
    return results


def analyse(cfg: DemoConfig, results: Path) -> Path:
    from morphcpt.analysis.report import build_report

    report = build_report(results, cfg.output_dir / "report")
    return Path(report)


def _rel(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run(cfg: DemoConfig) -> None:
    stage = Stages(total=7)
    print(f"morphcpt demo: tiny Gemma 3 on the shipped Filipino sample, outputs in {_rel(cfg.output_dir)}")
    stage("split the sample corpus into chunks + a held-out canonical validation set")
    chunks = split_sample(cfg)
    stage(
        "preprocess every chunk three ways (+ an EEVE tokenizer and its data) into Megatron indexed datasets"
    )
    processed = preprocess_all(cfg, chunks)
    stage("audit: do the schemes differ as intended?")
    print(audit_table(processed))
    stage(
        "train: pretrain a tiny base on vanilla, continue pretraining it on each scheme and EEVE; export all"
    )
    runs = train_and_export(cfg, processed)
    print(comparison_table(runs))
    stage("generate the Filipino morphology benchmarks (PACUTE-style + hierarchical levels 0-5)")
    bench_dir = benchmarks(cfg)
    stage("evaluate every model (MCQ log-likelihood and generative)")
    results = evaluate_all(cfg, runs, bench_dir)
    stage("analyse: tables, confidence intervals, paired tests, plots, report")
    report = analyse(cfg, results)
    answer = [line for line in report.read_text().splitlines() if line.startswith("**Answer")]
    print("\n".join(answer) or "(the report states no answer)")
    print(
        "(a tiny model trained for seconds: expect chance-level scores; the cluster run answers the question)"
    )
    print(f"\nDone in {time.perf_counter() - stage.started:.0f}s. Report: {_rel(report)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="morphcpt demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=DemoConfig.output_dir)
    parser.add_argument("--workers", type=int, default=DemoConfig.workers)
    parser.add_argument("--eval-limit", type=int, default=None, help="first N items of every benchmark task")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    run(DemoConfig(output_dir=args.output_dir.resolve(), workers=args.workers, eval_limit=args.eval_limit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
