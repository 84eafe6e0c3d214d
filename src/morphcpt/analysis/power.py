"""Power of the main experiment from a pilot's results: the smallest difference it detects, and what it takes.

    python -m morphcpt.analysis.power --pilot results/pilot [--group hierarchical-level2] [--mode mcq]
        [--seeds 1 2 3 5] [--items 100 200 400] [--target 5] [--family 5] [--plot power.png]

The pilot (e.g. the Gemma 3 270M recipes, two or three seeds per arm; docs/replicates-and-power.md) is evaluated
like any run; this reads its results folder. On the group (default: the report's primary group, hierarchical
Level 2 first) and mode, it estimates for every research pair of arms present the three variance components of
`morphcpt.analysis.replicates` — arm-by-item tau^2, seed sigma_seed^2, churn sigma_churn^2 — and averages them
over the pairs. For a main design of S seeds per arm and n items it then gives:

- the minimum detectable difference (MDD): the smallest true accuracy difference the report's test finds with
  80 % power at the Bonferroni level alpha / family (family: the comparisons of the report's answer, as in the
  pilot's report), found by simulating the test itself (its variance estimate and degrees of freedom) on draws of
  the three mean squares from their distributions under the normal model, 20,000 designs per point;
- the false-positive rate of that test at the pilot's variances (one run per arm: McNemar over items, which
  cannot see the seed variance and so rejects too often when there is some);
- for `--target` percentage points: the fewest seeds (at the largest `--items`) and the fewest items per group (at
  each number of seeds) that detect it with 80 % power.

The pilot's seed variance comes from few runs (with 2 seeds per arm, 2 degrees of freedom): the table also shows
the MDD at its 80 % upper confidence bound, the planning figure when a wrong "enough seeds" is expensive. The
pilot model is smaller than the main one: its variances are a guide to the main run's, not a measurement of them.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy import stats as scipy_stats

from morphcpt.analysis import replicates

POWER = 0.8
ALPHA = 0.05
DRAWS = 20_000


@dataclass(frozen=True)
class Variances:
    """Per-item and per-run variances of a comparison of two arms (module docstring), from a pilot."""

    tau2: float  # arm-by-item variance
    seed: float  # seed variance of a run's accuracy beyond churn
    churn: float  # run-by-item residual variance
    items: int  # the pilot's items on the group
    seeds: int  # the pilot's seeds per arm (the smaller arm's)
    seed_df: int  # degrees of freedom of the pilot's seed-variance estimate
    pairs: tuple[str, ...] = ()

    def seed_upper(self, confidence: float = 0.8) -> Variances:
        """The same, with the seed variance at its one-sided upper confidence bound (the run variance's chi-square
        bound, less churn)."""
        if self.seed_df < 1:
            return self
        run = self.seed + self.churn / self.items
        upper = run * self.seed_df / scipy_stats.chi2.ppf(1 - confidence, self.seed_df)
        return replace(self, seed=max(upper - self.churn / self.items, 0.0))


def reject_rate(v: Variances, seeds: int, items: int, delta: float, alpha: float, rng_seed: int = 0) -> float:
    """Share of `DRAWS` simulated designs (seeds per arm, items) in which the report's test rejects at `alpha`
    when the true difference is `delta` (normal model; module docstring). The same random numbers for every
    delta (common random numbers), so the rate rises smoothly with delta and a bisection can find the MDD."""
    rng = np.random.default_rng(rng_seed)
    n, h = items, 2 / seeds
    true_var = v.tau2 / n + h * (v.seed + v.churn / n)
    diff = delta + rng.standard_normal(DRAWS) * math.sqrt(true_var)
    item = (v.tau2 + h * v.churn) * rng.chisquare(n - 1, DRAWS) / (n - 1)
    if seeds == 1:  # McNemar over items: its variance is the item-level one, seed variance unseen
        z = scipy_stats.norm.ppf(1 - alpha / 2)
        return float(np.mean(np.abs(diff) > z * np.sqrt(item / n)))
    run_df = 2 * (seeds - 1)
    run = (v.seed + v.churn / n) * rng.chisquare(run_df, DRAWS) / run_df
    churn = v.churn * rng.chisquare(run_df * (n - 1), DRAWS) / (run_df * (n - 1))
    variance, df = replicates.variance_and_df(item, run, churn, n=n, h=h, run_df=run_df, item_weight=h)
    with np.errstate(divide="ignore", invalid="ignore"):  # no variance at all: nothing is ever rejected at 0
        p_value = np.nan_to_num(2 * scipy_stats.t.sf(np.abs(diff) / np.sqrt(variance), df), nan=1.0)
    return float(np.mean(p_value < alpha))


def mdd(v: Variances, seeds: int, items: int, alpha: float, power: float = POWER) -> float:
    """The smallest true difference detected with `power` (inf when even a difference of 1 is not)."""
    low, high = 0.0, 1.0
    if reject_rate(v, seeds, items, high, alpha) < power:
        return math.inf
    for _ in range(30):
        middle = (low + high) / 2
        low, high = (middle, high) if reject_rate(v, seeds, items, middle, alpha) < power else (low, middle)
    return high


def needed_seeds(v: Variances, target: float, items: int, alpha: float, most: int = 12) -> int | None:
    return next((s for s in range(2, most + 1) if mdd(v, s, items, alpha) <= target), None)


def needed_items(v: Variances, target: float, seeds: int, alpha: float, most: int = 20_000) -> int | None:
    """Fewest items per group (to the nearest 10) detecting `target` with `seeds` seeds per arm."""
    if mdd(v, seeds, most, alpha) > target:
        return None
    low, high = 10, most
    while high - low > 10:
        middle = (low + high) // 2
        low, high = (middle, high) if mdd(v, seeds, middle, alpha) > target else (low, middle)
    return high


def variances_from(evidence, group: str, mode: str, language: str = "en") -> Variances | None:
    """Variance components averaged over the research pairs with seeds on a group (None when none has two runs
    on one side): what `pilot_variances` and the report's design section use."""
    from morphcpt.analysis.answer import QUESTIONS

    parts, pairs = [], []
    for a, b in QUESTIONS:
        if a not in evidence.sets or b not in evidence.sets:
            continue
        found = evidence.runs_table([a, b], group, mode, language)
        if found is not None and found[0][a].shape[0] + found[0][b].shape[0] >= 3:
            parts.append(replicates.components(found[0][a], found[0][b]))
            pairs.append(f"{a}-{b}")
    if not parts:
        return None
    return Variances(
        tau2=float(np.mean([p.tau2 for p in parts])),
        seed=float(np.mean([p.seed_var for p in parts])),
        churn=float(np.mean([p.churn for p in parts])),
        items=parts[0].n,
        seeds=min(min(p.seeds_a, p.seeds_b) for p in parts),
        seed_df=parts[0].run_df,
        pairs=tuple(pairs),
    )


def pilot_variances(results_dir: Path | str, group: str | None, mode: str, language: str = "en"):
    """(Variances, group, family) from a pilot's results folder: components averaged over the research pairs on
    the group. Needs an arm with two or more seeds."""
    from morphcpt.analysis.answer import FOCUS_GROUPS, findings
    from morphcpt.analysis.evidence import SeedEvidence
    from morphcpt.analysis.results import load_results, replicate_sets

    results = load_results(results_dir)
    sets = replicate_sets(results)
    if not any(len(runs) > 1 for role, runs in sets.items() if role != "base"):
        raise ValueError(
            f"{results_dir}: every arm has one run, so no seed variance can be estimated; a pilot needs two or more "
            "seeds per arm (python scripts/submit_pipeline.py --seeds 2 ...; docs/replicates-and-power.md)"
        )
    evidence = SeedEvidence(results, sets)
    groups = [group] if group else list(FOCUS_GROUPS)
    group = next((g for g in groups if findings(evidence, language, [g])), None)
    if group is None:
        raise ValueError(f"{results_dir}: no two arms were evaluated on {', '.join(groups)}")
    variances = variances_from(evidence, group, mode, language)
    if variances is None:
        raise ValueError(f"{results_dir}: no pair of arms with seeds on {group} {mode.upper()}")
    return variances, group, len(findings(evidence, language, [group]))


def table(v: Variances, seeds: Sequence[int], items: Sequence[int], alpha: float) -> list[dict]:
    rows = []
    upper = v.seed_upper()
    for s in seeds:
        for n in items:
            rows.append(
                {
                    "seeds": s,
                    "items": n,
                    "mdd": mdd(v, s, n, alpha),
                    "mdd_upper": mdd(upper, s, n, alpha),
                    "fpr": reject_rate(v, s, n, 0.0, ALPHA),
                }
            )
    return rows


def _pp(value: float) -> str:
    return "—" if math.isinf(value) else f"{100 * value:.1f}"


def render(v: Variances, group: str, mode: str, family: int, rows: list[dict], alpha: float) -> str:
    lines = [
        f"pilot: {group} {mode.upper()}, {v.items} items, {v.seeds} seeds per arm, pairs {', '.join(v.pairs)}",
        f"variances: arm x item tau^2 {v.tau2:.4f}, seed {v.seed:.6f} (run sd {100 * math.sqrt(v.seed):.2f} pp; "
        f"80% upper bound {100 * math.sqrt(v.seed_upper().seed):.2f} pp, {v.seed_df} df), churn {v.churn:.4f}",
        f"test level: alpha {ALPHA} / {family} comparisons = {alpha:.4f}; power {POWER:.0%}",
        "",
        "| seeds per arm | items | MDD pp | MDD pp (seed sd at its upper bound) | false-positive rate at 0.05 |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        flag = " (one run: McNemar, seed variance unseen)" if r["seeds"] == 1 else ""
        lines.append(
            f"| {r['seeds']} | {r['items']} | {_pp(r['mdd'])} | {_pp(r['mdd_upper'])} | {100 * r['fpr']:.1f}%{flag} |"
        )
    return "\n".join(lines)


def plot(v: Variances, items: Sequence[int], alpha: float, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seeds = list(range(2, 9))
    fig, ax = plt.subplots(figsize=(6, 4))
    for n in items:
        ax.plot(seeds, [100 * mdd(v, s, n, alpha) for s in seeds], marker="o", label=f"{n} items")
    ax.set_xlabel("seeds per arm")
    ax.set_ylabel(f"minimum detectable difference (pp, {POWER:.0%} power)")
    ax.set_title("What more seeds and items buy (pilot variances)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pilot", type=Path, required=True, help="the pilot's evaluation results folder")
    parser.add_argument("--group", help="default: the report's primary group (hierarchical-level2 first)")
    parser.add_argument("--mode", choices=("mcq", "gen"), default="mcq")
    parser.add_argument("--language", default="en")
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[1, 2, 3, 5], help="seeds per arm to tabulate"
    )
    parser.add_argument("--items", type=int, nargs="+", help="items per group (default: the pilot's, x2, x4)")
    parser.add_argument("--target", type=float, default=5.0, help="difference to detect, percentage points")
    parser.add_argument(
        "--family", type=int, help="Bonferroni family (default: the pilot report's answer family)"
    )
    parser.add_argument("--plot", type=Path, help="write the MDD-by-seeds plot here (needs matplotlib)")
    args = parser.parse_args(argv)
    if any(s < 1 for s in args.seeds) or (args.items and any(n < 2 for n in args.items)):
        parser.error("--seeds must be at least 1 and --items at least 2")
    try:
        v, group, family = pilot_variances(args.pilot, args.group, args.mode, args.language)
    except (ValueError, FileNotFoundError) as error:
        print(f"power: {error}", file=sys.stderr)
        return 1
    family = args.family or family
    alpha = ALPHA / family
    items = args.items or [v.items, 2 * v.items, 4 * v.items]
    print(render(v, group, args.mode, family, table(v, args.seeds, items, alpha), alpha))
    target = args.target / 100
    most = max(items)
    seeds_needed = needed_seeds(v, target, most, alpha)
    print(
        f"\nto detect {args.target:g} pp with {POWER:.0%} power at {most} items: "
        + (f"{seeds_needed} seeds per arm" if seeds_needed else "more than 12 seeds per arm")
    )
    for s in sorted({s for s in args.seeds if s > 1} | ({seeds_needed} if seeds_needed else set())):
        n = needed_items(v, target, s, alpha)
        print(
            f"  with {s} seeds per arm: " + (f"{n} items per group" if n else "not with up to 20,000 items")
        )
    if args.plot:
        try:
            print(f"plot: {plot(v, items, alpha, args.plot)}")
        except ImportError:
            print("plot skipped: matplotlib is not installed (pip install 'morphcpt[plots]')")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
