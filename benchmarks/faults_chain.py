"""The fault campaign of issue #30, the chain (C1-C5: two submitters, a killed submitter, deleted or cut outputs,
a corrupted job record), registered into `benchmarks/faults.py` (`--only "^C"`). The scheduler is a fake qsub/qstat
on PATH (`CHAIN_FAKE`); the chain itself runs for real in subprocesses."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from faults_shell import shell  # beside this script

CHAIN_FAKE = """#!/bin/bash
sleep "${FAKE_DELAY:-0}"
echo "$(basename "$0") $*" >> "$FAKE_LOG"
n=$(wc -l < "$FAKE_LOG")
case "$(basename "$0")" in qsub) echo "$n.pbs01";; qstat) grep -q "$2" "$FAKE_QUEUED" 2>/dev/null && echo "job_state = Q" || exit 1;; esac
"""


def register(fault, env: dict, sample_lines) -> None:
    """Add these scenarios to `faults.py`'s list (`fault` is its decorator)."""
    cli, clean, cut = shell(env)

    def fake_cluster(work: Path) -> dict:
        bin_dir = work / "bin"
        bin_dir.mkdir()
        for name in ("qsub", "qstat"):
            (bin_dir / name).write_text(CHAIN_FAKE)
            (bin_dir / name).chmod(0o755)
        (work / ".env").write_text(
            f"DATA_ROOT={work}/data\nOUTPUT_ROOT={work}/out\nLOG_DIR={work}/logs\nNUM_CHUNKS=2\n"
        )
        return {
            "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}",
            "FAKE_LOG": str(work / "submitted.log"),
            "FAKE_QUEUED": str(work / "queued"),
        }

    def submissions(work: Path) -> list[str]:
        log = work / "submitted.log"
        return [x for x in log.read_text().splitlines() if x.startswith("qsub")] if log.exists() else []

    chain = ["-m", "morphcpt.chain.pipeline", "--env", ".env"]

    def submitter(work: Path, extra: dict, **popen) -> subprocess.Popen:
        """`chain` up to preprocessing started in work with `extra` in its environment, output captured."""
        cmd = [sys.executable, *chain, "--schemes", "vanilla", "--to", "preprocess"]
        return subprocess.Popen(
            cmd,
            env={**env, **extra},
            cwd=work,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            **popen,
        )

    @fault(
        "C1. two submit_pipeline.py at once, slow scheduler",
        "one submits, the other refuses naming the holder; no duplicates",
    )
    def two_submitters(work: Path):
        extra = {**fake_cluster(work), "FAKE_DELAY": "1"}
        first = submitter(work, extra)
        deadline = time.time() + 120
        while not (work / "logs" / "pipeline" / "chain.lock").exists() and time.time() < deadline:
            time.sleep(0.05)
        second = submitter(work, extra)
        outs = [p.communicate(timeout=300)[0] for p in (first, second)]
        names = [x.rsplit("/", 1)[-1] for x in submissions(work)]
        refused = f"pid {first.pid} on {socket.gethostname()}" in outs[1]
        ok = (
            (first.returncode, second.returncode) == (0, 1) and refused and len(names) == len(set(names)) == 4
        )
        return (
            f"exit codes {first.returncode}/{second.returncode}; {len(names)} jobs ({len(set(names))} distinct); second names the holder: {refused}",
            ok,
        )

    @fault(
        "C2. a submitter SIGKILLed mid-chain, then rerun",
        "the stale claim is taken over; only what is left is submitted",
    )
    def killed_submitter(work: Path):
        extra = {**fake_cluster(work), "FAKE_DELAY": "1"}
        proc = submitter(work, extra, start_new_session=True)
        state = work / "logs" / "pipeline" / "jobs_pbs.json"
        deadline = time.time() + 120
        while time.time() < deadline and len(json.loads(state.read_text()) if state.exists() else {}) < 2:
            time.sleep(0.05)
        os.killpg(
            proc.pid, signal.SIGKILL
        )  # the submitter and the qsub it waits for: a login node going down
        proc.communicate()
        before = submissions(work)
        recorded = json.loads((work / "logs" / "pipeline" / "jobs_pbs.json").read_text())
        (work / "queued").write_text("\n".join(recorded.values()) + "\n")  # what it submitted is still queued
        code, out = cli(*chain, "--schemes", "vanilla", "--to", "preprocess", extra_env=extra, cwd=work)
        names = [x.rsplit("/", 1)[-1] for x in submissions(work)]
        ok = code == 0 and "took over" in out and len(names) == len(set(names)) == 4
        return (
            f"killed after {len(before)} jobs; rerun exit {code}, took over: {'took over' in out}; {len(names)} jobs in all, {len(set(names))} distinct",
            ok,
        )

    @fault(
        "C3. a preprocess .bin deleted after the stage finished, chain rerun (--local)",
        "the stage is not done; its rerun rebuilds the file",
    )
    def deleted_output(work: Path):
        args = [
            "-m",
            "morphcpt.chain.pipeline",
            "--local",
            "--sample",
            "--output-dir",
            str(work / "chain"),
            "--schemes",
            "vanilla",
            "--to",
            "preprocess",
        ]
        code, out = cli(*args, timeout=900)
        if code:
            return f"first run failed: {out[-200:]}", False
        target = work / "chain" / "data" / "processed" / "vanilla" / "chunk_01_text_document.bin"
        good = target.read_bytes()
        target.unlink()
        code, status = cli(
            "-m",
            "morphcpt.chain.pipeline",
            "--local",
            "--sample",
            "--output-dir",
            str(work / "chain"),
            "--status",
        )
        shown = next((x for x in status.splitlines() if x.startswith("preprocess_vanilla")), "")
        code, out = cli(*args, timeout=900)
        ok = "missing" in shown and code == 0 and target.exists() and target.read_bytes() == good
        return (
            f"status: {shown.split('  ')[-1].strip()[:80].replace(str(work), '.')}; rerun exit {code}, rebuilt identical: {target.exists() and target.read_bytes() == good}",
            ok,
        )

    @fault(
        "C4. variants: .idx cut short; export weights deleted; corpus deleted after the split",
        "not done (2 cases); not rebuilt when nothing needs it (1)",
    )
    def done_variants(work: Path):
        from morphcpt import completion, indexed
        from morphcpt.chain import jobs, pipeline

        fake_cluster(work)
        s = jobs.derived_settings({**jobs.SETTINGS, **jobs.read_env(str(work / ".env"))})
        markers = pipeline._chunk_markers(s, "vanilla")
        for marker in markers:
            prefix = marker.parent / (marker.name.removesuffix(".done.json") + "_text_document")
            with indexed.IndexedWriter(prefix, 100) as writer:
                writer.add([2, 5, 1])
            marker.write_text(
                json.dumps({"prefix": prefix.name, "documents": 1, "files": indexed.dataset_digest(prefix)})
            )
        cut(indexed.idx_path(markers[1].parent / "chunk_02_text_document"))
        idx = completion.preprocess(markers)
        export = work / "export"
        export.mkdir()
        for name in ("config.json", "model.safetensors"):
            (export / name).write_text("{}")
        (export / "morphcpt_metadata.json").write_text(
            json.dumps(
                {"files": {n: indexed.file_digest(export / n) for n in ("config.json", "model.safetensors")}}
            )
        )
        (export / "model.safetensors").unlink()
        weights = completion.export(export)
        chunks = Path(s["CHUNK_DIR"])
        chunks.mkdir(parents=True)
        (chunks / "chunk_01.jsonl").write_text("{}\n")
        (chunks / "manifest.json").write_text(
            json.dumps({"chunks": [{"file": "chunk_01.jsonl", "bytes": 3}]})
        )
        Path(s["CORPUS"]).parent.mkdir(parents=True)
        Path(s["CORPUS"] + ".done").write_text("999\n")
        states = completion.stage_states(pipeline.build_stages(s, ["vanilla"]))
        ok = bool(
            idx
            and "chunk_02_text_document.idx" in idx
            and weights
            and "model.safetensors is missing" in weights
            and states["download"][0]
        )
        return (
            f"idx: {'not done' if idx else 'done'}; export: {'not done' if weights else 'done'}; download after split: {'skipped' if states['download'][0] else 'rerun'}",
            ok,
        )

    @fault(
        "C5. corrupted logs/pipeline/jobs_pbs.json: --status, submission",
        "status shows the disk with a warning; submission refuses with the way on",
    )
    def corrupt_jobs(work: Path):
        extra = fake_cluster(work)
        state = work / "logs" / "pipeline" / "jobs_pbs.json"
        state.parent.mkdir(parents=True)
        state.write_text('{"download": "1.pbs01", "spl')
        code1, out1 = cli(*chain, "--status", extra_env=extra, cwd=work)
        code2, out2 = cli(*chain, "--to", "download", extra_env=extra, cwd=work)
        state.write_text('["1.pbs01"]')
        code3, out3 = cli(*chain, "--to", "download", extra_env=extra, cwd=work)
        ok = code1 == 0 and "warning" in out1 and "download" in out1 and code2 == code3 == 1
        ok = (
            ok
            and all("Traceback" not in o and f"mv {state}" in o for o in (out2, out3))
            and not submissions(work)
        )
        return (
            f"status exit {code1} ({'warning shown' if 'warning' in out1 else 'no warning'}); submissions exit {code2}/{code3}, with the way on; nothing submitted: {not submissions(work)}",
            ok,
        )
