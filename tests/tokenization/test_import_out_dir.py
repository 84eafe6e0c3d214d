"""`morphcpt import-tokenizer` deletes nothing it did not write: a folder holding other files, the source model
folder, the current folder and its parents, a file and a read-only folder are refused in one line, an earlier
import is replaced, and a refused import leaves no staging folder behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from morphcpt.tokenization.import_tokenizer import IMPORT_FILE, TokenizerImportError, import_tokenizer


@pytest.fixture
def model_folder(tmp_path, sample_tokenizer_dir) -> Path:
    """A model folder as users have them: the tokenizer beside config.json and the weights."""
    folder = tmp_path / "model"
    shutil.copytree(sample_tokenizer_dir, folder)
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"weights")
    return folder


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if "import" in p.name or p.name.endswith(".tmp"))


def test_a_folder_holding_other_files_is_refused_and_kept(model_folder, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(TokenizerImportError, match=r"holds files an import did not write \(notes.txt\)"):
        import_tokenizer(model_folder, out)
    assert (out / "notes.txt").read_text() == "keep me"
    assert leftovers(tmp_path) == []


def test_the_source_folder_and_its_parents_are_refused(model_folder, tmp_path):
    held = sorted(p.name for p in model_folder.iterdir())
    for out in (model_folder, model_folder.parent, model_folder / "tokenizer.json"):
        with pytest.raises(TokenizerImportError, match="never writes over its source|is a file"):
            import_tokenizer(model_folder / "tokenizer.json" if out == model_folder else model_folder, out)
    assert sorted(p.name for p in model_folder.iterdir()) == held
    assert (model_folder / "model.safetensors").read_bytes() == b"weights"


def test_the_current_folder_a_file_and_a_read_only_folder_are_one_line_each(model_folder, tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    locked = tmp_path / "locked"
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    locked.mkdir()
    os.chmod(locked, 0o500)
    try:
        cases = {
            ".": "current folder",
            "..": "its source",
            str(a_file): "is a file",
            str(a_file / "sub"): "is a file",
            str(locked / "tok"): "not writable",
        }
        if os.geteuid() == 0:
            cases.pop(str(locked / "tok"))
        for out, said in cases.items():
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "morphcpt.tokenization.import_tokenizer",
                    str(model_folder),
                    "--out-dir",
                    out,
                ],
                capture_output=True,
                text=True,
                cwd=work,
                timeout=300,
            )
            assert done.returncode == 1 and "Traceback" not in done.stderr, (out, done.stderr)
            assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, (out, done.stderr)
    finally:
        os.chmod(locked, 0o700)
    assert a_file.read_text() == "x" and (model_folder / "config.json").exists()
    assert leftovers(tmp_path) == [] and leftovers(model_folder) == [] and leftovers(work) == []


def test_an_earlier_import_is_replaced_and_a_refused_one_leaves_nothing(
    model_folder, tmp_path, sample_corpus
):
    out = tmp_path / "deep" / "tok"
    import_tokenizer(model_folder, out)
    assert (out / IMPORT_FILE).exists()
    import_tokenizer(model_folder, out)  # its own earlier import: replaced
    assert (out / IMPORT_FILE).exists() and leftovers(out.parent) == []
    with pytest.raises(TokenizerImportError, match="not a token"):
        import_tokenizer(model_folder, tmp_path / "new" / "tok", asked={"eos": "<no such token>"})
    assert not (tmp_path / "new").exists() and leftovers(tmp_path) == []


def test_an_empty_model_file_is_one_line(tmp_path):
    (tmp_path / "empty.model").write_bytes(b"")
    with pytest.raises(TokenizerImportError, match="empty SentencePiece model"):
        import_tokenizer(tmp_path / "empty.model", tmp_path / "tok")
    assert leftovers(tmp_path) == []
