"""Corpus stages: robust JSONL reading, byte-balanced splitting, and the SEA-PILE download (local parquet path)."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from morphcpt import paths
from morphcpt.corpus import download, split
from morphcpt.corpus.reader import REASONS, BadLineError, ReadReport, iter_documents, split_long_text

GOOD_FIRST = b'{"text": "Magandang umaga po."}\n'
GOOD_LAST = b'{"text": "Kumain ka na ba?", "id": 7}'  # last line without newline
# (raw line, reason it is skipped) — one of every reason the reader knows.
BAD = [
    (b'\xff\xfe{"text": "x"}\n', "invalid_utf8"),
    (b"   \n", "blank_line"),
    (b'{"text": "unterminated\n', "invalid_json"),
    (b'["a", "list"]\n', "not_object"),
    (b'{"content": "no text key"}\n', "missing_text"),
    (b'{"text": 42}\n', "non_string_text"),
    (b'{"text": null}\n', "non_string_text"),
    (b'{"text": "\\ud800 lone surrogate"}\n', "invalid_text"),
    (b'{"text": " \\n\\t "}\n', "empty_text"),
    # Crafted lines that raise something other than JSONDecodeError inside json.loads.
    (b"[" * 1000 + b"]" * 1000 + b"\n", "unparsable_json"),  # RecursionError
    (b'{"text": "x", "n": ' + b"9" * 5000 + b"}\n", "unparsable_json"),  # ValueError: too many digits
]


@pytest.fixture
def bad_jsonl(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(GOOD_FIRST + b"".join(raw for raw, _ in BAD) + GOOD_LAST)
    return path


def test_every_bad_line_is_counted_with_its_reason_and_line(bad_jsonl):
    report = ReadReport()
    records = list(iter_documents(bad_jsonl, report=report))
    assert [r.text for r in records] == ["Magandang umaga po.", "Kumain ka na ba?"]
    assert [r.line for r in records] == [1, len(BAD) + 2]
    expected: dict[str, list[int]] = {}
    for line, (_, reason) in enumerate(BAD, start=2):
        expected.setdefault(reason, []).append(line)
    assert report.bad_examples == expected
    assert report.bad_lines == {reason: len(lines) for reason, lines in expected.items()}
    assert set(report.bad_lines) == set(REASONS)
    # Nothing lost silently: every line is a document or a counted bad line.
    assert report.lines == len(records) + report.bad_total == len(BAD) + 2
    assert report.as_dict()["bad_total"] == len(BAD)


def test_strict_mode_fails_on_the_first_bad_line_with_file_and_line(bad_jsonl):
    with pytest.raises(BadLineError, match=rf"{bad_jsonl.name}:2: invalid_utf8"):
        list(iter_documents(bad_jsonl, strict=True))


def test_text_key_is_configurable_and_bom_is_ignored(tmp_path):
    path = tmp_path / "content.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"content": "una"}\n{"text": "wrong key"}\n')
    report = ReadReport()
    assert [r.text for r in iter_documents(path, text_key="content", report=report)] == ["una"]
    assert report.bad_lines == {"missing_text": 1}


def test_long_texts_are_cut_at_whitespace_into_parts_that_rebuild_the_text():
    rng = random.Random(0)
    words = ["bahay", "kumain", "\n", "mag-aral", "  ", "ng", "\t"]
    for _ in range(200):
        text = "".join(rng.choice(words) + rng.choice(["", " "]) for _ in range(rng.randint(1, 300)))
        max_chars = rng.randint(5, 60)
        parts = split_long_text(text, max_chars)
        assert "".join(parts) == text
        assert all(0 < len(part) <= max_chars for part in parts)
        # Every cut but the last falls right after whitespace whenever the window had any.
        for part in parts[:-1]:
            assert part[-1].isspace() or not any(c.isspace() for c in part[1:])
    assert split_long_text("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]


def test_long_documents_are_reported_as_split(tmp_path):
    path = tmp_path / "long.jsonl"
    text = "salita " * 100
    path.write_text(json.dumps({"text": text}) + "\n" + json.dumps({"text": "maikli"}) + "\n")
    report = ReadReport()
    records = list(iter_documents(path, max_chars=64, report=report))
    assert records[0].text == text and len(records[0].parts) == report.split_parts > 1
    assert report.split_lines == 1
    assert report.documents == report.split_parts + 1


def test_shipped_bad_sample_is_fully_accounted_for():
    path = paths.DATA_DIR / "sample" / "tl_sample_bad.jsonl"
    if not path.exists():
        pytest.skip("data/sample/tl_sample_bad.jsonl not shipped")
    report = ReadReport()
    records = list(iter_documents(path, report=report))
    assert report.bad_total > 0 and records
    assert report.lines == len(records) + report.bad_total
    with pytest.raises(BadLineError):
        list(iter_documents(path, strict=True))


def _corpus(tmp_path, n_lines: int, seed: int = 0, trailing_newline: bool = True):
    rng = random.Random(seed)
    lines = [json.dumps({"text": "ab " * rng.randint(0, 300), "i": i}) for i in range(n_lines)]
    data = ("\n".join(lines) + ("\n" if trailing_newline else "")).encode()
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(data)
    return path, data, lines


@pytest.mark.parametrize("trailing_newline", [True, False])
def test_split_keeps_every_line_once_in_order_and_balances_bytes(tmp_path, trailing_newline):
    path, data, lines = _corpus(tmp_path, 500, trailing_newline=trailing_newline)
    out = tmp_path / "chunks"
    manifest = split.split_jsonl(path, out, 7)
    chunks = manifest["chunks"]
    assert [c["file"] for c in chunks] == [f"chunk_{i:02d}.jsonl" for i in range(1, 8)]
    contents = [(out / c["file"]).read_bytes() for c in chunks]
    assert b"".join(contents) == data
    assert all(c.endswith(b"\n") for c in contents[:-1])
    longest = max(len(line) + 1 for line in lines)
    for content, entry in zip(contents, chunks, strict=True):
        assert entry["bytes"] == len(content)
        assert entry["sha256"] == hashlib.sha256(content).hexdigest()
        assert entry["lines"] == len(content.splitlines())
        assert abs(len(content) - len(data) / 7) <= longest
    assert [c["first_line"] for c in chunks] == [sum(c["lines"] for c in chunks[:i]) for i in range(7)]
    assert sum(c["lines"] for c in chunks) == len(lines)
    assert json.loads((out / split.MANIFEST).read_text()) == manifest
    assert not list(out.glob("*.tmp"))


def test_split_with_fewer_lines_than_chunks_writes_every_chunk(tmp_path):
    path, data, _ = _corpus(tmp_path, 3)
    manifest = split.split_jsonl(path, tmp_path / "chunks", 12)
    files = sorted((tmp_path / "chunks").glob("chunk_*.jsonl"))
    assert [f.name for f in files] == [f"chunk_{i:02d}.jsonl" for i in range(1, 13)]
    assert b"".join(f.read_bytes() for f in files) == data
    assert sum(c["lines"] for c in manifest["chunks"]) == 3


def test_split_holds_out_the_last_lines_for_validation(tmp_path):
    path, data, lines = _corpus(tmp_path, 100, trailing_newline=False)
    manifest = split.split_jsonl(path, tmp_path / "chunks", 3, holdout_lines=10)
    validation = (tmp_path / "chunks" / "validation.jsonl").read_bytes()
    assert validation.decode().splitlines() == lines[-10:]
    assert manifest["validation"]["lines"] == 10 and manifest["validation"]["first_line"] == 90
    chunks = b"".join((tmp_path / "chunks" / c["file"]).read_bytes() for c in manifest["chunks"])
    assert chunks + validation == data
    assert split.manifest_entry(tmp_path / "chunks" / "chunk_02.jsonl")["first_line"] > 0
    with pytest.raises(ValueError, match="cannot hold out"):
        split.split_jsonl(path, tmp_path / "other", 3, holdout_lines=100)


def test_split_names_widen_with_the_chunk_count_and_cli_runs(tmp_path, capsys):
    assert split.chunk_name(7, 20) == "chunk_07" and split.chunk_name(7, 120) == "chunk_007"
    path, _, _ = _corpus(tmp_path, 20)
    args = ["--input", str(path), "--output-dir", str(tmp_path / "c"), "--num-chunks", "2"]
    assert split.main([*args, "--holdout-lines", "3"]) == 0
    printed = capsys.readouterr().out
    assert "chunk_02.jsonl" in printed and "validation.jsonl: 3 lines" in printed
    # The default holds out 2,000 lines: on a 20-line corpus that is a clear usage error, not a traceback.
    with pytest.raises(SystemExit) as error:
        split.main(["--input", str(path), "--output-dir", str(tmp_path / "d")])
    assert error.value.code == 2 and "--holdout-lines" in capsys.readouterr().err


def test_resplitting_into_a_folder_of_older_chunks_removes_the_stale_ones(tmp_path, capsys):
    path, data, _ = _corpus(tmp_path, 200)
    out = tmp_path / "chunks"
    split.split_jsonl(path, out, 20, holdout_lines=5)
    (out / "notes.txt").write_text("not ours")
    assert (
        split.main(
            ["--input", str(path), "--output-dir", str(out), "--num-chunks", "4", "--holdout-lines", "0"]
        )
        == 0
    )
    assert "removed files of an earlier split" in capsys.readouterr().out
    left = sorted(p.name for p in out.iterdir())
    assert left == [*(f"chunk_0{i}.jsonl" for i in range(1, 5)), "manifest.json", "notes.txt"]
    assert b"".join((out / f"chunk_0{i}.jsonl").read_bytes() for i in range(1, 5)) == data
    # 9 → 120 chunks changes the name width: chunk_01 … are stale next to chunk_001 …
    split.split_jsonl(path, out, 120)
    assert not (out / "chunk_01.jsonl").exists() and (out / "chunk_001.jsonl").exists()


def test_split_usage_errors_say_what_is_wrong(tmp_path, capsys):
    path, _, _ = _corpus(tmp_path, 5)
    base = ["--input", str(path), "--output-dir", str(tmp_path / "c")]
    for extra, message in [
        (["--num-chunks", "0"], "--num-chunks must be at least 1, got 0"),
        (["--holdout-lines", "-1"], "--holdout-lines must be 0 or more, got -1"),
        (["--holdout-lines", "5"], "cannot hold out all 5 lines of the input"),
        (["--holdout-lines", "9"], "cannot hold out 9 lines: the input has only 5"),
    ]:
        with pytest.raises(SystemExit) as error:
            split.main([*base, *extra])
        err = capsys.readouterr().err
        assert error.value.code == 2 and message in err, err
        assert ("set --holdout-lines smaller" in err) == ("cannot hold out" in message)
    assert not (tmp_path / "c" / "manifest.json").exists()


def test_split_says_when_chunks_are_empty(tmp_path, capsys):
    path, _, _ = _corpus(tmp_path, 3)
    assert (
        split.main(
            [
                "--input",
                str(path),
                "--output-dir",
                str(tmp_path / "c"),
                "--num-chunks",
                "5",
                "--holdout-lines",
                "0",
            ]
        )
        == 0
    )
    assert "2 chunk(s) are empty" in capsys.readouterr().out


def _write_shards(folder, texts_per_shard, row_group_size=3):
    folder.mkdir(parents=True)
    for i, texts in enumerate(texts_per_shard):
        table = pa.table({"text": texts, "url": [f"u{i}-{j}" for j in range(len(texts))]})
        pq.write_table(table, folder / f"train-{i:05d}.parquet", row_group_size=row_group_size)


@pytest.fixture
def parquet_dataset(tmp_path):
    shards = [[f"doc {i}-{j} ñ" for j in range(n)] for i, n in enumerate([7, 1, 10])]
    _write_shards(tmp_path / "seapile" / "tl", shards)
    _write_shards(tmp_path / "seapile" / "vi", [["không phải"]])  # another language, must be ignored
    return tmp_path / "seapile", [text for shard in shards for text in shard]


def _texts(path):
    return [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_download_from_parquet_writes_every_row_in_order(tmp_path, parquet_dataset):
    folder, texts = parquet_dataset
    output = tmp_path / "out.jsonl"
    assert download.download_seapile(output, "fil", from_parquet=folder, progress=False) == len(texts)
    assert _texts(output) == texts


def test_download_resumes_after_limit_and_after_a_torn_line(tmp_path, parquet_dataset):
    folder, texts = parquet_dataset
    output = tmp_path / "out.jsonl"
    assert download.download_seapile(output, "tl", limit=9, from_parquet=folder, progress=False) == 9
    assert _texts(output) == texts[:9]
    assert download.download_seapile(output, "tl", limit=9, from_parquet=folder, progress=False) == 0
    with open(output, "ab") as handle:  # an interrupted write: half a line
        handle.write(b'{"text": "doc 2-')
    assert download.download_seapile(output, "tl", from_parquet=folder, progress=False) == len(texts) - 9
    assert _texts(output) == texts


def test_a_download_resumed_from_another_source_is_refused(tmp_path, parquet_dataset):
    folder, texts = parquet_dataset
    output = tmp_path / "out.jsonl"
    assert download.download_seapile(output, "fil", limit=5, from_parquet=folder, progress=False) == 5
    with pytest.raises(ValueError, match=r"holds 5 lines from parquet:.*:tl; resuming from parquet:.*:vi"):
        download.download_seapile(output, "vi", from_parquet=folder, progress=False)
    other = tmp_path / "copy"
    shutil.copytree(folder, other)
    with pytest.raises(ValueError, match="another source's rows"):
        download.download_seapile(output, "fil", from_parquet=other, progress=False)
    assert _texts(output) == texts[:5]  # nothing appended
    assert download.download_seapile(output, "fil", from_parquet=folder, progress=False) == len(texts) - 5


def test_a_corrupt_shard_is_named(tmp_path, parquet_dataset):
    folder, texts = parquet_dataset
    shard = folder / "tl" / "train-00001.parquet"
    shard.write_bytes(shard.read_bytes()[:40])
    output = tmp_path / "out.jsonl"
    with pytest.raises(download.ShardError, match=r"parquet shard tl/train-00001.parquet cannot be read"):
        download.download_seapile(output, "fil", from_parquet=folder, progress=False)
    assert _texts(output) == texts[:7]  # the first shard's rows are kept for the resume


def test_download_from_the_hub_needs_a_token(tmp_path, monkeypatch):
    from morphcpt import paths

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(paths, "ENV_FILE", tmp_path / ".env")  # none: a checkout's own .env would hold one
    with pytest.raises(RuntimeError, match="HF_TOKEN"):
        download.download_seapile(tmp_path / "x.jsonl", "fil", progress=False)
    assert download.language_dir("fil") == download.language_dir("tagalog") == "tl"
    # The plan loads .env with a plain `source .env`, which exports nothing: the token is read from .env itself
    (tmp_path / ".env").write_text("HF_TOKEN=hf_from_dotenv\n")
    asked = []
    monkeypatch.setattr(download, "hub_shards", lambda data_dir, token, where: asked.append(token) or [])
    download.download_seapile(tmp_path / "y.jsonl", "fil", progress=False)
    assert asked == ["hf_from_dotenv"]


def test_download_cli(tmp_path, parquet_dataset, capsys):
    folder, texts = parquet_dataset
    output = tmp_path / "cli.jsonl"
    args = ["--output", str(output), "--language", "fil", "--from-parquet", str(folder), "--limit", "4"]
    assert download.main(args) == 0
    assert _texts(output) == texts[:4]
    assert "4 lines added" in capsys.readouterr().out


class _FakeHub:
    """Stands in for huggingface_hub, serving a local folder as the dataset repository (no network)."""

    def __init__(self, root, downloads):
        self.root, self.downloads = root, downloads

    def HfApi(self, token):  # noqa: N802 - mirrors the real class name
        root = self.root

        class Api:
            def list_repo_files(self, repo_id, repo_type):
                assert (repo_id, repo_type, token) == (download.REPO_ID, "dataset", "hf_test")
                return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) + [
                    "README.md"
                ]

        return Api()

    def HfFileSystem(self, token):  # noqa: N802
        root = self.root

        class FileSystem:
            def open(self, path, mode):
                return open(root / path.removeprefix(f"datasets/{download.REPO_ID}/"), mode)

        return FileSystem()

    def hf_hub_download(self, repo_id, filename, repo_type, token, local_dir):
        self.downloads.append(filename)
        target = Path(local_dir) / filename
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(self.root / filename, target)
        return str(target)


def test_download_from_the_hub_lists_downloads_and_deletes_shards(tmp_path, parquet_dataset, monkeypatch):
    import huggingface_hub

    folder, texts = parquet_dataset
    downloads: list[str] = []
    fake = _FakeHub(folder, downloads)
    for name in ("HfApi", "HfFileSystem", "hf_hub_download"):
        monkeypatch.setattr(huggingface_hub, name, getattr(fake, name))
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    output = tmp_path / "hub" / "out.jsonl"
    assert download.download_seapile(output, "fil", limit=8, progress=False) == 8
    assert download.download_seapile(output, "fil", progress=False) == len(texts) - 8
    assert _texts(output) == texts
    # The resumed run skipped the first shard by its footer, without downloading it again.
    assert downloads == ["tl/train-00000.parquet", "tl/train-00001.parquet", "tl/train-00002.parquet"]
    assert sorted(p.name for p in output.parent.iterdir()) == ["out.jsonl", "out.jsonl.source.json"]
