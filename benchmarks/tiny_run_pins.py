"""The figures a change of shape must leave alone: the sha256 of the shipped sample preprocessed by three schemes
and the training losses of the tests' tiny run (`tests/train_helpers.py`: demo_base, 4 steps) on it.

    python benchmarks/tiny_run_pins.py --record benchmarks/records/tiny_run_pins.json   # before a refactor
    python benchmarks/tiny_run_pins.py --check benchmarks/records/tiny_run_pins.json    # after: exit 1 on a change

Used for the house restructure (issue #41): the record was made on the tree before it (3bd6f42).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the tests' own data writer and tiny plan: the run they compare

from morphcpt import paths  # noqa: E402
from morphcpt.train import run  # noqa: E402
from train_helpers import tiny_plan, train_losses, write_data  # noqa: E402


def pins() -> dict:
    root = Path(tempfile.mkdtemp(prefix="morphcpt-pins-"))
    write_data(root / "data", paths.SAMPLE_CORPUS, 160, schemes=("vanilla", "stochastok", "patok"))
    sums = {
        str(p.relative_to(root / "data")): hashlib.sha256(p.read_bytes()).hexdigest()[:16]
        for p in sorted((root / "data").rglob("*.bin"))
    }
    result = run(tiny_plan(root / "data", root / "out"))
    return {"sha256_16": sums, "train_losses": [round(x, 6) for x in train_losses(result.run_dir)]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", type=Path, help="write the figures here")
    parser.add_argument("--check", type=Path, help="compare with a record; exit 1 on any difference")
    args = parser.parse_args()
    now = pins()
    print(json.dumps(now, indent=2))
    if args.record:
        args.record.write_text(json.dumps(now, indent=2) + "\n")
    if args.check:
        then = json.loads(args.check.read_text())
        if then != now:
            print(f"DIFFERENT from {args.check}", file=sys.stderr)
            return 1
        print(f"same as {args.check}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
