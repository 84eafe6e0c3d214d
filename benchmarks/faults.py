"""The fault campaigns of issues #14 and #30, end to end in one command: hostile inputs and kills, and what the
suite does (#30's scenarios, on the newer features, are in `faults_eeve.py`, `faults_chain.py` and
`faults_commands.py`; #39's in `faults_cluster.py`).

    python benchmarks/faults.py [--only checkpoint] [--keep DIR]     # --only '^[A-Z]': issue #30's scenarios

Each fault runs the real code on the shipped sample (processes are started and killed for real where the fault is
a process dying) in a temporary folder, and prints one row: fault, what must happen, what was observed, ok/FAIL.
The exit status is 1 when any row fails. About 10-15 minutes on 2 busy CPU cores; no network, no GPU.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import faults_chain  # beside this script
import faults_cluster
import faults_commands
import faults_eeve
from faults_shell import refused_or_why

from morphcpt import indexed, paths
from morphcpt.corpus.split import split_jsonl
from morphcpt.preprocess import compose_config, output_paths
from morphcpt.preprocess import run as preprocess_run

FAULTS: list[tuple[str, str, Callable[[Path], tuple[str, bool]]]] = []
ENV = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "WANDB_MODE": "disabled"}
TRAIN = ["loop.seq_length=32", "loop.global_batch_size=4", "loop.micro_batch_size=2", "optim.warmup_steps=1"]
TRAIN += ["validation.interval=2", "validation.max_batches=2", "checkpoint.interval=2", "checkpoint.keep=3"]


def fault(name: str, expected: str):
    def register(function):
        FAULTS.append((name, expected, function))
        return function

    return register


def sample_lines(n: int | None = None, copies: int = 1) -> bytes:
    lines = paths.SAMPLE_CORPUS.read_bytes().splitlines(keepends=True)[:n]
    return b"".join(lines) * copies


def preprocess(input_path: Path, output_dir: Path, *overrides: str) -> dict:
    base = [f"input={input_path}", f"output_dir={output_dir}", "progress=false", *overrides]
    return preprocess_run(compose_config(base))


def preprocess_cmd(input_path: Path, output_dir: Path, *overrides: str) -> list[str]:
    base = [f"input={input_path}", f"output_dir={output_dir}", "progress=false", *overrides]
    return [sys.executable, "-m", "morphcpt.preprocess", *base]


def training_data(work: Path, lines: int = 200, chunks: int = 2) -> Path:
    """`chunks` vanilla chunks and the validation set, made by split + preprocess as on the cluster."""
    corpus = work / "corpus.jsonl"
    corpus.write_bytes(sample_lines(lines))
    split_jsonl(corpus, work / "chunks", chunks, holdout_lines=40)
    for chunk in sorted((work / "chunks").glob("chunk_*.jsonl")):
        preprocess(chunk, work / "data")
    preprocess(work / "chunks" / "validation.jsonl", work / "data", "validation=true")
    return work / "data"


def plan(data: Path, out: Path, *extra: str):
    from morphcpt.train import load_plan

    return load_plan(["recipe=demo_base", f"data.root={data}", f"output_root={out}", *TRAIN, *extra])


def pool_workers(pid: int) -> list[int]:
    """Child processes of `pid` that are forks of it (same command line): its pool workers, not helpers."""
    found = []
    with contextlib.suppress(OSError):
        parent = Path(f"/proc/{pid}/cmdline").read_bytes()
        for task in Path(f"/proc/{pid}/task").glob("*"):
            for child in (task / "children").read_text().split():
                with contextlib.suppress(OSError):
                    if Path(f"/proc/{child}/cmdline").read_bytes() == parent:
                        found.append(int(child))
    return found


# --------------------------------------------------------------------------------------------- the faults


@fault("1. two preprocess runs, one output", "one refuses (locked) or skips; files match the marker")
def concurrent_writers(work: Path) -> tuple[str, bool]:
    corpus = work / "big.jsonl"
    corpus.write_bytes(sample_lines(copies=3))
    cmd = preprocess_cmd(corpus, work / "out", "scheme=stochastok")
    procs = [
        subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for _ in range(2)
    ]
    outs = [p.communicate(timeout=600)[0].decode(errors="replace") for p in procs]
    codes = [p.returncode for p in procs]
    prefix, marker = output_paths(work / "out", "stochastok", "big")
    refused = sum("is being written by" in out for out in outs)
    recorded = json.loads(marker.read_text())
    problem = indexed.verify_dataset(prefix, recorded["files"])
    docs = sum(1 for _ in indexed.iter_documents(prefix))
    ok = problem is None and docs == recorded["documents"] and 0 in codes and refused == codes.count(1)
    return (
        f"exit codes {codes}, {refused} refused as locked; marker verifies: {problem or 'yes'}; {docs} docs",
        ok,
    )


@fault("2. a pool worker SIGKILLed", "the run fails at once naming the cause; nothing published")
def killed_worker(work: Path) -> tuple[str, bool]:
    corpus = work / "big.jsonl"
    corpus.write_bytes(sample_lines(copies=8))
    cmd = preprocess_cmd(corpus, work / "out", "scheme=patok", "workers=2", "batch_size=8")
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.time() + 300
    while not pool_workers(proc.pid) and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    workers = pool_workers(proc.pid)
    if not workers:
        proc.kill()
        return "no worker process appeared (run ended first)", False
    time.sleep(1.0)
    os.kill(workers[0], signal.SIGKILL)
    killed = time.time()
    try:
        out = proc.communicate(timeout=120)[0].decode(errors="replace")
    except subprocess.TimeoutExpired:
        proc.kill()
        return "still running 120 s after the kill (hang)", False
    waited = time.time() - killed
    prefix, marker = output_paths(work / "out", "patok", "big")
    published = marker.exists() or indexed.dataset_exists(prefix)
    ok = proc.returncode != 0 and "worker process died" in out and not published
    return (
        f"exit {proc.returncode} {waited:.1f} s after the kill; 'worker process died': {'worker process died' in out}; published: {published}",
        ok,
    )


@fault("3a. crafted corpus lines", "JSON 1,000 deep and a 5,000-digit int counted as bad lines")
def crafted_corpus(work: Path) -> tuple[str, bool]:
    corpus = work / "crafted.jsonl"
    crafted = b"[" * 1000 + b"]" * 1000 + b"\n" + b'{"text": "x", "n": ' + b"9" * 5000 + b"}\n"
    corpus.write_bytes(sample_lines(5) + crafted + sample_lines(5))
    stats = preprocess(corpus, work / "out")
    bad = stats["read_report"]["bad_lines"]
    return f"documents {stats['documents']}, bad lines {bad}", stats["documents"] == 10 and bad == {
        "unparsable_json": 2
    }


@fault("3b. crafted benchmark lines", "a format error naming file and line, no RecursionError")
def crafted_benchmark(work: Path) -> tuple[str, bool]:
    from morphcpt.evaluate.items import BenchmarkFormatError, load_file

    seen = []
    for line in ("[" * 1000 + "]" * 1000, '{"n": ' + "9" * 5000 + "}"):
        path = work / "level1_mcq.jsonl"
        path.write_text(line + "\n")
        try:
            load_file(path, "hierarchical", "mcq")
            seen.append("loaded")
        except BenchmarkFormatError as error:
            seen.append(str(error).replace(str(work) + "/", ""))
        except Exception as error:  # noqa: BLE001 - the fault being checked for
            seen.append(type(error).__name__)
    return "; ".join(seen), all("level1_mcq.jsonl:1:" in s for s in seen)


@fault("4. training on another tokenizer's data", "refused before training, naming both tokenizers")
def tokenizer_mismatch(work: Path) -> tuple[str, bool]:
    from morphcpt.train.data import TokenizerMismatch
    from morphcpt.train.hf.engine import train

    data = training_data(work)
    other = work / "other_tokenizer"
    shutil.copytree(paths.SAMPLE_TOKENIZER_DIR, other, ignore=shutil.ignore_patterns("tokenizer.model"))
    spec = json.loads((other / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = spec["model"]["vocab"]
    vocab["▁ang"], vocab["▁ng"] = vocab["▁ng"], vocab["▁ang"]  # same size, another vocabulary
    (other / "tokenizer.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    try:
        train(plan(data, work / "out", "data.num_chunks=2", "loop.steps=2", f"model.tokenizer={other}"))
    except TokenizerMismatch as error:
        text = str(error)
        named = str(other) in text and str(paths.SAMPLE_TOKENIZER_DIR) in text
        return text.splitlines()[0][:110] + "...", named
    return "trained without a word", False


@fault(
    "5. chunk done while the manifest was missing", "redone with the real offset once the manifest is back"
)
def offset_key(work: Path) -> tuple[str, bool]:
    corpus = work / "corpus.jsonl"
    corpus.write_bytes(sample_lines(60))
    split_jsonl(corpus, work / "chunks", 2)
    (work / "chunks" / "manifest.json").rename(work / "away.json")
    early = preprocess(work / "chunks" / "chunk_02.jsonl", work / "out", "scheme=stochastok")
    (work / "away.json").rename(work / "chunks" / "manifest.json")
    again = preprocess(work / "chunks" / "chunk_02.jsonl", work / "out", "scheme=stochastok")
    offsets = (early["key"]["index_offset"], again["key"]["index_offset"])
    return f"offsets {offsets}, rerun skipped: {again.get('skipped', False)}", offsets[
        1
    ] > 0 and not again.get("skipped")


@fault("6. job runner, a task killed by SIGTERM", "exit status 1 and 'killed by SIGTERM'")
def runner_signal(work: Path) -> tuple[str, bool]:
    script = work / "job.pbs"
    script.write_text('#!/bin/bash\n[ "$PBS_ARRAY_INDEX" = 2 ] && kill -TERM $$\necho ok\n')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "morphcpt.chain.jobs",
            "run",
            str(script),
            "--array",
            "1-2",
            "--log-dir",
            str(work),
        ],
        env=ENV,
        capture_output=True,
        text=True,
        cwd=work,
    )
    return f"exit {done.returncode}: {' | '.join(done.stdout.split(chr(10))[:2])}", done.returncode == 1 and (
        "killed by SIGTERM" in done.stdout
    )


@fault(
    "7. corrupt or truncated latest checkpoint (9 ways)", "falls back to the previous one; resume completes"
)
def checkpoint_fallback(work: Path) -> tuple[str, bool]:
    from morphcpt.modeling import checkpoint_files
    from morphcpt.train.hf.engine import train

    data = training_data(work)
    run_plan = plan(data, work / "out", "data.num_chunks=2", "loop.steps=4", "run_name=ckpt")
    train(run_plan)
    ways = {
        "truncated weights": lambda s: _truncate(s / "model" / "model.safetensors"),
        "flipped byte": lambda s: _flip(s / "model" / "model.safetensors"),
        "empty trainer.pt": lambda s: (s / "trainer.pt").write_bytes(b""),
        "garbage trainer.pt": lambda s: (s / "trainer.pt").write_bytes(b"garbage" * 9),
        "no rng state": lambda s: (s / "rng_rank0.pt").unlink(),
        "no meta.json": lambda s: (s / "meta.json").unlink(),
        "garbage meta.json": lambda s: (s / "meta.json").write_text("{"),
        "no config.json": lambda s: (s / "model" / "config.json").unlink(),
        "latest names a missing folder": lambda s: shutil.rmtree(s),
    }
    fell_back = 0
    logging.getLogger("morphcpt.train.hf.checkpoints").setLevel(logging.ERROR)
    for corrupt in ways.values():
        root = work / "copy"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(run_plan.checkpoint_dir, root)
        corrupt(root / "step_00000004")
        fell_back += checkpoint_files.latest_checkpoint(root).name == "step_00000002"
    _truncate(run_plan.checkpoint_dir / "step_00000004" / "model" / "model.safetensors")
    resumed = train(run_plan)
    ok = fell_back == len(ways) and resumed.final_step == 4
    return f"{fell_back}/{len(ways)} fell back to step 2; resumed run reached step {resumed.final_step}", ok


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@fault("8. more chunks than lines (empty chunks)", "training skips them with a note and runs")
def empty_chunks(work: Path) -> tuple[str, bool]:
    from morphcpt.train.hf.engine import train

    data = training_data(work, lines=46, chunks=5)
    empty = [
        m.name for m in (data / "vanilla").glob("*.done.json") if not json.loads(m.read_text())["documents"]
    ]
    result = train(plan(data, work / "out", "data.num_chunks=5", "loop.steps=2"))
    return f"{len(empty)} empty chunk(s); training reached step {result.final_step}", bool(empty) and (
        result.final_step == 2
    )


@fault(
    "9. literal U+2581 in text, 3 schemes + audit", "decodes to the source; audit compares with the source"
)
def word_start_mark(work: Path) -> tuple[str, bool]:
    from morphcpt import audit

    corpus = work / "marks.jsonl"
    texts = ["may \u2581 marka", "\u2581\u2581magluto\u2581 ng pagkain", "walang marka"]
    corpus.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    for scheme in ("vanilla", "stochastok", "patok"):
        preprocess(corpus, work / "out", f"scheme={scheme}")
    result = audit.audit(work / "out", max_documents=None)
    altered = {row["scheme"]: row["text_differs"] for row in result["rows"]}
    ok = set(altered.values()) == {0} and result["text_compared_with"] == {"marks": "source"}
    return f"text altered {altered}, compared with {result['text_compared_with']['marks']}", ok


@fault("10. re-split 20 -> 4 chunks into the same folder", "stale chunks removed; a stale chunk is refused")
def resplit(work: Path) -> tuple[str, bool]:
    corpus = work / "corpus.jsonl"
    corpus.write_bytes(sample_lines(200))
    split_jsonl(corpus, work / "chunks", 20, holdout_lines=10)
    stale = (work / "chunks" / "chunk_07.jsonl").read_bytes()
    manifest = split_jsonl(corpus, work / "chunks", 4)
    left = sorted(p.name for p in (work / "chunks").glob("*.jsonl"))
    (work / "chunks" / "chunk_07.jsonl").write_bytes(stale)  # put back by hand
    try:
        preprocess(work / "chunks" / "chunk_07.jsonl", work / "out")
        refused = "processed"
    except ValueError as error:
        refused = "refused" if "not listed" in str(error) else str(error)
    ok = len(left) == 4 and len(manifest["removed_stale"]) == 17 and refused == "refused"
    return (
        f"{len(manifest['removed_stale'])} stale files removed, {len(left)} left; stale chunk {refused}",
        ok,
    )


@fault("S. SIGTERM to hf training", "checkpoint saved, exit 143, says it was interrupted")
def sigterm_training(work: Path) -> tuple[str, bool]:
    data = training_data(work)
    overrides = [f"data.root={data}", f"output_root={work / 'out'}", *TRAIN, "data.num_chunks=2"]
    overrides += [
        "recipe=demo_base",
        "loop.steps=400",
        "validation.interval=1000",
        "checkpoint.interval=1000",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "morphcpt.train", *overrides, "run_name=term"],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    metrics = work / "out" / "runs" / "term" / "metrics.jsonl"
    deadline = time.time() + 300
    while (
        proc.poll() is None and time.time() < deadline and (not metrics.exists() or not metrics.read_text())
    ):
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=120)[1].decode(errors="replace")
    said = "stopped by SIGTERM" in err
    from morphcpt.modeling import checkpoint_files
    from morphcpt.train.hf.metrics import read_metrics

    stopped = max(row["step"] for row in read_metrics(metrics.parent))
    saved = checkpoint_files.read_meta(checkpoint_files.latest_checkpoint(metrics.parent / "checkpoints"))[
        "step"
    ]
    ok = proc.returncode == 143 and said and saved == stopped
    return (
        f"exit {proc.returncode}; says 'stopped by SIGTERM': {said}; checkpoint at step {saved} of {stopped}",
        ok,
    )


@fault("S. small evaluation faults", "each refused or named (5 cases)")
def evaluation_faults(work: Path) -> tuple[str, bool]:
    from morphcpt.bench.generate import load_config
    from morphcpt.evaluate.runner import EvalConfig, model_specs, run_evaluation

    seen = {}
    (work / "pacute").mkdir()
    (work / "pacute" / "affixation_mcq.jsonl").write_text("")
    cfg = EvalConfig(models=["m"], benchmarks=["pacute-affixation"], eval_mode="mcq", benchmark_dir=work)
    cfg.output_dir = work / "results"
    seen["empty file"] = refused_or_why(lambda: run_evaluation(cfg, lambda s, c: None), "has no items")
    seen["missing model folder"] = refused_or_why(
        lambda: model_specs([str(work / "a" / "b")]), "model folder not found"
    )
    seen["typo'd size"] = refused_or_why(
        lambda: load_config(None, ["pacute.affixaton=7"]), "unknown pacute subset"
    )
    seen["negative size"] = refused_or_why(
        lambda: load_config(None, ["pacute.affixation=-1"]), "0 (skip) or more"
    )
    (work / "manifest.json").write_text('{"complete": false}')
    (work / "pacute" / "affixation_mcq.jsonl").write_text(
        (paths.REPO_ROOT / "tests/data/official/affixation_mcq.jsonl").read_text(encoding="utf-8")
    )
    seen["unfinished generation"] = refused_or_why(
        lambda: run_evaluation(cfg, lambda s, c: None), "did not finish"
    )
    return ", ".join(f"{k}: {v}" for k, v in seen.items()), all(v == "refused" for v in seen.values())


# the issue #30 campaign (EEVE, the chain, corpus preparation, tokenizer training, generation)
for campaign in (faults_eeve, faults_chain, faults_commands):
    campaign.register(fault, ENV, sample_lines)
# the issue #39 item 11 campaign (import-tokenizer, sizes and numbers in .env, seeds, evaluation inputs)
faults_cluster.register(fault, ENV)


# ------------------------------------------------------------------------------------------------- runner


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only",
        default="",
        help="run the faults whose name matches this regular expression ('^[A-Z]': issue #30's)",
    )
    parser.add_argument("--keep", type=Path, help="keep each fault's work folder under this folder")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    os.environ.update({k: ENV[k] for k in ("TOKENIZERS_PARALLELISM", "HF_HUB_OFFLINE", "WANDB_MODE")})
    rows = []
    for name, expected, function in FAULTS:
        if not re.search(args.only, name, flags=re.IGNORECASE):
            continue
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="fault-") as tmp:
            work = Path(tmp)
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    observed, ok = function(work)
            except Exception as error:  # noqa: BLE001 - an unexpected crash is an observation, not the end
                observed, ok = f"crashed: {type(error).__name__}: {str(error)[:100]}", False
            if args.keep:
                shutil.copytree(
                    work, args.keep / name.split(".")[0].strip().replace(" ", "_"), dirs_exist_ok=True
                )
        rows.append(
            (name, expected, observed, "ok" if ok else "FAIL", f"{time.perf_counter() - started:.0f}s")
        )
        print(f"{rows[-1][3]:>4}  {name}  ({rows[-1][4]})", file=sys.stderr, flush=True)
    print("\n| fault | expected | observed | result | time |\n|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(cell.replace("|", "/") for cell in row) + " |")
    failed = sum(row[3] != "ok" for row in rows)
    print(f"\n{len(rows) - failed}/{len(rows)} faults handled as expected")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
