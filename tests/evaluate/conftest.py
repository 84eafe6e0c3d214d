"""Fixtures of the evaluation tests: our benchmark layout built from the official-format files, and a tiny random
Gemma 3 with the sample tokenizer (never downloaded), with its scorer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evaluate_helpers import OFFICIAL
from morphcpt.evaluate.items import PACUTE_SUBSETS


@pytest.fixture(scope="session")
def benchmark_dir(tmp_path_factory) -> Path:
    """Our own layout (pacute/<subset>_<mode>.jsonl, hierarchical/level<N>_<mode>.jsonl, cute/cute_<mode>.jsonl)
    built from the hand-written official-format files, hierarchical rows given ids."""
    root = tmp_path_factory.mktemp("benchmarks")
    for path in OFFICIAL.glob("*.jsonl"):
        name = path.stem.rpartition("_")[0]
        if name == "hierarchical":
            continue
        folder = root / ("pacute" if name in PACUTE_SUBSETS else name)
        folder.mkdir(exist_ok=True)
        shutil.copy(path, folder / path.name)
    (root / "hierarchical").mkdir()
    for mode in ("mcq", "gen"):
        rows = [json.loads(line) for line in (OFFICIAL / f"hierarchical_{mode}.jsonl").open()]
        for level in sorted({r["level"] for r in rows}):
            with (root / "hierarchical" / f"level{level}_{mode}.jsonl").open("w") as handle:
                for i, row in enumerate(r for r in rows if r["level"] == level):
                    handle.write(json.dumps({**row, "id": f"h{level}-{mode}-{i}"}) + "\n")
    return root


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, sample_tokenizer_dir) -> Path:
    """A tiny random Gemma 3 with the sample tokenizer; its 8-token sliding window is shorter than the prompts,
    so the sliding-window attention path is exercised."""
    from morphcpt.modeling.models import save_tiny_gemma3

    model_dir = save_tiny_gemma3(
        sample_tokenizer_dir,
        tmp_path_factory.mktemp("tiny") / "model",
        seed=0,
        num_layers=2,
        num_heads=2,
        intermediate_size=128,
        sliding_window=8,
    )
    (model_dir / "morphcpt_metadata.json").write_text(json.dumps({"scheme": "patok", "step": 7}))
    return model_dir


@pytest.fixture(scope="session")
def tiny_lm(tiny_model_dir):
    from morphcpt.evaluate.hf_model import HFCausalLM

    return HFCausalLM.load(tiny_model_dir, device="cpu", batch_size=4)
