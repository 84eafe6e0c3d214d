"""What the primary comparison can detect, before (acc_norm, today's test) and after (the pre-registered primary),
simulated around a real model's per-item log-likelihoods.

    python benchmarks/primary_power.py --real <results>/<model> [--experiments 2000] [--out benchmarks/records/primary_power.json]

1. **Item-level variance of every metric on the real model**: for each MCQ result file of `--real` (the
   evaluation's `logprobs`), mean and standard deviation over items of acc_norm, gold_prob and gold_margin (the last
   two from the options' log-likelihoods per UTF-8 byte, as the evaluation defines them).
2. **Simulation** (`simulate.simulate_options`): 4 arms x S seeds x C checkpoints on the real Level 2 items (or, for
   more items, items drawn from every hierarchical level), per-option noise in nats/byte around the real model's
   per-byte log-likelihoods. No true difference: the false-positive rate of each decision at its own level. Planted
   gold shifts on one arm: power against the true acc_norm gain the shift makes (mean over experiments), and the
   minimum detectable difference (80 % power) in pp of acc_norm, interpolated. Decisions:
   - before: acc_norm, t over items and seeds with the run variance of the two arms compared, alpha 0.05 / 10 (the
     answer's family of 10 comparisons today);
   - after: the primary metric (gold_prob unless `--primary`), the same test with run and churn variances pooled
     over all 4 arms, alone at alpha 0.05; also acc_norm under the new rules, to show what each change buys;
   - the secondary family: the other research pairs of the four arms, Bonferroni over 4 at 0.05 (family-wise rate).
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

import numpy as np

from morphcpt.analysis.shift import metrics_from_arrays, option_arrays
from morphcpt.analysis.simulate import OptionRegime, seed_t_pvalues, simulate_options

SHIFTS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.3)  # planted gold shifts, nats/byte
SEED_SDS = (0.0, 0.05, 0.15)
# arms: 0 baseline, 1 stochastok, 2 patok, 3 eeve; the primary is patok - baseline
PRIMARY = (2, 0)
SECONDARY = ((1, 0), (2, 1), (3, 0), (2, 3))


def real_variances(folder: Path) -> list[dict]:
    rows = []
    for path in sorted(folder.glob("*_mcq.json")):
        predictions = json.loads(path.read_text())["predictions"]
        logprobs, size, chars, gold = option_arrays(predictions)
        scores = metrics_from_arrays(logprobs, size, chars, gold)
        row = {"task": path.stem.removesuffix("_mcq"), "items": len(logprobs)}
        for name, values in scores.items():
            finite = values[np.isfinite(values)]
            row[name] = (float(finite.mean()), float(finite.std(ddof=1)))
        rows.append(row)
    return rows


def run_regime(regime, base, gold, size, chars, experiments, rng, primary):
    """{decision: [rejection rate per shift]}, observed acc_norm gain per shift."""
    rates: dict[str, list[float]] = {}
    gains = []
    for shift in SHIFTS:
        shifts = np.zeros(regime.arms)
        shifts[PRIMARY[0]] = shift
        hits: dict[str, int] = {}
        gain = 0.0
        for start in range(0, experiments, 250):
            batch = min(250, experiments - start)
            ll = simulate_options(regime, base, gold, shifts, batch, rng)
            m = metrics_from_arrays(ll * size, size, chars, gold)
            scores = {
                k: v.mean(axis=3) for k, v in m.items()
            }  # average over checkpoints: (e, arms, seeds, items)
            acc = scores["acc_norm"]
            gain += float((acc[:, PRIMARY[0]].mean(axis=(1, 2)) - acc[:, PRIMARY[1]].mean(axis=(1, 2))).sum())
            tests = {
                "before: acc_norm, pair pooled, 0.05/10": (acc, PRIMARY, 0.005),
                "acc_norm, all-arm pooled, 0.05": (acc, (0, 1, 2, 3), 0.05),
                f"after: {primary}, all-arm pooled, 0.05": (scores[primary], (0, 1, 2, 3), 0.05),
            }
            for name, (s, pool, alpha) in tests.items():
                pool = pool if len(pool) > 2 else PRIMARY
                _, p = seed_t_pvalues(s, *PRIMARY, pool=pool)
                hits[name] = hits.get(name, 0) + int(np.sum(p < alpha))
            if shift == 0:
                any_secondary = np.zeros(batch, dtype=bool)
                for a, b in SECONDARY:
                    _, p = seed_t_pvalues(scores[primary], a, b, pool=(0, 1, 2, 3))
                    any_secondary |= p < 0.05 / len(SECONDARY)
                hits["secondary family (any of 4 at 0.05/4)"] = hits.get(
                    "secondary family (any of 4 at 0.05/4)", 0
                ) + int(any_secondary.sum())
        for name, count in hits.items():
            rates.setdefault(name, []).append(count / experiments)
        gains.append(gain / experiments)
    return rates, gains


def mde(gains, power, target=0.8):
    """Linear interpolation of the acc_norm gain where power crosses `target` (None if never)."""
    for (g0, p0), (g1, p1) in itertools.pairwise(zip(gains, power, strict=True)):
        if p0 < target <= p1:
            return g0 + (target - p0) * (g1 - g0) / (p1 - p0)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--real", type=Path, required=True, help="a real model's results folder (<task>_mcq.json)"
    )
    parser.add_argument("--experiments", type=int, default=2000)
    parser.add_argument("--primary", default="gold_prob")
    parser.add_argument("--items", type=int, nargs="+", default=[100])
    parser.add_argument("--seeds", type=int, nargs="+", default=[3])
    parser.add_argument("--seed-sds", type=float, nargs="+", default=list(SEED_SDS))
    parser.add_argument("--checkpoints", type=int, nargs="+", default=[1])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/records/primary_power.json"))
    args = parser.parse_args()
    started, cpu = time.perf_counter(), time.process_time()
    variances = real_variances(args.real)
    print("## Item-level mean and sd of every metric on the real model\n")
    print("| task | items | acc_norm mean (sd) | gold_prob mean (sd) | gold_margin mean (sd), nats/byte |")
    print("|---|---|---|---|---|")
    for r in variances:
        cells = " | ".join(f"{r[k][0]:.3f} ({r[k][1]:.3f})" for k in ("acc_norm", "gold_prob", "gold_margin"))
        print(f"| {r['task']} | {r['items']} | {cells} |")
    level2 = json.loads((args.real / "hierarchical-level2_mcq.json").read_text())["predictions"]
    every = [
        p
        for f in sorted(args.real.glob("hierarchical-level*_mcq.json"))
        for p in json.loads(f.read_text())["predictions"]
    ]
    rng = np.random.default_rng(0)
    records = []
    print(f"\n## Simulation ({args.experiments} experiments per cell; shifts in nats/byte: {SHIFTS})\n")
    print(
        "| items | seeds | checkpoints | seed sd | decision | false-positive rate at its own level | MDE pp of acc_norm (80 %) | power by acc_norm gain |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for items, seeds, checkpoints, seed_sd in itertools.product(
        args.items, args.seeds, args.checkpoints, args.seed_sds
    ):
        pool = level2 if items == len(level2) else [every[i] for i in rng.integers(0, len(every), items)]
        logprobs, size, chars, gold = option_arrays(pool)
        base = logprobs / size
        regime = replace(OptionRegime(seeds=seeds, checkpoints=checkpoints), seed_sd=seed_sd)
        rates, gains = run_regime(regime, base, gold, size, chars, args.experiments, rng, args.primary)
        for name, power in rates.items():
            found = mde(gains, power) if len(power) > 1 else None
            curve = ", ".join(
                f"{100 * p:.0f}% at {100 * g:.1f}" for g, p in zip(gains[1:], power[1:], strict=False)
            )
            print(
                f"| {items} | {seeds} | {checkpoints} | {seed_sd:g} | {name} | {100 * power[0]:.1f}% | "
                f"{'—' if found is None else f'{100 * found:.1f}'} | {curve or '—'} |"
            )
            records.append(
                {
                    **asdict(regime),
                    "items": items,
                    "decision": name,
                    "fpr": power[0],
                    "power": power,
                    "gains": gains,
                    "mde": found,
                }
            )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"\n{elapsed:.0f} s wall, {cpu:.0f} s CPU")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": platform.platform(),
                "real": str(args.real),
                "experiments": args.experiments,
                "variances": variances,
                "records": records,
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
