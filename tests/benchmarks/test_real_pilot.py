"""`benchmarks/real_pilot.py`: the GGUF pieces are joined and checked, each arm and seed becomes one training command,
and with `--tiny` every stage (CPT per arm and seed, the evaluation that exports each run, the report) runs on a CPU,
so the one script a lent GPU runs is known to work before the GPU is borrowed."""

from __future__ import annotations

import hashlib
import json
import sys
from argparse import Namespace

import pytest

from morphcpt import paths, realmodel

sys.path.insert(0, str(paths.REPO_ROOT / "benchmarks"))
import real_pilot  # noqa: E402  benchmarks/real_pilot.py


def test_gguf_pieces_are_joined_in_name_order_and_a_wrong_file_is_refused(tmp_path, monkeypatch):
    data = bytes(range(256)) * 40
    pieces = tmp_path / "pieces"
    pieces.mkdir()
    for k, start in enumerate(range(0, len(data), 4000), start=1):
        (pieces / f"gguf.part{k}").write_bytes(data[start : start + 4000])
    monkeypatch.setattr(realmodel, "GGUF_BYTES", len(data))
    monkeypatch.setattr(realmodel, "GGUF_SHA256", hashlib.sha256(data).hexdigest())
    joined = real_pilot.joined_gguf(pieces, tmp_path)
    assert joined.read_bytes() == data and joined.name == realmodel.GGUF_NAME
    assert real_pilot.joined_gguf(joined, tmp_path / "elsewhere") == joined  # a file is taken as it is
    (pieces / "gguf.part2").write_bytes(b"x" * 4000)
    with pytest.raises(SystemExit, match=r"joined 3 pieces into 10,240 bytes, sha256 \w+: not the file"):
        real_pilot.joined_gguf(pieces, tmp_path)
    with pytest.raises(SystemExit, match="no GGUF file and no gguf.part"):
        real_pilot.joined_gguf(tmp_path / "empty", tmp_path)


def test_every_arm_and_seed_is_one_pilot_run_and_only_picks_some(tmp_path):
    args = Namespace(
        arms=["baseline", "patok"],
        seeds=2,
        only=None,
        data=tmp_path,
        steps=40,
        seq=1024,
        gbs=8,
        mbs=8,
        gpu_memory="40GB",
    )
    commands = real_pilot.train_commands(args, tmp_path / "base", tmp_path / "out", "cuda")
    assert list(commands) == [
        "gemma3-270m-baseline",
        "gemma3-270m-baseline-seed1",
        "gemma3-270m-patok",
        "gemma3-270m-patok-seed1",
    ]
    seed1 = commands["gemma3-270m-patok-seed1"]
    assert "recipe=pilot_patok" in seed1 and "data.replicate=1" in seed1 and "optim.warmup_steps=4" in seed1
    assert "loop.precision=fp32" not in seed1
    assert (
        "loop.precision=fp32"
        in real_pilot.train_commands(args, tmp_path, tmp_path, "cpu")["gemma3-270m-patok"]
    )
    args.only = ["gemma3-270m-patok-seed1"]
    assert list(real_pilot.train_commands(args, tmp_path, tmp_path, "cuda")) == ["gemma3-270m-patok-seed1"]


@pytest.mark.slow
def test_the_pilot_runs_every_stage_with_a_tiny_model_on_cpu(tmp_path, sample_corpus, sample_tokenizer_dir):
    from morphcpt.preprocess import compose_config, run
    from train_helpers import write_data

    root = write_data(
        tmp_path / "data", sample_corpus, 100, schemes=("vanilla", "patok"), num_chunks=2, validation=20
    )
    for chunk, offset in ((1, 20), (2, 60)):  # patok's second seed: ids drawn again from the same text
        source = root / "jsonl" / f"chunk_0{chunk}.jsonl"
        options = [f"input={source}", f"index_offset={offset}", f"output_dir={root}", "progress=false"]
        run(compose_config(["scheme=patok", "replicate=1", *options]))
    out = tmp_path / "pilot"
    argv = ["--tiny", "--tokenizer", str(sample_tokenizer_dir), "--data", str(root), "--out", str(out)]
    argv += [
        "--benchmark-dir",
        str(paths.REPO_ROOT / "tests" / "data" / "official"),
        "--arms",
        "baseline",
        "patok",
    ]
    argv += ["--seeds", "2", "--steps", "2", "--seq", "32", "--gbs", "2", "--mbs", "2", "--parallel", "2"]
    argv += ["--benchmarks", "hierarchical-level2", "langgame", "--limit", "3", "--budget-s", "900"]
    assert real_pilot.main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    runs = [
        "gemma3-270m-baseline",
        "gemma3-270m-baseline-seed1",
        "gemma3-270m-patok",
        "gemma3-270m-patok-seed1",
    ]
    assert list(summary["train"]) == runs
    for name in runs:
        status = summary["train"][name]
        assert status["rc"] == 0 and status["steps"] == 2 and status["val_bpb"] > 0, (name, status)
    assert {name: s["rc"] for name, s in summary["eval"].items()} == {
        f"eval_{name}": 0 for name in ["gemma3-270m-base", *runs]
    }
    assert summary["analysis"]["report"]["rc"] == 0
    for name in ["gemma3-270m-base", *runs]:
        result = json.loads((out / "results" / name / "hierarchical-level2_mcq.json").read_text())
        assert result["summary"]["overall"]["n"] == 3 and result["settings"]["dtype"] == "fp32"
    table = (out / "summary.md").read_text()
    assert "| gemma3-270m-patok-seed1 | 0 |" in table and "gemma3-270m-base" in table
    assert (out / "logs.tar.gz").stat().st_size > 0
