"""`<run_dir>/progress.json`: how far a run got and whether it is complete, for job scripts and the chain.

Both engines write it when a training invocation ends (rank 0 only, atomically): the job script reads it to choose
between "export" and "resubmit", and `morphcpt.chain.pipeline` reads `complete` to know the CPT stage is done.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

FILE = "progress.json"


def write_progress(run_dir: str | Path, iteration: int, steps: int, exit_reason: str) -> dict:
    """Write `<run_dir>/progress.json` (iteration of the newest checkpoint, the planned steps) and return it."""
    progress = {
        "iteration": iteration,
        "steps": steps,
        "complete": iteration >= steps,
        "exit": exit_reason,
        "job_id": os.environ.get("PBS_JOBID") or os.environ.get("SLURM_JOB_ID"),
        "written": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    path = Path(run_dir) / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(progress, indent=2))
    os.replace(tmp, path)
    return progress
