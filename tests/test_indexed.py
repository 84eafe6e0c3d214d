"""Megatron indexed datasets: dtype from the vocabulary size, no wrapping ids, atomic files, documented layout."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from morphcpt import indexed, paths

DOCS = [[2, 5, 6, 1], [2, 1], [2, 262143, 70000, 65535, 1]]


def test_dtype_follows_megatrons_threshold():
    assert indexed.dtype_for_vocab(1000) == np.uint16
    assert indexed.dtype_for_vocab(65499) == np.uint16
    assert indexed.dtype_for_vocab(65500) == np.int32
    assert indexed.dtype_for_vocab(262144) == np.int32


def test_gemma_sized_ids_survive_a_round_trip_without_wrapping(tmp_path):
    prefix = tmp_path / "gemma_text_document"
    with indexed.IndexedWriter(prefix, vocab_size=262144) as writer:
        for doc in DOCS:
            writer.add(np.asarray(doc, dtype=np.int64))
    assert [d.tolist() for d in indexed.iter_documents(prefix)] == DOCS
    dataset = indexed.open_dataset(prefix)
    assert len(dataset) == len(DOCS)
    assert [dataset[i].tolist() for i in range(len(DOCS))] == DOCS
    assert dataset[2].dtype == np.int32
    assert writer.documents == 3 and writer.tokens == sum(map(len, DOCS))


def test_ids_outside_the_vocabulary_are_refused_and_leave_nothing(tmp_path):
    prefix = tmp_path / "small_text_document"
    for bad in ([2, 65535, 1], [2, -1, 1]):  # 65535 fits uint16 but not a 1000-piece vocabulary
        with pytest.raises(ValueError, match="out of range"), indexed.IndexedWriter(prefix, 1000) as writer:
            writer.add(bad)
        assert not list(tmp_path.iterdir())


def test_adding_documents_in_one_batch_writes_the_same_bytes_as_one_by_one(tmp_path):
    for vocab_size in (1000 * 263, 1000):  # int32 and uint16
        docs = DOCS if vocab_size > 65535 else [[2, 5, 6, 1], [2, 1], [2, 999, 0, 1]]
        with indexed.IndexedWriter(tmp_path / "one", vocab_size) as one:
            for doc in docs:
                one.add(doc)
        with indexed.IndexedWriter(tmp_path / "many", vocab_size) as many:
            many.add_many(np.concatenate([np.asarray(d) for d in docs[:2]]), [len(d) for d in docs[:2]])
            many.add_many(np.asarray(docs[2]), [len(docs[2])])
            many.add_many(np.zeros(0, dtype=np.int64), [])  # a batch of nothing changes nothing
        for suffix in (".bin", ".idx"):
            assert (tmp_path / f"one{suffix}").read_bytes() == (tmp_path / f"many{suffix}").read_bytes()
        assert (many.documents, many.tokens) == (one.documents, one.tokens)
    for tokens, lengths, message in (
        ([2, 5, 1], [2], "do not add up"),
        ([2, 5, 1], [4, -1], "do not add up"),
        ([2, 70000, 1], [3], "out of range"),  # would wrap in uint16
        ([2, -1, 1], [3], "out of range"),
    ):
        with (
            pytest.raises(ValueError, match=message),
            indexed.IndexedWriter(tmp_path / "bad", 1000) as writer,
        ):
            writer.add_many(np.asarray(tokens), lengths)
        assert not list(tmp_path.glob("bad*"))


def test_files_appear_only_when_complete(tmp_path):
    prefix = tmp_path / "atomic_text_document"
    writer = indexed.IndexedWriter(prefix, 1000)
    writer.add([2, 7, 1])
    assert not indexed.dataset_exists(prefix)
    (tmp_bin,) = tmp_path.iterdir()
    assert tmp_bin.name.startswith("atomic_text_document.bin.") and tmp_bin.name.endswith(".tmp")
    writer.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "atomic_text_document.bin",
        "atomic_text_document.idx",
    ]


def test_idx_layout_matches_the_comment_and_megatron(tmp_path):
    prefix = tmp_path / "layout_text_document"
    docs = [[2, 9, 8, 7, 1], [2, 3, 1]]
    with indexed.IndexedWriter(prefix, 1000) as writer:
        for doc in docs:
            writer.add(doc)
    raw = indexed.idx_path(prefix).read_bytes()
    assert raw[:9] == indexed.IDX_MAGIC
    assert struct.unpack("<QBQQ", raw[9:34]) == (1, 8, 2, 3)  # version, uint16 code, sequences, doc indices
    index = indexed.read_index(prefix)
    assert index["lengths"].tolist() == [5, 3]
    assert index["pointers"].tolist() == [0, 10]
    assert index["documents"].tolist() == [0, 1, 2]
    dataset = indexed.open_dataset(prefix)
    assert dataset.sequence_lengths.tolist() == [5, 3]
    assert dataset.document_indices.tolist() == [0, 1, 2]
    assert len(raw) == 34 + 2 * 4 + 2 * 8 + 3 * 8


def test_two_writers_of_one_prefix_never_delete_or_publish_each_others_files(tmp_path):
    # The fault behind a corrupt "done" chunk: each new writer deleted the other's fixed-name temporary file.
    prefix = tmp_path / "twice_text_document"
    first, second = indexed.IndexedWriter(prefix, 1000), indexed.IndexedWriter(prefix, 1000)
    first.add([2, 5, 1])
    second.add([2, 6, 6, 1])
    first.add([2, 7, 1])
    assert len(indexed.temporary_files(prefix)) == 2
    first.close()
    assert [d.tolist() for d in indexed.iter_documents(prefix)] == [[2, 5, 1], [2, 7, 1]]
    second.abort()
    assert [d.tolist() for d in indexed.iter_documents(prefix)] == [[2, 5, 1], [2, 7, 1]]
    assert not indexed.temporary_files(prefix)


def test_a_second_holder_of_the_output_lock_fails_at_once_naming_the_first(tmp_path):
    prefix = tmp_path / "locked_text_document"
    with indexed.output_lock(prefix):
        second = indexed.output_lock(prefix)
        with pytest.raises(indexed.OutputLocked, match=f"pid {os.getpid()}"):
            second.__enter__()
    with indexed.output_lock(prefix):  # released on exit
        pass


def test_verify_dataset_catches_a_changed_size_or_checksum(tmp_path):
    prefix = tmp_path / "digest_text_document"
    with indexed.IndexedWriter(prefix, 1000) as writer:
        writer.add([2, 5, 9, 1])
    recorded = indexed.dataset_digest(prefix)
    assert indexed.verify_dataset(prefix, recorded) is None
    data = bytearray(indexed.bin_path(prefix).read_bytes())
    data[2] ^= 1
    indexed.bin_path(prefix).write_bytes(bytes(data))
    assert "checksum" in indexed.verify_dataset(prefix, recorded)
    assert indexed.verify_dataset(prefix, recorded, checksums=False) is None
    indexed.bin_path(prefix).write_bytes(bytes(data[:4]))
    assert "4 bytes" in indexed.verify_dataset(prefix, recorded, checksums=False)
    assert "older version" in indexed.verify_dataset(prefix, None)


@pytest.mark.parametrize(
    ("vocab_size", "docs"),
    [
        (1000, [[2, 9, 8, 7, 1], [2, 1], [], [2, 999, 1]]),  # uint16, an empty document among them
        (262144, [[2, 262143, 5, 1], list(range(2, 300)), [2, 1]]),  # int32 at Gemma 3's size
        (1000, []),  # no documents at all
    ],
)
def test_our_writer_writes_megatrons_bytes_without_importing_megatron(tmp_path, vocab_size, docs):
    from megatron.core.datasets.indexed_dataset import IndexedDatasetBuilder

    ours = tmp_path / "ours_text_document"
    with indexed.IndexedWriter(ours, vocab_size) as writer:
        for doc in docs:
            writer.add(np.asarray(doc, dtype=np.int64))
    theirs = tmp_path / "theirs_text_document"
    builder = IndexedDatasetBuilder(f"{theirs}.bin", dtype=indexed.dtype_for_vocab(vocab_size).type)
    for doc in docs:
        builder.add_document(np.asarray(doc, dtype=indexed.dtype_for_vocab(vocab_size)), [len(doc)])
    builder.finalize(f"{theirs}.idx")
    assert indexed.bin_path(ours).read_bytes() == indexed.bin_path(theirs).read_bytes()
    assert indexed.idx_path(ours).read_bytes() == indexed.idx_path(theirs).read_bytes()


def test_preprocessing_does_not_import_megatron(tmp_path, sample_tokenizer_dir):
    # megatron-core's import takes seconds: a preprocessing job's start-up must not pay it
    code = (
        "import sys\n"
        "from morphcpt.preprocess import compose_config, run\n"
        f"run(compose_config(['scheme=patok', 'input={paths.SAMPLE_CORPUS}', 'output_dir={tmp_path}', "
        f"'tokenizer={sample_tokenizer_dir}', 'index_offset=0', 'progress=false']))\n"
        "assert sys.argv[1] == 'first' or not [m for m in sys.modules if m.startswith(('megatron', 'transformers'))], "
        "sorted(m for m in sys.modules if m.startswith(('megatron', 'transformers')))[:5]\n"
    )
    env = {**os.environ, "MORPHCPT_CACHE_DIR": str(tmp_path / "cache")}
    subprocess.run(
        [sys.executable, "-c", code, "first"], env=env, check=True
    )  # fills the cache (transformers)
    result = subprocess.run([sys.executable, "-c", code, "then"], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
