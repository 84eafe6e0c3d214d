"""What `run_evaluation.py --models` may name, resolved to the Hugging Face folder (or Hub id) that is evaluated.

    python scripts/run_evaluation.py --models outputs/runs/gemma3-1b-patok \\
        outputs/runs/gemma3-1b-stochastok/checkpoints outputs/runs/gemma3-1b-baseline/checkpoints/iter_0010000 \\
        outputs/exports/gemma3-1b-eeve google/gemma-3-1b-pt ...

- An exported model folder (it holds `config.json`) or a Hub id is evaluated as it is.
- A training run folder (it holds the plan's `config.yaml`), its `checkpoints/` folder, or one checkpoint in it
  (`step_NNNNNNNN` of the hf engine, `iter_NNNNNNN` of the megatron engine) means that run's latest verified
  checkpoint, or the one named. An export of exactly that checkpoint (`<output_root>/exports/<run_name>` or
  `<run_name>-step<N>`, same step, checkpoint and config hash) is reused; otherwise the checkpoint is exported
  first, with the logit-parity check of `morphcpt.export`, to `<output_root>/exports/<run_name>-step<N>`, where the
  next evaluation finds it. A megatron checkpoint exports only inside the NeMo container (AutoBridge, one GPU):
  elsewhere the error names the export job to submit. Its results are named `<run_name>-step<N>`.
- Anything else is one sentence saying what was expected.

With `--last-checkpoints k` a run entry means its last k intact checkpoints (up to the named one, for a
checkpoint), each exported as above and scored on its own; their results go to `<run_name>/ckpt-<step>/` so that
the analysis can average each item over them (docs/evaluation.md, "Checkpoint averaging"). A run that kept
fewer than k checkpoints is an error naming the steps it has. Export folders and Hub ids are evaluated once.

Every entry is checked before anything is exported or scored, so a bad one costs no time.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from morphcpt import paths
from morphcpt.export import MEGATRON_TRACKER, METADATA_FILE, default_output
from morphcpt.plan.compose import plan_from_yaml
from morphcpt.plan.schema import CPTPlan

log = logging.getLogger(__name__)

RUN_CONFIG = "config.yaml"  # a run folder's resolved plan
CHECKPOINTS = "checkpoints"
# Files a complete Megatron distributed checkpoint holds (torch_dist writes metadata.json, torch DCP .metadata)
MEGATRON_INDEX = ("metadata.json", ".metadata")
_CHECKPOINT_NAME = re.compile(r"(step|iter)_(\d+)")
_ENGINE_PREFIX = {"hf": "step", "megatron": "iter"}


class ModelResolutionError(ValueError):
    """A --models entry that cannot be evaluated; the message says what to give or do instead."""


class ModelNotFound(ModelResolutionError, FileNotFoundError):
    """A --models entry that looks like a path and is not there."""


@dataclass(frozen=True)
class ResolvedModel:
    name: str  # the default name of its results folder
    path: str  # what the loader gets: a folder or a Hub id
    metadata: dict  # the export's morphcpt_metadata.json (+ "evaluated_from" for runs)
    given: str = ""  # the --models entry it came from
    # one of a run's last k checkpoints (--last-checkpoints): {"run_name", "step", "steps": the k steps, oldest first}
    checkpoint_set: dict | None = None


@dataclass(frozen=True)
class RunCheckpoint:
    """One checkpoint of a training run, found from a run folder, its checkpoints/ or the checkpoint itself."""

    given: str
    run_dir: Path
    plan: CPTPlan
    checkpoint: Path
    step: int

    @property
    def name(self) -> str:
        return f"{self.plan.run_name}-step{self.step}"

    @property
    def export_target(self) -> Path:
        return default_output(self.plan, self.step)

    def existing_export(self) -> Path | None:
        """An export of exactly this checkpoint: the run's default export or its step export."""
        for folder in (default_output(self.plan, None), self.export_target):
            meta = read_metadata(folder)
            if (
                meta.get("step") == self.step
                and meta.get("config_hash") == self.plan.config_hash()
                and meta.get("checkpoint") == str(self.checkpoint)
                and (folder / "config.json").is_file()
            ):
                return folder
        return None

    def source(self, export: Path, exported_now: bool) -> dict:
        return {
            "given": self.given,
            "run_dir": str(self.run_dir),
            "run_name": self.plan.run_name,
            "engine": self.plan.engine,
            "checkpoint": str(self.checkpoint),
            "step": self.step,
            "export": str(export),
            "exported_now": exported_now,
        }


def read_metadata(folder: Path) -> dict:
    try:
        meta = json.loads((folder / METADATA_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def bridge_available() -> bool:
    """Megatron-Bridge importable here: inside the NeMo container, where megatron checkpoints can be exported."""
    try:
        return importlib.util.find_spec("megatron.bridge") is not None
    except (ImportError, ValueError):
        return False


# ------------------------------------------------------------------------------------------------- finding


def _env_settings() -> dict[str, str]:
    """The checkout's .env settings (empty without one; a malformed one is reported by the commands using it)."""
    try:
        return paths.read_env(paths.ENV_FILE) if paths.ENV_FILE.is_file() else {}
    except ValueError:
        return {}


def _output_roots() -> list[Path]:
    """Where runs may live: OUTPUT_ROOT (environment, else .env) and this checkout's outputs/."""
    roots = [os.environ.get("MORPHCPT_OUTPUT_ROOT"), os.environ.get("OUTPUT_ROOT")]
    roots += [_env_settings().get("OUTPUT_ROOT"), str(paths.OUTPUTS_DIR)]
    return list(dict.fromkeys(Path(r) for r in roots if r))


def _not_found(text: str) -> ModelNotFound:
    name = Path(text).name
    for root in _output_roots():
        for kind in ("runs", "exports"):
            if name and (root / kind / name).is_dir():
                return ModelNotFound(
                    f"model folder not found: {text}; a {kind[:-1]} named {name} is at {root / kind / name} "
                    f"(the jobs keep {kind} under OUTPUT_ROOT/{kind}): give that"
                )
    return ModelNotFound(
        f"model folder not found: {text} (give an exported model folder, a training run folder, its checkpoints/ "
        "or one checkpoint in it, or a Hub id such as google/gemma-3-1b-pt)"
    )


def _run_of(folder: Path) -> tuple[Path, Path | None] | None:
    """(run folder, the named checkpoint or None) when `folder` is a run, its checkpoints/ or a checkpoint."""
    if (folder / RUN_CONFIG).is_file():
        return folder, None
    if folder.name == CHECKPOINTS and (folder.parent / RUN_CONFIG).is_file():
        return folder.parent, None
    if (
        _CHECKPOINT_NAME.fullmatch(folder.name)
        and folder.parent.name == CHECKPOINTS
        and (folder.parent.parent / RUN_CONFIG).is_file()
    ):
        return folder.parent.parent, folder
    return None


def _read_plan(run_dir: Path, given: str) -> CPTPlan:
    try:
        plan = plan_from_yaml(run_dir / RUN_CONFIG)
    except Exception as error:  # YAML, schema or validation: the run's plan is unusable either way
        raise ModelResolutionError(
            f"{given}: cannot read the run's plan {run_dir / RUN_CONFIG}: {error}"
        ) from None
    plan.run_dir = str(run_dir)  # where it is now (a run folder may have been moved since it was written)
    return plan


def _hf_checkpoint(run_dir: Path, named: Path | None, given: str) -> tuple[Path, int]:
    from morphcpt.modeling import checkpoint_files

    if named is not None:
        if problem := checkpoint_files.verify(named):
            raise ModelResolutionError(f"{given}: checkpoint {named} is not usable: {problem}")
        return named, int(checkpoint_files.read_meta(named)["step"])
    try:
        found = checkpoint_files.latest_checkpoint(run_dir / CHECKPOINTS)
    except checkpoint_files.CheckpointError as error:
        raise ModelResolutionError(f"{given}: {error}") from None
    if found is None:
        raise ModelResolutionError(
            f"{given}: the run has no checkpoint yet (none under {run_dir / CHECKPOINTS}); train it first"
        )
    return found, int(checkpoint_files.read_meta(found)["step"])


def _check_belongs(plan: CPTPlan, checkpoint: Path, step: int, given: str) -> None:
    """A named checkpoint must be this run's own: its folder's step, its recorded step and the plan's config hash
    agree (a checkpoint copied in from another run would otherwise be exported, or another step scored, under this
    run's name)."""
    from morphcpt.modeling import checkpoint_files

    meta = checkpoint_files.read_meta(checkpoint)
    folder_step = int(_CHECKPOINT_NAME.fullmatch(checkpoint.name).group(2))
    problems = []
    if folder_step != step:
        problems.append(f"its folder says step {folder_step} but its meta.json records step {step}")
    recorded = meta.get("config_hash")
    if recorded is not None and recorded != plan.config_hash():
        problems.append(
            f"it was written by another plan (config hash {recorded}; this run's {RUN_CONFIG} has "
            f"{plan.config_hash()})"
        )
    if meta.get("run_name") not in (None, plan.run_name):
        problems.append(f"it was written by run {meta['run_name']}, not {plan.run_name}")
    if problems:
        raise ModelResolutionError(
            f"{given}: not a checkpoint of the run {plan.run_dir}: {'; '.join(problems)}. Give the checkpoint "
            "inside the run folder that wrote it (or that run folder itself)"
        )


def _megatron_checkpoint(run_dir: Path, named: Path | None, given: str) -> tuple[Path, int]:
    """The tracker names the newest checkpoint Megatron finished writing; a newer folder may be half-written."""
    root = run_dir / CHECKPOINTS
    tracker = root / MEGATRON_TRACKER
    text = tracker.read_text().strip() if tracker.is_file() else ""
    latest = int(text) if text.isdigit() else None
    if named is None:
        if latest is None:
            raise ModelResolutionError(
                f"{given}: the run has no complete Megatron checkpoint yet ({tracker} is missing); train it first"
            )
        path, step = root / f"iter_{latest:07d}", latest
    else:
        path, step = named, int(_CHECKPOINT_NAME.fullmatch(named.name).group(2))
        if latest is None or step > latest:
            raise ModelResolutionError(
                f"{given}: iteration {step} is newer than the run's last complete checkpoint "
                f"({latest if latest is not None else f'none: {tracker.name} is missing'}), so it may be unfinished; "
                "name an earlier iter_ folder or the run folder"
            )
    if not path.is_dir() or not any((path / index).exists() for index in MEGATRON_INDEX):
        raise ModelResolutionError(
            f"{given}: {path} is not a complete Megatron checkpoint (no {' or '.join(MEGATRON_INDEX)})"
        )
    return path, step


def _eeve_export(run_dir: Path, given: str) -> ResolvedModel:
    """An EEVE run (`stages/stage<k>`, each an hf run) exports its last stage itself when it finishes."""
    stages = sorted(
        (p for p in (run_dir / "stages").glob("stage*") if (p / RUN_CONFIG).is_file()),
        key=lambda p: int(p.name.removeprefix("stage") or 0),
    )
    if not stages:
        raise ModelResolutionError(f"{given}: an EEVE run folder without any stage run yet; train it first")
    plan = _read_plan(stages[-1], given)
    name = plan.run_name.removesuffix(f"-{stages[-1].name}")
    export = Path(plan.output_root) / "exports" / name
    meta = read_metadata(export)
    if (export / "config.json").is_file() and str(stages[-1]) in str(meta.get("checkpoint", "")):
        return ResolvedModel(name=export.name, path=str(export), metadata=meta)
    raise ModelResolutionError(
        f"{given} is an EEVE run whose last stage ({stages[-1].name}) has no export yet: the run exports itself to "
        f"{export} when its last stage finishes (rerun its training command; finished stages are skipped), or "
        f"evaluate one stage's run folder ({stages[-1]})"
    )


def locate(entry: str) -> ResolvedModel | RunCheckpoint:
    """What one --models entry names; cheap (no model is loaded, nothing is exported)."""
    text = str(entry)
    folder = Path(text).expanduser()
    looks_like_path = text.startswith(("/", ".", "~")) or text.count("/") > 1 or folder.exists()
    if not looks_like_path:
        return ResolvedModel(name=text.replace("/", "__"), path=text, metadata={})  # a Hub id
    if not folder.is_dir():
        raise _not_found(text)
    folder = folder.resolve()
    if (folder / "config.json").is_file():
        return ResolvedModel(name=folder.name, path=str(folder), metadata=read_metadata(folder))
    found = _run_of(folder)
    if found is None and (folder / "stages").is_dir():
        return _eeve_export(folder, text)
    if found is None:
        raise ModelResolutionError(
            f"{text} is neither an exported model (no config.json) nor a training run: give an export folder, a run "
            f"folder (holding {RUN_CONFIG} and {CHECKPOINTS}/), its {CHECKPOINTS}/ folder, one step_…/iter_… "
            "checkpoint in it, or a Hub id"
        )
    run_dir, named = found
    plan = _read_plan(run_dir, text)
    prefix = _ENGINE_PREFIX.get(plan.engine)
    if named is not None and not named.name.startswith(f"{prefix}_"):
        raise ModelResolutionError(
            f"{text}: a {plan.engine}-engine run keeps its checkpoints as {prefix}_N folders, not {named.name}"
        )
    finder = _hf_checkpoint if plan.engine == "hf" else _megatron_checkpoint
    checkpoint, step = finder(run_dir, named, text)
    if named is not None and plan.engine == "hf":
        _check_belongs(plan, checkpoint, step, text)
    return RunCheckpoint(given=text, run_dir=run_dir, plan=plan, checkpoint=checkpoint, step=step)


def _intact_steps(run: RunCheckpoint) -> list[tuple[Path, int]]:
    """(checkpoint, step) of every complete checkpoint of the run up to `run.step`, oldest first: hf folders that
    pass `checkpoint_files.verify`, megatron iter_ folders no newer than the tracker's with their index file."""
    from morphcpt.modeling import checkpoint_files

    root = run.run_dir / CHECKPOINTS
    prefix = _ENGINE_PREFIX[run.plan.engine]
    found = []
    for folder in root.glob(f"{prefix}_*"):
        match = _CHECKPOINT_NAME.fullmatch(folder.name)
        if not match or not folder.is_dir() or int(match.group(2)) > run.step:
            continue
        if run.plan.engine == "hf":
            if (problem := checkpoint_files.verify(folder)) is not None:
                log.warning("%s: checkpoint %s is not usable (%s); left out", run.given, folder, problem)
                continue
            found.append((folder, int(checkpoint_files.read_meta(folder)["step"])))
        elif any((folder / index).exists() for index in MEGATRON_INDEX):
            found.append((folder, int(match.group(2))))
    return sorted(found, key=lambda pair: pair[1])


def last_checkpoints(run: RunCheckpoint, k: int) -> list[RunCheckpoint]:
    """The run's last `k` intact checkpoints up to `run` (its latest, or the one named), oldest first."""
    if k < 1:
        raise ModelResolutionError(f"--last-checkpoints must be at least 1, not {k}")
    steps = _intact_steps(run)
    if len(steps) < k:
        have = ", ".join(str(step) for _, step in steps) or "none"
        raise ModelResolutionError(
            f"{run.given}: --last-checkpoints {k} needs {k} checkpoints up to step {run.step}, and the run kept "
            f"{len(steps)} (steps {have}): ask for {len(steps)} or fewer, or keep more (checkpoint.keep={k} in "
            "the plan) next time"
        )
    return [
        RunCheckpoint(given=run.given, run_dir=run.run_dir, plan=run.plan, checkpoint=path, step=step)
        for path, step in steps[-k:]
    ]


def export_job_command(run: RunCheckpoint) -> str:
    """The export job to submit for a megatron checkpoint (rendered jobs/export_<variant>.pbs or .slurm)."""
    slurm = (os.environ.get("SCHEDULER") or _env_settings().get("SCHEDULER")) == "slurm"
    suffix = "slurm" if slurm else "pbs"
    try:
        from morphcpt.plan.recipes import cluster_runs

        seeds = run.plan.data.replicate + 1  # a seed k run's job is export_<variant>_seed<k>
        runs = cluster_runs(seeds) + cluster_runs(seeds, prefix="pilot")
    except Exception:  # a broken config tree is reported elsewhere; the job name is only a convenience here
        runs = []
    variant = next((r["VARIANT"] for r in runs if r["RUN_NAME"] == run.plan.run_name), None)
    variant = variant or (runs[0]["VARIANT"] if runs else "baseline")
    job = f"jobs/export_{variant}.{suffix}"
    values = f"RUN_DIR={run.run_dir},STEP={run.step}"
    submit = f"sbatch --export=ALL,{values} {job}" if slurm else f"qsub -v {values} {job}"
    if not (paths.REPO_ROOT / job).is_file():
        submit = f"bash job_templates/setup_jobs.sh && {submit}"
    return submit


def resolve_models(
    entries: Sequence[str],
    exporter: Callable | None = None,
    can_export_megatron: Callable[[], bool] = bridge_available,
    last: int | None = None,
) -> list[ResolvedModel]:
    """Every entry as a loadable model, exporting run checkpoints that have no export yet (see the docstring);
    with `last`, a run entry becomes its last `last` checkpoints, each with its `checkpoint_set`.

    All entries are checked first; the problems of all of them are raised together, before any export."""
    located: list[ResolvedModel | RunCheckpoint] = []
    sets: dict[int, list[int]] = {}  # id of a located checkpoint -> the steps of its set
    problems: list[ModelResolutionError] = []
    for entry in entries:
        try:
            found = locate(entry)
            if last is None or isinstance(found, ResolvedModel):
                if last is not None:
                    log.info(
                        "%s is not a training run: evaluated once (--last-checkpoints applies to runs)", entry
                    )
                located.append(replace(found, given=entry) if isinstance(found, ResolvedModel) else found)
                continue
            members = last_checkpoints(found, last)
            for member in members:
                sets[id(member)] = [m.step for m in members]
            located += members
        except ModelResolutionError as error:
            problems.append(error)
    for item in located:
        if (
            isinstance(item, RunCheckpoint)
            and item.plan.engine == "megatron"
            and item.existing_export() is None
            and not can_export_megatron()
        ):
            problems.append(
                ModelResolutionError(
                    f"{item.given}: megatron checkpoint {item.checkpoint.name} (step {item.step}) has no export "
                    "yet, and exporting it needs the NeMo container on a GPU node: submit "
                    f"`{export_job_command(item)}`, then rerun this command (it evaluates "
                    f"{item.export_target} once that job has written it)"
                )
            )
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise ModelResolutionError("\n".join(str(p) for p in problems))
    if exporter is None:
        from morphcpt.export import export_run as exporter
    resolved = []
    for item in located:
        if isinstance(item, ResolvedModel):
            resolved.append(item)
            continue
        export = item.existing_export()
        exported_now = export is None
        if exported_now:
            log.info(
                "%s: exporting step %d of run %s to %s (with the logit-parity check)",
                item.given,
                item.step,
                item.plan.run_name,
                item.export_target,
            )
            export = Path(exporter(item.run_dir, step=item.step, output=item.export_target).output)
        else:
            log.info(
                "%s: step %d of run %s, its export %s", item.given, item.step, item.plan.run_name, export
            )
        metadata = {**read_metadata(export), "evaluated_from": item.source(export, exported_now)}
        steps = sets.get(id(item))
        resolved.append(
            ResolvedModel(
                name=item.plan.run_name if steps else item.name,
                path=str(export),
                metadata=metadata,
                given=item.given,
                checkpoint_set={"run_name": item.plan.run_name, "step": item.step, "steps": steps}
                if steps
                else None,
            )
        )
    return resolved
