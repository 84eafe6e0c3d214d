"""The chain's stages: one job each, in submission order, with the stages whose outputs it reads and the check
that says whether its outputs are already on disk (`morphcpt.completion`). What the chain is made of; how it is
submitted, watched and run here is `pipeline.py` (`python scripts/submit_pipeline.py`).

    stages = build_stages(jobs.derived_settings(settings), ["vanilla", "patok"])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from morphcpt import completion
from morphcpt.chain import jobs
from morphcpt.errors import UserError

# scratch: pretraining from scratch (SCRATCH_PRETRAIN=1), beside the experiment: nothing waits for it, so its job
# needs no gate (it resubmits itself with AUTO_RESUBMIT=1)
GROUPS = ["download", "split", "benchmarks", "preprocess", "cpt", "export", "evaluate", "analyze", "scratch"]


class PipelineError(UserError, RuntimeError):
    """Bad input or a refused submission, with what to do about it."""


@dataclass(frozen=True)
class Stage:
    """One job of the chain: the rendered script it submits, the stages whose outputs it reads, and its check:
    None when its outputs are on disk (the marker and the files it lists, `morphcpt.completion`), else why not."""

    name: str
    group: str
    script: str  # rendered script name without suffix
    inputs: tuple[str, ...]
    check: Callable[[], str | None]
    run_dir: str = ""  # cpt: the run folder (gate file, latest job)
    plan: tuple[
        str, ...
    ] = ()  # cpt: the recipe and seed its job script passes (recipe=..., data.replicate=k)


def _chunk_markers(settings: dict[str, str], scheme: str, replicate: int = 0) -> list[Path]:
    from morphcpt.tokenization.schemes import data_folder

    digits, root = int(settings["CHUNK_DIGITS"]), Path(settings["PROCESSED_DIR"])
    folder = root / data_folder(scheme, replicate)
    needed = [folder / f"chunk_{i:0{digits}d}.done.json" for i in range(1, int(settings["NUM_CHUNKS"]) + 1)]
    if scheme == "vanilla" and (Path(settings["CHUNK_DIR"]) / "validation.jsonl").exists():
        needed.append(root / "validation" / "validation.done.json")
    return needed


def _preprocessed(settings: dict[str, str], scheme: str, replicate: int = 0) -> str | None:
    return completion.preprocess(_chunk_markers(settings, scheme, replicate))


def _analysed(results_dir: str) -> str | None:
    """The report, and not older than the evaluation (a chain rerun with more seeds evaluates the runs it added,
    and then the report must be written again)."""
    why = completion.analysis(results_dir)
    report, evaluated = Path(results_dir) / "analysis" / "report.md", Path(results_dir) / "evaluation.done"
    if why is None and evaluated.exists() and report.stat().st_mtime < evaluated.stat().st_mtime:
        return f"{report} is older than the last evaluation"
    return why


def build_stages(settings: dict[str, str], schemes: list[str] | None = None) -> list[Stage]:
    """Every stage for `schemes` (default: all), in submission order, each with exactly its inputs."""
    from morphcpt.plan.recipes import cluster_runs  # Hydra; only needed here
    from morphcpt.tokenization.schemes import data_folder

    known = jobs.scheme_names()
    schemes = list(schemes or known)
    unknown = sorted(set(schemes) - set(known))
    if unknown:
        raise PipelineError(f"unknown scheme(s) {', '.join(unknown)}: the schemes are {', '.join(known)}")
    seeds = jobs.seeds(settings)
    runs = [run for run in cluster_runs(seeds, prefix=settings["RECIPES"]) if run["SCHEME"] in schemes]
    s = settings
    stages = [
        Stage("download", "download", "download", (), partial(completion.download, s["CORPUS"])),
        Stage("split", "split", "split", ("download",), partial(completion.split, s["CHUNK_DIR"])),
        Stage(
            "benchmarks", "benchmarks", "benchmarks", (), partial(completion.benchmarks, s["BENCHMARK_DIR"])
        ),
    ]
    eeve = "eeve" in schemes
    if eeve:  # the expanded tokenizer, learnt from the chunks, that the eeve data and run use
        tokenizer = partial(completion.eeve_tokenizer, s["EEVE_TOKENIZER"])
        stages.append(Stage("eeve_tokenizer", "preprocess", "eeve_tokenizer", ("split",), tokenizer))
    # the vanilla array also builds the validation set every training run reads; a scheme that draws has one
    # array per seed, the others one for all
    wanted = set(schemes) | ({"vanilla"} if runs else set())
    data_stage: dict[tuple[str, int], str] = {}  # (scheme, seed) -> the stage writing that seed's ids
    for variant in jobs.preprocess_variants(settings):
        scheme, k = variant["SCHEME"], int(variant["REPLICATE"])
        if scheme not in wanted or variant.get("SCRATCH"):
            continue
        name = f"preprocess_{variant['DATA_VARIANT']}"
        inputs = ("split", "eeve_tokenizer") if scheme == "eeve" else ("split",)
        check = partial(_preprocessed, s, scheme, k)
        stages.append(Stage(name, "preprocess", f"preprocess_data_{variant['DATA_VARIANT']}", inputs, check))
        for seed in range(seeds):
            if data_folder(scheme, seed) == data_folder(scheme, k):
                data_stage[(scheme, seed)] = name
    for run in runs:
        variant, run_dir = run["VARIANT"], f"{s['OUTPUT_ROOT']}/runs/{run['RUN_NAME']}"
        own = data_stage[(run["SCHEME"], int(run["REPLICATE"]))]
        inputs = tuple(dict.fromkeys([own, "preprocess_vanilla"]))
        check = partial(completion.training, run_dir)
        plan = (f"recipe={run['RECIPE']}", f"data.replicate={run['REPLICATE']}")
        stages.append(Stage(f"cpt_{variant}", "cpt", f"run_cpt_{variant}", inputs, check, run_dir, plan))
    for run in runs:
        variant, export = run["VARIANT"], f"{s['OUTPUT_ROOT']}/exports/{run['RUN_NAME']}"
        check = partial(completion.export, export)
        stages.append(Stage(f"export_{variant}", "export", f"export_{variant}", (f"cpt_{variant}",), check))
    eeve_runs = jobs.eeve_runs(settings) if eeve else []
    for run in eeve_runs:  # seven stages in one run folder; the job exports the model after the last one
        exported = partial(completion.export, f"{s['OUTPUT_ROOT']}/exports/{run['RUN_NAME']}")
        run_dir = f"{s['OUTPUT_ROOT']}/runs/{run['RUN_NAME']}"
        name = f"cpt_{run['VARIANT']}"
        plan = (f"recipe={run['EEVE_RECIPE']}", f"data.replicate={run['REPLICATE']}")
        stages.append(
            Stage(name, "cpt", f"run_cpt_{run['VARIANT']}", ("preprocess_eeve",), exported, run_dir, plan)
        )
    exports = tuple(f"export_{run['VARIANT']}" for run in runs) + tuple(
        f"cpt_{r['VARIANT']}" for r in eeve_runs
    )
    # every run's results (a rerun with more seeds evaluates the runs it added), then a report newer than them
    evaluated = partial(
        completion.evaluation, s["RESULTS_DIR"], [run["RUN_NAME"] for run in runs + eeve_runs]
    )
    stages += [
        Stage("evaluate", "evaluate", "run_evaluation", (*exports, "benchmarks"), evaluated),
        Stage("analyze", "analyze", "analyze", ("evaluate",), partial(_analysed, s["RESULTS_DIR"])),
    ]
    if s.get("SCRATCH_PRETRAIN", "0") == "1":
        stages += _scratch_stages(s)
    return stages


def _scratch_stages(s: dict[str, str]) -> list[Stage]:
    """SCRATCH_PRETRAIN=1: the chunks tokenized by SCRATCH_TOKENIZER into their own folder, then the run from
    scratch on them (job_templates/pretrain_scratch.pbs)."""
    from morphcpt.train import load_plan

    check = partial(completion.preprocess, _scratch_markers(s))
    plan = load_plan(
        ["recipe=pretrain_scratch", f"model={s['SCRATCH_MODEL']}", f"loop.train_tokens={s['SCRATCH_TRAIN_TOKENS']}",
         f"model.tokenizer={s['SCRATCH_TOKENIZER']}", f"output_root={s['OUTPUT_ROOT']}"]
    )  # fmt: skip
    trained = partial(completion.training, plan.run_dir)
    return [
        Stage("preprocess_scratch", "preprocess", "preprocess_data_scratch", ("split",), check),
        Stage("pretrain_scratch", "scratch", "pretrain_scratch", ("preprocess_scratch",), trained),
    ]


def _scratch_markers(s: dict[str, str]) -> list[Path]:
    return _chunk_markers({**s, "PROCESSED_DIR": s["SCRATCH_PROCESSED_DIR"]}, "vanilla")
