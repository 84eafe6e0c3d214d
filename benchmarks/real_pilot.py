"""A real Gemma 3 270M through the chain on one GPU: a small pilot of every arm and seed, scored and analysed (not a test).

    python benchmarks/real_pilot.py --gguf DIR --tokenizer DIR --data DIR --benchmark-dir DIR --out DIR \
        [--arms baseline stochastok patok] [--seeds 3] [--steps 40] [--seq 1024] [--gbs 8] [--budget-s 480]
    python benchmarks/real_pilot.py --tiny --tokenizer DIR ...   # a random Gemma 3 of the tokenizer's vocabulary,
                                                                  # 2 narrow layers: the same stages in minutes

What it runs, each stage through the project's own command lines, on whatever GPU the process sees (CPU without
one):

1. **The model.** `--gguf` is the Q4_K_M GGUF file of `morphcpt.realmodel`, or a folder of its pieces `gguf.part*`
   (joined in name order; size and sha256 checked). Its weights are dequantized into a bf16 Hugging Face folder with
   the tokenizer files of `--tokenizer` (a `tokenizer.json.xz` there is unpacked), then scored on
   `realmodel.FILIPINO_TEXT`: a pretrained model's loss, or the script stops.
2. **CPT.** One `training/nemo/run_cpt.py recipe=pilot_<arm> engine=hf data.replicate=k` per arm and seed, all at
   once (the 270M model leaves most of the card idle), on `--data` (a processed root: `<scheme>/[seed<k>/]
   chunk_0{1,2}` and `validation/`, the real tokenizer's ids), `--steps` steps of `--gbs` x `--seq` tokens, the
   recipes' AdamW with warmup `--steps // 10`, validation on the whole held-out set at the end.
3. **Scores.** `scripts/run_evaluation.py` on the base folder (named `gemma3-270m-base`) and every run (exported by
   the evaluation itself, with its logit parity check), MCQ on the official files of `--benchmark-dir`, one
   process per model.
4. **Analysis.** `scripts/analyze_inference_results.py` (the report) and `python -m morphcpt.analysis.power --pilot`
   (what the main design detects, from this pilot's variances).

Everything goes under `--out`: `summary.md` (the table printed last), `summary.json`, and `logs.tar.gz` (every
stage's log, the runs' metrics, the results and the analysis). `--budget-s` is a wall-clock budget: a stage that
would start after it is skipped and said so, and a stage still running at it is stopped, so what finished is
always written.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from morphcpt import realmodel  # noqa: E402

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.model")
RECIPE = {"baseline": "pilot_baseline", "stochastok": "pilot_stochastok", "patok": "pilot_patok"}
BENCHMARKS = ("hierarchical", "pacute-affixation", "langgame", "multi_digit_addition")


class Clock:
    """Seconds since the start, and whether the budget leaves room for a stage of `need` seconds."""

    def __init__(self, budget: float) -> None:
        self.start, self.budget = time.monotonic(), budget

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def left(self) -> float:
        return self.budget - self.elapsed()


def log(clock: Clock, message: str) -> None:
    print(f"[real_pilot t={clock.elapsed():5.0f}s] {message}", flush=True)


def run_all(
    commands: dict[str, list[str]], logs: Path, clock: Clock, env: dict, parallel: int
) -> dict[str, dict]:
    """Run the named commands, `parallel` at a time, each logging to logs/<name>.log; stop what still runs when the
    budget is spent. Returns {name: {"rc", "wall_s"}} (rc None: stopped at the budget or never started)."""
    logs.mkdir(parents=True, exist_ok=True)
    pending, running, done = list(commands), {}, {}
    while pending or running:
        while pending and len(running) < parallel and clock.left() > 0:
            name = pending.pop(0)
            handle = (logs / f"{name}.log").open("w")
            proc = subprocess.Popen(
                commands[name], cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT
            )
            running[name] = (proc, handle, time.monotonic())
        for name, (proc, handle, started) in list(running.items()):
            if proc.poll() is not None:
                handle.close()
                done[name] = {"rc": proc.returncode, "wall_s": round(time.monotonic() - started, 1)}
                log(clock, f"{name}: exit {proc.returncode} after {done[name]['wall_s']} s")
                del running[name]
        if clock.left() <= 0:
            for name, (proc, handle, started) in running.items():
                proc.kill()
                proc.wait()
                handle.close()
                done[name] = {"rc": None, "wall_s": round(time.monotonic() - started, 1)}
                log(clock, f"{name}: stopped at the budget")
            running = {}
            for name in pending:
                done[name] = {"rc": None, "wall_s": 0.0}
                log(clock, f"{name}: not started (budget spent)")
            pending = []
        time.sleep(0.5)
    return done


def joined_gguf(source: Path, work: Path) -> Path:
    """The GGUF file: `source` itself, or its pieces `source/gguf.part*` joined, checked against realmodel's
    size and sha256."""
    if source.is_file():
        return source
    pieces = sorted(source.glob("gguf.part*"))
    if not pieces:
        raise SystemExit(f"real_pilot: no GGUF file and no gguf.part* pieces in {source}")
    target = work / realmodel.GGUF_NAME
    size, digest = realmodel.join_files(pieces, target)
    if size != realmodel.GGUF_BYTES or digest != realmodel.GGUF_SHA256:
        raise SystemExit(
            f"real_pilot: joined {len(pieces)} pieces into {size:,} bytes, sha256 {digest}: not the file"
        )
    return target


def copy_tokenizer(tokenizer: Path, folder: Path) -> None:
    for name in TOKENIZER_FILES:
        if (tokenizer / name).is_file():
            shutil.copy(tokenizer / name, folder / name)
        elif (tokenizer / f"{name}.xz").is_file():
            (folder / name).write_bytes(lzma.decompress((tokenizer / f"{name}.xz").read_bytes()))


def build_model(args, work: Path, clock: Clock) -> tuple[Path, dict]:
    """The base folder: the real weights dequantized (or the tiny stand-in), the tokenizer, and its check score."""
    folder = work / "gemma3-270m-base"
    folder.mkdir(parents=True, exist_ok=True)
    copy_tokenizer(args.tokenizer, folder)
    if args.tiny:
        from morphcpt.modeling.models import build_model as random_model
        from morphcpt.modeling.models import tiny_config
        from morphcpt.tokenization.vocabulary import Vocabulary

        vocab = Vocabulary.load(folder).size  # 262,144 for the real tokenizer
        random_model(tiny_config(vocab, hidden_size=64, num_layers=2), seed=0).save_pretrained(folder)
    else:
        gguf = joined_gguf(args.gguf, work)
        log(clock, f"GGUF {gguf.stat().st_size:,} bytes, sha256 verified; dequantizing")
        realmodel.dequantize(gguf, folder, tokenizer=False)  # the tokenizer files come from --tokenizer
    score = realmodel.score_text(folder)
    log(clock, f"base model {folder}: {score['nats_per_token']:.2f} nats/token on the check text")
    if not args.tiny and score["nats_per_token"] > realmodel.MAX_LOSS:
        raise SystemExit(
            f"real_pilot: the base model scores {score['nats_per_token']:.2f} nats/token: not pretrained"
        )
    return folder, score


def train_commands(args, base: Path, runs_root: Path, device: str) -> dict[str, list[str]]:
    commands = {}
    for arm in args.arms:
        for k in range(args.seeds):
            name = f"gemma3-270m-{arm}" + (f"-seed{k}" if k else "")
            if args.only and name not in args.only:
                continue
            commands[name] = [
                sys.executable,
                "training/nemo/run_cpt.py",
                f"recipe={RECIPE[arm]}",
                "engine=hf",
                f"data.replicate={k}",
                f"data.root={args.data}",
                "data.num_chunks=2",
                f"output_root={runs_root}",
                f"model.pretrained={base}",
                f"model.tokenizer={base}",
                "model.vocab_size=null",
                "loop.train_tokens=null",
                f"loop.steps={args.steps}",
                f"loop.seq_length={args.seq}",
                f"loop.global_batch_size={args.gbs}",
                f"loop.micro_batch_size={args.mbs}",
                "loop.compile=none",
                f"optim.warmup_steps={max(1, args.steps // 10)}",
                f"validation.interval={args.steps}",
                "validation.max_batches=null",
                f"checkpoint.interval={args.steps}",
                "checkpoint.keep=1",
                "logging.interval=1",
                "logging.wandb=false",
                f"cluster.gpu_memory={args.gpu_memory}",
            ] + (["loop.precision=fp32"] if device == "cpu" else [])
    return commands


def eval_commands(args, models: dict[str, Path], results: Path, device: str) -> dict[str, list[str]]:
    return {
        f"eval_{name}": [
            sys.executable,
            "scripts/run_evaluation.py",
            "--models",
            str(folder),
            "--model-names",
            name,
            "--benchmarks",
            *args.benchmarks,
            "--eval-mode",
            "mcq",
            "--benchmark-dir",
            str(args.benchmark_dir),
            "--output-dir",
            str(results),
            "--device",
            device,
            "--batch-size",
            str(args.eval_batch_size),
        ]
        + (["--limit", str(args.limit)] if args.limit else [])
        for name, folder in models.items()
    }


def run_metrics(run_dir: Path) -> dict:
    """First and last training loss and the final validation figures of a run's metrics.jsonl."""
    path = run_dir / "metrics.jsonl"
    if not path.is_file():
        return {}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    train = [r for r in rows if r.get("kind") == "train"]
    val = [r for r in rows if r.get("kind") == "val"]
    out = {"steps": len(train)}
    if train:
        out |= {
            "first_loss": train[0]["loss"],
            "last_loss": train[-1]["loss"],
            "tokens_per_s": train[-1].get("tokens_per_s"),
            "peak_memory_mb": max(r.get("peak_memory_mb") or 0 for r in train),
        }
    if val:
        out |= {"val_loss": val[-1]["val_loss"], "val_bpb": val[-1]["val_bpb"]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gguf", type=Path, help="the GGUF file or a folder of its gguf.part* pieces")
    parser.add_argument(
        "--tiny", action="store_true", help="a random 2-layer Gemma 3 of the tokenizer's vocabulary instead"
    )
    parser.add_argument(
        "--tokenizer", type=Path, required=True, help="folder with the real tokenizer's files"
    )
    parser.add_argument("--data", type=Path, required=True, help="processed root, the real tokenizer's ids")
    parser.add_argument("--benchmark-dir", type=Path, required=True, help="the official benchmark files")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--work", type=Path, help="scratch folder (default: <out>/work, not archived)")
    parser.add_argument("--arms", nargs="+", default=list(RECIPE), choices=list(RECIPE))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--gbs", type=int, default=8)
    parser.add_argument("--mbs", type=int, default=8)
    parser.add_argument("--gpu-memory", default="40GB", help="cluster.gpu_memory of the runs' memory check")
    parser.add_argument("--eval-batch-size", type=int, default=32)
    parser.add_argument("--benchmarks", nargs="+", default=list(BENCHMARKS), help="MCQ tasks scored")
    parser.add_argument("--limit", type=int, help="items per benchmark task (default: all)")
    parser.add_argument(
        "--only", nargs="+", help="train and score only these runs (e.g. gemma3-270m-patok-seed1)"
    )
    parser.add_argument("--no-base", action="store_true", help="do not score the base model (scored before)")
    parser.add_argument("--parallel", type=int, default=9, help="processes at once in each stage")
    parser.add_argument(
        "--run-memory-gib",
        type=float,
        default=18.0,
        help="GPU memory one training run takes (15.9 GiB measured at the defaults on an H200): the runs that start "
        "together are as many as the free memory holds",
    )
    parser.add_argument("--budget-s", type=float, default=480)
    args = parser.parse_args(argv)
    if not args.tiny and not args.gguf:
        parser.error("give --gguf (the real model) or --tiny")

    import torch

    clock = Clock(args.budget_s)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.work or args.out / "work"
    work.mkdir(parents=True, exist_ok=True)
    logs, results, runs_root = args.out / "logs", args.out / "results", work / "outputs"
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}:{os.environ.get('PYTHONPATH', '')}",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "WANDB_MODE": "disabled",
        "TOKENIZERS_PARALLELISM": "false",
    }
    summary: dict = {
        "device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
        "torch": torch.__version__,
        "args": {k: str(v) for k, v in vars(args).items()},
    }

    def write_summary() -> None:
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")

    base, summary["base_check"] = build_model(args, work, clock)
    summary["model_s"] = round(clock.elapsed(), 1)
    write_summary()

    train_parallel = args.parallel
    if (
        device == "cuda"
    ):  # nine runs at once ran out of the 139 GiB of an H200 (15.9 GiB each): fit the free memory
        train_parallel = max(
            1, min(args.parallel, int(torch.cuda.mem_get_info()[0] / 2**30 // args.run_memory_gib))
        )
    log(
        clock,
        f"training {args.seeds} seed(s) of {', '.join(args.arms)} on {device}, {train_parallel} at once",
    )
    summary["train"] = run_all(
        train_commands(args, base, runs_root, device), logs, clock, env, train_parallel
    )
    for name, status in summary["train"].items():
        run_dir = runs_root / "runs" / name
        status |= run_metrics(run_dir)
        for extra in ("metrics.jsonl", "config.yaml", "data_fingerprint.json"):
            if (run_dir / extra).is_file():
                (logs / f"{name}.{extra}").write_bytes((run_dir / extra).read_bytes())
    write_summary()

    models = ({} if args.no_base else {"gemma3-270m-base": base}) | {
        name: runs_root / "runs" / name for name, status in summary["train"].items() if status["rc"] == 0
    }
    log(clock, f"evaluating {len(models)} models")
    summary["eval"] = run_all(eval_commands(args, models, results, device), logs, clock, env, args.parallel)
    write_summary()

    analysis = args.out / "analysis"
    report = [
        sys.executable,
        "scripts/analyze_inference_results.py",
        "--results-dir",
        str(results),
        "--output-dir",
        str(analysis),
        "--no-plots",
    ]
    power = [sys.executable, "-m", "morphcpt.analysis.power", "--pilot", str(results), "--target", "5"]
    summary["analysis"] = run_all({"report": report, "power": power}, logs, clock, env, 2)
    summary["wall_s"] = round(clock.elapsed(), 1)
    write_summary()

    lines = [
        f"real pilot on {summary['device']}: {summary['wall_s']} s; base check "
        f"{summary['base_check']['nats_per_token']:.2f} nats/token",
        "",
        "| run | rc | wall s | first loss | last loss | val loss | val bpb | tokens/s | peak MB |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in summary["train"].items():
        cells = [
            s.get(k)
            for k in ("first_loss", "last_loss", "val_loss", "val_bpb", "tokens_per_s", "peak_memory_mb")
        ]
        lines.append(
            f"| {name} | {s['rc']} | {s['wall_s']} | "
            + " | ".join("—" if c is None else f"{c:.3f}" if isinstance(c, float) else str(c) for c in cells)
            + " |"
        )
    if (analysis / "scores.md").is_file():
        lines += ["", (analysis / "scores.md").read_text()]
    if (logs / "power.log").is_file():
        lines += ["", (logs / "power.log").read_text()[-6000:]]
    (args.out / "summary.md").write_text("\n".join(lines) + "\n")
    with tarfile.open(args.out / "logs.tar.gz", "w:gz") as tar:
        for part in (logs, results, analysis):
            if part.exists():
                tar.add(part, arcname=part.name)
    print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
