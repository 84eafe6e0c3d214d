"""The fault campaign of issue #30, the commands (T: tokenizer training, P: corpus preparation, G: generation),
registered into `benchmarks/faults.py` (`--only "^[TPG]"`); each runs the real command in a subprocess. Also issue
#14's small corpus faults (S: download and split refusals), called in-process."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from faults_shell import refused_or_why, shell  # beside this script

from morphcpt import paths


def register(fault, env: dict, sample_lines) -> None:
    """Add these scenarios to `faults.py`'s list (`fault` is its decorator)."""
    cli, clean, cut = shell(env)

    def train_tokenizer(work: Path, corpus: str, size: str) -> tuple[int, str]:
        """`train_tokenizer` on work/`corpus` into work/t with `--vocab-size size`: (exit code, output)."""
        return cli(
            "-m",
            "morphcpt.tokenization.train_tokenizer",
            str(work / corpus),
            "--out-dir",
            str(work / "t"),
            "--vocab-size",
            size,
        )

    @fault(
        "T1. train-tokenizer: empty corpus; one line with --vocab-size 2000",
        "exit 2, what is wrong and the size the corpus allows",
    )
    def tokenizer_small(work: Path):
        (work / "empty.jsonl").write_text("")
        (work / "one.jsonl").write_bytes(sample_lines(1))
        code, out = train_tokenizer(work, "empty.jsonl", "2000")
        empty = clean(code, out, "holds no text to train on", status=2)
        code, out = train_tokenizer(work, "one.jsonl", "2000")
        one = clean(code, out, "at most", "use --vocab-size", status=2)
        allowed = out.split("at most ")[1].split()[0] if "at most " in out else "?"
        code, out = train_tokenizer(work, "one.jsonl", allowed)
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
            code, out = train_tokenizer(work, corpus, size)
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

    @fault("S. small corpus faults", "each refused or named (5 cases)")
    def corpus_faults(work: Path) -> tuple[str, bool]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from morphcpt.corpus import download, split

        for language in ("tl", "vi"):
            (work / "pq" / language).mkdir(parents=True)
            for i in range(2):
                pq.write_table(
                    pa.table({"text": [f"{language} {i} {j}" for j in range(5)]}),
                    work / "pq" / language / f"s{i}.parquet",
                )
        out = work / "dl.jsonl"
        download.download_seapile(out, "tl", limit=3, from_parquet=work / "pq", progress=False)
        seen = {
            "other source": refused_or_why(
                lambda: download.download_seapile(out, "vi", from_parquet=work / "pq", progress=False),
                "another source",
            )
        }
        cut(work / "pq" / "tl" / "s1.parquet")
        seen["corrupt shard"] = refused_or_why(
            lambda: download.download_seapile(out, "tl", from_parquet=work / "pq", progress=False),
            "tl/s1.parquet",
        )
        corpus = work / "c.jsonl"
        corpus.write_bytes(sample_lines(5))
        for name, args, message in [
            ("--num-chunks 0", ["--num-chunks", "0"], "--num-chunks must be at least 1"),
            ("--holdout-lines -1", ["--holdout-lines", "-1"], "must be 0 or more"),
            ("holdout too large", ["--holdout-lines", "9"], "the input has only 5"),
        ]:
            stderr = io.StringIO()
            with contextlib.redirect_stderr(stderr):
                seen[name] = refused_or_why(
                    lambda a=args: split.main(["--input", str(corpus), "--output-dir", str(work / "s"), *a]),
                    "",
                    SystemExit,
                )
            seen[name] = seen[name] if message in stderr.getvalue() else "unclear message"
        return ", ".join(f"{k}: {v}" for k, v in seen.items()), all(v == "refused" for v in seen.values())
