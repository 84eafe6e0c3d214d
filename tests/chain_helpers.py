"""Helpers for the chain tests: a checkout whose PATH holds fake `qsub`/`qstat` scripts (each test file writes
the script's behaviour it needs) and a `.env` with its data, output and log folders under the test's folder."""

from __future__ import annotations

import os
from pathlib import Path


def fake_pbs_checkout(tmp_path: Path, monkeypatch, script: str) -> Path:
    """`script` as qsub and qstat on PATH, $FAKE_LOG where it records each call, a two-chunk `.env`; the test
    runs from `tmp_path`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("qsub", "qstat"):
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "submitted.log"))
    (tmp_path / ".env").write_text(
        f"DATA_ROOT={tmp_path}/data\nOUTPUT_ROOT={tmp_path}/out\nLOG_DIR={tmp_path}/logs\nNUM_CHUNKS=2\n"
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path
