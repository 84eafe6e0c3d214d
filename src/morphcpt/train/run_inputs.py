"""What a training run is made of, recorded by content, and compared whenever the run resumes.

A run stores paths in its config; a tokenizer rebuilt in place, data preprocessed again or a base model
replaced keeps those paths and changes what they hold. Resuming then trains old checkpoints on new inputs and
looks complete. So a run records, in `<run_dir>/inputs.json`, the content of every input it reads:

    tokenizer    sha256 of the tokenizer folder's files (tokenizer.json, tokenizer.model, configs, and an EEVE
                 folder's eeve_expansion.json)
    base_model   sha256 of the files of `model.pretrained` (config, weights, tokenizer files)
    data         the sha256 of every chunk's .bin/.idx and of the validation set's, as preprocessing recorded them
                 in its markers (their sizes are checked against the files by `train.data.check_ready`)

    recorded = load(run_dir);  current = snapshot(plan, recorded)
    changed = compare(recorded, current)     # {"tokenizer": "tokenizer.json changed (sha256 1a2b… -> 3c4d…)"}

The hf engine refuses to resume a run whose inputs changed (`check_resume`); the EEVE stages name what was made
from the old inputs (`morphcpt.train.eeve.engine`), the megatron engine checks before each job (`megatron_prepare.prepare`).

Cost: the data is never re-hashed (the markers hold the checksums preprocessing computed). Files of the tokenizer
and the base model are hashed once; later checks reuse the recorded sha256 of a file whose size and mtime are
unchanged, unless it was modified within a second of being hashed (then the mtime cannot tell: it is hashed again).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from morphcpt.errors import UserError
from morphcpt.indexed import bin_path, file_digest, idx_path
from morphcpt.jsonio import JSONFileError, read_json, write_json

FILE = "inputs.json"
FORMAT = 1
RACY_NS = (
    1_000_000_000  # a file modified this close to its hashing is hashed again (its mtime may not show it)
)


class InputsChanged(UserError, RuntimeError):
    """A run would resume on other inputs than it was made from; the message names them and the way on."""


def _file_record(path: Path, previous: dict | None) -> dict:
    """{bytes, mtime_ns, sha256, hashed_ns} of `path`, reusing `previous` when size and mtime vouch for it."""
    stat = path.stat()
    if (
        previous
        and previous.get("bytes") == stat.st_size
        and previous.get("mtime_ns") == stat.st_mtime_ns
        and previous.get("hashed_ns", 0) - stat.st_mtime_ns > RACY_NS
    ):
        return previous
    hashed = time.time_ns()
    return {**file_digest(path), "mtime_ns": stat.st_mtime_ns, "hashed_ns": hashed}


def folder_record(
    folder: Path, source: str, previous: dict | None, names: tuple[str, ...] | None = None
) -> dict:
    """The files directly in `folder` (or those of `names` that exist), each by content."""
    before = (previous or {}).get("files") or {}
    paths = (
        [folder / n for n in names if (folder / n).is_file()]
        if names is not None
        else sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    )
    return {"source": source, "files": {p.name: _file_record(p, before.get(p.name)) for p in paths}}


def _hub_folder(repo_id: str) -> Path | None:
    """The local snapshot of a Hub model or tokenizer, or None when it is not in the local cache."""
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo_id, local_files_only=True))
    except Exception:
        return None


def source_record(name_or_path: str, previous: dict | None, names: tuple[str, ...] | None = None) -> dict:
    """A tokenizer or model folder (or a Hub id's local snapshot) by content; a Hub id not downloaded here is
    recorded by its name alone."""
    folder = Path(name_or_path).expanduser()
    if not folder.is_dir():
        folder = _hub_folder(name_or_path)
    if folder is None:  # a Hub id not downloaded here: only its name can be recorded
        return {"source": name_or_path, "files": None}
    return folder_record(folder, name_or_path, previous, names)


def data_record(prefixes: list[Path], source: str) -> dict:
    """Each dataset's .bin/.idx sha256 as its completion marker recorded it (no file is read but the markers)."""
    from morphcpt.train.data import done_marker

    files = {}
    for prefix in prefixes:
        marker = read_json(
            done_marker(prefix), fix="rerun preprocessing for this chunk (it is redone)", keys=("files",)
        )
        recorded = marker["files"] or {}
        for kind, path in (("bin", bin_path(prefix)), ("idx", idx_path(prefix))):
            entry = recorded.get(kind) or {}
            files[f"{prefix.parent.name}/{path.name}"] = {
                "bytes": entry.get("bytes"),
                "sha256": entry.get("sha256"),
            }
    return {"source": source, "files": files}


def snapshot(plan, previous: dict | None = None) -> dict:
    """The current content of the plan's inputs (see the module docstring)."""
    from morphcpt.tokenization.cache import TOKENIZER_FILES
    from morphcpt.tokenization.eeve import EXPANSION_FILE

    before = (previous or {}).get("inputs") or {}
    inputs = {}
    tokenizer = plan.model.tokenizer or plan.model.pretrained
    if tokenizer:
        names = (*TOKENIZER_FILES, EXPANSION_FILE)
        inputs["tokenizer"] = source_record(str(tokenizer), before.get("tokenizer"), names)
    if plan.model.pretrained:
        inputs["base_model"] = source_record(str(plan.model.pretrained), before.get("base_model"))
    data = plan.data
    inputs["data"] = data_record(
        [*data.chunk_prefixes(), data.validation_prefix()], f"{data.root} (scheme {data.scheme})"
    )
    return {"format": FORMAT, "recorded": datetime.now(UTC).isoformat(timespec="seconds"), "inputs": inputs}


def load(run_dir: str | Path) -> dict | None:
    """The inputs recorded in `run_dir`, or None (a run started before inputs were recorded, or a fresh one)."""
    path = Path(run_dir) / FILE
    return read_json(path, keys=("inputs",), fix="delete it: the run records its inputs again", default=None)


def save(run_dir: str | Path, current: dict) -> None:
    Path(run_dir).mkdir(parents=True, exist_ok=True)
    write_json(Path(run_dir) / FILE, current)


def _short(sha: str | None) -> str:
    return (sha or "unknown")[:12]


def compare(recorded: dict | None, current: dict) -> dict[str, str]:
    """{input: what changed} between a recorded and a current snapshot; empty when nothing did."""
    if not recorded:
        return {}
    old, new = recorded.get("inputs") or {}, current["inputs"]
    changed = {}
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a is None or b is None:
            changed[name] = "not used before" if a is None else "no longer used"
            continue
        if a.get("source") != b.get("source"):
            changed[name] = f"was {a.get('source')}, now {b.get('source')}"
            continue
        files_a, files_b = a.get("files"), b.get("files")
        if files_a is None or files_b is None:  # a Hub id without a local copy: its name is all there is
            continue
        lines = []
        for file in sorted(set(files_a) | set(files_b)):
            fa, fb = files_a.get(file), files_b.get(file)
            if fa is None:
                lines.append(f"{file} added")
            elif fb is None:
                lines.append(f"{file} removed")
            elif fa.get("sha256") != fb.get("sha256"):
                lines.append(
                    f"{file} changed (sha256 {_short(fa.get('sha256'))} -> {_short(fb.get('sha256'))})"
                )
        if lines:
            shown = "; ".join(lines[:4]) + (f"; and {len(lines) - 4} more" if len(lines) > 4 else "")
            changed[name] = f"{b.get('source')}: {shown}"
    return changed


def describe(changed: dict[str, str]) -> str:
    return "\n".join(f"  {name}: {what}" for name, what in changed.items())


def check_resume(plan, run_dir: str | Path, resume: Path | None, main: bool) -> None:
    """Before training: record the inputs of a run that starts; refuse to resume one whose inputs changed.

    Every rank checks (so all stop together); the main rank writes `inputs.json`."""
    run_dir = Path(run_dir)
    try:
        recorded = load(run_dir)
    except JSONFileError:
        if resume is not None:
            raise
        recorded = None
    current = snapshot(plan, recorded)
    if resume is not None and (changed := compare(recorded, current)):
        raise InputsChanged(
            f"{run_dir} cannot resume: its inputs changed since its checkpoints were trained on them:\n"
            f"{describe(changed)}\n"
            f"The checkpoints under {plan.checkpoint_dir} were made from the old inputs. To train on the new "
            f"ones, start a new run (run_name=...) or remove {run_dir}; to continue this run, restore the old "
            "inputs."
        )
    if main:
        save(run_dir, current)
