"""Helpers for the training tests: small preprocessed datasets made by the real pipeline (morphcpt.preprocess).

`write_data` splits the first lines of the sample corpus into a validation file and training chunks, and
preprocesses them exactly as the cluster jobs do: `<root>/<scheme>/chunk_NN_text_document.{bin,idx}` +
`chunk_NN.done.json` per scheme and chunk, and the canonical `<root>/validation/validation_text_document`.
"""

from __future__ import annotations

import json
from pathlib import Path

from morphcpt.preprocess import compose_config, run


def read_texts(corpus: Path, limit: int | None = None) -> list[str]:
    """The `text` of the first `limit` lines of a JSONL corpus."""
    lines = corpus.read_text(encoding="utf-8").splitlines()[:limit]
    return [json.loads(line)["text"] for line in lines]


def write_data(
    root: Path, corpus: Path, limit: int, schemes=("vanilla",), num_chunks: int = 1, validation: int = 40
):
    """Preprocess the corpus's first `limit` lines: `validation` held out, the rest in `num_chunks` chunks."""
    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:limit]
    sources = root / "jsonl"
    sources.mkdir(parents=True)
    (sources / "validation.jsonl").write_text("".join(lines[:validation]), encoding="utf-8")
    common = [f"output_dir={root}", "progress=false"]
    run(
        compose_config(
            ["validation=true", f"input={sources / 'validation.jsonl'}", "index_offset=0", *common]
        )
    )
    train = lines[validation:]
    size = -(-len(train) // num_chunks)
    for chunk in range(num_chunks):
        path = sources / f"chunk_{chunk + 1:02d}.jsonl"
        path.write_text("".join(train[chunk * size : (chunk + 1) * size]), encoding="utf-8")
        offset = validation + chunk * size
        for scheme in schemes:
            run(compose_config([f"scheme={scheme}", f"input={path}", f"index_offset={offset}", *common]))
    return root
