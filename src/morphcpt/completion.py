"""What "done" means for each stage of the chain: its marker, and the files the marker lists, still there.

A marker alone says a stage once finished; a file deleted or cut short since then would be skipped as done and
read by the next stage (or never rebuilt). Each check here returns None when the stage is done, else one line
saying why not, which `morphcpt.chain.pipeline` shows and acts on (and `morphcpt.chain.local` too):

    download        <corpus>.done, and the corpus (with the size the marker recorded, when it holds one)
    split           manifest.json, and every chunk and validation.jsonl it lists, with their recorded sizes
    benchmarks      manifest.json saying complete, and every file it lists, with its sha256 (small files)
    eeve_tokenizer  eeve_expansion.json readable, and tokenizer.json beside it
    preprocess      every chunk's .done.json, and its .bin/.idx with the sizes the marker recorded
    cpt             progress.json saying complete, and the checkpoint it ended with (hf: `latest`, megatron: the
                    tracker's iter_ folder)
    export          morphcpt_metadata.json, and the files it lists with their sizes (older exports: config.json
                    and a weights file)
    evaluate        evaluation.done, and a result file for every model
    analyze         report.md

Cost: sizes and stat calls only, no hashing of large files (a 7 GB corpus makes ~30 GB of token files over four
schemes: hashing them at every `--status` would take minutes). A .bin whose mtime differs from the one its marker
recorded is hashed (`indexed.verify_dataset`); same-size edits that keep the mtime are not caught here (the
preprocessing job checks sha256 before it skips a chunk, and training checks sizes again).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from morphcpt.jsonio import JSONFileError, read_json


def _file(path: Path, size: int | None = None) -> str | None:
    if not path.is_file():
        return f"{path} is missing"
    if size is not None and path.stat().st_size != size:
        return f"{path} has {path.stat().st_size:,} bytes, its marker recorded {size:,}"
    return None


def _marker(path: Path, **kwargs) -> tuple[dict | None, str | None]:
    """(content, None), or (None, why not) for a marker that is missing or unreadable."""
    if not path.exists():
        return None, f"no {path.name} (not run, or not finished)"
    try:
        return read_json(path, **kwargs), None
    except JSONFileError as error:
        return None, str(error)


def download(corpus: str | Path) -> str | None:
    corpus = Path(corpus)
    marker = corpus.with_name(corpus.name + ".done")
    if not marker.exists():
        return f"no {marker.name} (not run, or not finished)"
    text = marker.read_text().strip()
    return _file(corpus, int(text) if text.isdigit() else None)


def split(chunk_dir: str | Path) -> str | None:
    folder = Path(chunk_dir)
    manifest, why = _marker(folder / "manifest.json", keys=("chunks",), fix="split the corpus again")
    if manifest is None:
        return why
    entries = [*manifest["chunks"], *([manifest["validation"]] if manifest.get("validation") else [])]
    for entry in entries:
        if problem := _file(folder / entry["file"], entry.get("bytes")):
            return problem
    return None


def benchmarks(benchmark_dir: str | Path) -> str | None:
    folder = Path(benchmark_dir)
    manifest, why = _marker(folder / "manifest.json", fix="generate the benchmarks again")
    if manifest is None:
        return why
    if manifest.get("complete") is not True:
        return f"{folder / 'manifest.json'} says the generation did not finish"
    for name, sha256 in (manifest.get("files") or {}).items():
        path = folder / name
        if problem := _file(path):
            return problem
        if hashlib.sha256(path.read_bytes()).hexdigest() != sha256:
            return f"{path} differs from the file the manifest lists (sha256)"
    return None


def eeve_tokenizer(folder: str | Path) -> str | None:
    folder = Path(folder)
    _, why = _marker(folder / "eeve_expansion.json", keys=("pieces", "first_new_id"))
    return why or _file(folder / "tokenizer.json")


def preprocess(markers: list[Path]) -> str | None:
    """Every marker (`<dir>/<chunk>.done.json`) and the dataset beside it with the sizes it recorded."""
    from morphcpt.indexed import verify_dataset

    for marker in markers:
        done, why = _marker(marker, keys=("prefix",))
        if done is None:
            return f"{marker.parent.name}/{marker.name}: {why}" if why.startswith("no ") else why
        problem = verify_dataset(marker.parent / done["prefix"], done.get("files"), checksums=False)
        if problem:
            return problem
    return None


def training(run_dir: str | Path) -> str | None:
    """progress.json complete, and the checkpoint the run ended with (what its export reads)."""
    run_dir = Path(run_dir)
    progress, why = _marker(run_dir / "progress.json")
    if progress is None:
        return why
    if progress.get("complete") is not True:
        return f"{run_dir / 'progress.json'} says step {progress.get('iteration')} of {progress.get('steps')}"
    checkpoints = run_dir / "checkpoints"
    tracker, latest = checkpoints / "latest_checkpointed_iteration.txt", checkpoints / "latest"
    if tracker.is_file():  # megatron
        text = tracker.read_text().strip()
        folder = checkpoints / (f"iter_{int(text):07d}" if text.isdigit() else text)
        return None if folder.is_dir() else f"{folder} (the checkpoint the run ended with) is missing"
    if latest.is_file():  # hf engine: the newest checkpoint and the files it lists
        folder = checkpoints / latest.read_text().strip()
        files, why = _marker(folder / "files.json", expect=dict)
        if files is None:
            return f"the run's last checkpoint {folder}: {why}"
        for name, entry in files.items():
            if problem := _file(folder / name, entry.get("bytes")):
                return problem
        return None
    return f"no checkpoint under {checkpoints}"


def export(folder: str | Path) -> str | None:
    folder = Path(folder)
    meta, why = _marker(folder / "morphcpt_metadata.json")
    if meta is None:
        return why
    files = meta.get("files")
    if isinstance(files, dict):
        for name, entry in files.items():
            if problem := _file(folder / name, entry.get("bytes")):
                return problem
        return None
    if problem := _file(folder / "config.json"):
        return problem
    if not any(folder.glob("*.safetensors")) and not any(folder.glob("*.bin")):
        return f"{folder} holds no weights file"
    return None


def evaluation(results_dir: str | Path, models: list[str]) -> str | None:
    results = Path(results_dir)
    if not (results / "evaluation.done").exists():
        return "no evaluation.done (not run, or not finished)"
    for model in models:
        if not any((results / model).glob("*.json")):
            return f"no result files in {results / model}"
    return None


def analysis(results_dir: str | Path) -> str | None:
    report = Path(results_dir) / "analysis" / "report.md"
    return None if report.is_file() and report.stat().st_size else f"{report} is missing"


def stage_states(everything: list) -> dict[str, tuple[bool, str]]:
    """{stage: (done, what to show)} for every stage of the chain (`morphcpt.chain.pipeline.Stage`s, in order).

    A stage is done when its check passes. One whose outputs are gone (a corpus deleted after the split, a run's
    checkpoints deleted after its export) is done too when every stage that reads them is done: running it
    again would only rebuild what nothing needs (and for training, take hours)."""
    problems = {stage.name: stage.check() for stage in everything}
    states: dict[str, tuple[bool, str]] = {}
    for stage in reversed(everything):  # a stage's readers come after it
        readers = [other.name for other in everything if stage.name in other.inputs]
        problem = problems[stage.name]
        if problem is None:
            states[stage.name] = (True, "done (its outputs are on disk)")
        elif readers and all(states[name][0] for name in readers):
            states[stage.name] = (
                True,
                f"done; its outputs are gone ({problem}), but every stage reading them is done",
            )
        else:
            states[stage.name] = (False, problem)
    return states
