#!/usr/bin/env python
"""GEN generation speed: `HFCausalLM`'s greedy loop that drops finished rows against `model.generate`, which
computes every row of a batch until its slowest row is done (not a test).

    python benchmarks/gen_speed.py --model DIR --benchmark-dir DIR [--per-family 16] \
        [--benchmarks pacute hierarchical langgame cute multi_digit_addition] [--batch-size 8] [--threads 1] \
        [--max-new-tokens 50] [--dtype float32] [--repeats 1] [--interleave] [--step-cost] [--json out.json]

Per benchmark ("family"), `--per-family` GEN items are taken from its tasks in turn (the first items of each
task), loaded with `evaluate.items.load_benchmark` as `scripts/run_evaluation.py` loads them, prompted in English.
All prompts go through `HFCausalLM.generate` at once (longest first, `--batch-size` rows a batch), once with
`drop_finished=False` (the old path, `model.generate` with the first-line stop criterion) and once with the
default loop, `--repeats` times each, old and new in turn (`--interleave`: batch by batch, in turn); the model is
loaded once and warmed up first. Reported:
seconds per path, the rows the model computed (one per row and forward call: the new tokens written, plus, on the
old path, the finished rows carried along), and how many items' texts are identical, with every difference (item,
old text, new text). `--step-cost` also times one decode step at 8, 4, 2 and 1 rows (with `--batch-size 8`).
The load average is read before and after: the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch

from morphcpt.evaluate.hf_model import HFCausalLM
from morphcpt.evaluate.items import load_benchmark

FAMILIES = ("pacute", "hierarchical", "langgame", "cute", "multi_digit_addition")


def take(tasks: dict[str, list], count: int) -> list:
    """The first items of each task, taken in turn until `count` in all."""
    taken, depth = [], 0
    while len(taken) < count and any(depth < len(items) for items in tasks.values()):
        for items in tasks.values():
            if depth < len(items) and len(taken) < count:
                taken.append(items[depth])
        depth += 1
    return taken


class RowCounter:
    """Adds up the rows of every forward call of the model (a pre-hook)."""

    def __init__(self, model):
        self.rows = 0
        self.calls = 0
        model.register_forward_pre_hook(self, with_kwargs=True)

    def __call__(self, module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        self.rows += ids.shape[0]
        self.calls += 1


def timed(lm: HFCausalLM, counter: RowCounter, prompts: list[str], max_new_tokens: int) -> dict:
    counter.rows = counter.calls = 0
    load_before = os.getloadavg()
    start = time.perf_counter()
    texts = lm.generate(prompts, max_new_tokens=max_new_tokens)
    seconds = time.perf_counter() - start
    return {
        "seconds": round(seconds, 2),
        "rows_computed": counter.rows,
        "forward_calls": counter.calls,
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "texts": texts,
    }


@torch.inference_mode()
def step_cost(lm: HFCausalLM, prompts: list[str], batch_size: int, steps: int = 10) -> dict[int, float]:
    """Milliseconds of one decode step (one new id a row, after a prefill) by rows in the batch: what dropping
    rows can save. The median of `steps` steps, each row fed its own greedy ids."""
    costs = {}
    rows = [lm.prefix + ids for ids in lm.encode(prompts[:batch_size])]
    for count in sorted({batch_size, max(batch_size // 2, 1), max(batch_size // 4, 1), 1}, reverse=True):
        input_ids, mask = lm._left_padded(rows[:count])
        positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
        cache = lm._new_cache()
        times = []
        for _ in range(steps + 1):
            start = time.perf_counter()
            logits = lm._next_logits(input_ids, mask, positions, cache)
            times.append(time.perf_counter() - start)
            input_ids = logits.argmax(-1)[:, None]
            positions = positions[:, -1:] + 1
            mask = torch.cat([mask, mask.new_ones((count, 1))], dim=-1)
        costs[count] = round(1000 * sorted(times[1:])[steps // 2], 1)  # times[0] is the prefill
    return costs


def interleaved(lm: HFCausalLM, counter: RowCounter, prompts: list[str], max_new_tokens: int) -> dict:
    """Both paths batch by batch, in the batches `HFCausalLM.generate` forms, which one goes first alternating
    from batch to batch: a load that comes and goes weighs on both alike. Seconds and rows summed per path."""
    encoded = [lm.prefix + ids for ids in lm.encode(prompts)]
    if lm.max_length:
        encoded = [ids[-(lm.max_length - max_new_tokens) :] for ids in encoded]
    order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
    paths = {"old": lm._generate_hf, "new": lm._generate_compact}
    totals = {path: {"seconds": 0.0, "rows_computed": 0, "texts": [""] * len(prompts)} for path in paths}
    load_before = os.getloadavg()
    for n, offset in enumerate(range(0, len(order), lm.batch_size)):
        batch = order[offset : offset + lm.batch_size]
        for path in ("old", "new") if n % 2 == 0 else ("new", "old"):
            counter.rows = 0
            start = time.perf_counter()
            texts = paths[path]([encoded[i] for i in batch], max_new_tokens)
            totals[path]["seconds"] += time.perf_counter() - start
            totals[path]["rows_computed"] += counter.rows
            for index, text in zip(batch, texts, strict=True):
                totals[path]["texts"][index] = text
    load = {
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }
    return {path: t | {"seconds": round(t["seconds"], 2)} | load for path, t in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", required=True, type=Path)
    parser.add_argument("--benchmark-dir", required=True, type=Path)
    parser.add_argument("--benchmarks", nargs="+", default=list(FAMILIES))
    parser.add_argument("--per-family", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-new-tokens", type=int, default=50)
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--interleave", action="store_true", help="time old and new batch by batch, in turn")
    parser.add_argument(
        "--step-cost", action="store_true", help="also time one decode step by rows in the batch"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    by_family = {
        name: take(load_benchmark(name, "gen", args.benchmark_dir), args.per_family)
        for name in args.benchmarks
    }
    items = [item for family in by_family.values() for item in family]
    prompts = [item.prompt("en") for item in items]
    lm = HFCausalLM.load(
        args.model, device="cpu", batch_size=args.batch_size, dtype=getattr(torch, args.dtype)
    )
    counter = RowCounter(lm.model)
    for drop in (False, True):  # warm-up, untimed
        lm.drop_finished = drop
        lm.generate(prompts[: args.batch_size], max_new_tokens=4)

    runs: dict[str, list[dict]] = {"old": [], "new": []}
    for _ in range(args.repeats):
        both = interleaved(lm, counter, prompts, args.max_new_tokens) if args.interleave else None
        for path, drop in (("old", False), ("new", True)):
            lm.drop_finished = drop
            runs[path].append(both[path] if both else timed(lm, counter, prompts, args.max_new_tokens))
            run = runs[path][-1]
            print(
                f"{path}: {run['seconds']:.2f} s, {run['rows_computed']} rows computed, load {run['loadavg_after']}"
            )

    costs = step_cost(lm, prompts, args.batch_size) if args.step_cost else None
    if costs:
        print("ms per decode step by rows in the batch:", costs)

    old, new = runs["old"][0]["texts"], runs["new"][0]["texts"]
    differences = [
        {"task": f"{item.benchmark}-{item.subset}", "id": item.id, "old": a, "new": b}
        for item, a, b in zip(items, old, new, strict=True)
        if a != b
    ]
    old_s = min(r["seconds"] for r in runs["old"])
    new_s = min(r["seconds"] for r in runs["new"])
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "model": str(args.model),
        "items": len(items),
        "per_family": {name: len(family) for name, family in by_family.items()},
        "batch_size": args.batch_size,
        "threads": args.threads,
        "dtype": args.dtype,
        "max_new_tokens": args.max_new_tokens,
        "old_seconds_best": old_s,
        "new_seconds_best": new_s,
        "speedup": round(old_s / new_s, 2),
        "identical_texts": len(items) - len(differences),
        "differences": differences,
        "runs": {
            path: [{k: v for k, v in r.items() if k != "texts"} for r in rs] for path, rs in runs.items()
        },
        "new_tokens": runs["new"][0]["rows_computed"],
        "decode_step_ms_by_rows": costs,
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "differences"}, indent=1))
    for diff in differences:
        print(f"DIFF {diff['task']} {diff['id']}:\n  old {diff['old']!r}\n  new {diff['new']!r}")
    if args.json:
        args.json.write_text(
            json.dumps(summary | {"outputs": {"old": old, "new": new}}, indent=1, ensure_ascii=False)
        )


if __name__ == "__main__":
    main()
