"""A training job that meets its walltime, run as the schedulers run it: the RENDERED hf-engine job (PBS Pro and
Slurm scripts) under a fake scheduler that, at the walltime, sends SIGTERM to every process of the job and SIGKILL
`kill_delay` later (the job script's shell included). The job must stop itself before that, with a verified
checkpoint and a resubmission, whatever the scheduler's kill delay.

Time is scaled 1:10 for the kill delays (PBS Pro 10 s -> 1 s, Slurm 30 s -> 3 s); the job's margin is the
smallest the settings allow (TRAIN_EXIT_MARGIN_MINUTES=1, against 20 on the cluster), so the walltime is
2 min 40 s and the job stops itself 100 s in (its check stage and start-up take 20-70 s on a busy CPU)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from morphcpt import paths
from morphcpt.chain import jobs
from morphcpt.modeling import checkpoint_files
from train_helpers import write_data

# At the walltime: SIGTERM, then SIGKILL `kill_delay` later. OpenPBS: `kill_delay`, 10 s by default
# (src/server/requests.c, the queue attribute in pbs_queue_attributes); the mom signals every process of the job,
# the job script's shell too. Slurm: SIGTERM, then SIGKILL after KillWait (slurm.conf; 30 s is the usual value).
KILL_DELAY = {"pbs": 10, "slurm": 30}
SCALE = 0.1
WALLTIME, MARGIN_MINUTES = "00:02:40", 1
TINY = (
    "model=tiny loop.steps=100000 loop.seq_length=64 loop.global_batch_size=4 loop.micro_batch_size=2 "
    "loop.precision=fp32 optim.warmup_steps=2 validation.interval=100000 checkpoint.interval=100000 "
    "logging.wandb=false logging.progress_bar=false"
)
# Records each submission: PBS Pro's qsub prints `<seq>.<server>`, sbatch `Submitted batch job <id>`.
FAKE_SUBMIT = """#!/bin/bash
echo "$0 $*" >> "$FAKE_SUBMISSIONS"
[[ "$(basename "$0")" == qsub ]] && echo "4242.fake" || echo "Submitted batch job 4242"
"""


def processes_of(marker: str) -> list[int]:
    """Every process of the job, wherever it went (a PBS cgroup or Slurm step holds them all; torchrun starts its
    workers in sessions of their own, so a process group would miss them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            with contextlib.suppress(OSError):
                if f"MORPHCPT_TEST_JOB={marker}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
    return found


def signal_all(marker: str, sig: int) -> None:
    for pid in processes_of(marker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def run_with_walltime(script: Path, env: dict, walltime_s: float, kill_delay_s: float, out: Path) -> dict:
    """The job as the scheduler runs it: SIGTERM to all of it at the walltime, SIGKILL kill_delay later."""
    marker = env["MORPHCPT_TEST_JOB"]
    tic = time.monotonic()
    with open(out, "w") as log:
        proc = subprocess.Popen(
            ["bash", str(script)], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    events = []
    try:
        status = proc.wait(timeout=walltime_s)
    except subprocess.TimeoutExpired:
        events.append(f"walltime: SIGTERM at {time.monotonic() - tic:.0f} s")
        signal_all(marker, signal.SIGTERM)
        try:
            status = proc.wait(timeout=kill_delay_s)
        except subprocess.TimeoutExpired:
            events.append(f"SIGKILL {kill_delay_s:g} s later")
            signal_all(marker, signal.SIGKILL)
            status = proc.wait(timeout=30)
    finally:
        signal_all(marker, signal.SIGKILL)
    return {"status": status, "seconds": time.monotonic() - tic, "events": events, "output": out.read_text()}


def test_every_hf_training_job_runs_under_the_walltime_stop(tmp_path):
    rendered = jobs.render_jobs(
        paths.REPO_ROOT / "job_templates", tmp_path, {"TRAIN_EXIT_MARGIN_MINUTES": "15"}
    )
    training = [p for p in rendered if p.name.startswith(("run_cpt_", "pretrain_scratch"))]
    assert len(training) >= 5
    for script in training:
        text = script.read_text()
        # the hf engine's torchrun (each template's first) runs inside before_walltime.sh
        launch = text.index("bash training/nemo/torchrun_nodes.sh")
        stop = text.rfind("bash training/nemo/before_walltime.sh", 0, launch)
        assert stop != -1 and text[stop:launch].count("\n") <= 2, script.name
        joined = re.sub(r"\\\n\s*", "", text)  # continuation lines as one
        assert '--walltime "24:00:00" --margin-minutes "15" --started "$JOB_START"' in joined, script.name
        assert text.index("JOB_START=$(date +%s)") < text.index("set -euo pipefail"), script.name


@pytest.fixture(scope="module")
def data_root(tmp_path_factory, sample_corpus):
    return write_data(tmp_path_factory.mktemp("data") / "processed", sample_corpus, limit=200)


@pytest.mark.slow
@pytest.mark.parametrize("scheduler", ["pbs", "slurm"])
def test_a_training_job_stops_itself_before_the_walltime_saves_and_resubmits(
    scheduler, data_root, tiny_gemma3, tmp_path
):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("qsub", "sbatch"):
        (bin_dir / name).write_text(FAKE_SUBMIT)
        (bin_dir / name).chmod(0o755)
    settings = {
        "SCHEDULER": scheduler, "OUTPUT_ROOT": str(tmp_path / "out"), "LOG_DIR": str(tmp_path / "logs"),
        "DATA_ROOT": str(data_root.parent), "PROCESSED_DIR": str(data_root), "NUM_CHUNKS": "1",
        "BASE_MODEL": str(tiny_gemma3), "TOKENIZER": str(paths.SAMPLE_TOKENIZER_DIR), "TRAIN_ENGINE": "hf",
        "TRAIN_NGPUS": "1", "TRAIN_WALLTIME": WALLTIME, "TRAIN_EXIT_MARGIN_MINUTES": str(MARGIN_MINUTES),
        "AUTO_RESUBMIT": "1", "TRAIN_OVERRIDES": TINY, "PROJECT_DIR": str(paths.REPO_ROOT),
    }  # fmt: skip
    rendered = jobs.render_jobs(paths.REPO_ROOT / "job_templates", tmp_path / "jobs", settings)
    script = next(p for p in rendered if p.stem == "run_cpt_baseline")
    job_id = {"pbs": {"PBS_JOBID": "77.fake"}, "slurm": {"SLURM_JOB_ID": "77", "SLURM_CPUS_PER_TASK": "2"}}
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("PBS_", "SLURM_", "MORPHCPT_"))}
    env = {
        **inherited, **job_id[scheduler],
        "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]]),
        "MORPHCPT_NO_ENROOT": "1", "MORPHCPT_TEST_JOB": uuid.uuid4().hex, "OMP_NUM_THREADS": "1",
        "FAKE_SUBMISSIONS": str(tmp_path / "submissions"),
    }  # fmt: skip
    hours, minutes, seconds = map(int, WALLTIME.split(":"))
    walltime_s = hours * 3600 + minutes * 60 + seconds
    kill_delay = KILL_DELAY[scheduler] * SCALE
    result = run_with_walltime(script, env, walltime_s, kill_delay, tmp_path / "job.out")
    output = result["output"]

    # it stopped itself: the scheduler never had to signal it, so its kill delay never mattered
    assert result["events"] == [] and result["status"] == 0, (result["events"], output)
    assert result["seconds"] < walltime_s and "stopped for the walltime" in output
    run_dir = tmp_path / "out" / "runs" / "gemma3-1b-baseline"
    latest = checkpoint_files.latest_checkpoint(run_dir / "checkpoints")
    assert latest is not None and checkpoint_files.verify(latest) is None, output
    step = checkpoint_files.read_meta(latest)["step"]
    assert step >= 1 and f"checkpoint iteration 0 -> {step}" in output
    submit = "qsub" if scheduler == "pbs" else "sbatch"
    [submission] = (tmp_path / "submissions").read_text().splitlines()
    assert submission.split()[0].endswith(submit) and submission.endswith(script.name)
    print(
        f"{scheduler}: walltime {walltime_s} s, kill_delay {KILL_DELAY[scheduler]} s (scaled to {kill_delay:g} s); "
        f"the job stopped itself at {result['seconds']:.0f} s with a verified checkpoint at step {step}, "
        f"resubmitted with {submit}; scheduler signals: {result['events'] or 'none'}"
    )
