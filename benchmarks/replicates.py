"""Does the report's test over items and seeds hold its 5 % level, and what power has it? A simulation.

    python benchmarks/replicates.py [--experiments 4000] [--out benchmarks/records/replicates_simulation.json]

For every regime (items per group, seeds per arm, seed effect, arm-by-item and churn scales; the model is in
`morphcpt.analysis.simulate`) it simulates `--experiments` full designs with no true difference and counts how
often the test rejects at 0.05 (the false-positive rate, with its Wilson 95 % interval from the simulation's own
noise), then the same with planted differences (power). One run per arm (seeds 1) uses the item-level test the
report falls back to, McNemar's score test, to show what ignoring the seed variance costs. Prints Markdown tables
for benchmarks/RESULTS.md and writes every number to a JSON record.
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import time
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path

from morphcpt.analysis.simulate import Regime, rejection_rate

ITEMS = (100, 400, 600)  # a hierarchical level, PACUTE syllabification, the hierarchical benchmark
SEEDS = (1, 2, 3, 5)
SEED_SDS = (0.0, 0.1, 0.25)  # logit scale: about 0, 1.5 and 4 pp of a run's accuracy
SHAPES = ((0.5, 0.7), (1.0, 0.3))  # (arm x item sd, churn sd): churn-dominated, and arm-by-item-dominated
SHIFTS = (0.1, 0.25, 0.5)  # planted logit shifts of arm A: about 2, 5 and 10 pp


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiments", type=int, default=4000)
    parser.add_argument("--power-experiments", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/records/replicates_simulation.json"))
    args = parser.parse_args()
    started, cpu = time.perf_counter(), time.process_time()
    null_rows, power_rows = [], []
    print(f"## False-positive rate at alpha 0.05 ({args.experiments} simulated experiments per regime)\n")
    print("| arm x item sd, churn sd | items | seeds | seed sd 0 | seed sd 0.1 | seed sd 0.25 |")
    print("|---|---|---|---|---|---|")
    for (arm_item, churn), items, seeds in itertools.product(SHAPES, ITEMS, SEEDS):
        cells = []
        for k, seed_sd in enumerate(SEED_SDS):
            regime = Regime(items, seeds, seed_sd, arm_item_sd=arm_item, churn_sd=churn)
            outcome = rejection_rate(regime, args.experiments, seed=hash((arm_item, items, seeds, k)) % 10**6)
            low, high = outcome.interval()
            null_rows.append({**asdict(regime), "rate": outcome.rate, "low": low, "high": high})
            cells.append(f"{100 * outcome.rate:.1f}% [{100 * low:.1f}, {100 * high:.1f}]")
        label = f"{arm_item:g}, {churn:g}"
        print(
            f"| {label} | {items} | {seeds}{' (McNemar)' if seeds == 1 else ''} | " + " | ".join(cells) + " |"
        )
    print(
        f"\n## Power at alpha 0.05 ({args.power_experiments} simulated experiments per cell; seed sd 0.1)\n"
    )
    print("| items | seeds | " + " | ".join(f"shift {s:g}" for s in SHIFTS) + " |")
    print("|---|---|" + "---|" * len(SHIFTS))
    for items, seeds in itertools.product(ITEMS, SEEDS[1:]):
        cells = []
        for k, shift in enumerate(SHIFTS):
            regime = replace(Regime(items, seeds, 0.1), shift=shift)
            outcome = rejection_rate(
                regime, args.power_experiments, seed=10**6 + hash((items, seeds, k)) % 10**6
            )
            power_rows.append(
                {**asdict(regime), "power": outcome.rate, "difference": outcome.mean_difference}
            )
            cells.append(f"{100 * outcome.rate:.0f}% at {100 * outcome.mean_difference:.1f} pp")
        print(f"| {items} | {seeds} | " + " | ".join(cells) + " |")
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    seeded = [r["rate"] for r in null_rows if r["seeds"] > 1]
    print(
        f"\nseeded designs: false-positive rate {100 * min(seeded):.1f}-{100 * max(seeded):.1f}% over {len(seeded)} "
        f"regimes; {elapsed:.0f} s wall, {cpu:.0f} s CPU"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": platform.platform(),
                "experiments": args.experiments,
                "power_experiments": args.power_experiments,
                "null": null_rows,
                "power": power_rows,
                "wall_s": round(elapsed, 1),
                "cpu_s": round(cpu, 1),
            },
            indent=1,
        )
        + "\n"
    )
    print(f"record: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
