"""Read an evaluation results folder (`runner.py` layout) into per-model, per-task item scores.

`results/<model>/<task>_<mode>[_<language>].json` -> `TaskResult`s; unfinished `.partial.jsonl` logs are ignored.
A run evaluated at several saved checkpoints has one result set per checkpoint: a result's `checkpoint_step`
field, or the folder `results/<model>/ckpt-<step>/`, says which (`final_results` keeps the last of each; the
report averages each item over a run's last k, `evidence`).
Models are given a role in the research question — base, baseline (vanilla CPT), stochastok, patok, eeve
(vocabulary expansion, the fourth arm) — from the `scheme` their export recorded, or failing that from their
name. A role may hold several training runs of one arm, its seeds (replicates): the `replicate` an export
recorded, or the name's `-seed<k>` suffix (k >= 1; no suffix is seed 0).

    results = load_results("results")
    roles = assign_roles(results)     # {"baseline": "vanilla-step2000", "patok": ..., ...}  (seed 0 of each)
    seeds = replicate_sets(results)   # {"baseline": [seed 0, seed 1, ...], ...}
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from morphcpt.errors import UserError
from morphcpt.evaluate.gen import GEN_METRICS
from morphcpt.evaluate.mcq import MCQ_METRICS
from morphcpt.evaluate.runner import RESULT_FORMAT
from morphcpt.jsonio import read_json

METRICS = {"mcq": MCQ_METRICS, "gen": GEN_METRICS}
PRIMARY_METRIC = {"mcq": "acc_norm", "gen": "exact"}  # acc_norm does not depend on how options are tokenized
ROLES = ("base", "baseline", "stochastok", "patok", "eeve")
_SCHEME_ROLE = {
    "base": "base",
    "none": "base",
    "vanilla": "baseline",
    "baseline": "baseline",
    "stochastok": "stochastok",
    "patok": "patok",
    "eeve": "eeve",
}


_SEED_SUFFIX = re.compile(r"-seed(\d+)$")
_RESULT_KEYS = ("model", "task", "benchmark", "mode", "predictions")


class ResultsError(UserError, ValueError):
    """A results folder the analysis cannot read as one experiment; the message names the files and the fix."""


class ResultsMissing(UserError, FileNotFoundError):
    """No results where the analysis was pointed."""


@dataclass(frozen=True)
class ModelInfo:
    name: str
    scheme: str | None
    step: int | None
    path: str | None
    replicate: int = 0  # which seed of its arm (0 when the run has none recorded)
    run: str | None = (
        None  # the training run it came from (its export's run_name and config hash), if recorded
    )
    folder: str | None = None  # the results folder holding its files

    @property
    def label(self) -> str:
        details = ", ".join(
            str(x) for x in (self.scheme, f"step {self.step}" if self.step is not None else None) if x
        )
        return f"{self.name} ({details})" if details else self.name


@dataclass(frozen=True)
class TaskResult:
    model: ModelInfo
    task: str  # pacute-affixation, hierarchical-level2, ...
    benchmark: str
    mode: str
    language: str
    predictions: tuple[dict, ...]
    path: Path
    missing_subsets: tuple[str, ...] = ()  # of its benchmark, not in the run: pooled scores leave them out
    not_generated: tuple[str, ...] = ()  # of its benchmark, which the generated set can never hold (stress)
    checkpoint_step: int | None = (
        None  # which saved checkpoint of the run was evaluated (None: the final export)
    )

    def scores(self, metric: str) -> dict[str, tuple[str, float]]:
        """item id -> (fingerprint, 1.0 right / 0.0 wrong)."""
        return {p["id"]: (p["fingerprint"], float(p[metric])) for p in self.predictions}


def load_results(results_dir: Path | str) -> list[TaskResult]:
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ResultsMissing(
            f"results folder {results_dir} does not exist; give --results-dir the folder run_evaluation wrote"
        )
    found = []
    for path in sorted([*results_dir.glob("*/*.json"), *results_dir.glob("*/ckpt-*/*.json")]):
        data = read_json(
            path, what="an evaluation result", fix="delete it and rerun the evaluation (it redoes that task)"
        )
        if data.get("format") != RESULT_FORMAT:
            continue  # another tool's JSON in the same folder
        lacking = [k for k in _RESULT_KEYS if k not in data]
        if lacking or not isinstance(data["model"], dict) or not isinstance(data["predictions"], list):
            raise ResultsError(
                f"{path}: an evaluation result without {', '.join(lacking) or 'a model and a list of predictions'}"
                "; delete it and rerun the evaluation (it redoes that task)"
            )
        model = data["model"]
        meta = model.get("metadata") or {}
        recorded = meta.get("replicate")
        run = "/".join(str(meta[k]) for k in ("run_name", "config_hash") if meta.get(k)) or None
        suffix = _SEED_SUFFIX.search(model["name"])
        found.append(
            TaskResult(
                model=ModelInfo(
                    name=model["name"],
                    scheme=model.get("scheme"),
                    step=model.get("step"),
                    path=model.get("path"),
                    replicate=int(recorded if recorded is not None else suffix.group(1) if suffix else 0),
                    run=run,
                    folder=str(path.parent),
                ),
                task=data["task"],
                benchmark=data["benchmark"],
                mode=data["mode"],
                language=data.get("language", "en"),
                predictions=tuple(data["predictions"]),
                path=path,
                missing_subsets=tuple(data.get("missing_subsets", ())),
                not_generated=tuple(data.get("not_generated", ())),
                checkpoint_step=_checkpoint_step(data, path),
            )
        )
    if not found:
        raise ResultsMissing(f"no evaluation results (<model>/<task>_<mode>.json) under {results_dir}")
    check_runs(found)
    return found


def _checkpoint_step(data: dict, path: Path) -> int | None:
    if data.get("checkpoint_step") is not None:
        return int(data["checkpoint_step"])
    checkpoint_set = data.get(
        "checkpoint_set"
    )  # run_evaluation --last-checkpoints k records {run_name, step, steps}
    if isinstance(checkpoint_set, dict) and checkpoint_set.get("step") is not None:
        return int(checkpoint_set["step"])
    match = re.fullmatch(r"ckpt-(\d+)", path.parent.name)
    return int(match.group(1)) if match else None


def final_results(results: list[TaskResult]) -> list[TaskResult]:
    """One result per model, task, mode and language: the last checkpoint evaluated (a result without a step is
    the final export and counts as last)."""
    last: dict[tuple, TaskResult] = {}
    for result in results:
        key = (result.model.name, result.task, result.mode, result.language)
        step = math.inf if result.checkpoint_step is None else result.checkpoint_step
        held = last.get(key)
        if held is None or step >= (math.inf if held.checkpoint_step is None else held.checkpoint_step):
            last[key] = result
    return [r for r in results if last[(r.model.name, r.task, r.mode, r.language)] is r]


def check_runs(results: list[TaskResult]) -> None:
    """Refuse a folder that is not one experiment: two result folders that are the same seed of the same arm
    (another run, or the same step twice: one would silently win), and the runs of the arms scored on different
    items of a task (the comparisons would shrink to the shared items while the report says "the same items")."""
    by_seed: dict[tuple[str, int], dict[str, ModelInfo]] = {}
    for model in {r.model.folder: r.model for r in results}.values():
        role = role_of(model)
        if role is None:
            continue
        for other in by_seed.setdefault((role, model.replicate), {}).values():
            # one run's checkpoints at several steps are fine (the highest speaks for the seed); another run, or
            # the same step twice, is not
            if model.run != other.run or model.step == other.step:
                raise ResultsError(
                    f"two result folders are seed {model.replicate} of {role}: {other.folder} "
                    f"({other.label}) and {model.folder} ({model.label}); the analysis would keep one silently. "
                    "Move one out of the results folder (or give each run its own seed, data.replicate=k)"
                )
        by_seed[(role, model.replicate)][model.folder] = model
    chosen = {m.folder for runs in replicate_sets(results).values() for m in runs}
    items: dict[tuple[str, str, str], dict[frozenset, TaskResult]] = {}
    for result in results:
        if result.model.folder in chosen and role_of(result.model) not in (None, "base"):
            key = (result.task, result.mode, result.language)
            ids = frozenset(str(p.get("id")) for p in result.predictions)
            items.setdefault(key, {}).setdefault(ids, result)
    for (task, mode, language), sets in items.items():
        if len(sets) > 1:
            (a_ids, a), (b_ids, b) = sorted(sets.items(), key=lambda kv: -len(kv[0]))[:2]
            raise ResultsError(
                f"{task} {mode.upper()} ({language}) was scored on different items: {len(a_ids)} by "
                f"{a.model.name} ({a.path}) and {len(b_ids)} by {b.model.name} ({b.path}), {len(a_ids & b_ids)} "
                "shared; runs compared must answer the same items. Rerun the evaluation of the shorter runs "
                "with the same --limit and benchmarks as the others (delete their results of that task first)"
            )


def incomplete_benchmarks(results: list[TaskResult]) -> dict[tuple[str, str], list[str]]:
    """(benchmark, mode) -> subsets its results lack, for benchmarks whose pooled score is not the whole."""
    missing: dict[tuple[str, str], set[str]] = {}
    for result in results:
        if result.missing_subsets:
            missing.setdefault((result.benchmark, result.mode), set()).update(result.missing_subsets)
    return {key: sorted(subsets) for key, subsets in sorted(missing.items())}


def not_generated_subsets(results: list[TaskResult]) -> dict[str, list[str]]:
    """benchmark -> subsets its results lack because the benchmark generator cannot make them."""
    found: dict[str, set[str]] = {}
    for result in results:
        if result.not_generated:
            found.setdefault(result.benchmark, set()).update(result.not_generated)
    return {benchmark: sorted(subsets) for benchmark, subsets in sorted(found.items())}


def role_of(model: ModelInfo) -> str | None:
    """A model named `base` (`base-…`, `…_base`) is the starting point whatever scheme its export recorded;
    otherwise the recorded scheme decides, and without one the name."""
    name = model.name.lower()
    if re.search(r"(^|[-_.])base($|[-_.])", name):
        return "base"
    if model.scheme:
        return _SCHEME_ROLE.get(model.scheme.lower())
    return next(
        (_SCHEME_ROLE[key] for key in ("stochastok", "patok", "eeve", "vanilla", "baseline") if key in name),
        None,
    )


def models_in_order(results: list[TaskResult]) -> list[ModelInfo]:
    """Base, baseline, stochastok, patok, eeve, then any other model; a role's seeds in order, later steps after
    earlier ones."""
    models = {r.model.name: r.model for r in results}
    rank = {role: i for i, role in enumerate(ROLES)}
    return sorted(
        models.values(), key=lambda m: (rank.get(role_of(m), len(ROLES)), m.replicate, m.step or 0, m.name)
    )


def replicate_sets(results: list[TaskResult]) -> dict[str, list[ModelInfo]]:
    """Role -> its runs, one per seed (where a seed has several steps, the highest speaks for it), seed order."""
    chosen: dict[str, dict[int, ModelInfo]] = {}
    for model in models_in_order(results):
        role = role_of(model)
        if role is not None:
            chosen.setdefault(role, {})[model.replicate] = model  # later (higher step) overrides
    return {role: [seeds[k] for k in sorted(seeds)] for role, seeds in chosen.items()}


def assign_roles(results: list[TaskResult]) -> dict[str, ModelInfo]:
    """Role -> the model that speaks for it alone: its lowest seed, at the highest step."""
    return {role: runs[0] for role, runs in replicate_sets(results).items()}
