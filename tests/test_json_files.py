"""Every JSON file the suite reads goes through one reader: a cut-off, empty, garbled or wrong-shaped file is one
sentence naming the file and the fix, never a bare JSONDecodeError (and never a run that carries on regardless)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from morphcpt.errors import UserError
from morphcpt.jsonio import JSONFileError, JSONFileMissing, check_json_files, read_json, write_json


def cut(path: Path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


@pytest.mark.parametrize(
    "content, says",
    [
        (b'{"a": [1, 2', "ends early"),
        # cut inside a character: a cut within a non-ASCII path or word is a file that ends early, too
        (b'{"path": "/home/ma\xc3', "ends early (after 19 bytes, inside a multi-byte character)"),
        ('{"word": "路径'.encode()[:-1], "ends early"),
        (b"", "is empty"),
        (b"  \n", "is empty"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b'{"a": 1} trailing', "not valid JSON (Extra data: line 1, column 10)"),
        (b"[1, 2]", "holds a list where an object was expected"),
        (b"null", "holds null where an object was expected"),
        (b'{"b": 1}', "lacks 'a'"),
        (b"[" * 100_000 + b"]" * 100_000, "nests too deeply"),
    ],
)
def test_the_reader_names_the_file_what_is_wrong_and_the_fix(tmp_path, content, says):
    path = tmp_path / "chunk_01.done.json"
    path.write_bytes(content)
    with pytest.raises(JSONFileError) as error:
        read_json(path, keys=("a",))
    message = str(error.value)
    assert message.startswith(str(path)) and says in message
    assert "completion marker" in message and "rerun" in message  # what the file is, and the way on
    assert isinstance(error.value, UserError)


def test_missing_files_and_defaults_and_atomic_writes(tmp_path):
    with pytest.raises(JSONFileMissing, match="is missing") as error:
        read_json(tmp_path / "nope.json")
    assert isinstance(error.value, FileNotFoundError) and error.value.filename == str(tmp_path / "nope.json")
    assert read_json(tmp_path / "nope.json", default={}) == {}
    write_json(tmp_path / "x.json", {"b": "ü"})
    assert read_json(tmp_path / "x.json") == {"b": "ü"}
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]  # no temporary file left


def test_a_folder_check_names_its_broken_file(tmp_path, sample_tokenizer_dir):
    folder = tmp_path / "tok"
    shutil.copytree(sample_tokenizer_dir, folder)
    check_json_files(folder)
    cut(folder / "special_tokens_map.json")
    with pytest.raises(
        JSONFileError, match="special_tokens_map.json .the tokenizer's special tokens. ends early"
    ):
        check_json_files(folder)


@pytest.mark.parametrize("name", ["tokenizer.json", "tokenizer_config.json"])
def test_a_cut_off_tokenizer_file_is_named_when_a_vocabulary_loads(tmp_path, sample_tokenizer_dir, name):
    from morphcpt.tokenization.vocabulary import Vocabulary

    folder = tmp_path / "tok"
    shutil.copytree(sample_tokenizer_dir, folder)
    cut(folder / name)
    with pytest.raises(UserError, match=f"{folder / name} .*(ends early|cannot load)"):
        Vocabulary.load(folder)


def run_module(module: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=600)


def test_preprocessing_with_a_cut_off_tokenizer_json_is_one_sentence(
    tmp_path, sample_tokenizer_dir, sample_corpus
):
    folder = tmp_path / "tok"
    shutil.copytree(sample_tokenizer_dir, folder)
    cut(folder / "tokenizer.json")
    done = run_module(
        "morphcpt.preprocess",
        f"input={sample_corpus}",
        f"output_dir={tmp_path / 'out'}",
        f"tokenizer={folder}",
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"{folder / 'tokenizer.json'}" in done.stderr and "ends early" in done.stderr


@pytest.fixture(scope="module")
def expanded(tmp_path_factory, sample_corpus, sample_tokenizer_dir):
    from morphcpt.tokenization.eeve import expand

    root = tmp_path_factory.mktemp("expanded")
    lines = sample_corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:120]
    (root / "chunk_01.jsonl").write_text("".join(lines), encoding="utf-8")
    expand(root / "chunk_01.jsonl", sample_tokenizer_dir, root / "tokenizer", num_new=24)
    return root


@pytest.mark.parametrize(
    "damage, says",
    [
        (
            lambda f: cut(f / "eeve_expansion.json"),
            "eeve_expansion.json (the record of an EEVE-expanded tokenizer) ends early",
        ),
        (lambda f: _edit(f / "eeve_expansion.json", pieces=lambda p: p[::-1]), "different builds"),
        (lambda f: _edit(f / "eeve_expansion.json", pieces=None), "lacks 'pieces'"),
    ],
)
def test_eeve_preprocessing_reads_the_expansion_it_relies_on(tmp_path, expanded, damage, says):
    """Preprocessing once only looked for the file, so a cut-off record (which training cannot use) passed."""
    from morphcpt.preprocess import compose_config, run

    folder = tmp_path / "tokenizer"
    shutil.copytree(expanded / "tokenizer", folder)
    damage(folder)
    cfg = compose_config(
        [f"input={expanded / 'chunk_01.jsonl'}", f"output_dir={tmp_path / 'out'}", f"tokenizer={folder}"]
        + ["scheme=eeve", "progress=false"]
    )
    with pytest.raises(UserError, match=says.replace("(", r"\(").replace(")", r"\)")):
        run(cfg)
    assert not list((tmp_path / "out").rglob("*.done.json"))


def _edit(path: Path, **changes) -> None:
    data = json.loads(path.read_text())
    for key, change in changes.items():
        if change is None:
            del data[key]
        else:
            data[key] = change(data[key])
    path.write_text(json.dumps(data))


def test_training_with_a_cut_off_expansion_is_one_sentence(tmp_path, expanded, tiny_gemma3):
    from morphcpt.train import load_plan
    from morphcpt.train.eeve import engine

    folder = tmp_path / "tokenizer"
    shutil.copytree(expanded / "tokenizer", folder)
    cut(folder / "eeve_expansion.json")
    plan = load_plan(
        ["recipe=demo_eeve", f"model.pretrained={tiny_gemma3}", f"model.tokenizer={folder}"]
        + [f"output_root={tmp_path / 'out'}", f"data.root={tmp_path / 'data'}"]
    )
    with pytest.raises(UserError, match="eeve_expansion.json .* ends early"):
        engine.run(plan)


def _one_chunk_and_validation(tmp_path, sample_corpus) -> None:
    from morphcpt.preprocess import compose_config, run

    for name, extra in (("chunk_01", []), ("validation", ["validation=true"])):
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(sample_corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:20]),
            encoding="utf-8",
        )
        run(
            compose_config(
                [
                    f"input={tmp_path / f'{name}.jsonl'}",
                    f"output_dir={tmp_path / 'data'}",
                    "progress=false",
                    *extra,
                ]
            )
        )


def test_a_cut_off_marker_in_training_data_names_the_marker(tmp_path, sample_corpus):
    from morphcpt.plan.schema import DataPlan
    from morphcpt.preprocess import output_paths
    from morphcpt.train.data import check_ready

    _one_chunk_and_validation(tmp_path, sample_corpus)
    _, marker = output_paths(tmp_path / "data", "vanilla", "chunk_01")
    cut(marker)
    with pytest.raises(UserError, match=f"{marker} .*ends early"):
        check_ready(DataPlan(root=str(tmp_path / "data"), num_chunks=1))


def test_the_cluster_check_reads_the_markers_training_reads(tmp_path, sample_corpus, sample_tokenizer_dir):
    from morphcpt.plan.compose import load_plan
    from morphcpt.train.data import read_marker
    from morphcpt.train.megatron.check import ClusterCheckError, check_data_markers

    _one_chunk_and_validation(tmp_path, sample_corpus)
    overrides = [f"output_root={tmp_path / 'out'}", f"data.root={tmp_path / 'data'}", "data.num_chunks=1"]
    plan = load_plan(["recipe=cpt_baseline", *overrides, f"model.tokenizer={sample_tokenizer_dir}"])
    report = check_data_markers(plan)
    chunk, validation = read_marker(plan.data.chunk_prefixes()[0]), read_marker(plan.data.validation_prefix())
    assert (report["chunks"], report["documents"], report["tokens"]) == (
        1,
        chunk["documents"],
        chunk["tokens"],
    )
    assert report["validation_documents"] == validation["documents"] == 20
    assert report["tokenizer_check"].startswith(f"matches {sample_tokenizer_dir}")
    marker = plan.data.chunk_prefixes()[0].with_name("chunk_01.done.json")
    marker.write_text(marker.read_text().replace('"documents"', '"docs"'))
    with pytest.raises(ClusterCheckError, match="chunk_01.done.json"):
        check_data_markers(plan)


def test_a_cut_off_model_config_is_named(tmp_path, tiny_gemma3):
    from morphcpt.modeling.models import load_strict

    model = tmp_path / "model"
    shutil.copytree(tiny_gemma3, model)
    cut(model / "config.json")
    with pytest.raises(JSONFileError, match="config.json .the model's configuration. ends early"):
        load_strict(model)


@pytest.mark.parametrize("meta", [None, b"", b"{"])
def test_a_checkpoint_whose_meta_json_is_missing_or_cut_is_not_usable(tmp_path, meta):
    """What a missing file looked like to the checkpoint check changed with the reader: it must still say so."""
    from morphcpt.modeling.checkpoint_files import verify

    (tmp_path / "step_00000002").mkdir()
    if meta is not None:
        (tmp_path / "step_00000002" / "meta.json").write_bytes(meta)
    problem = verify(tmp_path / "step_00000002")
    assert problem == "meta.json is missing" if meta is None else problem.startswith("unreadable: ")
