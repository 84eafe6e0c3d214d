"""Tokenize one JSONL chunk with one scheme into a Megatron indexed dataset (stage 3 of the data pipeline).

    python -m morphcpt.preprocess scheme=patok input=data/chunks/chunk_07.jsonl output_dir=data/processed \
        tokenizer=google/gemma-3-1b-pt workers=8
    python -m morphcpt.preprocess validation=true input=data/chunks/validation.jsonl output_dir=data/processed

Writes `<output_dir>/<scheme>/<chunk>_text_document.{bin,idx}` and `<output_dir>/<scheme>/<chunk>.done.json`.
`replicate=k` (k >= 1; stochastok and patok, whose ids depend on the seed) draws from seed + k into
`<output_dir>/<scheme>/seed<k>/`; replicate 0 is the default, with today's folder, seed and bytes.
Every document is `[bos] + scheme.transform(vocab.encode(text), document_rng(seed, scheme, i)) + [eos]`: the
transformed ids are written as they are, never decoded and re-tokenized. `i` is the document's line index in the
whole corpus (the chunk's `first_line` from the split manifest beside it, plus its line in the chunk), so every
random choice depends on (seed, scheme, document) only: the bytes are identical for any `workers` and on rerun.
A text longer than `max_chars` becomes several documents (its parts share that document's generator).

Bad lines never stop a run unless `strict=true`; they are counted by reason in the marker. Output is written under
temporary names unique to the run and renamed; the marker (statistics, bad-line report, config, tokenizer
fingerprint, sizes and sha256 of both files, timings) is written last. A run holds `<prefix>.lock`, so a second
run on the same output fails at once. A rerun skips a chunk whose marker matches the settings that determine the
bytes and whose files still have the recorded sizes and checksums; it redoes one that was interrupted, altered,
or whose settings changed (`force=true` always redoes). A chunk must be the file the split manifest beside it
describes (same sha256); one the manifest does not list is refused. A worker process that dies (an OOM kill)
fails the run at once.

The canonical validation set: `validation=true` writes `<output_dir>/validation/<name>_text_document.{bin,idx}`
with vanilla ids whatever `scheme` says, so every scheme's run validates on the same tokens and validation losses
compare across schemes. Make its input with `split_jsonl --holdout-lines K` (the corpus' last K lines, kept out of
every chunk) or give any JSONL file. Training finds its data with `dataset_prefixes(output_dir, scheme)` and
`dataset_prefixes(output_dir, "validation")`: the prefixes of completed, non-empty outputs, in name order.
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import MISSING, DictConfig, OmegaConf

from morphcpt import paths
from morphcpt.corpus.reader import DEFAULT_MAX_CHARS, ReadReport, iter_documents
from morphcpt.corpus.split import MANIFEST, manifest_entry
from morphcpt.errors import reported
from morphcpt.jsonio import JSONFileError, read_json, write_json

log = logging.getLogger(__name__)

VALIDATION_DIR = "validation"
MARKER_FORMAT = (
    2  # 2: the key holds the index offset actually used; the marker holds file sizes and checksums
)
# Settings that do not change the output bytes, and so do not invalidate a completed chunk.
_NON_DETERMINING = ("workers", "batch_size", "progress", "force", "output_dir", "input")


@dataclass
class PreprocessConfig:
    scheme: Any = MISSING  # a node of the `scheme/` config group (vanilla, stochastok, patok)
    input: str = MISSING  # one JSONL chunk
    output_dir: str = "data/processed"
    tokenizer: str = str(paths.SAMPLE_TOKENIZER_DIR)  # a local folder or a Hugging Face id
    seed: int = 1234
    # Replicate k of a scheme that draws: its random choices come from seed + k, into <scheme>/seed<k>/
    replicate: int = 0
    workers: int = 1
    batch_size: int = 64  # documents per task sent to a worker
    strict: bool = False  # fail on the first bad line instead of counting it
    max_chars: int = DEFAULT_MAX_CHARS  # longer texts are cut into parts at whitespace
    text_key: str = "text"
    validation: bool = False  # build the canonical (vanilla) validation set instead of a training chunk
    name: str | None = None  # output name; default: the input's file name without .jsonl
    # Corpus index of the input's first line (seeds per-document randomness); default: from the split manifest.
    index_offset: int | None = None
    progress: bool = True
    force: bool = False  # redo even when a matching completion marker exists


def register_configs() -> None:
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="preprocess_schema", node=PreprocessConfig)


def compose_config(overrides: Iterable[str] = ()) -> DictConfig:
    """The preprocessing config from `conf/preprocess.yaml` plus `key=value` overrides (for code and tests)."""
    from hydra import compose, initialize_config_dir

    register_configs()
    with initialize_config_dir(config_dir=str(paths.CONF_DIR), version_base="1.3"):
        return compose(config_name="preprocess", overrides=list(overrides))


def output_paths(output_dir: str | Path, folder: str, name: str) -> tuple[Path, Path]:
    """(dataset prefix, completion marker) of one chunk: `<dir>/<folder>/<name>_text_document`, `<name>.done.json`."""
    out = Path(output_dir) / folder
    return out / f"{name}_text_document", out / f"{name}.done.json"


def dataset_prefixes(output_dir: str | Path, folder: str) -> list[str]:
    """Prefixes of the completed, non-empty datasets in `<output_dir>/<folder>` (a scheme or "validation")."""
    prefixes = []
    for marker in sorted((Path(output_dir) / folder).glob("*.done.json")):
        stats = read_json(marker, keys=("documents", "prefix"))
        if stats["documents"] > 0:
            prefixes.append(str(marker.parent / stats["prefix"]))
    return prefixes


def _sha256(path: Path) -> str:
    from morphcpt.indexed import file_digest

    return file_digest(path)["sha256"]


# --- work done in each worker process -------------------------------------------------------------------------

_worker: dict[str, Any] = {}


def _init_worker(vocab, scheme, scheme_name: str, seed: int) -> None:
    _worker.update(vocab=vocab, scheme=scheme, scheme_name=scheme_name, seed=seed)


def _encode_batch(batch: list[tuple[int, tuple[str, ...]]]) -> tuple[np.ndarray, np.ndarray, int, int, tuple]:
    """(corpus index, parts) per record -> every part's bos+ids+eos back to back, their lengths, the canonical
    token count (bos/eos included), how many parts the scheme changed, and the CPU seconds of this process spent
    tokenizing and in the scheme (its generators and `transform_flat`): one array per batch, not per document,
    so that little crosses between processes and the writer writes once per batch.

    The parts of one long text share its generator (`transform_flat` draws from it in their order).

    Garbage collection: what survives a batch is, nearly all of it, the scheme's caches (patok's word states,
    analyses and steps: up to a few million small tuples), which live until the scheme resets them. Python's
    collector would traverse them again at every older-generation collection, growing with them: 35-42 % of
    patok's transform time on text with a realistic number of distinct words (`benchmarks/wide_corpus.py`). So each
    batch ends with `gc.freeze()`: the survivors leave the collector's generations. They are still freed by
    reference counting when a cache drops them; a reference cycle that outlived its batch and then died would wait
    for the end of the run (`run` unfreezes), and the batches leave none (tested). Frozen objects are also left
    alone by the collector in forked workers, so their memory pages stay shared with the parent. The collector is
    off during the batch as well: it would find no cycle to free, only traverse what the freeze takes anyway; in
    five paired patok jobs on the wide corpus that cost 6-14 % of the scheme's CPU and 2-10 % of the tokenizer's.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _batch_work(batch)
    finally:
        if collecting:
            gc.enable()


def _batch_work(batch: list[tuple[int, tuple[str, ...]]]) -> tuple:
    """`_encode_batch`'s work, done with the collector off; it ends with `gc.freeze()`."""
    from morphcpt.tokenization.schemes import document_rng, flatten, transform_flat

    vocab, scheme = _worker["vocab"], _worker["scheme"]
    started = time.process_time()
    ids, bounds = flatten(vocab.encode_batch([part for _, parts in batch for part in parts]))
    encoded = time.process_time()
    # A scheme without random choices (`draws = False`: vanilla, eeve) gets no generators: making one per
    # document costs about 3 % of tokenizing it.
    draws = getattr(scheme, "draws", True)
    rngs = []
    for index, parts in batch:
        rng = document_rng(_worker["seed"], _worker["scheme_name"], index) if draws else None
        rngs += [rng] * len(parts)
    out, out_lengths = transform_flat(scheme, ids, bounds, rngs)
    cpu = (encoded - started, time.process_time() - encoded)
    # Each part framed by <bos> ... <eos>.
    framed = out_lengths + 2
    ends = np.cumsum(framed)
    flat = np.empty(int(ends[-1]) if len(ends) else 0, dtype=np.int32)
    body = np.ones(len(flat), dtype=bool)
    body[ends - framed] = body[ends - 1] = False
    flat[ends - framed] = vocab.bos_id
    flat[ends - 1] = vocab.eos_id
    flat[body] = out
    canonical = len(ids) + 2 * len(out_lengths)
    changed = _changed(ids, bounds, out, out_lengths)
    gc.freeze()  # see `_encode_batch`'s note on garbage collection
    return flat, framed, canonical, changed, cpu


def _changed(ids: np.ndarray, bounds: np.ndarray, out: np.ndarray, out_lengths: np.ndarray) -> int:
    """How many documents differ between `ids` (split at `bounds`) and `out` (split by `out_lengths`)."""
    if out is ids:
        return 0
    lengths = np.diff(bounds)
    same = out_lengths == lengths
    doc = np.repeat(np.arange(len(lengths)), lengths)
    keep = same[doc]  # the tokens of documents whose length did not change: compared one by one
    shift = np.repeat(np.cumsum(out_lengths) - out_lengths - bounds[:-1], lengths)
    at = np.flatnonzero(keep)
    differs = doc[at[ids[at] != out[at + shift[at]]]]
    return int(np.count_nonzero(~same)) + len(np.unique(differs))


WARMUP_DOCUMENTS = 256  # about 1 MB of web text: the frequent words of a chunk


class WorkerDied(RuntimeError):
    """A worker process died (killed by a signal, e.g. the kernel's OOM killer) before returning its batch."""


def _ordered_results(batches: Iterator, workers: int, init_args: tuple) -> Iterator[tuple]:
    """Results of `_encode_batch` in input order, with a bounded number of batches in flight.

    With several workers and a scheme with caches (`scheme.fills_caches`, patok), the first `WARMUP_DOCUMENTS`
    documents are encoded in this process first (see below); other schemes start the workers at once.
    `Pool.imap` would read the whole input ahead into its task queue; a window of 4 batches per worker keeps
    memory constant whatever the chunk size. A `ProcessPoolExecutor`, not a `multiprocessing.Pool`: when a worker
    dies (an OOM kill), the pool's futures fail with `BrokenProcessPool` at once, where `Pool` would replace the
    worker and wait for the lost batch until the job's walltime.
    """
    _init_worker(*init_args)
    if workers <= 1:
        yield from map(_encode_batch, batches)
        return
    # The first documents are done here, before the workers fork: they inherit the scheme's warm caches (patok's
    # word analyses and span steps) instead of each rebuilding them for the same frequent words.
    # Without caches this would only be time when one core works and the others wait.
    warmup = 0 if getattr(init_args[1], "fills_caches", False) else WARMUP_DOCUMENTS
    while warmup < WARMUP_DOCUMENTS and (batch := next(batches, None)) is not None:
        yield _encode_batch(batch)
        warmup += len(batch)
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context(method),
        initializer=_init_worker,
        initargs=init_args,
    ) as pool:
        pending: deque = deque()
        try:
            for batch in batches:
                pending.append(pool.submit(_encode_batch, batch))
                if len(pending) >= 4 * workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        except BrokenProcessPool:
            raise WorkerDied(
                "a preprocessing worker process died before finishing its batch (killed by a signal: often the "
                "out-of-memory killer, so check the job's memory limit); nothing was published. Rerun, with "
                "fewer workers or more memory"
            ) from None


def _batches(records, index_offset: int, size: int) -> Iterator[list[tuple[int, tuple[str, ...]]]]:
    batch = []
    for record in records:
        batch.append((index_offset + record.line - 1, record.parts))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


# --- one chunk x one scheme ------------------------------------------------------------------------------------


def _scheme_config(node: Any):
    """The scheme's typed `SchemeConfig` from its config-group node (unknown keys are an error there)."""
    from morphcpt.tokenization.schemes import SchemeConfig

    return SchemeConfig.from_mapping(
        OmegaConf.to_container(node, resolve=True) if OmegaConf.is_config(node) else node
    )


def run(cfg: DictConfig | PreprocessConfig) -> dict:
    """Preprocess one chunk with one scheme (or the validation set); return the statistics in its marker.

    The whole run holds `<prefix>.lock`: a second run on the same output fails at once instead of mixing its
    files with this one's.
    """
    from morphcpt.indexed import output_lock

    cfg = OmegaConf.structured(cfg) if not OmegaConf.is_config(cfg) else cfg
    name = cfg.name or Path(cfg.input).name.removesuffix(".jsonl")
    scheme_cfg = _scheme_config(cfg.scheme)
    if cfg.validation and scheme_cfg.name == "eeve":  # the held-out text in the expanded tokenizer's ids
        name = cfg.name or f"{name}_eeve"
    elif cfg.validation:
        scheme_cfg = _scheme_config({"name": "vanilla"})
    if cfg.replicate and cfg.validation:
        raise ValueError(
            "validation=true builds the one held-out set every replicate shares: leave replicate at 0"
        )
    folder = VALIDATION_DIR if cfg.validation else _replicate_folder(scheme_cfg.name, cfg.replicate)
    prefix, marker = output_paths(cfg.output_dir, folder, name)
    try:
        with output_lock(prefix):
            return _run_locked(cfg, scheme_cfg, folder, name, prefix, marker)
    finally:
        gc.unfreeze()  # the batches froze what survived them (`_encode_batch`): the collector gets it back


def _replicate_folder(scheme: str, replicate: int) -> str:
    from morphcpt.tokenization.schemes import data_folder, draws

    if replicate and not draws(scheme):
        raise ValueError(
            f"{scheme} makes no random choices, so its ids are the same for every seed: replicate {replicate} "
            f"trains on {scheme}/ (replicate=0); only stochastok and patok have seed<k>/ folders"
        )
    return data_folder(scheme, replicate)


def check_against_manifest(input_path: Path, input_sha256: str, explicit_offset: bool) -> dict | None:
    """The input's entry in the split manifest beside it, after checking the file is the one the split wrote.

    A chunk the manifest does not list is left over from an earlier split (or put there by hand): its corpus
    line numbers, and so its random seeds, are unknown, so it is refused unless `index_offset` is given.
    """
    entry = manifest_entry(input_path)
    if entry is None:
        if (input_path.parent / MANIFEST).exists() and not explicit_offset:
            raise ValueError(
                f"{input_path} is not listed in {input_path.parent / MANIFEST}: a stale chunk from an earlier "
                "split? Re-split into an empty folder, or set index_offset= to process it anyway"
            )
        if not explicit_offset:
            log.warning("%s: no split manifest beside it; its first line counts as corpus line 0", input_path)
        return None
    if entry.get("sha256") not in (None, input_sha256):
        raise ValueError(
            f"{input_path} differs from the file {input_path.parent / MANIFEST} describes (sha256 "
            f"{input_sha256[:12]} != {entry['sha256'][:12]}); it changed after the split: split again"
        )
    return entry


def _still_done(marker: Path, key: dict, prefix: Path) -> dict | None:
    """The marker's content when it was written for these settings and its files are still the ones it lists
    (sizes and checksums), else None: the chunk is redone."""
    from morphcpt.indexed import verify_dataset

    try:
        done = read_json(marker)
    except JSONFileError as error:  # cut off or garbled: the chunk is not known to be done
        log.warning("%s; redoing the chunk", error)
        return None
    if done.get("key") != key:
        log.info("%s: marker does not match the settings, redoing", prefix)
        return None
    if problem := verify_dataset(prefix, done.get("files")):
        log.warning("%s: marked done but %s; redoing", prefix, problem)
        return None
    return done


def _run_locked(cfg, scheme_cfg, folder: str, name: str, prefix: Path, marker: Path) -> dict:
    from tqdm import tqdm

    from morphcpt.indexed import IndexedWriter, dataset_digest, remove_dataset
    from morphcpt.tokenization.schemes import build_scheme
    from morphcpt.tokenization.vocabulary import Vocabulary

    started = time.perf_counter()
    input_path = Path(cfg.input)
    input_sha256 = _sha256(input_path)
    entry = check_against_manifest(input_path, input_sha256, cfg.index_offset is not None)
    index_offset = cfg.index_offset if cfg.index_offset is not None else (entry["first_line"] if entry else 0)

    vocab = Vocabulary.load(cfg.tokenizer)
    resolved = OmegaConf.to_container(OmegaConf.create(cfg), resolve=True)
    key = {
        "format": MARKER_FORMAT,
        "input_sha256": input_sha256,
        "tokenizer_fingerprint": vocab.fingerprint,
        "scheme": OmegaConf.to_container(OmegaConf.structured(scheme_cfg), resolve=True),
        # The config's index_offset is usually null: the key holds the offset actually used, so a chunk done
        # while the manifest was missing (offset 0) is redone once the manifest gives its real offset.
        **{
            k: v
            for k, v in resolved.items()
            if k not in (*_NON_DETERMINING, "scheme", "index_offset", "replicate")
        },
        "index_offset": index_offset,
        # the seed the draws really use: replicate 0 keeps the key (and the markers) of chunks done before replicates
        "seed": cfg.seed + cfg.replicate,
    }
    if marker.exists() and not cfg.force and (done := _still_done(marker, key, prefix)) is not None:
        log.info("%s: already done (%s), skipping", prefix, marker)
        return {**done, "skipped": True}
    marker.unlink(missing_ok=True)
    remove_dataset(prefix)  # and the temporary files of runs that were killed (we hold the lock)

    if cfg.workers > 1:  # processes, not the tokenizer's threads, do the parallel work
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    scheme = build_scheme(scheme_cfg, vocab)
    report = ReadReport()
    records = iter_documents(
        input_path, text_key=cfg.text_key, max_chars=cfg.max_chars, strict=cfg.strict, report=report
    )
    canonical_tokens = changed = 0
    encode_cpu = scheme_cpu = 0.0
    progress = tqdm(
        total=entry["lines"] if entry else None,
        unit="line",
        desc=f"{folder}/{name}",
        disable=not cfg.progress,
    )
    with IndexedWriter(prefix, vocab.size) as writer:
        loaded = time.perf_counter()
        init_args = (vocab, scheme, scheme_cfg.name, cfg.seed + cfg.replicate)
        for results in _ordered_results(
            _batches(records, index_offset, cfg.batch_size), cfg.workers, init_args
        ):
            tokens, lengths, batch_canonical, batch_changed, (batch_encode, batch_scheme) = results
            writer.add_many(tokens, lengths)
            canonical_tokens += batch_canonical
            changed += batch_changed
            encode_cpu += batch_encode
            scheme_cpu += batch_scheme
            progress.n = report.lines
            progress.update(0)
    progress.close()
    finished = time.perf_counter()
    if writer.documents == 0:
        log.warning("%s: no documents in %s; training skips this chunk", prefix, input_path)
    stats = {
        "prefix": prefix.name,
        "documents": writer.documents,
        "tokens": writer.tokens,
        "canonical_tokens": canonical_tokens,
        "changed_documents": changed,
        "dtype": writer.dtype.name,
        "vocab_size": vocab.size,
        "read_report": report.as_dict(),
        "timings": {
            "load_s": round(loaded - started, 3),
            "process_s": round(finished - loaded, 3),
            "tokens_per_s": round(writer.tokens / max(finished - loaded, 1e-9), 1),
            # CPU seconds summed over the processes: tokenizing, and the scheme's own work (its generators and
            # transform), which compare schemes without the machine's drift between two jobs.
            "encode_cpu_s": round(encode_cpu, 3),
            "scheme_cpu_s": round(scheme_cpu, 3),
        },
        "files": dataset_digest(prefix),
        "config": resolved,
        "key": key,
    }
    write_json(marker, stats)
    log.info(
        "%s: %d documents, %d tokens, %d bad lines", prefix, writer.documents, writer.tokens, report.bad_total
    )
    return stats


def _run_reported(cfg: DictConfig) -> dict:
    """`run` for the command line: a `UserError` (bad input, a broken file) is one sentence, exit status 1."""
    with reported("morphcpt preprocess"):
        return run(cfg)


def main() -> None:
    import hydra

    register_configs()
    hydra.main(config_path=str(paths.CONF_DIR), config_name="preprocess", version_base="1.3")(_run_reported)()
    # The process ends here. `run` gave the collector back what its batches froze: patok's caches, millions of
    # small objects, which the interpreter's last collection would traverse at exit only to find no garbage.
    # Frozen, they are skipped: 0.13 s of exit against 2.34 s after a 1-worker patok job on the wide corpus.
    gc.freeze()


if __name__ == "__main__":
    main()
