"""benchmarks/wide_corpus.py (a benchmark input): the layout of every document kept, more distinct words, repeatable."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from morphcpt import paths

SCRIPT = paths.REPO_ROOT / "benchmarks" / "wide_corpus.py"
WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


def test_words_are_redrawn_and_everything_between_them_is_kept(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(paths.SAMPLE_CORPUS.read_text(encoding="utf-8").splitlines(True)[:60]))
    outputs = []
    for name in ("a.jsonl", "b.jsonl"):
        out = tmp_path / name
        done = subprocess.run(
            [sys.executable, str(SCRIPT), str(source), str(out), "--common", "0.5", "--rare", "0.2"],
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]  # deterministic
    before = [json.loads(line)["text"] for line in source.read_text(encoding="utf-8").splitlines()]
    after = [json.loads(line)["text"] for line in outputs[0].decode().splitlines()]
    assert len(after) == len(before)
    for old, new in zip(before, after, strict=True):
        assert WORD.split(old) == WORD.split(new)  # punctuation, spaces and line breaks as they were
        assert len(WORD.findall(old)) == len(WORD.findall(new))
    distinct = lambda texts: {w for t in texts for w in WORD.findall(t)}  # noqa: E731
    assert len(distinct(after)) > 1.5 * len(distinct(before))
    assert f"{len(distinct(before)):,} in" in done.stdout and f"{len(distinct(after)):,} in" in done.stdout
