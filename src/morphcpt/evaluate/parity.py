"""Item-by-item comparison of our predictions with lm-evaluation-harness's logged samples of the same exported task.

    report = compare_mcq(score_mcq(lm, items), samples)   # samples: {item id: lm-eval sample (log_samples=True)}
    report.ok, report.disagreements[:5], report.max_loglik_diff

MCQ: for every item, each option's log-likelihood (lm-eval's `filtered_resps[i][0]`) must equal ours within
`LOGLIK_TOLERANCE`, and `acc` and `acc_norm` must agree. Ties are the one designed difference (lm-eval takes the
first of exactly equal scores, we pick among scores within `mcq.TIE_TOLERANCE` by a seeded draw): an item we flag
as tied is counted apart and never a disagreement on that metric. GEN: the answer line and exact/prefix/contains
must agree. A sample missing for an item, or an extra one, is a disagreement too. Used by
`benchmarks/lm_eval_parity.py`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from morphcpt.evaluate.answers import first_line
from morphcpt.evaluate.gen import GEN_METRICS, GenPrediction
from morphcpt.evaluate.mcq import McqPrediction

# fp32: ours and lm-eval (its softmax_dtype float64) agree within ~5e-5 on Gemma 3 270M; with lm-eval's default
# fp32 log_softmax its figures run up to 3.4e-4 high (docs/evaluation.md, "lm-eval's log-softmax dtype")
LOGLIK_TOLERANCE = 1e-4


@dataclass
class Parity:
    """How one task's items compare: counts per metric, the largest log-likelihood gap, and each disagreement
    as (item id, what differs)."""

    items: int = 0
    agree: dict[str, int] = field(default_factory=dict)  # metric -> items that agree
    tied: dict[str, int] = field(default_factory=dict)  # metric -> items we flag as tied (not compared)
    right: int = 0  # items we score right (acc_norm / exact): agreement on items both miss says little
    max_loglik_diff: float = 0.0
    disagreements: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.disagreements

    def summary(self) -> str:
        shown = ", ".join(
            f"{m} {n}/{self.items}" + (f" ({self.tied[m]} tied)" if self.tied.get(m) else "")
            for m, n in self.agree.items()
        )
        return f"{shown}, right {self.right}, max |delta loglik| {self.max_loglik_diff:.2e}, {len(self.disagreements)} disagreements"


def _missing(ids: Sequence[str], samples: Mapping[str, dict], report: Parity) -> None:
    for item_id in sorted(set(samples) - set(ids)):
        report.disagreements.append((item_id, "lm-eval scored an item we did not"))
    for item_id in ids:
        if item_id not in samples:
            report.disagreements.append((item_id, "no lm-eval sample"))


def compare_mcq(
    ours: Sequence[McqPrediction], samples: Mapping[str, dict], *, tolerance: float = LOGLIK_TOLERANCE
) -> Parity:
    report = Parity(items=len(ours), agree={"acc": 0, "acc_norm": 0}, tied={"acc": 0, "acc_norm": 0})
    _missing([p.id for p in ours], samples, report)
    for p in ours:
        sample = samples.get(p.id)
        if sample is None:
            continue
        report.right += p.acc_norm
        theirs = [float(resp[0]) for resp in sample["filtered_resps"]]
        if len(theirs) != len(p.logprobs):
            report.disagreements.append(
                (p.id, f"{len(theirs)} options scored by lm-eval, {len(p.logprobs)} by us")
            )
            continue
        gap = max(abs(a - b) for a, b in zip(p.logprobs, theirs, strict=True))
        report.max_loglik_diff = max(report.max_loglik_diff, gap)
        if not gap <= tolerance:  # a NaN gap is a disagreement too
            report.disagreements.append((p.id, f"log-likelihoods differ by {gap:.2e} > {tolerance:g}"))
        for metric, tied in (("acc", p.tied), ("acc_norm", p.tied_norm)):
            if tied:
                report.tied[metric] += 1
            else:
                _compare_metric(report, p, sample, metric)
    return report


def compare_gen(ours: Sequence[GenPrediction], samples: Mapping[str, dict]) -> Parity:
    report = Parity(items=len(ours), agree={"line": 0, **{m: 0 for m in GEN_METRICS}})
    _missing([p.id for p in ours], samples, report)
    for p in ours:
        sample = samples.get(p.id)
        if sample is None:
            continue
        report.right += p.exact
        line = first_line(sample["resps"][0][0])[0]
        if p.prediction == line:
            report.agree["line"] += 1
        else:
            report.disagreements.append((p.id, f"answer line: ours {p.prediction!r}, lm-eval {line!r}"))
        for metric in GEN_METRICS:
            _compare_metric(report, p, sample, metric)
    return report


def _compare_metric(report: Parity, prediction, sample: dict, metric: str) -> None:
    """One right/wrong metric of one item: an agreement, or a disagreement naming both values."""
    ours = getattr(prediction, metric)
    if ours == bool(sample[metric]):
        report.agree[metric] += 1
    else:
        report.disagreements.append((prediction.id, f"{metric}: ours {ours}, lm-eval {sample[metric]}"))
