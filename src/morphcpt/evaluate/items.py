"""Benchmark items: one normalised type for every benchmark family, MCQ and GEN, and where their files are.

Rows are parsed by `rows` (one parser per row shape of the official files, chosen by the row's fields: PACUTE
rows, flat bilingual rows of the hierarchical and stress files, question rows of cute, langgame and
multi-digit addition). Reading is liberal (any shape in any file, ids synthesised from line numbers when
missing, letters in any case) and validation strict: every problem names the file and line.

Files are found under a benchmark folder (default `data/benchmarks`), in our layout or the official one:

    pacute/<subset>_{mcq,gen}.jsonl        or  <subset>_{mcq,gen}.jsonl            (subset: affixation, ..., stress)
    hierarchical/level<N>_{mcq,gen}.jsonl  or  [hierarchical/]hierarchical_{mcq,gen}.jsonl  (filtered by level)
    <name>/<name>_{mcq,gen}.jsonl          or  <name>_{mcq,gen}.jsonl    (name: cute, langgame, multi_digit_addition)

Benchmark names: `pacute`, `pacute-affixation`, `hierarchical`, `hierarchical-level2` (also `hierarchical-2`),
`cute`, `langgame`, `multi_digit_addition`, and the group `controls` (langgame and multi-digit addition: the
forgetting checks; `expand_groups`). A whole benchmark with a subset missing is loaded, with a warning
(calm where the generator's manifest says the subset is not generated, loud otherwise); `survey` lists the files
a run reads and the ones it leaves; `check_manifest` refuses a generated folder whose files are not the ones its
manifest lists.

    from morphcpt.evaluate.items import load_benchmark
    tasks = load_benchmark("hierarchical-level2", "mcq")   # {"hierarchical-level2": [Item, ...]}
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from morphcpt import paths
from morphcpt.errors import UserError
from morphcpt.evaluate.rows import LANGUAGES, BenchmarkFormatError, parse_row, row_mode
from morphcpt.jsonio import read_json

__all__ = ["LANGUAGES", "BenchmarkFormatError", "Item", "load_benchmark", "load_file"]

log = logging.getLogger(__name__)
BENCHMARK_DIR = paths.DATA_DIR / "benchmarks"
PACUTE_SUBSETS = ("affixation", "composition", "manipulation", "stress", "syllabification")
# Official benchmarks of one file each (same JSONL format); the task is named after the benchmark.
SINGLE_FILE_BENCHMARKS = ("cute", "langgame", "multi_digit_addition")
BENCHMARKS = ("pacute", "hierarchical", *SINGLE_FILE_BENCHMARKS)
# Named groups of benchmarks, expanded on the command line. `controls`: the tasks CPT on Filipino text should not
# teach, scored to see what it makes the model forget (upstream's CPT lost multi-digit addition, 88.5 % -> 0 %).
BENCHMARK_GROUPS = {"controls": ("langgame", "multi_digit_addition")}
CONTROL_TASKS = BENCHMARK_GROUPS["controls"]  # their task names in results/ (one task each, MCQ and GEN)
HIERARCHICAL_LEVELS = (0, 1, 2, 3, 4, 5)
MODES = ("mcq", "gen")


def task_of(benchmark: str, subset: str) -> str:
    return benchmark if subset == benchmark else f"{benchmark}-{subset}"


@dataclass(frozen=True)
class Item:
    """One benchmark question. For MCQ, `options[correct_index] == answer`; for GEN, `options` is empty."""

    id: str
    benchmark: str  # "pacute" | "hierarchical" | "cute" | "langgame" | "multi_digit_addition"
    subset: str  # "affixation" ... | "level0" ... "level5" | the benchmark's name
    mode: str  # "mcq" | "gen"
    category: str
    subcategory: str
    prompt_en: str
    prompt_tl: str
    answer: str
    options: tuple[str, ...] = ()
    correct_index: int | None = None
    level: int | None = None
    # What joins the prompt and an option: " " (lm-eval's target_delimiter), or "" where the options carry their
    # own leading space (question rows: " make" after "Answer:").
    delimiter: str = " "
    # The prompt language the answer and options were chosen for, where the row gives them per language
    # (stress rows: "2nd" / "ikalawa"); None where one answer holds for every language.
    language: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def task(self) -> str:
        """Name of the task the item belongs to, e.g. `pacute-affixation`, `hierarchical-level2`, `cute`."""
        return task_of(self.benchmark, self.subset)

    def prompt(self, language: str = "en") -> str:
        if language not in LANGUAGES:
            raise ValueError(f"prompt language must be one of {LANGUAGES}, not {language!r}")
        if self.language not in (None, language):
            raise ValueError(
                f"item {self.id} holds its {self.language!r} answer; load the benchmark with language="
                f"{language!r} to ask it in {language!r}"
            )
        text = self.prompt_en if language == "en" else self.prompt_tl
        if not text:
            raise BenchmarkFormatError(f"item {self.id} has no {language!r} prompt")
        return text

    def identity(self) -> dict[str, Any]:
        """The fields every prediction record repeats, to say which item it scores and against what answer."""
        return {
            "id": self.id,
            "task": self.task,
            "category": self.category,
            "subcategory": self.subcategory,
            "level": self.level,
            "fingerprint": self.fingerprint,
            "answer": self.answer,
        }

    @property
    def fingerprint(self) -> str:
        """Hash of what is asked and what counts as right: paired comparisons only pair identical items."""
        asked = [self.prompt_en, self.prompt_tl, list(self.options), self.answer]
        if self.delimiter != " ":  # only then, so the fingerprints of earlier results stay valid
            asked.append(self.delimiter)
        payload = json.dumps(asked, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    @property
    def gold_indices(self) -> tuple[int, ...]:
        """Every option position holding the answer: an item may list the right answer twice."""
        return tuple(i for i, option in enumerate(self.options) if option == self.answer)

    @property
    def has_duplicate_options(self) -> bool:
        return len(set(self.options)) != len(self.options)


def read_rows(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for every non-blank line; a line that is not a JSON object is an error."""
    with path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise BenchmarkFormatError(f"{path}:{number}: not valid JSON ({error.msg})") from None
            except (RecursionError, ValueError):  # nested ~1,000 deep, or an integer of 5,000 digits
                raise BenchmarkFormatError(
                    f"{path}:{number}: JSON nested too deep or number too long"
                ) from None
            if not isinstance(row, dict):
                raise BenchmarkFormatError(f"{path}:{number}: expected a JSON object")
            yield number, row


def load_file(
    path: Path | str, benchmark: str, mode: str, subset: str | None = None, *, language: str = "en"
) -> list[Item]:
    """Every item of one file. `subset` None takes it from the row (hierarchical: `level<N>`; PACUTE: category).
    `language` picks the answer and options of rows that give them per language."""
    path = Path(path)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, not {language!r}")
    items: list[Item] = []
    seen: dict[str, int] = {}
    for number, row in read_rows(path):
        where = f"{path}:{number}"
        found_mode = row_mode(row)
        if found_mode != mode:
            raise BenchmarkFormatError(
                f"{where}: a {found_mode.upper()} row in a file read as {mode.upper()}"
            )
        fields = parse_row(row, where, mode, benchmark=benchmark, language=language)
        if not fields["prompt_en"] and not fields["prompt_tl"]:
            raise BenchmarkFormatError(f"{where}: the row has no prompt in any language")
        if mode == "mcq" and len(fields["options"]) < 2:
            raise BenchmarkFormatError(f"{where}: an MCQ item needs at least two options")
        if not fields["answer"].strip() or not all(option.strip() for option in fields.get("options", ())):
            raise BenchmarkFormatError(f"{where}: empty answer or option")
        row_subset = f"level{fields['level']}" if fields.get("level") is not None else fields["category"]
        item_id = str(row["id"]) if row.get("id") is not None else f"{path.stem}-{number:05d}"
        if item_id in seen:
            raise BenchmarkFormatError(f"{where}: id {item_id!r} already used on line {seen[item_id]}")
        seen[item_id] = number
        items.append(Item(id=item_id, benchmark=benchmark, subset=subset or row_subset, mode=mode, **fields))
    return items


# ------------------------------------------------------------------------------------------ names and discovery


def expand_benchmark(name: str) -> tuple[str, list[str]]:
    """`pacute` -> ("pacute", all subsets); `hierarchical-level2` / `hierarchical-2` -> ("hierarchical", ["level2"]);
    `cute` (a benchmark of one file) -> ("cute", ["cute"])."""
    key = name.strip().lower()
    if key.replace("-", "_") in SINGLE_FILE_BENCHMARKS:
        key = key.replace("-", "_")
        return key, [key]
    benchmark, _, subset = key.partition("-")
    if benchmark == "pacute":
        if not subset:
            return benchmark, list(PACUTE_SUBSETS)
        if subset in PACUTE_SUBSETS:
            return benchmark, [subset]
        raise ValueError(f"unknown PACUTE subset {subset!r}; choose from {', '.join(PACUTE_SUBSETS)}")
    if benchmark == "hierarchical":
        if not subset:
            return benchmark, [f"level{n}" for n in HIERARCHICAL_LEVELS]
        match = re.fullmatch(r"(?:level|l)?(\d)", subset)
        if match and int(match.group(1)) in HIERARCHICAL_LEVELS:
            return benchmark, [f"level{match.group(1)}"]
        raise ValueError(
            f"unknown hierarchical level {subset!r}; use hierarchical-level0 ... hierarchical-level5"
        )
    raise ValueError(
        f"unknown benchmark {name!r}; use pacute[-<subset>], hierarchical[-level<N>], "
        + ", ".join(SINGLE_FILE_BENCHMARKS)
    )


def expand_groups(names: Iterable[str]) -> list[str]:
    """Benchmark names with every group name (`controls`) replaced by its members, each name once."""
    expanded = [m for name in names for m in BENCHMARK_GROUPS.get(name.strip().lower(), (name,))]
    return list(dict.fromkeys(expanded))


def benchmark_name(name: str) -> str:
    """argparse `type=` for benchmark names: an unknown name is a usage error, not a traceback."""
    if name.strip().lower() in BENCHMARK_GROUPS:
        return name
    try:
        expand_benchmark(name)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{name!r}: {error}") from None
    return name


class BenchmarkMissing(UserError, FileNotFoundError):
    """No file of a benchmark (or subset) in the mode asked for; the message names where it looked."""


class BenchmarkEmpty(UserError, ValueError):
    """A benchmark file without items: its result would hold n=0 and look done."""


def _candidates(root: Path, benchmark: str, subset: str, mode: str) -> list[tuple[Path, bool]]:
    """Files that may hold the subset, in order of preference; True where the file holds several levels."""
    if benchmark == "hierarchical":
        return [
            (root / "hierarchical" / f"{subset}_{mode}.jsonl", False),
            (root / f"{subset}_{mode}.jsonl", False),
            (root / "hierarchical" / f"hierarchical_{mode}.jsonl", True),
            (root / f"hierarchical_{mode}.jsonl", True),
        ]
    return [(root / benchmark / f"{subset}_{mode}.jsonl", False), (root / f"{subset}_{mode}.jsonl", False)]


def find_subset(root: Path, benchmark: str, subset: str, mode: str) -> tuple[Path, bool] | None:
    return next(
        ((path, combined) for path, combined in _candidates(root, benchmark, subset, mode) if path.is_file()),
        None,
    )


def load_subset(root: Path, benchmark: str, subset: str, mode: str, language: str = "en") -> list[Item]:
    found = find_subset(root, benchmark, subset, mode)
    if found is None:
        if benchmark == "cute" and mode == "mcq":  # as in the release: cute_gen.jsonl only
            raise BenchmarkMissing(
                "cute has no MCQ file (the release scores cute generatively only: cute_gen.jsonl): use "
                "--eval-mode gen or both for cute, or leave cute out of --benchmarks"
            )
        tried = ", ".join(str(p) for p, _ in _candidates(root, benchmark, subset, mode))
        raise BenchmarkMissing(
            f"no {mode.upper()} file for {task_of(benchmark, subset)}; looked for: {tried}"
        )
    path, combined = found
    if combined:
        return [item for item in load_file(path, benchmark, mode, language=language) if item.subset == subset]
    return load_file(path, benchmark, mode, subset=subset, language=language)


def check_manifest(benchmark_dir: Path, tasks: dict[tuple[str, str], list[Item]]) -> None:
    """Generated benchmarks come with `manifest.json` (sha256 of every file, `complete` once all are written):
    refuse a folder whose generation did not finish, or a file that is not the one the manifest lists.
    A folder without a manifest (the official PACUTE files) is read as it is."""
    manifest_path = benchmark_dir / "manifest.json"
    if not manifest_path.is_file():
        return
    manifest = read_json(
        manifest_path, what="the generated benchmarks' manifest", fix="regenerate the benchmarks"
    )
    if manifest.get("complete") is False:
        raise ValueError(
            f"{manifest_path}: the generation of these benchmarks did not finish (the set may mix old and new "
            "files); run generate_benchmarks.py again"
        )
    recorded = manifest.get("files", {})
    for task, mode in tasks:
        benchmark, _, subset = task.partition("-")
        found = find_subset(benchmark_dir, benchmark, subset, mode)
        if found is None:
            continue
        relative = found[0].relative_to(benchmark_dir).as_posix()
        if relative in recorded:
            digest = hashlib.sha256(found[0].read_bytes()).hexdigest()
            if digest != recorded[relative]:
                raise ValueError(
                    f"{found[0]} is not the file {manifest_path} lists (sha256 differs): regenerate the benchmarks"
                )


def not_generated(root: Path | str) -> dict[str, str]:
    """Subsets the benchmark generator does not make, as its `manifest.json` lists them ("pacute/stress" -> why);
    empty for a folder without a manifest (the official files)."""
    try:
        manifest = json.loads((Path(root) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    skipped = manifest.get("skipped") if isinstance(manifest, dict) else None
    return {str(k): str(v) for k, v in skipped.items()} if isinstance(skipped, dict) else {}


def not_generated_note(root: Path | str, benchmark: str, subset: str) -> str:
    """One calm sentence: the subset is not in the generated set, and how to add the official files."""
    return (
        f"{task_of(benchmark, subset)} is not part of the generated set under {root} (the generator cannot make "
        f"it; manifest.json says why). To score it, copy the official {subset}_mcq.jsonl and {subset}_gen.jsonl "
        f"into {Path(root) / benchmark}"
    )


def load_benchmark(
    name: str, mode: str, benchmark_dir: Path | str | None = None, *, language: str = "en"
) -> dict[str, list[Item]]:
    """Items of a benchmark by task (`pacute-affixation`, ...). A whole benchmark takes the subsets it finds;
    a subset the generator's manifest says it does not make is left out quietly (the runner says so once, with
    how to add it), any other missing subset is warned about loudly (`missing_subsets` names them). A named subset that is
    missing, or a benchmark with no file at all, is an error. `language` picks per-language answers."""
    root = Path(benchmark_dir) if benchmark_dir is not None else BENCHMARK_DIR
    benchmark, subsets = expand_benchmark(name)
    if len(subsets) == 1:
        return {task_of(benchmark, subsets[0]): load_subset(root, benchmark, subsets[0], mode, language)}
    tasks = {
        task_of(benchmark, subset): load_subset(root, benchmark, subset, mode, language)
        for subset in subsets
        if find_subset(root, benchmark, subset, mode) is not None
    }
    tasks = {task: items for task, items in tasks.items() if items}
    if not tasks:
        hint = " (--eval-mode selects the modes to run)" if mode == "gen" else ""
        raise BenchmarkMissing(f"no {mode.upper()} files for benchmark {benchmark!r} under {root}{hint}")
    skipped = not_generated(root)
    missing = [s for s in subsets if task_of(benchmark, s) not in tasks and f"{benchmark}/{s}" not in skipped]
    if missing:
        log.warning(
            "!!! %s %s is INCOMPLETE under %s: no items for %s; its pooled score covers only %s",
            benchmark,
            mode.upper(),
            root,
            ", ".join(missing),
            ", ".join(t.partition("-")[2] for t in tasks),
        )
    return tasks


def missing_subsets(task: str, tasks: Iterable[str]) -> list[str]:
    """Subsets of `task`'s benchmark that are not among `tasks` (the ones loaded): a pooled score without them
    is not the benchmark's score."""
    benchmark, subsets = expand_benchmark(task.partition("-")[0])
    have = set(tasks)
    return [s for s in subsets if task_of(benchmark, s) not in have]


def survey(root: Path | str, names: Iterable[str], modes: Iterable[str]) -> dict[str, list[str]]:
    """Which JSONL files under `root` the benchmarks `names` read in `modes` ("found") and which they leave
    ("skipped": modes not run, benchmarks not asked for, unknown names), so nothing is ignored silently."""
    root = Path(root)
    wanted = set()
    for name in names:
        benchmark, subsets = expand_benchmark(name)
        for subset, mode in ((subset, mode) for subset in subsets for mode in modes):
            found = find_subset(root, benchmark, subset, mode)
            if found is not None:
                wanted.add(found[0])
    files = sorted(root.glob("*.jsonl")) + sorted(root.glob("*/*.jsonl"))
    return {
        "found": [str(p.relative_to(root)) for p in files if p in wanted],
        "skipped": [str(p.relative_to(root)) for p in files if p not in wanted],
    }
