"""The fault campaign of issue #39 item 11 (the features added in the turn before: import-tokenizer, memory sizes,
replicated arms, the pilot chain, fp16, multi-node heartbeats), registered into `benchmarks/faults.py`:

    python benchmarks/faults.py --only "^K"

Each scenario runs the real command in a subprocess, as a user would, in a temporary folder, and checks what must
happen: a refusal in one line naming the file or setting and the way on (exit 1 or 2, no traceback), nothing
deleted that the command did not write, and never a result that looks complete but is wrong. Scenarios that need a
trained run or the multi-node fakes (a foreign checkpoint, an fp16 run whose every step overflows, a torchrun that
hangs while alive) are tests instead: tests/evaluate/test_resolve.py, tests/train/hf/test_fp16_overflow.py, tests/chain/test_multinode.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from morphcpt import paths

SCRIPTS = paths.REPO_ROOT / "scripts"
QUEUE_FAKE = """#!/bin/bash
echo "$(basename "$0") $*" >> "$FAKE_LOG"
n=$(wc -l < "$FAKE_LOG")
case "$(basename "$0")" in qsub) echo "$n.pbs01";; qstat) [[ -n "${FAKE_QUEUED:-}" ]] && echo "job_state = Q" || exit 1;; esac
"""


def register(fault, env: dict) -> None:
    """Add this campaign's scenarios to `faults.py`'s list (`fault` is its decorator)."""

    def cli(*args: str, cwd=None, extra: dict | None = None, timeout: float = 600):
        done = subprocess.run(
            [sys.executable, *args], env={**env, **(extra or {})}, capture_output=True, text=True,
            timeout=timeout, cwd=cwd,
        )  # fmt: skip
        return done.returncode, done.stdout + done.stderr

    def one_line(code: int, out: str, *needles: str, status: int = 1) -> tuple[str, bool]:
        """A refusal: the exit status, no traceback, each needle said, the first on one line only."""
        said = [x for x in out.splitlines() if (needles[0] in x if needles else "error:" in x)]
        found = [n for n in needles if n in out]
        tb = "Traceback" in out
        ok = code == status and not tb and len(found) == len(needles) and len(said) == 1
        shown = re.sub(r"/tmp/fault-[^/ ]+/", "", (said or [""])[0].split(": ", 1)[-1]).strip()
        head = f"exit {code}, {'a traceback' if tb else 'no traceback'}, {len(found)}/{len(needles)} named"
        return f"{head}: «{shown[:90]}{'…' if len(shown) > 90 else ''}»", ok

    def model_folder(work: Path) -> Path:
        folder = work / "model"
        shutil.copytree(paths.SAMPLE_TOKENIZER_DIR, folder)
        (folder / "config.json").write_text("{}")
        (folder / "model.safetensors").write_bytes(b"weights")
        return folder

    def imported(work: Path, source: Path, out: str, cwd=None):
        return cli("-m", "morphcpt.tokenization.import_tokenizer", str(source), "--out-dir", out, cwd=cwd)

    # ---- import-tokenizer ---------------------------------------------------------------------------------------

    @fault(
        "K1. import-tokenizer --out-dir a folder holding other files", "refused, the files kept, no .tmp left"
    )
    def import_into_other(work: Path):
        source, out = model_folder(work), work / "mine"
        out.mkdir()
        (out / "notes.txt").write_text("keep")
        observed, ok = one_line(*imported(work, source, str(out)), "notes.txt")
        left = [p.name for p in work.iterdir() if "import" in p.name or p.name.endswith(".tmp")]
        return f"{observed}; notes.txt {'kept' if (out / 'notes.txt').exists() else 'GONE'}", ok and not left

    @fault(
        "K2. import-tokenizer --out-dir the model folder it imports", "refused, config.json and weights kept"
    )
    def import_into_source(work: Path):
        source = model_folder(work)
        observed, ok = one_line(*imported(work, source, str(source)), "source")
        kept = (source / "config.json").exists() and (source / "model.safetensors").exists()
        return f"{observed}; model {'kept' if kept else 'GONE'}", ok and kept

    @fault(
        "K3. import-tokenizer --out-dir .. and . (parent, current folder)", "refused both, nothing deleted"
    )
    def import_into_parent(work: Path):
        source = model_folder(work)
        (work / "run").mkdir()
        results = [one_line(*imported(work, source, out, cwd=work / "run")) for out in ("..", ".")]
        kept = (source / "model.safetensors").exists() and (work / "run").exists()
        return "; ".join(r[0] for r in results), all(r[1] for r in results) and kept

    @fault("K4. import-tokenizer --out-dir a file / under a file / read-only", "refused, one line each")
    def import_into_file(work: Path):
        source = model_folder(work)
        (work / "a_file").write_text("x")
        (work / "locked").mkdir(mode=0o500)
        outs = [str(work / "a_file"), str(work / "a_file" / "sub")] + (
            [] if os.geteuid() == 0 else [str(work / "locked" / "t")]
        )
        results = [one_line(*imported(work, source, out)) for out in outs]
        os.chmod(work / "locked", 0o700)
        return "; ".join(r[0] for r in results), all(r[1] for r in results) and (
            work / "a_file"
        ).read_text() == "x"

    @fault("K5. import-tokenizer of an empty .model", "refused in one line: an empty SentencePiece model")
    def import_empty_model(work: Path):
        (work / "empty.model").write_bytes(b"")
        return one_line(*imported(work, work / "empty.model", str(work / "tok")), "empty SentencePiece model")

    # ---- sizes and numbers in .env ---------------------------------------------------------------------------------

    def dry_run(work: Path, line: str, *more: str):
        (work / ".env").write_text(
            f"DATA_ROOT={work}/data\nOUTPUT_ROOT={work}/out\nLOG_DIR={work}/logs\n{line}\n"
        )
        return cli(str(SCRIPTS / "submit_pipeline.py"), "--env", ".env", "--dry-run", *more, cwd=work)

    for number, (line, needle) in enumerate(
        [
            ("GPU_MEMORY=40", "no unit: write 40GB"),
            ("GPU_MEMORY=-1", "GPU_MEMORY must look like 40GB"),
            ("GPU_MEMORY=", "GPU_MEMORY must look like 40GB"),
            ("GPU_MEMORY=1.2.3GB", "GPU_MEMORY must look like 40GB"),
            ("GPU_MEMORY=1GB", "not above the 2.0 GiB"),
            ("TRAIN_NODES=02", "leading zero"),
            ("TRAIN_NODES=0", "TRAIN_NODES must be a whole number"),
            ("TRAIN_NODE_TIMEOUT=0", "TRAIN_NODE_TIMEOUT must be a whole number"),
            ("TRAIN_NODE_TIMEOUT=abc", "TRAIN_NODE_TIMEOUT must be a whole number"),
            ("SEEDS=1000", "SEEDS must be a whole number of runs per arm from 1 to 20"),
        ],
        start=6,
    ):

        def setting(work: Path, line=line, needle=needle):
            started = time.perf_counter()
            code, out = dry_run(work, line)
            observed, ok = one_line(code, out, needle)
            return (
                f"{observed} in {time.perf_counter() - started:.0f} s",
                ok and time.perf_counter() - started < 120,
            )

        fault(f"K{number}. {line} in .env, chain --dry-run", "refused before any job, naming the setting")(
            setting
        )

    @fault("K16. memory command gpus=abc, gpus=0, gpus=-1", "refused, one line each")
    def memory_gpus(work: Path):
        results = [one_line(*cli("-m", "morphcpt.train.memory.planner", "recipe=cpt_baseline", f"gpus={g}"), "gpus=")
                   for g in ("abc", "0", "-1")]  # fmt: skip
        return "; ".join(r[0] for r in results), all(r[1] for r in results)

    @fault("K17. memory command on an unknown card and on a T4 with bf16", "both said above the table")
    def memory_cards(work: Path):
        _, unknown = cli(
            "-m", "morphcpt.train.memory.planner", "recipe=cpt_baseline", "engine=hf", "cluster.gpu_type=Z9"
        )
        _, t4 = cli("-m", "morphcpt.train.memory.planner", "recipe=cpt_baseline", "engine=hf", "cluster.gpu_type=T4",
                    "cluster.gpu_memory=16GB")  # fmt: skip
        ok = (
            "Z9 is not a card the planner knows" in unknown
            and "T4 has no bf16" in t4
            and "cannot run on T4" in t4
        )
        return ("unknown card named, T4 bf16 named" if ok else "not said"), ok

    @fault("K18. train with micro_batch_size=auto that fits nothing", "refused in one line, no traceback")
    def auto_fits_nothing(work: Path):
        code, out = cli("-m", "morphcpt.train", "recipe=cpt_baseline", "engine=hf", "cluster.gpu_memory=3GB",
                        "loop.micro_batch_size=auto", cwd=work)  # fmt: skip
        return one_line(code, out, "does not fit")

    # ---- the chain ---------------------------------------------------------------------------------------------------

    @fault(
        "K19. pilot chain (--recipes pilot) for 1, 2 and 3 seeds, --dry-run",
        "plans every arm once, no KeyError",
    )
    def pilot_chain(work: Path):
        seen = []
        for seeds in ("1", "2", "3"):
            code, out = dry_run(work, "", "--recipes", "pilot", "--seeds", seeds)
            names = [x.split()[0] for x in out.splitlines() if " would submit " in x]
            seen.append(
                f"{seeds}: exit {code}, {len(names)} jobs, {sum(n.startswith('cpt_eeve') for n in names)} EEVE"
            )
            if code or "Traceback" in out or len(names) != len(set(names)):
                return "; ".join(seen) + f" «{out.strip().splitlines()[-1][:80]}»", False
        return "; ".join(seen), True

    @fault(
        "K20. seeds added (--seeds 2) while the first submission is queued",
        "evaluate and analyze wait on them",
    )
    def seeds_while_queued(work: Path):
        bin_dir = work / "bin"
        bin_dir.mkdir()
        for name in ("qsub", "qstat"):
            (bin_dir / name).write_text(QUEUE_FAKE)
            (bin_dir / name).chmod(0o755)
        fake = {"PATH": f"{bin_dir}{os.pathsep}{env['PATH']}", "FAKE_LOG": str(work / "log")}
        (work / ".env").write_text(f"DATA_ROOT={work}/data\nOUTPUT_ROOT={work}/out\nLOG_DIR={work}/logs\n")
        base = [str(SCRIPTS / "submit_pipeline.py"), "--env", ".env", "--schemes", "vanilla"]
        cli(*base, cwd=work, extra=fake)
        code, out = cli(*base, "--seeds", "2", cwd=work, extra={**fake, "FAKE_QUEUED": "1"})
        last = [x for x in (work / "log").read_text().splitlines() if x.startswith("qsub")][-2:]
        waits = [re.search(r"afterok:(\S+)", x).group(1).split(":") for x in last]
        ids = {
            x.split()[-1].rsplit("/", 1)[-1]: n
            for n, x in enumerate((work / "log").read_text().splitlines(), 1)
        }
        export_seed1 = f"{ids.get('export_baseline_seed1.pbs')}.pbs01"
        ok = (
            code == 0
            and "run_evaluation.pbs" in last[0]
            and export_seed1 in waits[0]
            and "analyze" in last[1]
        )
        return (
            f"exit {code}; evaluate resubmitted after {' '.join(waits[0])}; analyze after {' '.join(waits[1])}",
            ok,
        )

    # ---- results and evaluation --------------------------------------------------------------------------------------

    def results(work: Path, runs: dict[str, dict], items: int = 40) -> Path:
        root = work / "results"
        for folder, model in runs.items():
            (root / folder).mkdir(parents=True)
            n = model.pop("items", items)
            predictions = [
                {"id": f"i{k}", "fingerprint": f"f{k}", "acc": k % 2, "acc_norm": k % 2} for k in range(n)
            ]
            data = {"format": "morphcpt-eval/1", "model": model, "task": "hierarchical-level2",
                    "benchmark": "hierarchical", "mode": "mcq", "language": "en", "predictions": predictions}  # fmt: skip
            (root / folder / "hierarchical-level2_mcq.json").write_text(json.dumps(data))
        return root

    def arm(name, scheme, k, run=None, step=4, **more):
        meta = {"scheme": scheme, "replicate": k, "run_name": run or name, "config_hash": "h"}
        return {"name": name, "scheme": scheme, "step": step, "metadata": meta, **more}

    def analyze(root: Path):
        return cli(str(SCRIPTS / "analyze_inference_results.py"), "--results-dir", str(root), "--no-plots")

    @fault("K21. two result folders for the same arm and seed", "refused naming both folders")
    def duplicate_seed(work: Path):
        root = results(work, {"vanilla": arm("vanilla", "vanilla", 0), "vanilla-b": arm("vanilla-b", "vanilla", 0),
                              "patok": arm("patok", "patok", 0)})  # fmt: skip
        return one_line(*analyze(root), "seed 0 of baseline", "vanilla-b")

    @fault("K22. seeds of the arms scored on different items (200 vs 40)", "refused with both counts")
    def different_items(work: Path):
        runs = {f"{s}{'-seed1' if k else ''}": arm(f"{s}{'-seed1' if k else ''}", s, k, items=40 if (s, k) == ("patok", 1) else 200)
                for s in ("vanilla", "patok") for k in (0, 1)}  # fmt: skip
        return one_line(*analyze(results(work, runs)), "scored on different items", "200", "40")

    @fault("K23. analyze_inference_results.py on a cut result file", "refused in one line naming the file")
    def cut_result(work: Path):
        root = results(work, {"vanilla": arm("vanilla", "vanilla", 0), "patok": arm("patok", "patok", 0)})
        path = root / "patok" / "hierarchical-level2_mcq.json"
        path.write_bytes(path.read_bytes()[:200])
        return one_line(*analyze(root), "hierarchical-level2_mcq.json")

    def evaluation(work: Path, text: str | None, *args: str):
        bench = work / "bench" / "pacute"
        shutil.copytree(paths.REPO_ROOT / "tests" / "data" / "official", bench)
        if text is not None:
            (bench / "affixation_mcq.jsonl").write_text(text)
        return cli(str(SCRIPTS / "run_evaluation.py"), "--models", "org/model", "--benchmark-dir", str(work / "bench"),
                   "--output-dir", str(work / "res"), *args)  # fmt: skip

    @fault(
        "K24. run_evaluation --benchmarks cute --eval-mode mcq", "one line: the release has no cute MCQ file"
    )
    def cute_mcq(work: Path):
        return one_line(
            *evaluation(work, None, "--benchmarks", "cute", "--eval-mode", "mcq"), "cute has no MCQ file"
        )

    @fault("K25. run_evaluation on an empty and on a cut official file", "one line each, naming the file")
    def damaged_official(work: Path):
        first = one_line(
            *evaluation(work / "a", "", "--benchmarks", "pacute-affixation", "--eval-mode", "mcq"), "empty"
        )
        line = (paths.REPO_ROOT / "tests/data/official/affixation_mcq.jsonl").read_text().splitlines()[0]
        second = one_line(*evaluation(work / "b", line[:90], "--benchmarks", "pacute-affixation", "--eval-mode", "mcq"),
                          "affixation_mcq.jsonl:1")  # fmt: skip
        return f"{first[0]}; {second[0]}", first[1] and second[1]

    # ---- multi-node --------------------------------------------------------------------------------------------------

    @fault("K26. a 2-node PBS job on a login shell without pbsdsh", "pbsdsh named (exit 2), not a lost node")
    def no_pbsdsh(work: Path):
        nodefile = work / "nodefile"
        nodefile.write_text("127.0.0.1\n127.0.0.2\n")
        clean = {k: v for k, v in env.items() if not k.startswith(("PBS_", "SLURM_"))}
        clean["PATH"] = os.pathsep.join(
            p for p in clean["PATH"].split(os.pathsep) if not (Path(p) / "pbsdsh").exists()
        )
        done = subprocess.run(
            ["bash", str(paths.REPO_ROOT / "training/nemo/torchrun_nodes.sh"), "--nodes", "2", "--gpus", "1",
             "--log-dir", str(work / "logs"), "--", "x.py"],
            env={**clean, "PBS_JOBID": "7.x", "PBS_NODEFILE": str(nodefile), "PBS_ENVIRONMENT": "PBS_BATCH"},
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        observed, ok = one_line(done.returncode, done.stdout + done.stderr, "pbsdsh not found", status=2)
        return observed, ok and "lost" not in done.stdout + done.stderr
