"""The hf engine on one GPU, in one command and one table (not a test): tokens/s, MFU, peak memory beside the
memory planner's estimate, and the checkpoint stall, for the engine's default layout, with activation
checkpointing, under fsdp on one rank, and a bare PyTorch loop with the same levers as the reference.

    bash benchmarks/gpu.sh                       # one GPU: gemma-3-1b's shape, seq 2048, global batch 16
    bash benchmarks/gpu.sh --gpu-memory 40GB     # capped at 40 GB (the user's A100), + the CPT recipes' micro batch 2
    bash benchmarks/gpu.sh --cpu-smoke           # the same steps at the tiny shape on a CPU (CI)
    python benchmarks/gpu.py --json out.json ... # the rows as JSON too

On a GPU each row runs in its own process (its peak memory and compilation are its own; an out-of-memory row is
reported, the others still run) on synthetic data written once (random ids of the sample tokenizer; the model keeps the
plan's vocabulary, 262,144 rows at the 1B shape). The engine rows are `morphcpt.train.hf.engine.train` with the defaults:
per-layer `torch.compile`, bf16 parameters with fp32 master weights, fused AdamW, the chunked cross entropy, a
background checkpoint; the micro batch is `auto` (the largest the planner fits on the card with its margin).
tokens/s is the median over the steps after the first two (compilation), MFU is 6 x matmul parameters + attention
per token over the card's dense bf16 peak (benchmarks/train.py's `flops_per_token`), peak memory is
`torch.cuda.max_memory_allocated`, the estimate is `morphcpt.train.memory.planner` for the row's layout and micro batch,
and the checkpoint stall is the time the final save held training up (the snapshot to host memory; the write and
its checksums ran in the background, their time in the last column). `--gpu-memory 40GB` caps the process with
`torch.cuda.set_per_process_memory_fraction` at what a 40 GB card offers (99 % of 40 GiB) and plans for it.
`--cpu-smoke` runs every row at the tiny shape (bf16 parameters on the CPU, no compilation: the CPU default).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from train import SHAPES, flops_per_token, write_synthetic  # noqa: E402  benchmarks/train.py

ROWS = {  # name -> plan overrides of the engine rows ("bare" is the reference loop)
    "engine default": [],
    "+ activation checkpointing": ["loop.activation_checkpointing=true"],
    "fsdp, 1 rank": ["loop.sharding=fsdp"],
    "bare loop": None,
}
CPT_ROW = ("CPT recipes' micro batch 2", ["loop.micro_batch_size=2"])
SIZES = {  # shape -> seq, global batch, steps
    "1b": (2048, 16, 6),
    "tiny": (64, 8, 4),
}


def scratch_dir(needed_gb: float) -> Path:
    """A folder for data and checkpoints: RAM (/dev/shm) when it has room, so writing a 12 GB checkpoint and its
    checksums does not make the run long; else the temporary folder."""
    shm = Path("/dev/shm")
    if shm.is_dir() and shutil.disk_usage(shm).free > needed_gb * 2**30:
        return Path(tempfile.mkdtemp(prefix="morphcpt_gpu_", dir=shm))
    return Path(tempfile.mkdtemp(prefix="morphcpt_gpu_"))


def card_setting(args) -> str:
    """cluster.gpu_memory for the runs: --gpu-memory, else this GPU's own memory (CPU: the plan's default)."""
    import torch

    if args.gpu_memory:
        return args.gpu_memory
    if torch.cuda.is_available():
        return f"{torch.cuda.get_device_properties(0).total_memory / 2**30:.1f}GB"
    return "40GB"


def engine_overrides(args, root: Path, name: str, extra: list[str]) -> list[str]:
    seq, batch, steps = SIZES[args.shape]
    from morphcpt import paths

    smoke = ["loop.compile=none", "loop.param_dtype=bf16"] if args.shape == "tiny" else []
    if "loop.sharding=fsdp" in extra:
        smoke = [o for o in smoke if "param_dtype" not in o]  # fsdp has its own bf16 mixed precision
    slug = "".join(ch if ch.isalnum() else "_" for ch in name)
    return [
        "recipe=demo_base",
        f"run_name={slug}",
        f"data.root={root / 'data'}",
        "data.scheme=bench",
        f"output_root={root / 'out'}",
        f"loop.steps={steps}",
        f"loop.seq_length={seq}",
        "loop.micro_batch_size=auto",
        f"loop.global_batch_size={batch}",
        "loop.precision=bf16-mixed",
        f"model.max_position_embeddings={max(seq, 512)}",
        f"model.tokenizer={paths.SAMPLE_TOKENIZER_DIR}",
        "optim.warmup_steps=1",
        f"validation.interval={steps}",
        "validation.max_batches=1",
        f"checkpoint.interval={steps}",
        "checkpoint.keep=1",
        "logging.tensorboard=false",
        "logging.progress_bar=false",
        f"cluster.gpu_memory={card_setting(args)}",
        *SHAPES[args.shape],
        *smoke,
        *extra,
    ]


def cap_memory(args) -> None:
    import torch

    if args.gpu_memory and torch.cuda.is_available():
        from morphcpt.plan.card import parse_bytes

        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(min(0.99 * parse_bytes(args.gpu_memory) / total, 1.0), 0)


def peak_tflops(plan) -> float | None:
    import torch

    from morphcpt.plan.card import gpu_type

    if not torch.cuda.is_available():
        return None
    facts = gpu_type(torch.cuda.get_device_name(0))
    return facts.bf16_tflops if facts else None


def result_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def run_engine_row(args, root: Path, name: str) -> dict:
    from morphcpt.train import load_plan
    from morphcpt.train.hf.engine import train
    from morphcpt.train.hf.metrics import read_metrics
    from morphcpt.train.memory import planner

    extra = dict([CPT_ROW]).get(name, ROWS.get(name)) or []
    plan = load_plan(engine_overrides(args, root, name, extra))
    tic = time.perf_counter()
    result = train(plan)
    steps = [r for r in read_metrics(result.run_dir) if r["kind"] == "train"]
    tokens_per_s = statistics.median(r["tokens_per_s"] for r in steps[2:] or steps)
    times = [
        json.loads(line) for line in (result.run_dir / "checkpoint_times.jsonl").read_text().splitlines()
    ]
    saves = [t for t in times if "stall_s" in t]
    written = [t for t in times if "write_s" in t]
    estimate = planner.rows(plan, "hf", 1)[0]
    vocab = plan.model.vocab_size or 4096
    peak = peak_tflops(plan)
    return {
        "row": name,
        "device": result_device(),
        "micro_batch": plan.loop.micro_batch_size,
        "tokens_per_s": tokens_per_s,
        "mfu": tokens_per_s * flops_per_token(plan.model, vocab, plan.loop.seq_length) / (peak * 1e12)
        if peak
        else None,
        "peak_gib": max(r["peak_memory_mb"] for r in steps) / 1024,
        "estimate_gib": estimate.total / 2**30,
        "checkpoint_stall_s": saves[-1]["stall_s"] if saves else None,
        "checkpoint_write_s": written[-1]["write_s"] if written else None,
        "loss": steps[-1]["loss"],
        "wall_s": time.perf_counter() - tic,
    }


def run_bare_row(args, micro_batch: int) -> dict:
    """The reference: the model, per-layer compile, bf16 parameters, fused AdamW on them, the chunked loss, random
    tokens, no engine (no data loader, master weights, metrics or checkpoints)."""
    import torch

    from morphcpt.modeling.loss import chunked_cross_entropy
    from morphcpt.modeling.models import GEMMA3_1B_SHAPE, GEMMA3_1B_VOCAB, build_model, tiny_config
    from morphcpt.train.hf.parallel import apply_compile

    seq, batch, steps = SIZES[args.shape]
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    vocab = GEMMA3_1B_VOCAB if args.shape == "1b" else 4096
    shape = GEMMA3_1B_SHAPE if args.shape == "1b" else {}
    config = tiny_config(vocab, **{**shape, "max_position_embeddings": max(seq, 512)})
    model = build_model(config, seed=0, device=device).to(dtype=torch.bfloat16).train()
    if cuda:
        apply_compile(model, "layers")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=cuda or None)
    head, decoder = model.get_output_embeddings(), model.get_decoder()
    generator = torch.Generator().manual_seed(0)
    timings, peak, loss = [], 0.0, float("nan")
    for _ in range(steps):
        tic = time.perf_counter()
        for _ in range(batch // micro_batch):
            ids = torch.randint(0, vocab, (micro_batch, seq + 1), generator=generator).to(device)
            hidden = decoder(input_ids=ids[:, :-1], use_cache=False).last_hidden_state
            weights = torch.full(ids[:, 1:].shape, 1.0 / (batch * seq), device=device)
            total, _ = chunked_cross_entropy(hidden, head.weight, ids[:, 1:], weights)
            total.backward()
            loss = total.item() * batch / micro_batch
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if cuda:
            torch.cuda.synchronize()
            peak = max(peak, torch.cuda.max_memory_allocated() / 2**30)
        timings.append(batch * seq / (time.perf_counter() - tic))
    tokens_per_s = statistics.median(timings[2:] or timings)
    facts_peak = peak_tflops(None)
    from morphcpt.plan.schema import ModelPlan

    shape_plan = ModelPlan(**shape)  # {}: ModelPlan's defaults are the tiny shape
    return {
        "row": "bare loop",
        "device": result_device(),
        "micro_batch": micro_batch,
        "tokens_per_s": tokens_per_s,
        "mfu": tokens_per_s * flops_per_token(shape_plan, vocab, seq) / (facts_peak * 1e12)
        if facts_peak
        else None,
        "peak_gib": peak if cuda else None,
        "estimate_gib": None,
        "checkpoint_stall_s": None,
        "checkpoint_write_s": None,
        "loss": loss,
        "wall_s": None,
    }


def child(args) -> int:
    cap_memory(args)
    root = Path(args.workdir)
    try:
        if args.row == "bare loop":
            result = run_bare_row(args, args.micro_batch)
        else:
            result = run_engine_row(args, root, args.row)
    except Exception as error:  # one row's failure (out of memory, say) is reported in the table
        result = {"row": args.row, "error": f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"}
    Path(args.out).write_text(json.dumps(result))
    return 0


def table(results: list[dict], header: str) -> str:
    def cell(value, fmt):
        return "—" if value is None else format(value, fmt)

    lines = [
        header,
        "",
        "| row | micro batch | tokens/s | MFU | peak GiB | planner GiB | peak / planner | ckpt stall s | ckpt write s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['row']} | failed: {r['error']} | | | | | | | |")
            continue
        gpu = r.get("device") != "cpu"  # on a CPU the peak is the process's resident memory, not the tensors'
        ratio = (
            r["peak_gib"] / r["estimate_gib"] if gpu and r.get("peak_gib") and r.get("estimate_gib") else None
        )
        lines.append(
            f"| {r['row']} | {r['micro_batch']} | {r['tokens_per_s']:,.0f} | {cell(r['mfu'] and 100 * r['mfu'], '.1f')}"
            f"{'' if r['mfu'] is None else ' %'} | {cell(r['peak_gib'], '.2f')} | {cell(r['estimate_gib'], '.2f')} | "
            f"{cell(ratio, '.2f')} | {cell(r['checkpoint_stall_s'], '.2f')} | {cell(r['checkpoint_write_s'], '.1f')} |"
        )
    return "\n".join(lines)


def report_row(result: dict, started: float) -> None:
    """One finished row at once, as its table line and as JSON: a run cut short by a time limit (a lent GPU's
    minutes, a walltime) still reports every row it finished; the table at the end repeats them."""
    line = table([result], "").splitlines()[-1]
    print(f"[{time.perf_counter() - started:5.0f} s] {line}", file=sys.stderr, flush=True)
    print(f"ROW {json.dumps(result)}", file=sys.stderr, flush=True)


def pick_rows(text: str, names: list[str]) -> tuple[list[str], list[str]]:
    """--rows' names, comma-separated, where a name may hold a comma itself ("fsdp, 1 rank"): the pieces are joined
    back, left to right, into the longest run that names a row. Returns (rows named, pieces that name none)."""
    pieces = [piece.strip() for piece in text.split(",")]
    wanted, unknown, start = [], [], 0
    while start < len(pieces):
        for end in range(len(pieces), start, -1):
            if ", ".join(pieces[start:end]) in names:
                wanted.append(", ".join(pieces[start:end]))
                start = end
                break
        else:
            if pieces[start]:
                unknown.append(pieces[start])
            start += 1
    return wanted, unknown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu-smoke", action="store_true", help="the tiny shape on the CPU")
    parser.add_argument(
        "--gpu-memory", default=None, help="cap the GPU at this much (e.g. 40GB) and plan for it"
    )
    parser.add_argument("--json", default=None, help="also write the rows as JSON here")
    parser.add_argument(
        "--rows",
        default=None,
        help="only these rows, comma-separated by their names in the table (e.g. 'engine default,bare loop')",
    )
    parser.add_argument("--row", help=argparse.SUPPRESS)  # one row, in a child process
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--micro-batch", type=int, default=4, help=argparse.SUPPRESS)
    parser.add_argument("--shape", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    args.shape = args.shape or ("tiny" if args.cpu_smoke else "1b")
    if args.row:
        return child(args)

    import torch

    if not args.cpu_smoke and not torch.cuda.is_available():
        parser.error("no CUDA GPU here: run `bash benchmarks/gpu.sh --cpu-smoke` for the CPU version")
    from morphcpt import paths
    from morphcpt.tokenization.vocabulary import Vocabulary

    started = time.perf_counter()
    seq, batch, steps = SIZES[args.shape]
    root = scratch_dir(40 if args.shape == "1b" else 1)
    results = []
    try:
        write_synthetic(
            root / "data", Vocabulary.load(paths.SAMPLE_TOKENIZER_DIR), tokens=steps * batch * (seq + 1) * 2
        )
        names = list(ROWS)
        if args.gpu_memory:
            names.insert(1, CPT_ROW[0])
        if args.rows:
            wanted, unknown = pick_rows(args.rows, names)
            if unknown:
                parser.error(f"unknown rows {unknown}; the rows are {names}")
            names = [name for name in names if name in wanted]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        for name in names:
            out = root / f"row{len(results)}.json"
            micro = next((r["micro_batch"] for r in results if "micro_batch" in r), 4)
            if args.cpu_smoke:  # no peak to isolate on a CPU: one process saves the start-up of three
                child(
                    argparse.Namespace(
                        **{
                            **vars(args),
                            "row": name,
                            "workdir": str(root),
                            "out": str(out),
                            "micro_batch": micro,
                        }
                    )
                )
                results.append(json.loads(out.read_text()))
                report_row(results[-1], started)
                continue
            command = [
                sys.executable,
                __file__,
                "--row",
                name,
                "--workdir",
                str(root),
                "--out",
                str(out),
                "--shape",
                args.shape,
                "--micro-batch",
                str(micro),
            ]
            if args.gpu_memory:
                command += ["--gpu-memory", args.gpu_memory]
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            if out.exists():
                results.append(json.loads(out.read_text()))
            else:
                tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit {done.returncode}"]
                results.append({"row": name, "error": tail[0][:160]})
            report_row(results[-1], started)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "CPU"
    import transformers

    header = (
        f"hf engine, {args.shape} shape, seq {seq}, global batch {batch}, {steps} steps a row, on {device}"
        f"{f' capped at {args.gpu_memory}' if args.gpu_memory else ''} (torch {torch.__version__}, transformers "
        f"{transformers.__version__}); {time.perf_counter() - started:.0f} s in all"
        + ("; on a CPU the peak is the process's resident memory" if device == "CPU" else "")
    )
    print(table(results, header))
    if args.json:
        Path(args.json).write_text(json.dumps({"header": header, "rows": results}, indent=2))
    return 0 if all("error" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
