"""Speed and memory of the data pipeline at a given tokenizer and input (a benchmark, not a test).

    python benchmarks/preprocess.py --tokenizer ../shared/assets/gemma3-tokenizer --input /tmp/perf.jsonl \
        [--workers 1 2] [--schemes vanilla stochastok patok] [--scale 10] [--json out.json]

Defaults: the shipped sample tokenizer and corpus. Build the 30 MB Tagalog input of the issue with
`python ../shared/tools/make_perf_corpus.py data/sample/tl_sample.jsonl <out>`; its words all come from the sample,
so for patok's per-word costs also measure on `python benchmarks/wide_corpus.py <that file> <out>`.

Every measurement is one `python -m morphcpt.preprocess` job, exactly as a PBS array task runs it, in a fresh process
tree with `TOKENIZERS_PARALLELISM=false` (a worker is one core) and a warm tokenizer cache (one untimed job fills
it first; `morphcpt.tokenization.cache`). Reported per scheme and worker count:

* wall: the whole job; load: the marker's `load_s` (tokenizer, scheme tables: the start-up after imports); rest:
  what is left of the wall (interpreter start and imports, output checksums, freeing the caches at exit);
* processing: the marker's `process_s` (reading, tokenizing, transforming, writing) and its ratio to vanilla's
  at the same worker count, the figure the goals are stated in;
* CPU inside the jobs: the marker's `encode_cpu_s` (tokenizing) and `scheme_cpu_s` (the scheme's generators and
  transform), summed over the processes, and per repeat (tokenizing + scheme) / (tokenizing + vanilla's scheme
  seconds): the scheme's own cost at the same tokenizing, which the drift of this machine between two jobs (often
  10-20 %, more than stochastok's whole cost) does not enter;
* CPU: user + system seconds of the job and its workers, per million tokens (what a PBS allocation pays for);
  tokens/s of wall and tokens per CPU-second (per core);
* peak RSS: the largest resident set of any one process of the job (the parent or a worker);
* the sha256 of the output: the same for every worker count.

`--repeats N` measures every row N times, interleaved, and reports the run of median processing time (this machine's
timings vary by 10-20 % from run to run); the JSON keeps every run's processing time. It also prints each scheme's
ratio to vanilla within every repeat (vanilla ran within the same minute or so, at the same worker count), which a
slow spell of the machine disturbs less than a ratio of two medians. The schemes' order rotates from one repeat to
the next, so that no scheme always runs right after another: an effect of the order (a machine slowing down over a
repeat, say) cannot pass for one scheme's cost.

`--scale N` also runs each scheme on the input written N times back to back, at the largest worker count, to show
that peak memory does not grow with the input. Last, `split_jsonl` in MB/s beside `cp` of the same file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from morphcpt import paths

SCHEMES = ("vanilla", "stochastok", "patok")

# Runs one command and reports its process tree's CPU time and largest resident set (RUSAGE_CHILDREN of a
# fresh process covers exactly that command and the workers it waited for).
_MEASURE = """
import json, resource, subprocess, sys, time
started = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
if code.returncode:
    sys.exit(code.stderr[-3000:])
print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "maxrss_kb": usage.ru_maxrss}))
"""


def run_measured(command: list[str], env: dict) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command], env=env, capture_output=True, text=True
    )
    if result.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stderr}")
    return json.loads(result.stdout)


def preprocess(
    input_path: Path, out: Path, scheme: str, workers: int, tokenizer: str, env: dict, threads: bool = False
) -> dict:
    """One preprocessing job, measured; `threads`: the tokenizer may use every core (its default)."""
    env = {**env, "TOKENIZERS_PARALLELISM": "true" if threads else "false"}
    command = [
        sys.executable,
        "-m",
        "morphcpt.preprocess",
        f"scheme={scheme}",
        f"input={input_path}",
        f"output_dir={out}",
        f"tokenizer={tokenizer}",
        f"workers={workers}",
        "index_offset=0",
        "progress=false",
        "force=true",
    ]
    measured = run_measured(command, env)
    marker = json.loads((out / scheme / f"{input_path.stem}.done.json").read_text())
    tokens, processing = marker["tokens"], marker["timings"]["process_s"]
    return {
        "scheme": scheme,
        "workers": f"{workers}+thr" if threads else workers,
        "input_mb": input_path.stat().st_size / 1e6,
        "tokens": tokens,
        "wall_s": measured["wall"],
        "load_s": marker["timings"]["load_s"],
        "rest_s": measured["wall"] - processing - marker["timings"]["load_s"],
        "process_s": processing,
        "encode_cpu_s": marker["timings"]["encode_cpu_s"],
        "scheme_cpu_s": marker["timings"]["scheme_cpu_s"],
        "cpu_s": measured["cpu"],
        "cpu_s_per_m_tokens": measured["cpu"] / tokens * 1e6,
        "tokens_per_s": tokens / measured["wall"],
        "tokens_per_cpu_s": tokens / measured["cpu"],
        "peak_rss_mb": measured["maxrss_kb"] / 1024,
        "sha256": marker["files"]["bin"]["sha256"][:16] + "/" + marker["files"]["idx"]["sha256"][:16],
    }


def replicate(source: Path, times: int, target: Path) -> Path:
    with open(target, "wb") as out:
        for _ in range(times):
            with open(source, "rb") as handle:
                shutil.copyfileobj(handle, out, 1 << 24)
    return target


def split_speed(input_path: Path, tmp: Path, env: dict) -> dict:
    size = input_path.stat().st_size
    split = run_measured(
        [sys.executable, "-m", "morphcpt.corpus.split", "--input", str(input_path), "--output-dir",
         str(tmp / "chunks"), "--num-chunks", "20", "--holdout-lines", "0"],
        env,
    )  # fmt: skip
    copy = run_measured(["cp", str(input_path), str(tmp / "copy.jsonl")], env)
    return {
        "bytes": size,
        "split_mb_per_s": size / split["wall"] / 1e6,
        "cp_mb_per_s": size / copy["wall"] / 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", type=Path, default=paths.SAMPLE_CORPUS)
    parser.add_argument("--tokenizer", default=str(paths.SAMPLE_TOKENIZER_DIR))
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--schemes", nargs="+", default=list(SCHEMES))
    parser.add_argument("--scale", type=int, default=0, help="also run on the input written N times (memory)")
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="measure every row N times (interleaved); report the median run",
    )
    parser.add_argument(
        "--tokenizer-threads", action="store_true", help="also one worker with the tokenizer's own threads on"
    )
    args = parser.parse_args(argv)

    rows, scaled = [], []
    with tempfile.TemporaryDirectory(prefix="morphcpt-bench-") as tmp:
        tmp = Path(tmp)
        env = {
            **os.environ,
            "TOKENIZERS_PARALLELISM": "false",
            "PYTHONWARNINGS": "ignore",
            "MORPHCPT_CACHE_DIR": os.environ.get("MORPHCPT_CACHE_DIR", str(tmp / "cache")),
        }
        warm = tmp / "warm.jsonl"
        with open(args.input, "rb") as source, open(warm, "wb") as out:
            out.writelines(line for _, line in zip(range(20), source, strict=False))
        for scheme in args.schemes:  # fills the tokenizer cache; not timed
            preprocess(warm, tmp / "warm", scheme, 1, args.tokenizer, env)
        runs: dict[tuple[str, int], list[dict]] = {}
        for repeat in range(args.repeats):  # interleaved, so that a slow spell of the machine hits every row
            for workers in args.workers:
                turn = repeat % len(args.schemes)
                for scheme in args.schemes[turn:] + args.schemes[:turn]:
                    row = preprocess(args.input, tmp / "out", scheme, workers, args.tokenizer, env)
                    runs.setdefault((scheme, workers), []).append(row)
                    print(f"  measured {scheme} workers={workers} ({repeat + 1}/{args.repeats}): processing "
                          f"{row['process_s']:.2f} s", file=sys.stderr, flush=True)  # fmt: skip
        for (scheme, workers), measured in runs.items():  # the run of median processing time
            rows.append(sorted(measured, key=lambda r: r["process_s"])[len(measured) // 2])
            rows[-1]["process_s_all"] = [r["process_s"] for r in measured]
            vanilla = runs.get(("vanilla", workers))
            if vanilla and scheme != "vanilla":  # each repeat against vanilla's run in that repeat
                rows[-1]["paired_vs_vanilla"] = [
                    r["process_s"] / v["process_s"] for r, v in zip(measured, vanilla, strict=True)
                ]
                # The scheme's own CPU against vanilla's, at this job's tokenizing CPU: no drift between jobs.
                rows[-1]["own_vs_vanilla"] = [
                    (r["encode_cpu_s"] + r["scheme_cpu_s"]) / (r["encode_cpu_s"] + v["scheme_cpu_s"])
                    for r, v in zip(measured, vanilla, strict=True)
                ]
        if (
            args.tokenizer_threads
        ):  # one worker whose tokenizer runs on every core (TOKENIZERS_PARALLELISM=true)
            for scheme in args.schemes:
                rows.append(preprocess(args.input, tmp / "out", scheme, 1, args.tokenizer, env, threads=True))
        if args.scale > 1:
            big = replicate(args.input, args.scale, tmp / f"{args.input.stem}_x{args.scale}.jsonl")
            for scheme in args.schemes:
                scaled.append(preprocess(big, tmp / "big", scheme, max(args.workers), args.tokenizer, env))
                print(f"  measured {scheme} x{args.scale}", file=sys.stderr, flush=True)
        split = split_speed(args.input, tmp, env)

    print(
        f"input {args.input} ({rows[0]['input_mb']:.1f} MB), tokenizer {args.tokenizer}, {os.cpu_count()} cores"
    )
    print(
        f"{'scheme':<14}{'workers':>7}{'wall s':>8}{'load s':>7}{'rest s':>7}{'proc s':>8}{'vs van':>7}{'CPU s':>7}"
        f"{'CPU s/Mtok':>11}{'tok/s':>10}{'tok/CPU-s':>10}{'RSS MB':>8}  sha256 bin/idx"
    )
    for row in rows + scaled:
        vanilla = next(
            (r for r in rows + scaled if r["scheme"] == "vanilla" and r["workers"] == row["workers"]
             and r["input_mb"] == row["input_mb"]),
            None,
        )  # fmt: skip
        row["process_vs_vanilla"] = row["process_s"] / vanilla["process_s"] if vanilla else None
        ratio = f"{row['process_vs_vanilla']:.2f}x" if vanilla else "-"
        label = row["scheme"] + (f" x{args.scale}" if row in scaled else "")
        print(
            f"{label:<14}{row['workers']!s:>7}{row['wall_s']:>8.2f}{row['load_s']:>7.2f}{row['rest_s']:>7.2f}{row['process_s']:>8.2f}"
            f"{ratio:>7}{row['cpu_s']:>7.1f}{row['cpu_s_per_m_tokens']:>11.2f}{row['tokens_per_s']:>10,.0f}"
            f"{row['tokens_per_cpu_s']:>10,.0f}{row['peak_rss_mb']:>8.0f}  {row['sha256']}"
        )
    for row in rows:
        if len(row.get("paired_vs_vanilla", ())) > 1:
            paired = sorted(row["paired_vs_vanilla"])
            print(
                f"{row['scheme']} workers={row['workers']}: processing vs vanilla's run of the same repeat "
                f"{', '.join(f'{x:.2f}x' for x in row['paired_vs_vanilla'])} (median {paired[len(paired) // 2]:.2f}x)"
            )
    print(
        "CPU inside the jobs (median run): tokenizing, the scheme's own work (its generators and transform), and"
    )
    print(
        "tokenizing + the scheme's work over tokenizing + vanilla's (the same job's tokenizing: no drift between jobs)"
    )
    for row in rows:
        own = sorted(row.get("own_vs_vanilla", ()))
        versus = f"{own[len(own) // 2]:.3f}x ({own[0]:.3f}-{own[-1]:.3f}x)" if own else "-"
        print(
            f"  {row['scheme']:<12} workers={row['workers']!s:<6} tokenizing {row['encode_cpu_s']:7.2f} s  "
            f"scheme {row['scheme_cpu_s']:6.2f} s  {versus}"
        )
    for scheme in args.schemes:
        mine = [r for r in rows if r["scheme"] == scheme and isinstance(r["workers"], int)]
        if len(mine) > 1:
            first, last = mine[0], mine[-1]
            same = (
                "identical" if len({r["sha256"] for r in rows if r["scheme"] == scheme}) == 1 else "DIFFERENT"
            )
            print(
                f"{scheme}: workers {first['workers']} -> {last['workers']}: wall {first['wall_s'] / last['wall_s']:.2f}x, "
                f"processing {first['process_s'] / last['process_s']:.2f}x faster; output {same}"
            )
        big = next((r for r in scaled if r["scheme"] == scheme), None)
        small = next((r for r in rows if r["scheme"] == scheme and r["workers"] == max(args.workers)), None)
        if big and small:
            print(
                f"{scheme}: peak RSS {small['peak_rss_mb']:.0f} MB at {small['input_mb']:.0f} MB input, "
                f"{big['peak_rss_mb']:.0f} MB at {big['input_mb']:.0f} MB ({big['peak_rss_mb'] / small['peak_rss_mb'] - 1:+.1%})"
            )
    print(
        f"split_jsonl: {split['split_mb_per_s']:.0f} MB/s, cp: {split['cp_mb_per_s']:.0f} MB/s "
        f"({split['bytes'] / 1e6:.1f} MB into 20 chunks)"
    )
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "scaled": scaled, "split": split}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
