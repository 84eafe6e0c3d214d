"""`bash benchmarks/gpu.sh --cpu-smoke`: the GPU benchmark's every row (the engine's default, + activation
checkpointing, fsdp on one rank, the bare-loop reference) runs at the tiny shape on a CPU and prints its table, so
the one command a GPU run needs is known to work before a GPU is borrowed for it."""

from __future__ import annotations

import json
import subprocess

import pytest

from morphcpt import paths


@pytest.mark.slow
def test_the_gpu_benchmark_runs_every_row_at_the_tiny_shape_on_cpu(tmp_path):
    out = tmp_path / "rows.json"
    done = subprocess.run(
        ["bash", str(paths.REPO_ROOT / "benchmarks" / "gpu.sh"), "--cpu-smoke", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = {row["row"]: row for row in json.loads(out.read_text())["rows"]}
    assert list(rows) == ["engine default", "+ activation checkpointing", "fsdp, 1 rank", "bare loop"]
    assert all("error" not in row and row["tokens_per_s"] > 0 for row in rows.values()), rows
    engine = rows["engine default"]
    # auto on the 40 GB card the plan names: the tiny model's whole per-rank batch
    assert engine["micro_batch"] == 8 and engine["estimate_gib"] > 0
    assert engine["checkpoint_stall_s"] >= 0 and engine["checkpoint_write_s"] is not None
    assert "| engine default | 8 |" in done.stdout and "| bare loop |" in done.stdout


def test_rows_are_picked_by_name_even_where_a_name_holds_a_comma():
    import sys

    sys.path.insert(0, str(paths.REPO_ROOT / "benchmarks"))
    from gpu import ROWS, pick_rows

    names = list(ROWS)
    assert pick_rows("+ activation checkpointing,fsdp, 1 rank", names) == (
        ["+ activation checkpointing", "fsdp, 1 rank"],
        [],
    )
    assert pick_rows("fsdp,1 rank , bare loop", names) == (["fsdp, 1 rank", "bare loop"], [])
    assert pick_rows("engine default,fsdp", names) == (["engine default"], ["fsdp"])
