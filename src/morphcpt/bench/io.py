"""Benchmark records and their two JSONL formats: official PACUTE rows and hierarchical rows (REFERENCE.md).

    PACUTE MCQ   {"id", "category", "subcategory", "prompts": [{"text_en", "text_tl",
                  "mcq_options": {"correct", "incorrect1".."incorrect3"}, "choice1".."choice4"}], "label": "A"-"D",
                  "word", "metadata"}
    PACUTE GEN   {"id", "category", "subcategory", "prompts": [{"text_en", "text_tl"}], "answer", "word", "metadata"}
    hierarchical {"id", "level", "category", "subcategory", "prompt_en", "prompt_tl", "options", "answer", "word",
                  "metadata"}   (GEN: "options" is [])

`metadata` holds the task name and the parameters its solver needs to recompute the answer. The evaluation
area's loader (`morphcpt.evaluate.items`) reads these files; `read_records` here is for round trips and gates.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

LETTERS = "ABCD"


@dataclass(frozen=True)
class Record:
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
    word: str = ""
    metadata: dict = field(default_factory=dict, compare=True, hash=False)
    level: int | None = None

    @property
    def correct_index(self) -> int:
        return self.options.index(self.answer)


def to_row(r: Record) -> dict:
    if r.benchmark == "hierarchical":
        return {
            "id": r.id,
            "level": r.level,
            "category": r.category,
            "subcategory": r.subcategory,
            "prompt_en": r.prompt_en,
            "prompt_tl": r.prompt_tl,
            "options": list(r.options),
            "answer": r.answer,
            "word": r.word,
            "metadata": r.metadata,
        }
    prompt = {"text_en": r.prompt_en, "text_tl": r.prompt_tl}
    row = {"id": r.id, "category": r.category, "subcategory": r.subcategory, "prompts": [prompt]}
    if r.mode == "mcq":
        wrong = [o for o in r.options if o != r.answer]
        prompt["mcq_options"] = {"correct": r.answer, **{f"incorrect{i}": o for i, o in enumerate(wrong, 1)}}
        prompt.update({f"choice{i}": o for i, o in enumerate(r.options, 1)})
        row["label"] = LETTERS[r.correct_index]
    else:
        row["answer"] = r.answer
    row.update(word=r.word, metadata=r.metadata)
    return row


def from_row(row: dict, subset: str, mode: str) -> Record:
    if "prompts" in row:
        prompt = row["prompts"][0]
        options = tuple(prompt[f"choice{i}"] for i in range(1, 5)) if mode == "mcq" else ()
        answer = options[LETTERS.index(row["label"])] if mode == "mcq" else row["answer"]
        return Record(
            row["id"], "pacute", subset, mode, row["category"], row["subcategory"], prompt["text_en"],
            prompt["text_tl"], answer, options, row.get("word", ""), row.get("metadata", {}),
        )  # fmt: skip
    return Record(
        row["id"], "hierarchical", subset, mode, row["category"], row["subcategory"], row["prompt_en"],
        row["prompt_tl"], row["answer"], tuple(row["options"]), row.get("word", ""), row.get("metadata", {}),
        row["level"],
    )  # fmt: skip


def write_records(path: Path, records: list[Record]) -> None:
    """One JSON row per line, UTF-8, written to a temporary name and renamed so readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="\n") as out:
        for r in records:
            out.write(json.dumps(to_row(r), ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def read_records(path: Path) -> list[Record]:
    """Read a file written by `write_records`; subset and mode come from its name (`affixation_mcq.jsonl`)."""
    path = Path(path)
    subset, _, mode = path.stem.rpartition("_")
    lines = path.read_text(encoding="utf-8").splitlines()
    return [from_row(json.loads(line), subset, mode) for line in lines if line.strip()]
