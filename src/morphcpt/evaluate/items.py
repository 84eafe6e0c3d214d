"""Benchmark items: one normalised type for PACUTE and the hierarchical benchmark, MCQ and GEN.

Two on-disk formats are read (REFERENCE.md, "PACUTE and the hierarchical benchmark"):

* PACUTE rows: `category`, `subcategory`, `prompts[0].{text_en, text_tl}`; MCQ rows carry the options as
  `choice1..choiceN` with `label` a letter ("A"-"D"), and/or `mcq_options{correct, incorrect1..3}`; GEN rows carry
  the answer as `answer` or, in the official files, as `label`.
* Hierarchical rows: `level, category, subcategory, prompt_en, prompt_tl, options, answer, word, metadata, id`;
  GEN rows have no (or empty) `options`.

Reading is liberal (either format in any file, ids synthesised from line numbers when missing, letters in any
case, option lists or choice fields) and validation strict: every problem names the file and line.

Files are found under a benchmark folder (default `data/benchmarks`), in our layout or the official one:

    pacute/<subset>_{mcq,gen}.jsonl        or  <subset>_{mcq,gen}.jsonl            (subset: affixation, ..., stress)
    hierarchical/level<N>_{mcq,gen}.jsonl  or  [hierarchical/]hierarchical_{mcq,gen}.jsonl  (filtered by level)
    <name>/<name>_{mcq,gen}.jsonl          or  <name>_{mcq,gen}.jsonl    (name: cute, langgame, multi_digit_addition)

Benchmark names: `pacute`, `pacute-affixation`, `hierarchical`, `hierarchical-level2` (also `hierarchical-2`),
`cute`, `langgame`, `multi_digit_addition`. A whole benchmark with a subset missing is loaded, with a loud warning;
`survey` lists the files a run reads and the ones it leaves.

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

log = logging.getLogger(__name__)
BENCHMARK_DIR = paths.DATA_DIR / "benchmarks"
PACUTE_SUBSETS = ("affixation", "composition", "manipulation", "stress", "syllabification")
# Official benchmarks of one file each (same JSONL format); the task is named after the benchmark.
SINGLE_FILE_BENCHMARKS = ("cute", "langgame", "multi_digit_addition")
BENCHMARKS = ("pacute", "hierarchical", *SINGLE_FILE_BENCHMARKS)
HIERARCHICAL_LEVELS = (0, 1, 2, 3, 4, 5)
MODES = ("mcq", "gen")
LANGUAGES = ("en", "tl")


def task_of(benchmark: str, subset: str) -> str:
    return benchmark if subset == benchmark else f"{benchmark}-{subset}"


class BenchmarkFormatError(ValueError):
    """A benchmark file or row that cannot be read unambiguously."""


@dataclass(frozen=True)
class Item:
    """One benchmark question. For MCQ, `options[correct_index] == answer`; for GEN, `options` is empty."""

    id: str
    benchmark: str  # "pacute" | "hierarchical"
    subset: str  # "affixation" ... | "level0" ... "level5"
    mode: str  # "mcq" | "gen"
    category: str
    subcategory: str
    prompt_en: str
    prompt_tl: str
    answer: str
    options: tuple[str, ...] = ()
    correct_index: int | None = None
    level: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def task(self) -> str:
        """Name of the task the item belongs to, e.g. `pacute-affixation`, `hierarchical-level2`, `cute`."""
        return task_of(self.benchmark, self.subset)

    def prompt(self, language: str = "en") -> str:
        if language not in LANGUAGES:
            raise ValueError(f"prompt language must be one of {LANGUAGES}, not {language!r}")
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
        payload = json.dumps(
            [self.prompt_en, self.prompt_tl, list(self.options), self.answer], ensure_ascii=False
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    @property
    def gold_indices(self) -> tuple[int, ...]:
        """Every option position holding the answer: an item may list the right answer twice."""
        return tuple(i for i, option in enumerate(self.options) if option == self.answer)

    @property
    def has_duplicate_options(self) -> bool:
        return len(set(self.options)) != len(self.options)


# --------------------------------------------------------------------------------------------------- row parsing


def _text(row: dict, key: str, where: str, *, required: bool = True) -> str:
    value = row.get(key)
    if value is None:
        if required:
            raise BenchmarkFormatError(f"{where}: missing field {key!r}")
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise BenchmarkFormatError(f"{where}: field {key!r} must be text, got {type(value).__name__}")
    return str(value)


def _label_index(label: str, options: list[str], where: str) -> int:
    """A PACUTE label is a letter ("A", "b", "(C)", "D."); as a last resort the text of one option."""
    letter = label.strip().strip("().").strip()
    if len(letter) == 1 and letter.isalpha() and letter.isascii():
        index = ord(letter.upper()) - ord("A")
        if index >= len(options):
            raise BenchmarkFormatError(f"{where}: label {label!r} points past the {len(options)} options")
        return index
    matches = [i for i, option in enumerate(options) if option == label]
    if matches:  # several copies of one text are one answer
        return matches[0]
    raise BenchmarkFormatError(f"{where}: label {label!r} is neither a letter A-Z nor the text of one option")


def _pacute_options(prompt: dict, row: dict, where: str) -> tuple[list[str], int]:
    numbered = sorted(
        (int(key[len("choice") :]), value)
        for key, value in prompt.items()
        if re.fullmatch(r"choice\d+", key) and value is not None
    )
    mcq = prompt.get("mcq_options") or row.get("mcq_options")
    if numbered:
        if [n for n, _ in numbered] != list(range(1, len(numbered) + 1)):
            raise BenchmarkFormatError(f"{where}: choice fields must be choice1..choiceN without gaps")
        options = [str(value) for _, value in numbered]
        if row.get("label") is not None:
            index = _label_index(str(row["label"]), options, where)
        elif isinstance(mcq, dict) and "correct" in mcq:
            matches = [i for i, option in enumerate(options) if option == str(mcq["correct"])]
            if not matches:
                raise BenchmarkFormatError(f"{where}: mcq_options.correct is none of the choices")
            index = matches[0]  # a duplicated answer: any copy counts (Item.gold_indices)
        else:
            raise BenchmarkFormatError(
                f"{where}: MCQ row has choices but neither a label nor mcq_options.correct"
            )
        if isinstance(mcq, dict) and "correct" in mcq and str(mcq["correct"]) != options[index]:
            raise BenchmarkFormatError(
                f"{where}: label {row.get('label')!r} selects {options[index]!r} but mcq_options.correct is "
                f"{mcq['correct']!r}"
            )
        return options, index
    if isinstance(mcq, dict) and "correct" in mcq:
        # Without choice fields the order is correct, incorrect1, ...: the scorer's tie-breaking must not
        # (and does not) favour position A.
        incorrect = sorted((k for k in mcq if re.fullmatch(r"incorrect\d+", k)), key=lambda k: int(k[9:]))
        return [str(mcq["correct"]), *(str(mcq[k]) for k in incorrect)], 0
    raise BenchmarkFormatError(f"{where}: MCQ row has neither choice1..choiceN nor mcq_options")


def _parse_pacute(row: dict, where: str, mode: str) -> dict:
    prompts = row.get("prompts")
    if not isinstance(prompts, list) or not prompts or not isinstance(prompts[0], dict):
        raise BenchmarkFormatError(f"{where}: 'prompts' must be a non-empty list of objects")
    prompt = prompts[0]
    fields = {
        "category": _text(row, "category", where),
        "subcategory": _text(row, "subcategory", where, required=False),
        "prompt_en": _text(prompt, "text_en", where, required=False),
        "prompt_tl": _text(prompt, "text_tl", where, required=False),
        "metadata": {k: v for k, v in row.items() if k not in {"prompts", "label", "answer", "id"}},
    }
    if mode == "mcq":
        options, index = _pacute_options(prompt, row, where)
        fields.update(options=tuple(options), correct_index=index, answer=options[index])
    else:
        answer = row.get("answer", row.get("label"))
        fields["answer"] = _text({"answer": answer}, "answer", where)
    return fields


def _mapping(value: Any, key: str, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BenchmarkFormatError(f"{where}: field {key!r} must be an object")
    return value


def _parse_hierarchical(row: dict, where: str, mode: str) -> dict:
    level = row.get("level")
    if isinstance(level, bool) or not isinstance(level, int | str) or not str(level).isdigit():
        raise BenchmarkFormatError(f"{where}: 'level' must be a non-negative integer, got {level!r}")
    fields = {
        "level": int(level),
        "category": _text(row, "category", where),
        "subcategory": _text(row, "subcategory", where, required=False),
        "prompt_en": _text(row, "prompt_en", where, required=False),
        "prompt_tl": _text(row, "prompt_tl", where, required=False),
        "answer": _text(row, "answer", where),
        "metadata": {"word": row.get("word"), **_mapping(row.get("metadata"), "metadata", where)},
    }
    if mode == "mcq":
        options = row.get("options")
        if not isinstance(options, list) or not all(isinstance(o, str | int | float) for o in options):
            raise BenchmarkFormatError(f"{where}: MCQ row needs 'options', a list of texts")
        options = [str(o) for o in options]
        if fields["answer"] not in options:
            raise BenchmarkFormatError(
                f"{where}: answer {fields['answer']!r} is not among the options {options}"
            )
        fields.update(options=tuple(options), correct_index=options.index(fields["answer"]))
    return fields


def _detect_mode(row: dict) -> str:
    if "prompts" in row:
        prompt = row["prompts"][0] if isinstance(row["prompts"], list) and row["prompts"] else {}
        has_options = isinstance(prompt, dict) and (
            "mcq_options" in prompt or "choice1" in prompt or "mcq_options" in row
        )
        return "mcq" if has_options else "gen"
    return "mcq" if row.get("options") else "gen"


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


def load_file(path: Path | str, benchmark: str, mode: str, subset: str | None = None) -> list[Item]:
    """Every item of one file. `subset` None takes it from the row (hierarchical: `level<N>`; PACUTE: category)."""
    path = Path(path)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    items: list[Item] = []
    seen: dict[str, int] = {}
    for number, row in read_rows(path):
        where = f"{path}:{number}"
        row_mode = _detect_mode(row)
        if row_mode != mode:
            raise BenchmarkFormatError(f"{where}: a {row_mode.upper()} row in a file read as {mode.upper()}")
        fields = (
            _parse_pacute(row, where, mode) if "prompts" in row else _parse_hierarchical(row, where, mode)
        )
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


def benchmark_name(name: str) -> str:
    """argparse `type=` for benchmark names: an unknown name is a usage error, not a traceback."""
    try:
        expand_benchmark(name)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{name!r}: {error}") from None
    return name


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


def load_subset(root: Path, benchmark: str, subset: str, mode: str) -> list[Item]:
    found = find_subset(root, benchmark, subset, mode)
    if found is None:
        tried = "\n  ".join(str(p) for p, _ in _candidates(root, benchmark, subset, mode))
        raise FileNotFoundError(f"no {mode.upper()} file for {benchmark}-{subset}; looked for:\n  {tried}")
    path, combined = found
    if combined:
        return [item for item in load_file(path, benchmark, mode) if item.subset == subset]
    return load_file(path, benchmark, mode, subset=subset)


def load_benchmark(name: str, mode: str, benchmark_dir: Path | str | None = None) -> dict[str, list[Item]]:
    """Items of a benchmark by task (`pacute-affixation`, ...). A whole benchmark takes the subsets it finds and
    warns loudly about the others (`missing_subsets` names them); a named subset that is missing, or a benchmark
    with no file at all, is an error."""
    root = Path(benchmark_dir) if benchmark_dir is not None else BENCHMARK_DIR
    benchmark, subsets = expand_benchmark(name)
    if len(subsets) == 1:
        return {task_of(benchmark, subsets[0]): load_subset(root, benchmark, subsets[0], mode)}
    tasks = {
        task_of(benchmark, subset): load_subset(root, benchmark, subset, mode)
        for subset in subsets
        if find_subset(root, benchmark, subset, mode) is not None
    }
    tasks = {task: items for task, items in tasks.items() if items}
    if not tasks:
        hint = " (--eval-mode selects the modes to run)" if mode == "gen" else ""
        raise FileNotFoundError(f"no {mode.upper()} files for benchmark {benchmark!r} under {root}{hint}")
    missing = [s for s in subsets if task_of(benchmark, s) not in tasks]
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
