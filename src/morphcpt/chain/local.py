"""Run the chain's job scripts on this machine, in order, instead of submitting them; and the sample's settings.

    python scripts/submit_pipeline.py --local --sample       # the whole chain on the shipped sample, tiny model, CPU
    python scripts/submit_pipeline.py --local [--from ...]   # .env's settings, on this machine (a workstation, a node)
    python scripts/submit_pipeline.py --local --sample --base-model DIR   # the sample chain from a real HF model

The scripts are exactly the ones `morphcpt.chain.pipeline` submits (rendered from `job_templates/`), run by
`morphcpt.chain.jobs.run_local` with the scheduler's variables set; the stages are `morphcpt.chain.pipeline.build_stages`'s.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from morphcpt import completion, paths
from morphcpt.chain import jobs, scheduler
from morphcpt.errors import UserError


class LocalChainError(UserError, RuntimeError):
    """A stage failed or left no outputs; the message holds the end of its log and what to do."""


def sample_settings(output_dir: Path) -> dict[str, str]:
    """Settings that run the whole chain on this machine on the shipped sample: a tiny Gemma 3 on CPU (hf engine),
    2 chunks, short runs, small benchmarks. Everything is written under `output_dir`."""
    out = Path(output_dir).resolve()
    tiny_run = (
        "model=tiny loop.steps=20 loop.train_tokens=null loop.seq_length=64 loop.global_batch_size=16 loop.micro_batch_size=16 "
        "loop.precision=fp32 optim.lr=1e-3 optim.min_lr=1e-4 optim.warmup_steps=3 validation.interval=20 "
        "validation.micro_batch_size=64 checkpoint.interval=20 checkpoint.keep=1 logging.interval=5 logging.wandb=false"
    )
    sizes = {"affixation": 20, "composition": 24, "manipulation": 28, "syllabification": 24}
    return {
        "DATA_ROOT": f"{out}/data",
        "OUTPUT_ROOT": str(out),
        "LOG_DIR": f"{out}/logs",
        "CORPUS_SOURCE": str(paths.SAMPLE_CORPUS),
        "HOLDOUT_LINES": "160",
        "NUM_CHUNKS": "2",
        "TOKENIZER": str(paths.SAMPLE_TOKENIZER_DIR),
        "BASE_MODEL": f"{out}/base-model",
        "PREPROCESS_NCPUS": "2",
        "TRAIN_NGPUS": "1",
        "TRAIN_ENGINE": "hf",
        "TRAIN_OVERRIDES": tiny_run,
        "EEVE_NUM_NEW": "256",
        "EEVE_OVERRIDES": "eeve.steps=[2,2,2,2,2,6,4] eeve.lr=[3e-3,3e-3,3e-3,1e-3,1e-3,1e-3,5e-4] "
        "eeve.warmup_steps=[0,0,0,0,0,1,1] validation.interval=1000 checkpoint.interval=1000",
        "BENCHMARK_OVERRIDES": " ".join(
            [
                *(f"pacute.{name}={n}" for name, n in sizes.items()),
                *(f"hierarchical.level{k}=12" for k in range(6)),
            ]
        ),
        "EVAL_ARGS": "--device cpu --batch-size 32",
        "AUTO_RESUBMIT": "0",
    }


def base_model_settings(output_dir: Path, base_model: Path) -> dict[str, str]:
    """The sample chain (`sample_settings`) continued from a pretrained HF folder instead of the tiny random base:
    its tokenizer preprocesses the sample and grows EEVE's vocabulary, every arm starts from its weights (the pilot
    recipes, the model's own vocabulary), at a budget a CPU finishes: 2 steps of 2 x 128 tokens a run, EEVE's
    stages 1 and 6 of 1 step each, a few items a benchmark task. For a real model (docs/real-model.md)."""
    base = str(Path(base_model).resolve())
    real_run = (
        "model.vocab_size=null loop.steps=2 loop.train_tokens=null loop.seq_length=128 loop.global_batch_size=2 "
        "loop.micro_batch_size=2 loop.precision=fp32 optim.lr=1e-5 optim.min_lr=1e-6 optim.warmup_steps=1 "
        "validation.interval=2 validation.max_batches=2 validation.micro_batch_size=2 checkpoint.interval=2 "
        "checkpoint.keep=1 logging.interval=1 logging.wandb=false"
    )
    return {
        **sample_settings(output_dir),
        "TOKENIZER": base,
        "BASE_MODEL": base,
        "RECIPES": "pilot",
        "TRAIN_OVERRIDES": real_run,
        "EEVE_OVERRIDES": "eeve.stages=[1,6] eeve.steps=[1,1,1,1,1,1,1] eeve.warmup_steps=[0,0,0,0,0,0,0] "
        "validation.interval=1000 checkpoint.interval=1000",
        "EVAL_ARGS": "--device cpu --batch-size 8 --limit 4 --max-new-tokens 16",
    }


def make_sample_base(folder: Path, echo=print) -> None:
    """The sample chain's `BASE_MODEL`: a tiny Gemma 3 with random weights for the sample tokenizer (saved once)."""
    if (Path(folder) / "config.json").exists():
        return
    from morphcpt.modeling.models import save_tiny_gemma3  # torch; only for --sample

    save_tiny_gemma3(paths.SAMPLE_TOKENIZER_DIR, folder, seed=0)
    echo(f"{'base model':<22} a tiny random Gemma 3 for the sample tokenizer: {folder}")


def _array(script: Path) -> list[int]:
    """The indices a script's own array directive asks for (PBS `-J`, Slurm `--array`), else one run."""
    match = re.search(r"^#(?:PBS -J |SBATCH --array=)(\S+)", script.read_text(), flags=re.MULTILINE)
    return jobs.parse_array(match.group(1)) if match else [1]


def _log_tail(log: Path, lines: int = 15) -> str:
    """The end of a job's log, before torchrun's own failure banner (the cause is above it)."""
    if not log.exists():
        return ""
    text = log.read_text(errors="replace").splitlines()
    banner = next((i for i, line in enumerate(text) if "elastic/multiprocessing/api.py" in line), len(text))
    return "\n".join(text[:banner][-lines:])


def _run_state(run_dir: str) -> list[tuple[str, float]]:
    """What changes when a training job makes progress: its progress files and checkpoint pointers."""
    root = Path(run_dir)
    names = ("progress.json", "latest", "stage_done.json", "latest_checkpointed_iteration.txt")
    return (
        sorted((str(p), p.stat().st_mtime) for p in root.rglob("*") if p.name in names)
        if root.exists()
        else []
    )


def run(
    stages: list,
    everything: list,
    settings: dict[str, str],
    jobs_dir: Path,
    no_enroot: bool = True,
    echo=print,
) -> None:
    """Run the rendered job scripts of `stages` on this machine, in order, each after its inputs are done.

    The scripts are the ones a scheduler would get (`morphcpt.chain.jobs.run_local`: PBS or Slurm variables set, array
    tasks one after another). A training job is run again while it makes progress and its run is not complete
    (what AUTO_RESUBMIT does on the cluster); then its gate script must pass. Stops at the first failure, with the
    log; a rerun skips every stage whose outputs are on disk.
    """
    sched = scheduler.get(settings["SCHEDULER"])
    log_dir = Path(settings["LOG_DIR"]) / "local"
    chosen = {stage.name for stage in stages}
    states = completion.stage_states(everything)
    done: dict[str, bool] = {}
    for stage in everything:
        done[stage.name], line = states[stage.name]
        if done[stage.name]:
            echo(f"{stage.name:<22} {line}")
            continue
        if stage.name not in chosen:
            continue
        missing = [name for name in stage.inputs if not done.get(name)]
        if missing:
            raise LocalChainError(f"{stage.name} needs {', '.join(missing)}, which is not done: widen --from")
        script = jobs_dir / (stage.script + sched.suffix)
        started, failure = time.perf_counter(), None  # failure: (log, exit code)
        while True:
            before = _run_state(stage.run_dir) if stage.run_dir else []
            codes = jobs.run_local(script, _array(script), no_enroot=no_enroot, log_dir=log_dir)
            bad = [(index, code) for index, code in codes.items() if code]
            if bad:
                failure = (log_dir / f"{script.stem}_{bad[0][0]}.log", bad[0][1])
                break
            if stage.group != "cpt" or stage.check() is None or _run_state(stage.run_dir) == before:
                break
            echo(f"{stage.name:<22} not complete yet and made progress: running it again")
        if failure is None and stage.group == "cpt":  # the gate: the run must be complete
            gate = jobs_dir / f"cpt_done_{stage.name[4:]}{sched.suffix}"
            code = jobs.run_local(gate, [1], no_enroot=no_enroot, log_dir=log_dir)[1]
            failure = (log_dir / f"{gate.stem}_1.log", code) if code else None
        if failure:
            log, code = failure
            tail = _log_tail(log)
            raise LocalChainError(
                f"{stage.name} failed ({jobs.describe_exit(code)}); the end of {log}:\n{tail}\n"
                "Fix the cause and rerun the same command: finished stages are skipped."
            )
        problem = stage.check()
        done[stage.name] = problem is None
        if problem:
            raise LocalChainError(
                f"{stage.name} exited 0 but did not leave its outputs: {problem} ({script}; logs in {log_dir})"
            )
        echo(f"{stage.name:<22} ran in {time.perf_counter() - started:.1f} s")
