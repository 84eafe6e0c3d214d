"""The training plan's flag-style options, read as the plan keys they stand for.

The user's training plan (and the earlier pipeline's `run_cpt.py`) writes training settings as flags; this suite
takes `key=value` overrides of one typed plan (`morphcpt.plan`). Every command of `morphcpt.train` (and
`training/nemo/run_cpt.py`) accepts both: the flags are rewritten into overrides before Hydra sees them, and the
equivalent overrides are printed once (rank 0), so the next command can use them directly.

    python training/nemo/run_cpt.py --data-path data/processed/vanilla/seapile \\
        --checkpoint-dir /scratch/runs/gemma3-1b-baseline --wandb-name gemma3-1b-baseline --max-steps 10000
    # = data.root=.../data/processed data.scheme=vanilla run_dir=/scratch/runs/gemma3-1b-baseline
    #   run_name=gemma3-1b-baseline loop.steps=10000

`--flag value` and `--flag=value` both work. A flag and an override of the same key, an unknown flag, or a flag
without its value is an error that says what to type instead. `--data-path` takes what the plan writes there: a
Megatron data prefix (`<root>/<scheme>/<name>`, existing or not), a scheme folder, one or more chunk prefixes;
`/workspace/...` (where the earlier pipeline mounted the project) that does not exist here is read as this checkout
(`/workspace/data/...` as `$DATA_ROOT/...`), and `--checkpoint-dir /logs/checkpoints/<name>` as
`$OUTPUT_ROOT/runs/<name>` when there is no `/logs`, so the plan's Step 5 command runs as typed.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from morphcpt import paths

# flag -> plan key. The plan's Step 5 uses the first four; the rest are the earlier pipeline's run_cpt.py options
# (and the plan's troubleshooting: "reduce micro-batch-size from 2 to 1").
FLAGS: dict[str, str] = {
    "--data-path": "data.root",  # and data.scheme (and data.chunk_name/num_chunks for chunk prefixes)
    "--checkpoint-dir": "run_dir",  # the run folder: checkpoints/ inside it, with config.yaml and progress.json
    "--wandb-name": "run_name",  # the W&B run name is the run's name
    "--max-steps": "loop.steps",
    "--wandb-project": "logging.wandb_project",
    "--seq-length": "loop.seq_length",
    "--global-batch-size": "loop.global_batch_size",
    "--micro-batch-size": "loop.micro_batch_size",
    "--devices": "cluster.gpus_per_node",
    "--lr": "optim.lr",
    "--min-lr": "optim.min_lr",
    "--warmup-steps": "optim.warmup_steps",
    "--checkpoint-interval": "checkpoint.interval",
    "--val-check-interval": "validation.interval",
    "--log-every-n-steps": "logging.interval",
    "--resume-from": "model.pretrained",
}
# Options of the earlier pipeline with no plan key: what to do instead.
REFUSED: dict[str, str] = {
    "--log-dir": "the run's logs (W&B, TensorBoard, job logs) are written inside the run folder: choose that with "
    "--checkpoint-dir DIR (run_dir=DIR)",
}
# Hydra's own options pass through untouched (`--cfg job`, `-m`, ...).
HYDRA_OPTIONS = {
    "-h", "--help", "--hydra-help", "--version", "-c", "--cfg", "--resolve", "-p", "--package", "-r", "--run",
    "-m", "--multirun", "-sc", "--shell-completion", "-cp", "--config-path", "-cn", "--config-name", "-cd",
    "--config-dir", "-i", "--info", "--experimental-rerun",
}  # fmt: skip
WORKSPACE = "/workspace"  # the earlier pipeline mounted the project there inside its container
LOGS = "/logs"  # ... and its logs and checkpoints there
DATASET_SUFFIX = "_text_document"
_SAFE_VALUE = re.compile(r"[\w./:@+~-]+")


class FlagError(ValueError):
    """A flag that cannot be read as a plan override; the message says what to type instead."""


def _quote(value: str) -> str:
    """A value as Hydra's override grammar reads it back unchanged."""
    if _SAFE_VALUE.fullmatch(value):
        return value
    if "'" not in value:
        return f"'{value}'"
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _schemes() -> set[str]:
    return {p.stem for p in (paths.CONF_DIR / "scheme").glob("*.yaml")}


def _has_datasets(folder: Path) -> bool:
    return folder.is_dir() and any(folder.glob(f"*{DATASET_SUFFIX}.idx"))


def _under(value: str, folder: str) -> str | None:
    """What follows `folder` in `value` ("" for the folder itself), or None when `value` is not inside it."""
    if value == folder:
        return ""
    return value[len(folder) :] if value.startswith(folder + "/") else None


def _from_workspace(value: str, notes: list[str]) -> str:
    """`/workspace/...` that does not exist here: the earlier pipeline's mount of the project, its data under
    `/workspace/data`. NGC images have a `/workspace` of their own (this project is mounted at its host path), so
    what counts is whether the path itself exists, not the folder."""
    rest = _under(value, WORKSPACE)
    if rest is None or Path(value).exists():
        return value
    data_root = paths.env_setting("DATA_ROOT")
    data_rest = _under(rest, "/data")
    mapped = f"{data_root}{data_rest}" if data_root and data_rest is not None else str(paths.REPO_ROOT) + rest
    notes.append(f"{value}: {WORKSPACE} is where the earlier pipeline mounted the project; read as {mapped}")
    return mapped


def _from_logs(value: str, notes: list[str]) -> str:
    """`--checkpoint-dir /logs/checkpoints/<name>`: the earlier pipeline's log mount, which nothing mounts here:
    the run folder `$OUTPUT_ROOT/runs/<name>`, where the jobs keep the same run (and the host sees it)."""
    rest = _under(value, LOGS)
    if rest is None or Path(LOGS).is_dir():
        return value
    name = rest.removeprefix("/checkpoints").strip("/") or "run"
    output_root = paths.env_setting("OUTPUT_ROOT") or str(paths.OUTPUTS_DIR)
    mapped = f"{output_root}/runs/{name}"
    notes.append(
        f"{value}: {LOGS} is where the earlier pipeline mounted its logs (nothing is here); read as {mapped}"
    )
    return mapped


def _one_data_path(value: str, notes: list[str]) -> tuple[Path, str, str | None]:
    """(data root, scheme, dataset name or None for the whole scheme folder) of one --data-path value."""
    path = Path(_from_workspace(value, notes)).expanduser()
    if path.suffix in (".bin", ".idx"):
        path = path.with_suffix("")
    schemes = _schemes()
    if path.is_dir():
        if _has_datasets(path) or path.name in schemes:
            return path.parent, path.name, None
        if any((path / scheme).is_dir() for scheme in schemes):
            raise FlagError(
                f"--data-path {value} holds one folder per scheme: name the scheme's folder "
                f"(--data-path {path / 'vanilla'}), or give data.root={path} data.scheme=NAME"
            )
        raise FlagError(
            f"--data-path {value} is a folder without preprocessed chunks (*{DATASET_SUFFIX}.bin/.idx): "
            "give the scheme's folder that preprocessing wrote, e.g. --data-path $DATA_ROOT/processed/vanilla"
        )
    folder, name = path.parent, path.name
    for stem in (name, name + DATASET_SUFFIX):
        if (folder / f"{stem}.idx").is_file() and (folder / f"{stem}.bin").is_file():
            if not stem.endswith(DATASET_SUFFIX):
                raise FlagError(
                    f"--data-path {value}: the plan reads datasets named <name>{DATASET_SUFFIX}.bin/.idx (what "
                    f"preprocessing writes); {stem}.bin is not one: rename it {stem}{DATASET_SUFFIX}.bin/.idx"
                )
            return folder.parent, folder.name, stem.removesuffix(DATASET_SUFFIX)
    if _has_datasets(folder) or folder.name in schemes:
        notes.append(
            f"--data-path {value}: no dataset {name!r} in {folder} (preprocessing writes one per chunk, "
            f"chunk_NN{DATASET_SUFFIX}); training on that folder's chunks"
        )
        return folder.parent, folder.name, None
    raise FlagError(
        f"--data-path {value} is neither a dataset ({path}.bin/.idx) nor inside a folder of preprocessed chunks "
        f"(<root>/<scheme>/chunk_NN{DATASET_SUFFIX}): give the scheme's folder, e.g. "
        "--data-path $DATA_ROOT/processed/vanilla"
    )


def data_path_overrides(values: list[str], notes: list[str], count_given: bool = False) -> list[str]:
    """The plan overrides for `--data-path` values (see the module docstring); `count_given`: data.num_chunks is
    set by an override already (no note on the chunks a folder holds)."""
    found = [_one_data_path(value, notes) for value in values]
    places = {(root, scheme) for root, scheme, _ in found}
    if len(places) > 1:
        listed = ", ".join(sorted(f"{root}/{scheme}" for root, scheme in places))
        raise FlagError(
            f"--data-path names several data folders ({listed}): a run trains on one scheme's folder; give one"
        )
    root, scheme = places.pop()
    out = [f"data.root={_quote(str(root))}", f"data.scheme={_quote(scheme)}"]
    names = [name for _, _, name in found]
    if all(name is None for name in names):
        held = sorted(p.name for p in (root / scheme).glob(f"chunk_*{DATASET_SUFFIX}.idx"))
        if held and not count_given:
            notes.append(
                f"{root / scheme} holds {len(held)} chunk(s); the plan trains on data.num_chunks of them (20 "
                f"unless a recipe or override says otherwise): add data.num_chunks={len(held)} to train on these"
            )
        return out
    if None in names:
        raise FlagError(
            "--data-path mixes a scheme folder with single datasets: give the folder alone (all its chunks) or "
            "the datasets alone"
        )
    if len(names) == 1:
        chunk_name = names[0].replace("{", "{{").replace("}", "}}")  # data.chunk_name is a str.format pattern
        return [*out, f"data.chunk_name={_quote(chunk_name)}", "data.num_chunks=1"]
    want = [f"chunk_{i:02d}" for i in range(1, len(names) + 1)]
    if sorted(names) != want:
        raise FlagError(
            f"--data-path lists {len(names)} datasets ({', '.join(sorted(names))}); the plan trains on chunk_01 "
            f"... chunk_N of one folder: give the folder ({root / scheme}) and data.num_chunks=N"
        )
    return [*out, f"data.num_chunks={len(names)}"]


def _resume_from(value: str) -> str:
    folder = Path(value).expanduser()
    if value.startswith(("/", ".", "~")) and not folder.exists():
        raise FlagError(
            f"--resume-from {value}: no such folder; give a Hugging Face model (a Hub id such as "
            "google/gemma-3-1b-pt, or a folder with config.json)"
        )
    if folder.exists() and not (folder / "config.json").is_file():
        raise FlagError(
            f"--resume-from {value} is not a Hugging Face model (no config.json): a run resumes from its own "
            "checkpoints by itself (rerun the same command); to start from other weights give a Hub id or a "
            "Hugging Face folder (model.pretrained=...)"
        )
    return value


def _key_of(word: str) -> str | None:
    """The plan key a `key=value` override sets (`+key=`, `++key=`, `~key` too), or None for other words."""
    match = re.fullmatch(r"[~+]{0,2}([A-Za-z_][\w.]*)(=.*)?", word, flags=re.DOTALL)
    if match is None or (match.group(2) is None and not word.startswith("~")):
        return None
    return match.group(1)


def translate(argv: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(arguments for Hydra, the overrides the flags became, notes on how a value was read).

    Raises FlagError for an unknown flag, a flag without a value, or a key given both ways."""
    out: list[str] = []
    made: list[tuple[str, str]] = []  # (flag, override)
    notes: list[str] = []
    typed_keys = {_key_of(word) for word in argv} - {None}
    i = 0
    while i < len(argv):
        word = argv[i]
        flag, sep, inline = word.partition("=")
        if not word.startswith("-") or word == "-":
            out.append(word)
            i += 1
            continue
        if word in HYDRA_OPTIONS or flag in HYDRA_OPTIONS:
            out.append(word)
            i += 1
            continue
        if flag in REFUSED:
            raise FlagError(f"{flag}: {REFUSED[flag]}")
        if flag not in FLAGS:
            raise FlagError(
                f"unknown option {flag}: plan settings are key=value overrides (e.g. loop.steps=10000); the "
                f"flags also understood are {', '.join(FLAGS)} (docs/training-plan-commands.md)"
            )
        i += 1
        if sep:
            values = [inline]
        else:
            # --data-path takes several prefixes (as the earlier pipeline's did); every other flag one value
            many = flag == "--data-path"
            values = []
            while (
                i < len(argv)
                and (many or not values)
                and not argv[i].startswith("-")
                and _key_of(argv[i]) is None
            ):
                values.append(argv[i])
                i += 1
        if not values or not all(values):
            raise FlagError(f"{flag} needs a value, e.g. {flag}=... ({FLAGS[flag]})")
        if flag == "--data-path":
            made += [(flag, o) for o in data_path_overrides(values, notes, "data.num_chunks" in typed_keys)]
        else:
            value = _resume_from(values[0]) if flag == "--resume-from" else values[0]
            if flag == "--checkpoint-dir":
                value = _from_logs(value, notes)
            made.append((flag, f"{FLAGS[flag]}={_quote(value)}"))
    given = {_key_of(word): word for word in out if _key_of(word)}
    seen: dict[str, str] = {}
    for flag, override in made:
        key = override.partition("=")[0]
        if key in given:
            raise FlagError(f"{flag} and {given[key]} both set {key}: give one of them")
        if key in seen and seen[key] != flag:
            raise FlagError(f"{seen[key]} and {flag} both set {key}: give one of them")
        seen[key] = flag
    overrides = [override for _, override in made]
    return overrides + out, overrides, notes


def rewrite_argv(argv: list[str] | None = None, program: str | None = None) -> list[str]:
    """Translate `sys.argv` in place for Hydra; print the equivalent overrides once (rank 0), or exit with the
    error's sentence (status 2, as for any usage error)."""
    argv = sys.argv if argv is None else argv
    program = program or Path(argv[0]).name
    try:
        hydra_args, overrides, notes = translate(argv[1:])
    except FlagError as error:
        print(f"{program}: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    if overrides and os.environ.get("RANK", "0") == "0":
        lines = [f"{program}: the flags read as these plan overrides (type them instead next time):"]
        lines.append("  " + " ".join(overrides))
        lines += [f"  note: {note}" for note in notes]
        print("\n".join(lines), file=sys.stderr, flush=True)
    argv[1:] = hydra_args
    return argv
