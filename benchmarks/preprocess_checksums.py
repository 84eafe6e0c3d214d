"""Record, or check, the sha256 of every scheme's preprocessing output for one tokenizer and input.

    python benchmarks/preprocess_checksums.py --tokenizer ../shared/assets/gemma3-tokenizer --input /tmp/perf.jsonl \
        --check benchmarks/records/preprocess_gemma3_perf30.json        # exit 1 on any difference
    python benchmarks/preprocess_checksums.py ... --record out.json      # what a check compares against

The test suite proves byte identity on the shipped sample tokenizer (`tests/test_preprocess.py`); this does the same
at the real vocabulary size, where the cached tokenizer, the writer and the schemes run on 262,144 pieces. The
record in `benchmarks/records/` was made before the start-up and speed work of issue #12, on the 30 MB corpus of
`../shared/tools/make_perf_corpus.py` (its sha256 is in the record, so a check on another input is refused);
patok's bytes were recorded again after the analyser changes of issue #25, as its cuts follow the analyser.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

SCHEMES = ("vanilla", "stochastok", "patok")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=2)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", type=Path)
    mode.add_argument("--check", type=Path)
    args = parser.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from morphcpt.indexed import file_digest
    from morphcpt.preprocess import compose_config, run

    expected = json.loads(args.check.read_text()) if args.check else None
    input_sha = file_digest(args.input)["sha256"]
    if expected and expected["input_sha256"] != input_sha:
        raise SystemExit(f"{args.input} is not the input recorded in {args.check} (sha256 {input_sha[:12]})")
    result = {"input_sha256": input_sha, "seed": 1234, "index_offset": 0, "outputs": {}}
    with tempfile.TemporaryDirectory(prefix="morphcpt-checksums-") as tmp:
        for scheme in SCHEMES:
            stats = run(
                compose_config(
                    [f"scheme={scheme}", f"input={args.input}", f"output_dir={tmp}", f"tokenizer={args.tokenizer}",
                     f"workers={args.workers}", "index_offset=0", "progress=false"]
                )
            )  # fmt: skip
            result["tokenizer_fingerprint"] = stats["key"]["tokenizer_fingerprint"]
            result["outputs"][scheme] = {
                "bin": stats["files"]["bin"]["sha256"],
                "idx": stats["files"]["idx"]["sha256"],
            }
    if args.record:
        args.record.write_text(json.dumps(result, indent=2) + "\n")
        print(f"recorded {args.record}")
        return 0
    failed = False
    for scheme in SCHEMES:
        same = result["outputs"][scheme] == expected["outputs"][scheme]
        failed |= not same
        print(f"{scheme:<11} {'identical to the record' if same else 'DIFFERS from the record'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
