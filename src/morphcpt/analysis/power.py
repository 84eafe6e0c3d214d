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
from morphcpt.analysis.item_scores import is_binary

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
    metric: str = "acc_norm"
    arms: int = 2  # arms the run and churn variances are pooled over (the report pools over every arm)
    seeds_b: int | None = None  # the other arm's seeds where they differ (the report's primary pair)

    def seed_upper(self, confidence: float = 0.8) -> Variances:
        """The same, with the seed variance at its one-sided upper confidence bound (the run variance's chi-square
        bound, less churn)."""
        if self.seed_df < 1:
            return self
        run = self.seed + self.churn / self.items
        upper = run * self.seed_df / scipy_stats.chi2.ppf(1 - confidence, self.seed_df)
        return replace(self, seed=max(upper - self.churn / self.items, 0.0))


def test_used(v: Variances, seeds: int, seeds_b: int | None = None) -> str:
    """The report's test at this design: t over items and seeds when any run variance can be pooled, else McNemar
    (right/wrong scores) or a paired t over items (continuous ones)."""
    if v.arms * (seeds - 1) + (0 if seeds_b is None else seeds_b - seeds) >= 1:
        return "t over items and seeds"
    return "McNemar" if is_binary(v.metric) else "paired t over items"


def reject_rate(
    v: Variances,
    seeds: int,
    items: int,
    delta: float,
    alpha: float,
    rng_seed: int = 0,
    *,
    seeds_b: int | None = None,
    run_df: int | None = None,
) -> float:
    """Share of `DRAWS` simulated designs (seeds per arm, items) in which the report's test rejects at `alpha`
    when the true difference is `delta` (normal model; module docstring). `seeds_b`: the other arm's seeds where
    they differ. The run and churn variances are pooled over `v.arms` arms of `seeds` each. The same random
    numbers for every delta (common random numbers), so the rate rises smoothly with delta and a bisection can
    find the MDD."""
    rng = np.random.default_rng(rng_seed)
    seeds_b = seeds if seeds_b is None else seeds_b
    n, h = items, 1 / seeds + 1 / seeds_b
    true_var = v.tau2 / n + h * (v.seed + v.churn / n)
    diff = delta + rng.standard_normal(DRAWS) * math.sqrt(true_var)
    item = (v.tau2 + h * v.churn) * rng.chisquare(n - 1, DRAWS) / (n - 1)
    test = (
        test_used(v, seeds, seeds_b) if run_df is None else ("t over items and seeds" if run_df >= 1 else "")
    )
    if test != "t over items and seeds":  # over items only: the seed variance is unseen
        binary = is_binary(v.metric)
        crit = scipy_stats.norm.ppf(1 - alpha / 2) if binary else scipy_stats.t.ppf(1 - alpha / 2, n - 1)
        return float(np.mean(np.abs(diff) > crit * np.sqrt(item / n)))
    if run_df is None:
        run_df = (v.arms - 2) * (seeds - 1) + (seeds - 1) + (seeds_b - 1)
    run = (v.seed + v.churn / n) * rng.chisquare(run_df, DRAWS) / run_df
    churn = v.churn * rng.chisquare(run_df * (n - 1), DRAWS) / (run_df * (n - 1))
    variance, df = replicates.variance_and_df(item, run, churn, n=n, h=h, run_df=run_df, item_weight=h)
    with np.errstate(divide="ignore", invalid="ignore"):  # no variance at all: nothing is ever rejected at 0
        p_value = np.nan_to_num(2 * scipy_stats.t.sf(np.abs(diff) / np.sqrt(variance), df), nan=1.0)
    return float(np.mean(p_value < alpha))


def mdd(
    v: Variances,
    seeds: int,
    items: int,
    alpha: float,
    power: float = POWER,
    *,
    seeds_b: int | None = None,
    run_df: int | None = None,
) -> float:
    """The smallest true difference detected with `power`, in the metric's unit (inf when a difference of 1, for
    a proportion, or of 100 nats or bits per byte, is not)."""
    low, high = 0.0, 1.0
    while reject_rate(v, seeds, items, high, alpha, seeds_b=seeds_b, run_df=run_df) < power:
        if is_binary(v.metric) or v.metric == "gold_prob" or high >= 100:
            return math.inf
        high *= 4
    for _ in range(30):
        middle = (low + high) / 2
        rate = reject_rate(v, seeds, items, middle, alpha, seeds_b=seeds_b, run_df=run_df)
        low, high = (middle, high) if rate < power else (low, middle)
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


def variances_from(evidence, group: str, mode: str, language: str = "en", metric: str | None = None):
    """Variance components on a group: the arm-by-item variance averaged over the research pairs present, the seed
    and churn variances pooled over every arm (as the report's test pools them); None without a seed variance."""
    from morphcpt.analysis.answer import QUESTIONS
    from morphcpt.analysis.item_scores import FALLBACK

    metric = metric or FALLBACK[mode]
    pooled = evidence.pooled(group, mode, language, metric)
    if pooled.df < 1:
        return None
    parts, pairs = [], []
    for a, b in QUESTIONS:
        found = evidence.table([a, b], group, mode, language, metric)
        if found is not None:
            parts.append(replicates.components(found[0][a], found[0][b]))
            pairs.append(f"{a}-{b}")
    if not parts:
        return None
    n = parts[0].n
    return Variances(
        tau2=float(np.mean([max(p.item - p.h * pooled.churn, 0.0) for p in parts])),
        seed=max(pooled.run - pooled.churn / n, 0.0),
        churn=pooled.churn,
        items=n,
        seeds=min(evidence.seeds.values()),
        seed_df=pooled.df,
        pairs=tuple(pairs),
        metric=metric,
        arms=pooled.arms,
    )


def pilot_evidence(results_dir: Path | str, last_checkpoints: int = 1):
    from morphcpt.analysis.evidence import Evidence
    from morphcpt.analysis.results import load_results

    evidence = Evidence(load_results(results_dir), last_checkpoints)
    if not evidence.seeded:
        raise ValueError(
            f"{results_dir}: every arm has one run, so no seed variance can be estimated; a pilot needs two or more "
            "seeds per arm (python scripts/submit_pipeline.py --seeds 2 ...; docs/replicates-and-power.md)"
        )
    return evidence


def pilot_variances(
    results_dir: Path | str, group: str | None, mode: str, language: str = "en", metric: str | None = None
):
    """(Variances, group, evidence) from a pilot's results folder on `metric` (default: the mode's accuracy).
    Needs an arm with two or more seeds."""
    from morphcpt.analysis.answer import FOCUS_GROUPS
    from morphcpt.analysis.item_scores import FALLBACK

    metric = metric or FALLBACK[mode]
    evidence = pilot_evidence(results_dir)
    groups = [group] if group else list(FOCUS_GROUPS)
    group = next((g for g in groups if len(evidence.arms_on(g, mode, language, metric)) >= 2), None)
    if group is None:
        raise ValueError(f"{results_dir}: no two arms were evaluated on {', '.join(groups)} with {metric}")
    variances = variances_from(evidence, group, mode, language, metric)
    if variances is None:
        raise ValueError(f"{results_dir}: no pair of arms with seeds on {group} {mode.upper()}")
    return variances, group, evidence


def accuracy_pp(evidence, group: str, language: str, metric: str, delta: float) -> float | None:
    """`delta` of an MCQ metric as the acc_norm gain of the same uniform improvement (`shift`), on the baseline's
    (or any arm's) first run's items; None where no conversion exists (GEN, or no logprobs)."""
    from morphcpt.analysis.evidence import _group_predictions
    from morphcpt.analysis.shift import MCQ_SHIFTABLE, accuracy_equivalent

    if metric not in MCQ_SHIFTABLE or math.isinf(delta):
        return None
    for role in ("baseline", *evidence.sets):
        for run in evidence.runs.get(role, []):
            predictions = list(_group_predictions(run.checkpoints[-1][1], group, "mcq", language).values())
            if predictions and all(p.get("logprobs") for p in predictions):
                return accuracy_equivalent(predictions, metric, delta)
    return None


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
                    "fpr": reject_rate(v, s, n, 0.0, alpha),
                    "test": test_used(v, s),
                }
            )
    return rows


def _pp(value: float, metric: str = "acc_norm") -> str:
    from morphcpt.analysis.item_scores import fmt

    return "—" if math.isinf(value) else fmt(metric, value, signed=False)


def snr_lines(evidence, group: str, mode: str, language: str) -> list[str]:
    """The signal-to-noise table of every metric of a mode on a group (how the primary is chosen)."""
    from morphcpt.analysis.item_scores import metrics_of

    rows = [r for m in metrics_of(mode) if (r := evidence.signal_and_noise(group, mode, language, m))]
    if not rows:
        return []
    lines = [
        "| metric | arms | signal (sd of arm means) | noise: seeds | noise: checkpoints | SNR |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        cell = lambda x: "—" if x is None else f"{x:.4f}"  # noqa: E731
        lines.append(
            f"| {r['metric']} | {r['arms']} | {cell(r['signal'])} | {cell(r['seed_sd'])} | {cell(r['checkpoint_sd'])} "
            f"| {'—' if r['snr'] is None else format(r['snr'], '.2f')} |"
        )
    best = max((r for r in rows if r["snr"] is not None), key=lambda r: r["snr"], default=None)
    if best is not None:
        lines.append(
            f"\nhighest signal-to-noise: {best['metric']} (record it as the main run's primary before its results "
            f"exist: python -m morphcpt.analysis.plan --results-dir <main results> --primary {best['metric']})"
        )
    return lines


def render(
    v: Variances, group: str, mode: str, family: int, rows: list[dict], alpha: float, evidence=None
) -> str:
    unit = "pp" if v.metric in ("acc", "acc_norm", "exact", "prefix", "contains", "gold_prob") else v.metric
    convert = evidence is not None and v.metric != "acc_norm"
    lines = [
        f"pilot: {group} {mode.upper()} {v.metric}, {v.items} items, {v.seeds} seeds per arm, pairs {', '.join(v.pairs)}",
        f"variances: arm x item tau^2 {v.tau2:.4g}, seed {v.seed:.4g} (run sd {math.sqrt(v.seed):.4g}; 80% upper "
        f"bound {math.sqrt(v.seed_upper().seed):.4g}, {v.seed_df} df, pooled over {v.arms} arms), churn {v.churn:.4g}",
        f"test level: alpha {ALPHA} / {family} comparison{'s' if family > 1 else ''} = {alpha:.4f}; power {POWER:.0%}",
        "",
        f"| seeds per arm | items | MDD ({unit}) | MDD (seed sd at its upper bound) |"
        + (" MDD as pp of acc_norm |" if convert else "")
        + " false-positive rate at that level | test |",
        "|---|---|---|---|" + ("---|" if convert else "") + "---|---|",
    ]
    for r in rows:
        extra = ""
        if convert:
            pp = accuracy_pp(evidence, group, "en", v.metric, r["mdd"])
            extra = f" {'—' if pp is None else f'{100 * pp:.1f}'} |"
        lines.append(
            f"| {r['seeds']} | {r['items']} | {_pp(r['mdd'], v.metric)} | {_pp(r['mdd_upper'], v.metric)} |{extra} "
            f"{100 * r['fpr']:.1f}% | {r['test']}{' (seed variance unseen)' if r['seeds'] == 1 else ''} |"
        )
    if convert:
        lines.append(
            "\npp of acc_norm: the accuracy gain of the improvement that raises every item's gold per-byte "
            "log-likelihood by the same amount and moves the mean of the metric by the MDD (analysis/shift.py), on "
            "the pilot's own items"
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
    parser.add_argument("--mode", choices=("mcq", "gen"), help="default: the metric's")
    parser.add_argument(
        "--metric", help="default: the plan's primary (conf/analysis.yaml) where the pilot has it"
    )
    parser.add_argument("--language", default="en")
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[1, 2, 3, 5], help="seeds per arm to tabulate"
    )
    parser.add_argument("--items", type=int, nargs="+", help="items per group (default: the pilot's, x2, x4)")
    parser.add_argument(
        "--target", type=float, default=5.0, help="difference to detect, in the metric's printed unit"
    )
    parser.add_argument("--family", type=int, default=1, help="comparisons sharing alpha (the primary: 1)")
    parser.add_argument("--plot", type=Path, help="write the MDD-by-seeds plot here (needs matplotlib)")
    args = parser.parse_args(argv)
    if any(s < 1 for s in args.seeds) or (args.items and any(n < 2 for n in args.items)):
        parser.error("--seeds must be at least 1 and --items at least 2")
    from morphcpt.analysis.item_scores import FALLBACK, metric_mode, unit_scale
    from morphcpt.analysis.plan import defaults

    try:
        metric = args.metric or defaults().primary
        mode = args.mode or metric_mode(metric)
        if metric_mode(metric) != mode:
            metric = FALLBACK[mode]
        try:
            v, group, evidence = pilot_variances(args.pilot, args.group, mode, args.language, metric)
        except ValueError:
            if args.metric:
                raise
            v, group, evidence = pilot_variances(args.pilot, args.group, mode, args.language, FALLBACK[mode])
    except (ValueError, FileNotFoundError) as error:
        print(f"power: {error}", file=sys.stderr)
        return 1
    snr = snr_lines(evidence, group, mode, args.language)
    if snr:
        print(f"signal and noise on {group} {mode.upper()} (pilot):\n" + "\n".join(snr) + "\n")
    alpha = ALPHA / args.family
    items = args.items or [v.items, 2 * v.items, 4 * v.items]
    print(render(v, group, mode, args.family, table(v, args.seeds, items, alpha), alpha, evidence))
    target = args.target / unit_scale(v.metric)
    most = max(items)
    seeds_needed = needed_seeds(v, target, most, alpha)
    print(
        f"\nto detect {args.target:g} ({v.metric}) with {POWER:.0%} power at {most} items: "
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
