#!/usr/bin/env python
"""Parity and speed against lm-evaluation-harness: our evaluator and `lm_eval` on the same exported tasks, model,
batch size and threads, compared item by item and timed in one run. Not a test.

    pip install lm_eval                # 0.4.x; not a project dependency
    python benchmarks/lm_eval_parity.py [--model DIR] [--benchmark-dir tests/data/official] \
        [--benchmarks pacute hierarchical cute langgame multi_digit_addition] [--modes mcq gen] \
        [--per-family 200] [--batch-size 8] [--threads 2] [--max-new-tokens 8] [--dtype float32] \
        [--lm-eval-softmax-dtype float64] [--json out.json]

Per benchmark ("family"), `--per-family` items are taken from its tasks in turn (the first items of each task, as
`--limit` takes them), exported with `evaluate.lm_eval.export_lm_eval`, then scored by us (`evaluate.mcq` /
`evaluate.gen` through `evaluate.hf_model.HFCausalLM`) and by lm_eval's `hf` model (add_bos_token=True, per-sample
logs), both in `--dtype` (float32; float64 shows what is left once rounding is gone), one family after the other,
ours first. lm_eval's log-softmax runs in `--lm-eval-softmax-dtype` (its own `softmax_dtype` option): float64 by
default, because torch's float32 `log_softmax` on a CPU over Gemma 3's 262,144 logits overstates every token's
log-probability by up to 7.3e-5 (3.4e-4 over a 7-token option) against the float64 log-softmax of the very same
logits; ours (`logsumexp(z) - z[y]`) stays within 1.7e-6 (docs/evaluation.md). `float32` reproduces lm_eval's default. Both models are loaded once, before any timing.
`evaluate.parity` compares each item: MCQ log-likelihoods within 1e-4 and acc / acc_norm equal (items we flag as
tied counted apart), GEN the same answer line and exact/prefix/contains. Timing: seconds in our scorer, and in
lm_eval both the whole `simple_evaluate` (which also reads the task files) and the time inside its model calls
(`loglikelihood` / `generate_until`). The batch size is rows per forward pass in both: an item's options share one
row here, one option is one row there. The default model is a tiny random Gemma 3 built here.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch

from morphcpt import paths
from morphcpt.evaluate.gen import score_gen
from morphcpt.evaluate.hf_model import HFCausalLM
from morphcpt.evaluate.items import load_benchmark
from morphcpt.evaluate.lm_eval import export_lm_eval, task_name
from morphcpt.evaluate.mcq import score_mcq
from morphcpt.evaluate.parity import compare_gen, compare_mcq


def take(tasks: dict[str, list], count: int | None) -> dict[str, list]:
    """The first items of each task, taken in turn until `count` in all (every item when None)."""
    if count is None:
        return tasks
    quota = dict.fromkeys(tasks, 0)
    while sum(quota.values()) < count and any(quota[t] < len(tasks[t]) for t in tasks):
        for task in tasks:
            if quota[task] < len(tasks[task]) and sum(quota.values()) < count:
                quota[task] += 1
    return {task: items[: quota[task]] for task, items in tasks.items() if quota[task]}


class Timed:
    """Wraps a method of lm_eval's model and adds up the seconds spent in it."""

    def __init__(self, function):
        self.function, self.seconds = function, 0.0

    def __call__(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="HF model folder (default: a tiny random Gemma 3)")
    parser.add_argument("--benchmark-dir", type=Path, default=paths.REPO_ROOT / "tests" / "data" / "official")
    parser.add_argument(
        "--benchmarks",
        nargs="+",
        default=["pacute", "hierarchical", "cute", "langgame", "multi_digit_addition"],
    )
    parser.add_argument("--modes", nargs="+", default=["mcq", "gen"], choices=["mcq", "gen"])
    parser.add_argument("--per-family", type=int, help="items per benchmark and mode (default: all)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--max-new-tokens", type=int, default=8)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32", help="both models'")
    parser.add_argument(
        "--lm-eval-softmax-dtype",
        choices=["float32", "float64"],
        default="float64",
        help="lm_eval's softmax_dtype (float32: its default, off by up to 3.4e-4 on the real model)",
    )
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.model or save_tiny(Path(tmp) / "model")
        refuse_gguf_config(model_dir)
        ours_lm = HFCausalLM.load(
            model_dir, device="cpu", batch_size=args.batch_size, dtype=getattr(torch, args.dtype)
        )
        theirs_lm = HFLM(
            pretrained=str(model_dir),
            add_bos_token=True,
            dtype=args.dtype,
            softmax_dtype=args.lm_eval_softmax_dtype,
            batch_size=args.batch_size,
            device="cpu",
        )
        timers = {name: Timed(getattr(theirs_lm, name)) for name in ("loglikelihood", "generate_until")}
        for name, timer in timers.items():
            setattr(theirs_lm, name, timer)
        figures = {
            "model": str(model_dir),
            "batch_size": args.batch_size,
            "threads": args.threads,
            "dtype": args.dtype,
            "lm_eval_softmax_dtype": args.lm_eval_softmax_dtype,
            "families": [],
        }
        print(f"{'task':<40} {'items':>5}  agreement")
        for benchmark in args.benchmarks:
            for mode in args.modes:
                try:
                    loaded = take(load_benchmark(benchmark, mode, args.benchmark_dir), args.per_family)
                except FileNotFoundError:  # cute has no MCQ file
                    continue
                figures["families"].append(
                    family(
                        benchmark,
                        mode,
                        loaded,
                        ours_lm,
                        theirs_lm,
                        timers,
                        Path(tmp),
                        args,
                        lm_eval,
                        TaskManager,
                    )
                )
                if args.json:  # after every family, so a long run that is stopped keeps what it measured
                    args.json.write_text(json.dumps(figures, indent=1) + "\n")
        totals(figures)
        if args.json:
            args.json.write_text(json.dumps(figures, indent=1) + "\n")


def family(benchmark, mode, loaded, ours_lm, theirs_lm, timers, tmp, args, lm_eval, task_manager) -> dict:
    """One benchmark in one mode: ours timed, lm_eval timed, every task compared; its figures."""
    task_dir = tmp / f"tasks_{benchmark}_{mode}"
    keyed = {(task, mode): items for task, items in loaded.items()}
    export_lm_eval(keyed, task_dir)
    names = {task: task_name(task, mode) for task in loaded}
    # One call for the whole family, as lm_eval batches every request of its tasks together: scoring task by task
    # would give ours batches of 1-2 items where a family has many small tasks (PACUTE, hierarchical).
    every = [item for items in loaded.values() for item in items]
    started = time.perf_counter()
    if mode == "mcq":
        scored = score_mcq(ours_lm, every)
    else:
        scored = score_gen(ours_lm, every, max_new_tokens=args.max_new_tokens)
    ours_seconds = time.perf_counter() - started
    ours, offset = {}, 0
    for task, items in loaded.items():
        ours[task], offset = scored[offset : offset + len(items)], offset + len(items)
    inside = {name: timer.seconds for name, timer in timers.items()}
    started = time.perf_counter()
    out = lm_eval.simple_evaluate(
        model=theirs_lm,
        tasks=sorted(names.values()),
        task_manager=task_manager(include_path=str(task_dir)),
        log_samples=True,
        gen_kwargs=f"max_gen_toks={args.max_new_tokens}",
    )
    theirs_seconds = time.perf_counter() - started
    theirs_model = sum(timer.seconds - inside[name] for name, timer in timers.items())
    tasks = {}
    for task, predictions in sorted(ours.items()):
        samples = {s["doc"]["id"]: s for s in out["samples"][names[task]]}
        report = (compare_mcq if mode == "mcq" else compare_gen)(predictions, samples)
        print(f"{names[task]:<40} {report.items:>5}  {report.summary()}")
        for item_id, what in report.disagreements[:3]:
            print(f"    {item_id}: {what}")
        tasks[task] = {**vars(report), "disagreements": report.disagreements[:20], "ok": report.ok}
    items = sum(len(v) for v in loaded.values())
    row = {
        "benchmark": benchmark,
        "mode": mode,
        "items": items,
        "ours_seconds": ours_seconds,
        "lm_eval_seconds": theirs_seconds,
        "lm_eval_model_seconds": theirs_model,
        "tasks": tasks,
    }
    print(
        f"  {benchmark} {mode}: {items} items; ours {items / ours_seconds:.3f} items/s, lm-eval "
        f"{items / theirs_seconds:.3f} items/s ({items / theirs_model:.3f} inside its model calls); "
        f"{'all agree' if all(t['ok'] for t in tasks.values()) else 'DISAGREEMENTS'}",
        flush=True,
    )
    return row


def totals(figures: dict) -> None:
    rows = figures["families"]
    if not rows:
        return
    items = sum(r["items"] for r in rows)
    ours = sum(r["ours_seconds"] for r in rows)
    theirs = sum(r["lm_eval_seconds"] for r in rows)
    gap = max((t["max_loglik_diff"] for r in rows for t in r["tasks"].values()), default=0.0)
    bad = sum(len(t["disagreements"]) for r in rows for t in r["tasks"].values())
    figures["total"] = {
        "items": items,
        "ours_items_per_s": items / ours,
        "lm_eval_items_per_s": items / theirs,
    }
    print(
        f"total: {items} items; ours {items / ours:.3f} items/s, lm-eval {items / theirs:.3f} items/s "
        f"(x{theirs / ours:.2f}); max |delta loglik| {gap:.2e}; {bad} disagreements"
    )


def refuse_gguf_config(model_dir: Path) -> None:
    """A folder saved from a GGUF-loaded model can keep `quantization_config: {quant_method: gguf}` in its config:
    transformers loads it, but lm_eval's `hf` model passes that config back and transformers then refuses it
    ("Loading a GGUF checkpoint needs the file named"). Say so before loading anything."""
    config = json.loads((Path(model_dir) / "config.json").read_text())
    if (config.get("quantization_config") or {}).get("quant_method") == "gguf":
        raise SystemExit(
            f"{model_dir}/config.json keeps a GGUF quantization_config although its weights are plain: lm_eval's "
            "hf model cannot load it. Write the config without `quantization_config` (a folder of links to the "
            "weights and tokenizer beside an edited config.json will do)."
        )


def save_tiny(out: Path) -> Path:
    from morphcpt.modeling.models import save_tiny_gemma3

    return save_tiny_gemma3(
        paths.DATA_DIR / "tokenizer", out, num_layers=2, num_heads=2, intermediate_size=128
    )


if __name__ == "__main__":
    main()
