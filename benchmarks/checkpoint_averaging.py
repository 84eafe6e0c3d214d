"""Which reduces noise more: averaging each item's score over a run's last k checkpoints, or scoring one model whose
weights are the mean of those k checkpoints? Measured on the demo's tiny Gemma 3 (CPU, hf engine).

    python benchmarks/checkpoint_averaging.py [--output-dir outputs/ckpt-avg] [--k 4] [--steps 40] [--interval 5]

It pretrains the demo base (recipe demo_base), continues pretraining it on vanilla and patok, two seeds each
(recipe demo_cpt, a checkpoint every `interval` steps, all kept), generates the demo's benchmark sizes, and scores
MCQ three ways per run: the last checkpoint alone ("last"), the per-item mean over the last k checkpoints
(`run_evaluation --last-checkpoints k`: "ckpt-mean") and the averaged weights (`export --average-last k`:
"avg-weights"). For every way and metric (acc_norm, gold_prob, gold_margin) it prints:

* item noise: the per-item variance between the two seeds of an arm, (x_seed0 - x_seed1)^2 / 2, mean over items, pooled
  over the two arms (what an item x seed test sees as noise);
* seed sd: the sd of an arm's benchmark mean between its two seeds, pooled over arms (1 df per arm: rough);
* signal: |patok - vanilla|, the difference of the arm means (over items and seeds);
* SNR: signal / seed sd.

Each run's artefacts are reused on a rerun (training resumes, exports and results are skipped when present).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

from morphcpt import paths

ARMS = ("vanilla", "patok")
SEEDS = (0, 1)
METRICS = ("acc_norm", "gold_prob", "gold_margin")


def prepare(out: Path) -> tuple[Path, Path]:
    """(processed data root, the exported base)."""
    from morphcpt import preprocess
    from morphcpt.corpus.split import split_jsonl
    from morphcpt.export import export_run
    from morphcpt.plan.compose import load_plan
    from morphcpt.train.hf.engine import train

    chunks, processed = out / "chunks", out / "processed"
    if not chunks.is_dir():
        split_jsonl(paths.SAMPLE_CORPUS, chunks, 1, holdout_lines=160)
    common = [f"output_dir={processed}", "workers=2", "seed=1234", "progress=false"]
    chunk = chunks / "chunk_01.jsonl"
    for scheme in ARMS:
        for seed in SEEDS:
            extra = [f"replicate={seed}"] if seed and scheme != "vanilla" else []
            preprocess.run(preprocess.compose_config([f"scheme={scheme}", f"input={chunk}", *common, *extra]))
    preprocess.run(
        preprocess.compose_config(["validation=true", f"input={chunks / 'validation.jsonl'}", *common])
    )
    base = out / "exports" / "demo-base"
    if not (base / "config.json").is_file():
        plan = load_plan(["recipe=demo_base", f"data.root={processed}", f"output_root={out}"])
        train(plan)
        export_run(plan.run_dir, output=base)
    return processed, base


def train_arms(out: Path, processed: Path, base: Path, steps: int, interval: int) -> list[Path]:
    from morphcpt.plan.compose import load_plan
    from morphcpt.train.hf.engine import train

    runs = []
    for scheme in ARMS:
        for seed in SEEDS:
            plan = load_plan(
                [
                    "recipe=demo_cpt",
                    f"data.scheme={scheme}",
                    f"data.replicate={seed}",
                    f"model.pretrained={base}",
                    f"data.root={processed}",
                    f"output_root={out}",
                    f"run_name=ca-{scheme}",
                    f"loop.steps={steps}",
                    f"checkpoint.interval={interval}",
                    f"checkpoint.keep={steps // interval}",
                    f"validation.interval={steps}",
                ]
            )
            train(plan)  # resumes from the last checkpoint, or returns at once when finished
            runs.append(Path(plan.run_dir))
    return runs


def benchmarks(out: Path) -> Path:
    from morphcpt.bench.generate import generate, load_config
    from morphcpt.demo import DEMO_LEVEL_SIZE, DEMO_PACUTE_SIZES

    folder = out / "benchmarks"
    if not (folder / "manifest.json").is_file():
        overrides = [f"output_dir={folder}", "seed=1234"]
        overrides += [f"pacute.{name}={size}" for name, size in DEMO_PACUTE_SIZES.items()]
        overrides += [f"hierarchical.level{n}={DEMO_LEVEL_SIZE}" for n in range(6)]
        generate(load_config(None, overrides))
    return folder


def evaluate(out: Path, runs: list[Path], bench: Path, k: int) -> dict[str, dict[str, dict[str, dict]]]:
    """way -> run name -> item id -> prediction (for ckpt-mean, the metrics averaged over the k checkpoints)."""
    from morphcpt.evaluate.runner import EvalConfig, run_evaluation
    from morphcpt.export import average_last

    common = dict(benchmarks=["pacute", "hierarchical"], eval_mode="mcq", benchmark_dir=bench, device="cpu")
    run_evaluation(
        EvalConfig(
            models=[str(r) for r in runs], output_dir=out / "results-ckpts", last_checkpoints=k, **common
        )
    )
    averaged = []
    for run in runs:
        target = out / "exports-avg" / run.name
        if not (target / "config.json").is_file():
            average_last(run, k, target)
        averaged.append(str(target))
    run_evaluation(EvalConfig(models=averaged, output_dir=out / "results-avg", **common))
    ways: dict[str, dict[str, dict[str, dict]]] = {"last": {}, "ckpt-mean": {}, "avg-weights": {}}
    for run in runs:
        members = sorted((out / "results-ckpts" / run.name).glob("ckpt-*"), key=lambda p: int(p.name[5:]))
        per_ckpt = [_items(folder) for folder in members]
        ways["last"][run.name] = per_ckpt[-1]
        ways["ckpt-mean"][run.name] = {
            item: {m: statistics.fmean(float(c[item][m]) for c in per_ckpt) for m in METRICS}
            for item in per_ckpt[-1]
        }
        ways["avg-weights"][run.name] = _items(out / "results-avg" / run.name)
        ways.setdefault("_per_ckpt", {})[run.name] = per_ckpt
    return ways


def _items(folder: Path) -> dict[str, dict]:
    found = {}
    for path in sorted(folder.glob("*_mcq.json")):
        found.update((p["id"], p) for p in json.loads(path.read_text())["predictions"])
    return found


def figures(ways: dict, runs: list[Path]) -> list[dict]:
    names = {
        (scheme, seed): run.name
        for run, (scheme, seed) in zip(runs, [(a, s) for a in ARMS for s in SEEDS], strict=True)
    }
    rows = []
    for way in ("last", "ckpt-mean", "avg-weights"):
        for metric in METRICS:
            item_noise, seed_var, means = [], [], {}
            for scheme in ARMS:
                a, b = ways[way][names[(scheme, 0)]], ways[way][names[(scheme, 1)]]
                items = sorted(set(a) & set(b))
                x0 = [float(a[i][metric]) for i in items]
                x1 = [float(b[i][metric]) for i in items]
                item_noise.append(statistics.fmean((u - v) ** 2 / 2 for u, v in zip(x0, x1, strict=True)))
                seed_var.append((statistics.fmean(x0) - statistics.fmean(x1)) ** 2 / 2)
                means[scheme] = (statistics.fmean(x0) + statistics.fmean(x1)) / 2
            signal = abs(means["patok"] - means["vanilla"])
            sd = math.sqrt(statistics.fmean(seed_var))
            rows.append(
                {
                    "way": way,
                    "metric": metric,
                    "n_items": len(items),
                    "item_noise_var": statistics.fmean(item_noise),
                    "seed_sd": sd,
                    "signal": signal,
                    "snr": signal / sd if sd else math.inf,
                }
            )
    return rows


def checkpoint_noise(ways: dict) -> dict[str, float]:
    """Signal and Noise's noise: the sd of a run's benchmark mean over its last k checkpoints, mean over runs."""
    out = {}
    for metric in METRICS:
        sds = [
            statistics.stdev(statistics.fmean(float(p[metric]) for p in c.values()) for c in per_ckpt)
            for per_ckpt in ways["_per_ckpt"].values()
        ]
        out[metric] = statistics.fmean(sds)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=paths.OUTPUTS_DIR / "ckpt-avg")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--interval", type=int, default=5)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    processed, base = prepare(args.output_dir)
    runs = train_arms(args.output_dir, processed, base, args.steps, args.interval)
    ways = evaluate(args.output_dir, runs, benchmarks(args.output_dir), args.k)
    rows = figures(ways, runs)
    print("| way | metric | items | item noise var | seed sd | signal | SNR |\n|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['way']} | {r['metric']} | {r['n_items']} | {r['item_noise_var']:.4g} | {r['seed_sd']:.4g} "
            f"| {r['signal']:.4g} | {r['snr']:.2f} |"
        )
    print("checkpoint noise (sd of a run's mean over its last k checkpoints):", checkpoint_noise(ways))
    (args.output_dir / "figures.json").write_text(
        json.dumps({"rows": rows, "checkpoint_noise": checkpoint_noise(ways)}, indent=1)
    )
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
