#!/usr/bin/env python
"""Parity with lm-evaluation-harness: our evaluator and `lm_eval` on the same exported tasks and model, per item.

    pip install lm_eval                # 0.4.x; not a project dependency
    python benchmarks/lm_eval_parity.py [--model DIR] [--benchmark-dir tests/data/official] \
        [--benchmarks pacute cute langgame multi_digit_addition] [--max-new-tokens 8]

Exports the tasks with `evaluate.lm_eval.export_lm_eval`, runs lm_eval's `hf` model (add_bos_token=True, float32)
on them with per-sample logs, scores the same items with `evaluate.mcq` / `evaluate.gen` and prints, per task,
how many items agree on acc, acc_norm (right/wrong) and on exact/prefix/contains, how many we score right (an
agreement on items both get wrong says little), whether both decoded the same answer line, and the largest difference between the two log-likelihoods of
an option. The default model is a tiny random Gemma 3 built here. Not a test.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from morphcpt import paths
from morphcpt.evaluate.answers import first_line
from morphcpt.evaluate.gen import GEN_METRICS, score_gen
from morphcpt.evaluate.hf import HFCausalLM
from morphcpt.evaluate.items import load_benchmark
from morphcpt.evaluate.lm_eval import export_lm_eval, task_name
from morphcpt.evaluate.mcq import score_mcq
from morphcpt.train.models import save_tiny_gemma3


def run_lm_eval(model_dir: Path, task_dir: Path, names: list[str], max_new_tokens: int) -> dict:
    import lm_eval
    from lm_eval.tasks import TaskManager

    out = lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={model_dir},add_bos_token=True,dtype=float32",
        tasks=names,
        task_manager=TaskManager(include_path=str(task_dir)),
        device="cpu",
        batch_size=4,
        log_samples=True,
        gen_kwargs=f"max_gen_toks={max_new_tokens}",
    )
    return {name: {s["doc"]["id"]: s for s in out["samples"][name]} for name in names}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="HF model folder (default: a tiny random Gemma 3)")
    parser.add_argument("--benchmark-dir", type=Path, default=paths.REPO_ROOT / "tests" / "data" / "official")
    parser.add_argument(
        "--benchmarks",
        nargs="+",
        default=["pacute", "hierarchical", "cute", "langgame", "multi_digit_addition"],
    )
    parser.add_argument("--max-new-tokens", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.model or save_tiny_gemma3(
            paths.DATA_DIR / "tokenizer",
            Path(tmp) / "model",
            num_layers=2,
            num_heads=2,
            intermediate_size=128,
        )
        tasks = {}
        for name in args.benchmarks:
            for mode in ("mcq", "gen"):
                try:
                    loaded = load_benchmark(name, mode, args.benchmark_dir)
                except FileNotFoundError:  # cute has no MCQ file
                    continue
                tasks.update({(task, mode): items for task, items in loaded.items()})
        export_lm_eval(tasks, Path(tmp) / "tasks")
        names = {key: task_name(*key) for key in tasks}
        theirs = run_lm_eval(model_dir, Path(tmp) / "tasks", sorted(names.values()), args.max_new_tokens)
        lm = HFCausalLM.load(model_dir, device="cpu", batch_size=4)
        print(f"{'task':<40} {'items':>5}  agreement")
        for key, items in sorted(tasks.items()):
            samples = theirs[names[key]]
            if key[1] == "mcq":
                ours = score_mcq(lm, items)
                acc = sum(p.acc == bool(samples[p.id]["acc"]) for p in ours)
                norm = sum(p.acc_norm == bool(samples[p.id]["acc_norm"]) for p in ours)
                gap = max(
                    abs(mine - float(resp[0]))
                    for p in ours
                    for mine, resp in zip(p.logprobs, samples[p.id]["filtered_resps"], strict=True)
                )
                right = sum(p.acc_norm for p in ours)
                shown = f"acc {acc}/{len(ours)}, acc_norm {norm}/{len(ours)} (right {right}), max |delta loglik| {gap:.2e}"
            else:
                ours = score_gen(lm, items, max_new_tokens=args.max_new_tokens)
                same = {m: sum(getattr(p, m) == bool(samples[p.id][m]) for p in ours) for m in GEN_METRICS}
                right = sum(p.contains for p in ours)
                lines = sum(p.prediction == first_line(samples[p.id]["resps"][0][0])[0] for p in ours)
                shown = ", ".join(f"{m} {n}/{len(ours)}" for m, n in same.items())
                shown += f" (contains right {right}), same answer line {lines}/{len(ours)}"
            print(f"{names[key]:<40} {len(items):>5}  {shown}")


if __name__ == "__main__":
    main()
