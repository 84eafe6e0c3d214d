"""The fault campaign of issue #30 (the newer features: EEVE, the chain, corpus preparation and tokenizer training,
generation), registered into `benchmarks/faults.py`, which runs it with the issue #14 campaign in one command:

    python benchmarks/faults.py [--only "E1."]     # E: EEVE and training inputs, C: the chain, T/P/G: commands

Each scenario runs the real commands in subprocesses (as a user would) on the shipped sample in a temporary folder
and checks what must happen: a refusal that names the file or setting and the way on, never a traceback, and never
a result that looks complete but is wrong. The issue's scenarios come first in each group, then variants.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from morphcpt import paths

CHAIN_FAKE = """#!/bin/bash
sleep "${FAKE_DELAY:-0}"
echo "$(basename "$0") $*" >> "$FAKE_LOG"
n=$(wc -l < "$FAKE_LOG")
case "$(basename "$0")" in qsub) echo "$n.pbs01";; qstat) grep -q "$2" "$FAKE_QUEUED" 2>/dev/null && echo "job_state = Q" || exit 1;; esac
"""
EEVE_STEPS = ["eeve.steps=[1,1,1,1,1,30,1]", "eeve.warmup_steps=[0,0,0,0,0,0,0]", "validation.max_batches=1"]


def register(fault, env: dict, sample_lines) -> None:
    """Add this campaign's scenarios to `faults.py`'s list (`fault` is its decorator)."""

    def cli(*args: str, timeout: float = 600, extra_env: dict | None = None, cwd=None):
        done = subprocess.run(
            [sys.executable, *args],
            env={**env, **(extra_env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
        )
        return done.returncode, done.stdout + done.stderr

    def clean(code: int, out: str, *needles: str, status: int = 1) -> tuple[str, bool]:
        """A refusal: the exit status, no traceback, and each needle in the message (shown shortened)."""
        found = [n for n in needles if n in out]
        tb = "Traceback" in out
        said = next((x for x in out.splitlines() if "error:" in x), "")
        said = re.sub(r"/tmp/fault-[^/ ]+/", "", said.split("error: ", 1)[-1]).strip()
        ok = code == status and not tb and len(found) == len(needles)
        shown = f"exit {code}, {'a traceback' if tb else 'no traceback'}, {len(found)}/{len(needles)} named"
        return f"{shown}: «{said[:90]}{'…' if len(said) > 90 else ''}»", ok

    def cut(path: Path, keep: float = 0.5) -> None:
        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * keep)])

    # ---- EEVE and training inputs ---------------------------------------------------------------------------

    def eeve_setup(work: Path, first: int = 0, lines: int = 200) -> Path:
        """Expanded tokenizer (work/tokenizer) from lines [first, first+lines) of the sample, and its data."""
        from morphcpt.tokenization.eeve import expand

        texts = paths.SAMPLE_CORPUS.read_bytes().splitlines(keepends=True)[first : first + lines]
        (work / "validation.jsonl").write_bytes(b"".join(texts[:40]))
        (work / "chunk_01.jsonl").write_bytes(b"".join(texts[40:]))
        expand(work / "chunk_01.jsonl", paths.SAMPLE_TOKENIZER_DIR, work / "tokenizer", num_new=24)
        shutil.rmtree(work / "data", ignore_errors=True)
        common = [
            f"output_dir={work / 'data'}",
            "progress=false",
            f"tokenizer={work / 'tokenizer'}",
            "scheme=eeve",
        ]
        for extra in (
            ["input=" + str(work / "chunk_01.jsonl"), "index_offset=40"],
            ["input=" + str(work / "validation.jsonl"), "index_offset=0", "validation=true"],
        ):
            code, out = cli("-m", "morphcpt.preprocess", *common, *extra)
            if code:
                raise RuntimeError(out[-400:])
        return work / "tokenizer"

    def base_model(work: Path) -> Path:
        from morphcpt.modeling.models import save_tiny_gemma3

        return save_tiny_gemma3(paths.SAMPLE_TOKENIZER_DIR, work / "base", seed=0)

    def eeve_train(work: Path, base: Path, *extra: str) -> list[str]:
        return [
            "-m",
            "morphcpt.train",
            "recipe=demo_eeve",
            f"data.root={work / 'data'}",
            f"output_root={work / 'out'}",
            f"model.pretrained={base}",
            f"model.tokenizer={work / 'tokenizer'}",
            *EEVE_STEPS,
            *extra,
        ]

    @fault(
        "E1. EEVE tokenizer rebuilt in place, data redone, rerun",
        "refused: names the tokenizer and what was made from it",
    )
    def eeve_rebuilt(work: Path):
        base = base_model(work)
        eeve_setup(work)
        code, out = cli(*eeve_train(work, base, "eeve.stages=[1,2,3]"))
        if code:
            return f"first run failed: {out[-200:]}", False
        eeve_setup(work, first=200, lines=220)  # other text, same folder; data preprocessed again
        code, out = cli(*eeve_train(work, base, "eeve.stages=[1,2,3]"))
        return clean(
            code,
            out,
            "tokenizer.json changed",
            "eeve_expansion.json changed",
            "/resized",
            "stage1",
            "exports/",
        )

    @fault(
        "E2. EEVE data preprocessed again (same tokenizer), rerun",
        "refused: names the data and the stages, keeps resized/",
    )
    def eeve_data_redone(work: Path):
        base = base_model(work)
        tokenizer = eeve_setup(work)
        code, out = cli(*eeve_train(work, base, "eeve.stages=[1,2]"))
        if code:
            return f"first run failed: {out[-200:]}", False
        texts = paths.SAMPLE_CORPUS.read_bytes().splitlines(keepends=True)
        (work / "chunk_01.jsonl").write_bytes(b"".join(texts[40:100]))
        common = [f"output_dir={work / 'data'}", "progress=false", f"tokenizer={tokenizer}", "scheme=eeve"]
        cli("-m", "morphcpt.preprocess", *common, f"input={work / 'chunk_01.jsonl'}", "index_offset=40")
        code, out = cli(*eeve_train(work, base, "eeve.stages=[1,2]"))
        observed, ok = clean(code, out, "eeve/chunk_01_text_document.bin changed", "stage1")
        return observed, ok and "(the model resized" not in out

    @fault("E3. tokenizer edited in place under an hf run, resume", "refused on resume, naming the file")
    def hf_tokenizer_edited(work: Path):
        tokenizer = work / "tok"
        shutil.copytree(paths.SAMPLE_TOKENIZER_DIR, tokenizer)
        (work / "c.jsonl").write_bytes(sample_lines(160)[0:])
        lines = (work / "c.jsonl").read_bytes().splitlines(keepends=True)
        (work / "validation.jsonl").write_bytes(b"".join(lines[:40]))
        (work / "chunk_01.jsonl").write_bytes(b"".join(lines[40:]))
        for extra in (
            ["input=" + str(work / "chunk_01.jsonl")],
            ["input=" + str(work / "validation.jsonl"), "validation=true"],
        ):
            cli(
                "-m",
                "morphcpt.preprocess",
                f"output_dir={work / 'data'}",
                f"tokenizer={tokenizer}",
                "progress=false",
                "index_offset=0",
                *extra,
            )
        train = [
            "-m",
            "morphcpt.train",
            "recipe=demo_base",
            f"data.root={work / 'data'}",
            f"output_root={work / 'out'}",
            "data.num_chunks=1",
            f"model.tokenizer={tokenizer}",
            "loop.steps=4",
            "loop.max_steps_per_run=2",
            "loop.seq_length=32",
            "loop.global_batch_size=4",
            "loop.micro_batch_size=2",
            "checkpoint.interval=2",
            "optim.warmup_steps=1",
            "validation.interval=2",
            "validation.max_batches=2",
        ]
        code, out = cli(*train)
        if code:
            return f"first run failed: {out[-200:]}", False
        config = tokenizer / "tokenizer_config.json"
        config.write_text(json.dumps({**json.loads(config.read_text()), "model_max_length": 77}))
        code, out = cli(*train)
        return clean(code, out, "tokenizer_config.json changed", "checkpoints")

    @fault(
        "E4. SIGTERM during EEVE stage 6, then rerun",
        "exit 143 after the checkpoint; the rerun finishes and exports",
    )
    def eeve_sigterm(work: Path):
        base = base_model(work)
        eeve_setup(work)
        args = eeve_train(work, base, "eeve.stages=[1,6]")
        proc = subprocess.Popen(
            [sys.executable, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        metrics = work / "out" / "runs" / "demo-cpt-eeve" / "stages" / "stage6" / "metrics.jsonl"
        deadline = time.time() + 300
        while (
            proc.poll() is None and time.time() < deadline and not (metrics.exists() and metrics.read_text())
        ):
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=300)[0]
        said = "EEVE stage 6 stopped by SIGTERM" in out
        saved = list((metrics.parent / "checkpoints").glob("step_*"))
        code, again = cli(*args)
        exported = (work / "out" / "exports" / "demo-cpt-eeve" / "morphcpt_metadata.json").exists()
        ok = proc.returncode == 143 and said and saved and "Traceback" not in out and code == 0 and exported
        return (
            f"exit {proc.returncode}; says stopped at stage 6: {said}; checkpoints {len(saved)}; "
            f"rerun exit {code}, exported: {exported}"
        ), ok

    @fault(
        "E5. cut-off tokenizer.json: preprocessing and training",
        "one sentence naming tokenizer.json, exit 1 (2 commands)",
    )
    def cut_tokenizer(work: Path):
        tokenizer = work / "tok"
        shutil.copytree(paths.SAMPLE_TOKENIZER_DIR, tokenizer)
        cut(tokenizer / "tokenizer.json")
        (work / "c.jsonl").write_bytes(sample_lines(20))
        code, out = cli(
            "-m",
            "morphcpt.preprocess",
            f"input={work / 'c.jsonl'}",
            f"output_dir={work / 'o'}",
            f"tokenizer={tokenizer}",
        )
        first = clean(code, out, f"{tokenizer / 'tokenizer.json'}", "ends early")
        code, out = cli(
            "-m",
            "morphcpt.train",
            "recipe=demo_base",
            f"model.tokenizer={tokenizer}",
            f"output_root={work / 'out'}",
            f"data.root={work / 'o'}",
        )
        second = clean(code, out, f"{tokenizer / 'tokenizer.json'}")
        return f"preprocess: {first[0]} | train: {second[0]}", first[1] and second[1]

    @fault(
        "E6. cut-off eeve_expansion.json: preprocessing and training",
        "refused naming the file (preprocessing once exited 0)",
    )
    def cut_expansion(work: Path):
        base = base_model(work)
        tokenizer = eeve_setup(work)
        cut(tokenizer / "eeve_expansion.json")
        common = [f"output_dir={work / 'data2'}", "progress=false", f"tokenizer={tokenizer}", "scheme=eeve"]
        code, out = cli(
            "-m", "morphcpt.preprocess", *common, f"input={work / 'chunk_01.jsonl'}", "index_offset=40"
        )
        first = clean(code, out, "eeve_expansion.json", "ends early")
        code, out = cli(*eeve_train(work, base))
        second = clean(code, out, "eeve_expansion.json", "ends early")
        return f"preprocess: {first[0]} | train: {second[0]}", first[1] and second[1]

    @fault(
        "E7. variants: cut-off tokenizer_config.json, chunk marker, metrics.jsonl",
        "named and refused, or redone / read around (3 cases)",
    )
    def cut_variants(work: Path):
        tokenizer = work / "tok"
        shutil.copytree(paths.SAMPLE_TOKENIZER_DIR, tokenizer)
        cut(tokenizer / "tokenizer_config.json")
        (work / "c.jsonl").write_bytes(sample_lines(40))
        code, out = cli(
            "-m",
            "morphcpt.preprocess",
            f"input={work / 'c.jsonl'}",
            f"output_dir={work / 'o'}",
            f"tokenizer={tokenizer}",
        )
        seen = {"tokenizer_config.json": clean(code, out, "tokenizer_config.json")}
        pre = [
            "-m",
            "morphcpt.preprocess",
            f"input={work / 'c.jsonl'}",
            f"output_dir={work / 'o'}",
            "progress=false",
            "index_offset=0",
        ]
        cli(*pre)
        cut(work / "o" / "vanilla" / "c.done.json")
        code, out = cli(*pre)  # the chunk is redone, with a warning naming the marker
        marker_ok = (
            code == 0
            and "c.done.json" in out
            and json.loads((work / "o" / "vanilla" / "c.done.json").read_text())["documents"] == 40
        )
        seen["chunk marker"] = (f"exit {code}, redone: {marker_ok}", marker_ok)
        from morphcpt.train.hf.metrics import read_metrics, truncate_metrics

        (work / "m").mkdir()
        (work / "m" / "metrics.jsonl").write_text('{"step": 1, "loss": 2.0}\n{"step": 2, "lo')
        truncate_metrics(work / "m", 2)
        rows = read_metrics(work / "m")
        seen["metrics.jsonl"] = (f"rows kept {len(rows)}", rows == [{"step": 1, "loss": 2.0}])
        return "; ".join(f"{k}: {v[0]}" for k, v in seen.items()), all(v[1] for v in seen.values())

    # ---- the chain ------------------------------------------------------------------------------------------

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

    @fault(
        "C1. two submit_pipeline.py at once, slow scheduler",
        "one submits, the other refuses naming the holder; no duplicates",
    )
    def two_submitters(work: Path):
        extra = {**fake_cluster(work), "FAKE_DELAY": "1"}
        cmd = [sys.executable, *chain, "--schemes", "vanilla", "--to", "preprocess"]
        first = subprocess.Popen(
            cmd, env={**env, **extra}, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        deadline = time.time() + 120
        while not (work / "logs" / "pipeline" / "chain.lock").exists() and time.time() < deadline:
            time.sleep(0.05)
        second = subprocess.Popen(
            cmd, env={**env, **extra}, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
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
        cmd = [sys.executable, *chain, "--schemes", "vanilla", "--to", "preprocess"]
        proc = subprocess.Popen(
            cmd,
            env={**env, **extra},
            cwd=work,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
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

    # ---- the commands ---------------------------------------------------------------------------------------

    @fault(
        "T1. train-tokenizer: empty corpus; one line with --vocab-size 2000",
        "exit 2, what is wrong and the size the corpus allows",
    )
    def tokenizer_small(work: Path):
        (work / "empty.jsonl").write_text("")
        (work / "one.jsonl").write_bytes(sample_lines(1))
        code, out = cli(
            "-m",
            "morphcpt.tokenization.train_tokenizer",
            str(work / "empty.jsonl"),
            "--out-dir",
            str(work / "t"),
            "--vocab-size",
            "2000",
        )
        empty = clean(code, out, "holds no text to train on", status=2)
        code, out = cli(
            "-m",
            "morphcpt.tokenization.train_tokenizer",
            str(work / "one.jsonl"),
            "--out-dir",
            str(work / "t"),
            "--vocab-size",
            "2000",
        )
        one = clean(code, out, "at most", "use --vocab-size", status=2)
        allowed = out.split("at most ")[1].split()[0] if "at most " in out else "?"
        code, out = cli(
            "-m",
            "morphcpt.tokenization.train_tokenizer",
            str(work / "one.jsonl"),
            "--out-dir",
            str(work / "t"),
            "--vocab-size",
            allowed,
        )
        return f"empty: {empty[0]} | one line: allows {allowed}, which trains: {code == 0}", empty[1] and one[
            1
        ] and code == 0

    @fault(
        "T2. variants: bad lines only; --vocab-size 50; a missing corpus",
        "exit 2 and one sentence each (3 cases)",
    )
    def tokenizer_variants(work: Path):
        (work / "bad.jsonl").write_text('{"text": ""}\nnot json\n{"x": 1}\n')
        (work / "one.jsonl").write_bytes(sample_lines(1))
        results = []
        for corpus, size, needle in (
            ("bad.jsonl", "300", "3 empty or unreadable"),
            ("one.jsonl", "50", "too small"),
            ("none.jsonl", "300", "no such file"),
        ):
            code, out = cli(
                "-m",
                "morphcpt.tokenization.train_tokenizer",
                str(work / corpus),
                "--out-dir",
                str(work / "t"),
                "--vocab-size",
                size,
            )
            results.append(clean(code, out, needle, status=2))
        return " | ".join(r[0] for r in results), all(r[1] for r in results)

    @fault(
        "P1. prepare_corpus: the same source twice; a folder and a file in it; output inside the input folder, rerun",
        "each file read once, with a warning; the rerun leaves its own output out (3 cases)",
    )
    def prepare_faults(work: Path):
        (work / "in").mkdir()
        (work / "in" / "a.jsonl").write_bytes(sample_lines(30))
        base = ["-m", "morphcpt.corpus.assemble", "--no-progress", "--output"]
        c1, o1 = cli(*base, str(work / "o1.jsonl"), str(work / "in" / "a.jsonl"), f"{work}/in/./a.jsonl")
        c2, o2 = cli(*base, str(work / "o2.jsonl"), str(work / "in"), str(work / "in" / "a.jsonl"))
        c3, _ = cli(*base, str(work / "in" / "corpus.jsonl"), str(work / "in"))
        first = (work / "in" / "corpus.jsonl").read_bytes()
        c4, o4 = cli(*base, str(work / "in" / "corpus.jsonl"), str(work / "in"))
        docs = [
            json.loads((work / n).read_text())["documents"]
            for n in ("o1.jsonl.manifest.json", "o2.jsonl.manifest.json")
        ]
        ok = (
            (c1, c2, c3, c4) == (0, 0, 0, 0)
            and docs == [30, 30]
            and "already read" in o1
            and "already read" in o2
        )
        ok = ok and "left out of the sources" in o4 and (work / "in" / "corpus.jsonl").read_bytes() == first
        return (
            f"exit codes {(c1, c2, c3, c4)}; documents {docs}; rerun with output inside: same corpus {(work / 'in' / 'corpus.jsonl').read_bytes() == first}",
            ok,
        )

    @fault(
        "G1. generate --max-new-tokens 1000 on a 512-position model; a prompt near the context",
        "refused before loading; clamped with a note (2 cases)",
    )
    def generate_context(work: Path):
        from morphcpt.modeling.models import save_tiny_gemma3

        model = save_tiny_gemma3(paths.SAMPLE_TOKENIZER_DIR, work / "m", seed=0, max_position_embeddings=512)
        code, out = cli(
            "-m",
            "morphcpt.evaluate.generate_text",
            "--model",
            str(model),
            "--prompt",
            "Ang",
            "--max-new-tokens",
            "1000",
            "--device",
            "cpu",
        )
        refused = clean(code, out, "--max-new-tokens 1000", "512 positions", "at most 511", status=2)
        long_prompt = " ".join(["kumain"] * 200)
        code, out = cli(
            "-m",
            "morphcpt.evaluate.generate_text",
            "--model",
            str(model),
            "--prompt",
            long_prompt,
            "--max-new-tokens",
            "500",
            "--temperature",
            "0",
            "--device",
            "cpu",
        )
        clamped = code == 0 and "note:" in out and "would pass the model's context of 512" in out
        return f"{refused[0]} | near the context: exit {code}, clamped with a note: {clamped}", refused[
            1
        ] and clamped
