"""The fault campaign of issue #30, EEVE and training inputs (E1-E7), registered into `benchmarks/faults.py`:

    python benchmarks/faults.py --only "^E"

Each scenario runs the real commands in subprocesses (as a user would) on the shipped sample in a temporary folder
and checks what must happen: a refusal that names the file or setting and the way on, never a traceback, and never
a result that looks complete but is wrong. The issue's scenarios come first, then variants."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from faults_shell import shell  # beside this script

from morphcpt import paths

EEVE_STEPS = ["eeve.steps=[1,1,1,1,1,30,1]", "eeve.warmup_steps=[0,0,0,0,0,0,0]", "validation.max_batches=1"]


def register(fault, env: dict, sample_lines) -> None:
    """Add these scenarios to `faults.py`'s list (`fault` is its decorator)."""
    cli, clean, cut = shell(env)

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

    def preprocess_sample(work: Path, tokenizer: Path) -> tuple[int, str]:
        """Preprocess work/c.jsonl into work/o with `tokenizer`: (exit code, output)."""
        return cli(
            "-m",
            "morphcpt.preprocess",
            f"input={work / 'c.jsonl'}",
            f"output_dir={work / 'o'}",
            f"tokenizer={tokenizer}",
        )

    def sample_tokenizer(work: Path) -> Path:
        """A copy of the shipped sample tokenizer (work/tok), for a scenario to cut or edit."""
        tokenizer = work / "tok"
        shutil.copytree(paths.SAMPLE_TOKENIZER_DIR, tokenizer)
        return tokenizer

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
        tokenizer = sample_tokenizer(work)
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
        tokenizer = sample_tokenizer(work)
        cut(tokenizer / "tokenizer.json")
        (work / "c.jsonl").write_bytes(sample_lines(20))
        code, out = preprocess_sample(work, tokenizer)
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
        tokenizer = sample_tokenizer(work)
        cut(tokenizer / "tokenizer_config.json")
        (work / "c.jsonl").write_bytes(sample_lines(40))
        code, out = preprocess_sample(work, tokenizer)
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
