"""The analysis plan: the primary metric and comparison, fixed before the main run's results are seen.

One comparison answers the research question: Patok − vanilla CPT on hierarchical Level 2, on the primary
metric, tested alone at alpha 0.05. The primary metric is chosen from the pilot's signal-to-noise ratio
(`python -m morphcpt.analysis.power --pilot <results>` prints it) and recorded before the main run, so it cannot
move after the results are seen:

    python -m morphcpt.analysis.plan --results-dir results/ --primary gold_prob   # writes results/analysis_plan.json
    python -m morphcpt.analysis.plan --results-dir results/                       # prints the plan in force

Defaults come from the packaged `conf/analysis.yaml`. A results folder's `analysis_plan.json` (the record) wins
over them; recording a different primary over an existing record is refused. The report asked for another primary
than the recorded one (`--primary`) keeps the recorded one and says so on its first screen.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from omegaconf import OmegaConf

from morphcpt.analysis.item_scores import metric_mode

PLAN_FILE = "analysis_plan.json"
DEFAULTS = Path(__file__).resolve().parents[1] / "conf" / "analysis.yaml"


@dataclass(frozen=True)
class AnalysisPlan:
    primary: str = "gold_prob"
    primary_group: str = "hierarchical-level2"
    primary_pair: tuple[str, str] = ("patok", "baseline")
    alpha: float = 0.05
    last_checkpoints: int = 3
    control_tasks: tuple[str, ...] = ("multi_digit_addition", "langgame")
    forgetting_margin: float = 0.05
    recorded: str | None = None  # when and where the plan was recorded (None: the packaged defaults)
    requested: str | None = None  # a primary asked for at analysis time that differs from the recorded one
    notes: tuple[str, ...] = field(default=(), compare=False)

    @property
    def mode(self) -> str:
        return metric_mode(self.primary)

    def check(self) -> AnalysisPlan:
        metric_mode(self.primary)  # raises on an unknown metric
        if self.last_checkpoints < 1:
            raise ValueError(f"last_checkpoints must be 1 or more, got {self.last_checkpoints}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be between 0 and 1, got {self.alpha}")
        if self.forgetting_margin < 0:
            raise ValueError(f"forgetting_margin must be 0 or more, got {self.forgetting_margin}")
        return self


_RUNTIME = ("notes", "recorded", "requested")  # set when loading, never read from a record


def _from_mapping(data: dict, recorded: str | None) -> AnalysisPlan:
    known = {k: v for k, v in data.items() if k in AnalysisPlan.__dataclass_fields__ and k not in _RUNTIME}
    unknown = sorted(set(data) - set(AnalysisPlan.__dataclass_fields__) - {"recorded_at"})
    if unknown:
        raise ValueError(f"unknown analysis plan fields: {', '.join(unknown)}")
    for key in ("primary_pair", "control_tasks"):
        if key in known:
            known[key] = tuple(known[key])
    return AnalysisPlan(**known, recorded=recorded).check()


def defaults() -> AnalysisPlan:
    return _from_mapping(OmegaConf.to_container(OmegaConf.load(DEFAULTS)), None)


def load_plan(
    results_dir: Path | str | None = None, *, primary: str | None = None, last_checkpoints: int | None = None
) -> AnalysisPlan:
    """The plan in force for a results folder: its record, else the defaults. `primary` asked for now is used only
    when nothing was recorded; against a record it is kept aside as `requested` (the report says so)."""
    plan = defaults()
    record = Path(results_dir) / PLAN_FILE if results_dir is not None else None
    if record is not None and record.is_file():
        data = json.loads(record.read_text(encoding="utf-8"))
        plan = _from_mapping(
            {**asdict(plan), **data, "recorded": None}, f"{record} ({data.get('recorded_at', '?')})"
        )
    if last_checkpoints is not None:
        plan = replace(plan, last_checkpoints=last_checkpoints).check()
    if primary is not None and primary != plan.primary:
        metric_mode(primary)
        if plan.recorded is not None:
            return replace(plan, requested=primary)
        plan = replace(plan, primary=primary).check()
    return plan


def register(results_dir: Path | str, primary: str, **fields) -> Path:
    """Record the plan in a results folder before its results are analysed; a different primary over an existing
    record is refused (that is the point of recording it)."""
    record = Path(results_dir) / PLAN_FILE
    metric_mode(primary)
    if record.is_file():
        existing = json.loads(record.read_text(encoding="utf-8"))
        if existing.get("primary") != primary:
            raise ValueError(
                f"{record} already records primary {existing.get('primary')!r} "
                f"(recorded {existing.get('recorded_at', '?')}); a primary chosen after the results are seen is not "
                "pre-registered. Report the other metric as exploratory instead, or delete the record knowingly."
            )
        return record
    plan = replace(defaults(), primary=primary, **fields).check()
    data = {k: v for k, v in asdict(plan).items() if k not in ("recorded", "requested", "notes")}
    data["recorded_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return record


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results-dir", type=Path, required=True)
    parser.add_argument(
        "--primary", help="record this primary metric (gold_prob, gold_margin, acc_norm, ...)"
    )
    args = parser.parse_args(argv)
    try:
        if args.primary:
            print(f"recorded: {register(args.results_dir, args.primary)}")
        plan = load_plan(args.results_dir)
    except ValueError as error:
        print(f"plan: {error}", file=sys.stderr)
        return 1
    print(json.dumps({k: v for k, v in asdict(plan).items() if k != "notes"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
