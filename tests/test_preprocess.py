"""Preprocessing one chunk x one scheme: lossless, transformed ids on disk, deterministic, resumable, accounted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from morphcpt import indexed, paths
from morphcpt.corpus.reader import BadLineError, ReadReport, iter_documents
from morphcpt.corpus.split import manifest_entry, split_jsonl
from morphcpt.preprocess import compose_config, dataset_prefixes, output_paths, run

SCHEMES = ("vanilla", "stochastok", "patok")
BAD_SAMPLE = paths.DATA_DIR / "sample" / "tl_sample_bad.jsonl"


def preprocess(input_path, output_dir, *overrides, scheme="vanilla"):
    # max_chars well below the 200 kB bad-sample document keeps every scheme fast on it.
    base = [
        f"scheme={scheme}",
        f"input={input_path}",
        f"output_dir={output_dir}",
        "progress=false",
        "max_chars=20000",
    ]
    return run(compose_config([*base, *overrides]))


def documents(output_dir, folder, name):
    prefix, _ = output_paths(output_dir, folder, name)
    return [doc.tolist() for doc in indexed.iter_documents(prefix)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, sample_corpus):
    """80 sample documents, the shipped bad lines (with a 200 kB document) in the middle, 40 more documents."""
    lines = sample_corpus.read_bytes().splitlines(keepends=True)
    path = tmp_path_factory.mktemp("corpus") / "small.jsonl"
    path.write_bytes(
        b"".join(lines[:80]) + BAD_SAMPLE.read_bytes().rstrip(b"\n") + b"\n" + b"".join(lines[80:120])
    )
    return path


@pytest.fixture(scope="module")
def processed(tmp_path_factory, corpus):
    out = tmp_path_factory.mktemp("processed")
    stats = {scheme: preprocess(corpus, out, scheme=scheme) for scheme in SCHEMES}
    return out, stats


def test_every_document_is_bos_transformed_ids_eos_and_decodes_to_its_text(processed, corpus, vocab):
    out, stats = processed
    texts = [part for record in iter_documents(corpus, max_chars=20000) for part in record.parts]
    vanilla = documents(out, "vanilla", "small")
    for scheme in SCHEMES:
        docs = documents(out, scheme, "small")
        assert len(docs) == len(texts) == stats[scheme]["documents"]
        assert all(doc[0] == vocab.bos_id and doc[-1] == vocab.eos_id for doc in docs)
        assert [vocab.decode(doc) for doc in docs] == texts
        assert stats[scheme]["tokens"] == sum(map(len, docs))
        if scheme != "vanilla":
            # The transformed ids reach the .bin: most documents differ from canonical, and the file grows.
            changed = sum(doc != base for doc, base in zip(docs, vanilla, strict=True))
            assert changed == stats[scheme]["changed_documents"] > len(docs) // 2
            assert stats[scheme]["tokens"] > stats["vanilla"]["tokens"]
    assert vanilla == [[vocab.bos_id, *vocab.encode(text), vocab.eos_id] for text in texts]


@pytest.mark.parametrize("scheme", ["stochastok", "patok"])
def test_the_bin_holds_exactly_the_schemes_ids_for_each_corpus_line(processed, corpus, vocab, scheme):
    """The ids on disk are the scheme's transform of the canonical ids, seeded by (seed, scheme, corpus line):
    recomputed here independently of the pipeline, document by document (no decode and re-tokenize anywhere)."""
    from morphcpt.tokenization.schemes import SchemeConfig, build_scheme, document_rng

    out, stats = processed
    cfg = compose_config([f"scheme={scheme}", f"input={corpus}", f"output_dir={out}"])
    transformer = build_scheme(SchemeConfig.from_mapping(dict(cfg.scheme)), vocab)
    expected = []
    for record in iter_documents(corpus, max_chars=20000):
        rng = document_rng(cfg.seed, scheme, record.line - 1)
        for part in record.parts:
            expected.append([vocab.bos_id, *transformer.transform(vocab.encode(part), rng), vocab.eos_id])
    assert documents(out, scheme, "small") == expected


def test_bad_lines_and_long_documents_are_in_the_report(processed, corpus):
    _, stats = processed
    expected = ReadReport()
    list(iter_documents(corpus, max_chars=20000, report=expected))
    report = stats["patok"]["read_report"]
    assert report == expected.as_dict()
    assert report["bad_total"] > 0 and report["split_lines"] == 1 and report["split_parts"] >= 10
    assert report["lines"] == 80 + 11 + 40


def test_the_marker_splits_the_cpu_between_tokenizing_and_the_scheme(tmp_path, processed, corpus):
    """`timings` holds the CPU seconds spent tokenizing and in the scheme, summed over the processes, which
    `benchmarks/preprocess.py` compares schemes by (the machine's drift between two jobs does not enter them)."""
    _, stats = processed
    timings = {scheme: stats[scheme]["timings"] for scheme in SCHEMES}
    assert all(t["encode_cpu_s"] > 0 for t in timings.values())
    assert timings["stochastok"]["scheme_cpu_s"] > 0 and timings["patok"]["scheme_cpu_s"] > 0
    # vanilla hands its ids back (no generators: `draws`); patok analyses and interns every word group
    assert timings["patok"]["scheme_cpu_s"] > 5 * timings["vanilla"]["scheme_cpu_s"]
    in_workers = preprocess(corpus, tmp_path, "workers=2", scheme="vanilla")["timings"]
    # the workers' seconds came back to the parent (which tokenizes nothing itself for vanilla)
    assert in_workers["encode_cpu_s"] > timings["vanilla"]["encode_cpu_s"] / 2


@pytest.mark.parametrize(("scheme", "draws"), [("vanilla", False), ("stochastok", True)])
def test_generators_are_made_only_for_schemes_that_draw(tmp_path, corpus, monkeypatch, scheme, draws):
    """Vanilla makes no random choice: no generator per document (about 3 % of tokenizing it), same bytes."""
    from morphcpt.tokenization import schemes

    made = []
    document_rng = schemes.document_rng
    monkeypatch.setattr(schemes, "document_rng", lambda *a: made.append(a) or document_rng(*a))
    stats = preprocess(corpus, tmp_path, scheme=scheme)
    report = stats["read_report"]
    # one generator per record when the scheme draws: the parts of a long text share their record's
    records = stats["documents"] - report["split_parts"] + report["split_lines"]
    assert len(made) == (records if draws else 0)


def test_strict_mode_fails_and_writes_nothing(tmp_path, corpus):
    with pytest.raises(BadLineError, match=r"small\.jsonl:\d+: "):
        preprocess(corpus, tmp_path, "strict=true")
    assert not list(tmp_path.rglob("*.bin")) and not list(tmp_path.rglob("*.done.json"))


@pytest.mark.slow
def test_bytes_do_not_depend_on_workers_or_batch_size(tmp_path, processed, corpus):
    out, _ = processed
    for scheme in ("stochastok", "patok"):
        preprocess(corpus, tmp_path, "workers=2", "batch_size=7", scheme=scheme)
        for suffix in (".bin", ".idx"):
            ours = (tmp_path / scheme / f"small_text_document{suffix}").read_bytes()
            assert ours == (out / scheme / f"small_text_document{suffix}").read_bytes()


def test_chunks_get_the_same_random_choices_as_the_whole_corpus(tmp_path, processed, corpus):
    out, _ = processed
    split_jsonl(corpus, tmp_path / "chunks", 3)
    chunked, non_empty = [], []
    for name in ("chunk_01", "chunk_02", "chunk_03"):
        stats = preprocess(tmp_path / "chunks" / f"{name}.jsonl", tmp_path / "out", scheme="stochastok")
        chunked += documents(tmp_path / "out", "stochastok", name)
        non_empty += (
            [str(output_paths(tmp_path / "out", "stochastok", name)[0])] if stats["documents"] else []
        )
    assert chunked == documents(out, "stochastok", "small")
    # Training reads the completed chunks that hold documents (megatron-core cannot open an empty one).
    assert dataset_prefixes(tmp_path / "out", "stochastok") == non_empty


def test_a_replicate_redraws_the_same_text_into_its_own_folder(tmp_path, processed, corpus, vocab):
    """Seed k of patok draws from seed + k into patok/seed<k>/: other ids, the same text, and the bytes of a
    seed + k run; replicate 0 keeps its folder and the key chunks done before replicates existed have."""
    out, stats = processed
    first = preprocess(corpus, tmp_path, "replicate=1", scheme="patok")
    assert (
        first["prefix"] == "small_text_document"
        and (tmp_path / "patok" / "seed1" / "small.done.json").exists()
    )
    redrawn, original = documents(tmp_path, "patok/seed1", "small"), documents(out, "patok", "small")
    assert redrawn != original
    assert [vocab.decode(d) for d in redrawn] == [vocab.decode(d) for d in original]
    preprocess(corpus, tmp_path / "plain", "seed=1235", scheme="patok")
    assert redrawn == documents(tmp_path / "plain", "patok", "small")
    assert "replicate" not in stats["patok"]["key"] and stats["patok"]["key"]["seed"] == 1234
    assert preprocess(corpus, tmp_path, "replicate=1", scheme="patok")["skipped"]
    with pytest.raises(ValueError, match="same for every seed"):
        preprocess(corpus, tmp_path, "replicate=1", scheme="vanilla")
    with pytest.raises(ValueError, match="every replicate shares"):
        preprocess(corpus, tmp_path, "replicate=1", "validation=true")


def test_rerun_skips_a_completed_chunk_and_redoes_a_changed_or_interrupted_one(tmp_path, processed, corpus):
    out, _ = processed
    first = preprocess(corpus, tmp_path, scheme="stochastok")
    prefix, marker = output_paths(tmp_path, "stochastok", "small")
    again = preprocess(corpus, tmp_path, "workers=2", scheme="stochastok")  # workers do not change the bytes
    assert again["skipped"] and again["key"] == first["key"]
    reseeded = preprocess(corpus, tmp_path, "seed=7", scheme="stochastok")
    assert "skipped" not in reseeded and documents(tmp_path, "stochastok", "small") != documents(
        out, "stochastok", "small"
    )
    # An interrupted run: marker gone, a half-written temporary .bin and a stale .idx left behind.
    marker.unlink()
    indexed.bin_path(prefix).with_suffix(".bin.tmp").write_bytes(b"\x00" * 13)
    redone = preprocess(corpus, tmp_path, scheme="stochastok")
    assert "skipped" not in redone
    assert (
        indexed.bin_path(prefix).read_bytes() == (out / "stochastok" / "small_text_document.bin").read_bytes()
    )
    assert not list(tmp_path.rglob("*.tmp"))
    assert json.loads(marker.read_text())["documents"] == first["documents"]


def test_a_rerun_redoes_a_done_chunk_whose_files_were_altered(tmp_path, processed, corpus):
    out, _ = processed
    preprocess(corpus, tmp_path, scheme="stochastok")
    prefix, marker = output_paths(tmp_path, "stochastok", "small")
    assert json.loads(marker.read_text())["files"] == indexed.dataset_digest(prefix)
    good = indexed.bin_path(prefix).read_bytes()
    # Same size, one byte changed: what another run publishing its half-written .bin under this marker leaves.
    indexed.bin_path(prefix).write_bytes(good[:100] + bytes([good[100] ^ 1]) + good[101:])
    redone = preprocess(corpus, tmp_path, scheme="stochastok")
    assert "skipped" not in redone and indexed.bin_path(prefix).read_bytes() == good


def test_a_second_run_on_the_same_output_fails_at_once_and_touches_nothing(tmp_path, corpus):
    prefix, marker = output_paths(tmp_path, "vanilla", "small")
    with indexed.output_lock(prefix):  # a first run, still writing
        with pytest.raises(indexed.OutputLocked, match="being written by pid"):
            preprocess(corpus, tmp_path)
        assert not marker.exists() and not indexed.temporary_files(prefix)
    assert preprocess(corpus, tmp_path)["documents"] > 0


_KILL_A_WORKER = """
import multiprocessing, os, signal, sys
from morphcpt import preprocess

original = preprocess._encode_batch
def dies_in_a_worker(batch):
    if multiprocessing.parent_process() is not None:  # a worker (the first batch is done before they start)
        os.kill(os.getpid(), signal.SIGKILL)  # what the out-of-memory killer does
    return original(batch)
preprocess._encode_batch = dies_in_a_worker
preprocess.WARMUP_DOCUMENTS = 16
overrides = [f"input={sys.argv[1]}", f"output_dir={sys.argv[2]}", "workers=2", "batch_size=16", "progress=false"]
preprocess.run(preprocess.compose_config(overrides))
"""


def test_a_killed_worker_fails_the_run_at_once_instead_of_hanging(tmp_path, corpus):
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", _KILL_A_WORKER, str(corpus), str(tmp_path)],
        cwd=paths.REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=180,  # the fault was a hang until walltime
    )
    assert result.returncode != 0
    assert "WorkerDied" in result.stderr and "worker process died" in result.stderr, result.stderr[-2000:]
    prefix, marker = output_paths(tmp_path, "vanilla", "small")
    assert not marker.exists() and not indexed.dataset_exists(prefix)
    assert not indexed.temporary_files(prefix)


def test_a_chunk_done_without_its_manifest_is_redone_with_the_real_offset(tmp_path, processed, corpus):
    out, _ = processed
    chunks = tmp_path / "chunks"
    split_jsonl(corpus, chunks, 2)
    manifest = chunks / "manifest.json"
    manifest.rename(tmp_path / "away.json")
    early = preprocess(chunks / "chunk_02.jsonl", tmp_path / "out", scheme="stochastok")
    assert early["key"]["index_offset"] == 0
    (tmp_path / "away.json").rename(manifest)
    again = preprocess(chunks / "chunk_02.jsonl", tmp_path / "out", scheme="stochastok")
    assert "skipped" not in again
    assert again["key"]["index_offset"] == manifest_entry(chunks / "chunk_02.jsonl")["first_line"] > 0
    first = preprocess(chunks / "chunk_01.jsonl", tmp_path / "out", scheme="stochastok")
    assert first["key"]["index_offset"] == 0
    both = documents(tmp_path / "out", "stochastok", "chunk_01") + documents(
        tmp_path / "out", "stochastok", "chunk_02"
    )
    assert both == documents(out, "stochastok", "small")  # the seeds of the whole corpus


def test_a_chunk_the_manifest_does_not_describe_is_refused(tmp_path, corpus):
    chunks = tmp_path / "chunks"
    split_jsonl(corpus, chunks, 2)
    stale = chunks / "chunk_09.jsonl"
    stale.write_bytes((chunks / "chunk_01.jsonl").read_bytes())
    with pytest.raises(ValueError, match="chunk_09.jsonl is not listed in .*manifest.json"):
        preprocess(stale, tmp_path / "out")
    assert preprocess(stale, tmp_path / "out", "index_offset=0")["documents"] > 0  # explicitly allowed
    with open(chunks / "chunk_02.jsonl", "ab") as handle:
        handle.write(b'{"text": "appended after the split"}\n')
    with pytest.raises(ValueError, match="changed after the split"):
        preprocess(chunks / "chunk_02.jsonl", tmp_path / "out")


def test_validation_set_is_vanilla_whatever_the_scheme(tmp_path, processed, corpus):
    out, _ = processed
    stats = preprocess(corpus, tmp_path, "validation=true", "name=validation", scheme="patok")
    prefix, marker = output_paths(tmp_path, "validation", "validation")
    assert marker.exists() and stats["key"]["scheme"]["name"] == "vanilla"
    assert indexed.bin_path(prefix).read_bytes() == (out / "vanilla" / "small_text_document.bin").read_bytes()
    assert dataset_prefixes(tmp_path, "validation") == [str(prefix)]


def test_sample_vocabulary_uses_uint16_and_megatron_reads_the_files(processed, vocab):
    out, stats = processed
    prefix, _ = output_paths(out, "patok", "small")
    assert stats["patok"]["dtype"] == "uint16" == indexed.dtype_for_vocab(vocab.size).name
    dataset = indexed.open_dataset(prefix)
    assert len(dataset) == stats["patok"]["documents"]
    assert [dataset[i].tolist() for i in range(len(dataset))] == documents(out, "patok", "small")


class _TokenizerFacts:
    """What GPTDataset needs from a tokenizer: vocabulary size, end-of-document and pad ids."""

    def __init__(self, vocab):
        self.vocab_size, self.eod, self.pad = vocab.size, vocab.eos_id, vocab.pad_id
        # GPTDataset serialises its config, tokenizer included, into the cache key through this attribute.
        self.unique_identifiers = {"vocab": vocab.fingerprint, "eod": self.eod, "pad": self.pad}


@pytest.mark.slow
def test_gpt_dataset_samples_from_the_output(tmp_path, processed, vocab):
    import torch.distributed as dist
    from megatron.core.datasets.blended_megatron_dataset_builder import BlendedMegatronDatasetBuilder
    from megatron.core.datasets.gpt_dataset import GPTDataset, GPTDatasetConfig

    out, _ = processed
    prefixes = dataset_prefixes(out, "patok")
    created = not dist.is_initialized()
    if created:
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        config = GPTDatasetConfig(
            random_seed=1,
            sequence_length=16,
            blend=(prefixes, None),
            split="1,0,0",
            path_to_cache=str(tmp_path / "cache"),
            tokenizer=_TokenizerFacts(vocab),
            reset_position_ids=False,
            reset_attention_mask=False,
            eod_mask_loss=False,
            create_attention_mask=False,
        )
        train, _, _ = BlendedMegatronDatasetBuilder(GPTDataset, [8, None, None], lambda: True, config).build()
        sample = train[0]
        assert sample["tokens"].shape[0] == 16 and sample["labels"].shape[0] == 16
        ids = np.asarray(sample["tokens"])
        assert ids.min() >= 0 and ids.max() < vocab.size
    finally:
        if created:
            dist.destroy_process_group()


# sha256 of each scheme's output on the whole shipped sample (sample tokenizer, seed 1234, corpus index 0 first),
# recorded before the start-up and speed work of issue #12: optimisations must not change a single byte. Patok's cuts
# follow the analyser, so its bytes alone are recorded again whenever the analyser reads a word of the sample
# differently (issue #25, and each session of #40 that did: benchmarks/RESULTS.md names the words); they are the same
# with and without the compiled kernels.
SAMPLE_OUTPUT_SHA256 = {
    "vanilla": ("33dca78092e2f1cfec627d137c1da46658450663511e4efc5b6d978783b8e9db",
                "a91091cd0f8ad2ede20371f2b10c9248c3e09b42bb40ac2ca83c265e10147fb0"),
    "stochastok": ("2e06a26f7908717f54145546f30ea29664a91f2ef00f3a7d2bb36fb673e1afec",
                   "2aee491b1b7b761527c4ddbfa47e1c098e8f3bc675d035d84fa32cac70130483"),
    "patok": ("d006a7b7c7657b75052510d4813ae2ed6ec0a5b059d6c7a22a55bf8d7e4ce28e",
              "840809e890e299dacd7f4e25b8333a4cc70b1d09c77866b566f9294cefd10f22"),
}  # fmt: skip


@pytest.mark.parametrize("kernels", ["auto", "off"])  # compiled kernels where they build; the Python code
@pytest.mark.parametrize("scheme", sorted(SAMPLE_OUTPUT_SHA256))
def test_outputs_are_byte_identical_to_the_recorded_checksums_from_a_cold_and_a_warm_cache(
    tmp_path, monkeypatch, scheme, kernels
):
    monkeypatch.setenv("MORPHCPT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MORPHCPT_NATIVE", kernels)
    for cache in ("cold", "warm"):  # the first run fills the tokenizer cache, the second reads it
        stats = run(
            compose_config(
                [f"scheme={scheme}", f"input={paths.SAMPLE_CORPUS}", f"output_dir={tmp_path / cache}",
                 "index_offset=0", "progress=false"]
            )
        )  # fmt: skip
        files = stats["files"]
        assert (files["bin"]["sha256"], files["idx"]["sha256"]) == SAMPLE_OUTPUT_SHA256[scheme], cache
    assert list((tmp_path / "cache" / "vocab").glob("*.pkl"))  # the cache was used


# --- garbage collection: each batch freezes its survivors (`_encode_batch`) -------------------------------------


# Run in a fresh interpreter: objects other tests leave behind must not count.
LEAK_CHECK = """
import collections, gc, json, sys
from morphcpt import paths, preprocess as prep
from morphcpt.tokenization.schemes import SchemeConfig, build_scheme
from morphcpt.tokenization.schemes.patok import PatokScheme
from morphcpt.tokenization.vocabulary import Vocabulary

scheme = sys.argv[1]
vocab = Vocabulary.load(sys.argv[2])
cfg = SchemeConfig(name=scheme)
# Patok with tiny caches, so its tables are dropped and refilled (resets) between the batches.
built = PatokScheme(cfg, vocab, cache_size=64) if scheme == "patok" else build_scheme(cfg, vocab)
resets = []
if scheme == "patok":
    reset = built.words.reset
    built.words.reset = lambda: (resets.append(1), reset())
texts = [json.loads(line)["text"] for line in paths.SAMPLE_CORPUS.read_text(encoding="utf-8").splitlines()[:240]]
batches = [[(i + j, (texts[i + j],)) for j in range(40)] for i in range(0, len(texts), 40)]
prep._init_worker(vocab, built, scheme, 1234)
prep._encode_batch(batches[0])  # first use: lazy imports and one-off set-ups may leave cycles
gc.unfreeze()
gc.collect()
for batch in batches[1:]:
    prep._encode_batch(batch)
frozen = gc.get_freeze_count()
gc.collect()  # the garbage outside the frozen objects
gc.unfreeze()
gc.set_debug(gc.DEBUG_SAVEALL)
dead = gc.collect()  # frozen objects that were garbage held by a cycle
kinds = collections.Counter(type(o).__name__ for o in gc.garbage).most_common(5)
print(json.dumps({"frozen": frozen, "resets": len(resets), "dead": dead, "kinds": kinds}))
"""


@pytest.mark.parametrize("scheme", SCHEMES)
def test_batches_leave_no_dead_reference_cycle_among_the_objects_they_freeze(sample_tokenizer_dir, scheme):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", LEAK_CHECK, scheme, str(sample_tokenizer_dir)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["frozen"] > 0  # the batches froze what survived them
    assert found["resets"] >= (3 if scheme == "patok" else 0)  # patok dropped its tables between batches
    assert found["dead"] == 0, found["kinds"]


def test_a_batch_runs_with_the_collector_off_and_gives_it_back(vocab):
    """The collector is off while a batch is encoded and transformed (it would only traverse what the batch's
    freeze takes), and is left as it was found: on, or off."""
    import gc

    from morphcpt import preprocess as prep
    from morphcpt.tokenization.schemes import SchemeConfig, build_scheme

    scheme = build_scheme(SchemeConfig(name="stochastok"), vocab)
    seen = []
    transform = scheme.transform_flat
    scheme.transform_flat = lambda *args: seen.append(gc.isenabled()) or transform(*args)
    prep._init_worker(vocab, scheme, "stochastok", 0)
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            flat, lengths, *_ = prep._encode_batch([(0, ("Kumain ang bata ng mangga.",))])
            assert gc.isenabled() is enabled and len(flat) == lengths.sum() > 2
    finally:
        gc.enable()
        gc.unfreeze()
    assert seen == [False, False]


MAIN_THEN_COUNT = """
import gc, sys
from morphcpt import preprocess
sys.argv = ["morphcpt.preprocess", *sys.argv[1:]]
preprocess.main()
print(gc.get_freeze_count())
"""


def test_the_command_leaves_the_caches_frozen_for_the_exit(tmp_path, corpus):
    """`python -m morphcpt.preprocess` ends the process after `run`: it freezes what `run` unfroze, so the
    interpreter's last collection at exit does not traverse patok's caches again."""
    import subprocess
    import sys

    args = [f"input={corpus}", f"output_dir={tmp_path}", "scheme=patok", "progress=false", "max_chars=20000"]
    done = subprocess.run(
        [sys.executable, "-c", MAIN_THEN_COUNT, *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.strip().splitlines()[-1]) > 10_000  # the word states and their analyses among them
    assert json.loads((tmp_path / "patok" / "small.done.json").read_text())["documents"] > 0


def test_a_run_gives_the_objects_its_batches_froze_back_to_the_collector(processed):
    import gc

    assert gc.get_freeze_count() == 0
