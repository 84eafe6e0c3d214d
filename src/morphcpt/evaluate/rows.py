"""Benchmark rows as the official files write them: one parser per row shape, chosen by the row's own fields.

The public release (`data/benchmarks/` of the earlier pipeline) has 17 files in four row shapes; one file may
mix shapes (`stress_{mcq,gen}.jsonl` holds three). A row's shape is read off its fields, never off the file name:

* PACUTE (`prompts` present): `category`, `subcategory`, `prompts[0].{text_en, text_tl}`; MCQ rows carry the
  options as `choice1..choiceN` with `label` a letter ("A"-"D"), and/or `mcq_options{correct, incorrect1..}`;
  GEN rows carry the answer as `label` (official files) or `answer`.
  Files: affixation, composition, manipulation, syllabification.
* Flat bilingual (`prompt_en`/`prompt_tl` present): `category`, `subcategory`, `answer`, MCQ `options`, an
  optional `level` (the hierarchical rows), any other field kept as metadata (`word`, `context`,
  `accented_form`, `stress_type`, `metadata`). The answer and options may instead be given per language,
  `answer_en`/`answer_tl` and `options_en`/`options_tl` (stress rows asking for a syllable position, "2nd" /
  "ikalawa"): the run's prompt language picks them, as it picks the prompt.
  Files: hierarchical, stress.
* Question (`question` present): `question`, `answer`, MCQ `options`, optional `task_type` (the subcategory).
  One prompt, asked as written whatever the prompt language. The options and answer are continuations of the
  question *as written*: they are joined to it without a separator (delimiter ""), because the files put the
  separator inside them where the text needs one (langgame's "... Answer:" + " make", multi-digit addition's
  "341+114=" + "455").
  Files: cute (GEN only), langgame, multi_digit_addition.

MCQ or GEN is read off the row too: a row with options (or PACUTE choices) is MCQ. `parse_row` returns the fields
of an `items.Item`; `items.load_file` checks what every item needs (a prompt, two options, no empty answer).
"""

from __future__ import annotations

import re
from typing import Any

from morphcpt.errors import UserError

LANGUAGES = ("en", "tl")
PER_LANGUAGE = ("answer", "options")  # fields a flat row may give once or once per language


class BenchmarkFormatError(UserError, ValueError):
    """A benchmark file or row that cannot be read unambiguously."""


def _text(row: dict, key: str, where: str, *, required: bool = True) -> str:
    value = row.get(key)
    if value is None:
        if required:
            raise BenchmarkFormatError(f"{where}: missing field {key!r}")
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise BenchmarkFormatError(f"{where}: field {key!r} must be text, got {type(value).__name__}")
    return str(value)


def _mapping(value: Any, key: str, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BenchmarkFormatError(f"{where}: field {key!r} must be an object")
    return value


def _text_list(value: Any, key: str, where: str) -> list[str]:
    if not isinstance(value, list) or not all(
        isinstance(o, str | int | float) and not isinstance(o, bool) for o in value
    ):
        raise BenchmarkFormatError(f"{where}: MCQ row needs {key!r}, a list of texts")
    return [str(o) for o in value]


def row_mode(row: dict) -> str:
    """ "mcq" when the row lists options (any shape), else "gen"."""
    if "prompts" in row:
        prompt = row["prompts"][0] if isinstance(row["prompts"], list) and row["prompts"] else {}
        has_options = isinstance(prompt, dict) and (
            "mcq_options" in prompt or "choice1" in prompt or "mcq_options" in row
        )
        return "mcq" if has_options else "gen"
    keys = ("options", *(f"options_{language}" for language in LANGUAGES))
    return "mcq" if any(row.get(key) for key in keys) else "gen"


# ------------------------------------------------------------------------------------------------ PACUTE rows


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


# ------------------------------------------------------------------------------------------- flat bilingual rows


def _language_key(row: dict, base: str, where: str, language: str) -> tuple[str, bool]:
    """(the key holding `base` for `language`, whether it is a per-language key). A row gives `answer` once or
    as `answer_en`/`answer_tl`, never both ways."""
    own = [f"{base}_{lang}" for lang in LANGUAGES if f"{base}_{lang}" in row]
    if base in row and own:
        raise BenchmarkFormatError(f"{where}: both {base!r} and {', '.join(map(repr, own))}; keep one way")
    if base in row or not own:
        return base, False
    key = f"{base}_{language}"
    if key not in row:
        raise BenchmarkFormatError(
            f"{where}: {base!r} is given per language ({', '.join(own)}) but not for prompt language "
            f"{language!r}"
        )
    return key, True


def _parse_flat(row: dict, where: str, mode: str, language: str) -> dict:
    level = row.get("level")
    if level is not None and (
        isinstance(level, bool) or not isinstance(level, int | str) or not str(level).isdigit()
    ):
        raise BenchmarkFormatError(f"{where}: 'level' must be a non-negative integer, got {level!r}")
    answer_key, per_language = _language_key(row, "answer", where, language)
    fields = {
        "level": None if level is None else int(level),
        "category": _text(row, "category", where),
        "subcategory": _text(row, "subcategory", where, required=False),
        "prompt_en": _text(row, "prompt_en", where, required=False),
        "prompt_tl": _text(row, "prompt_tl", where, required=False),
        "answer": _text(row, answer_key, where),
    }
    if mode == "mcq":
        options_key, options_per_language = _language_key(row, "options", where, language)
        per_language = per_language or options_per_language
        options = _text_list(row.get(options_key), options_key, where)
        if fields["answer"] not in options:
            raise BenchmarkFormatError(
                f"{where}: {answer_key} {fields['answer']!r} is not among the {options_key} {options}"
            )
        fields.update(options=tuple(options), correct_index=options.index(fields["answer"]))
    consumed = {"id", "level", "category", "subcategory", "prompt_en", "prompt_tl", "metadata"}
    consumed |= {key for base in PER_LANGUAGE for key in row if key == base or key.startswith(f"{base}_")}
    extra = {k: v for k, v in row.items() if k not in consumed}
    fields["metadata"] = {**extra, **_mapping(row.get("metadata"), "metadata", where)}
    if per_language:
        fields["language"] = language
    return fields


# ------------------------------------------------------------------------------------------------ question rows


def _parse_question(row: dict, where: str, mode: str, benchmark: str) -> dict:
    question = _text(row, "question", where)
    fields = {
        "category": _text(row, "category", where, required=False) or benchmark,
        "subcategory": _text(row, "subcategory", where, required=False)
        or _text(row, "task_type", where, required=False),
        # One prompt for every language: these benchmarks have no Tagalog version.
        "prompt_en": question,
        "prompt_tl": question,
        "answer": _text(row, "answer", where),
        "delimiter": "",
        "metadata": {k: v for k, v in row.items() if k not in {"question", "answer", "options", "id"}},
    }
    if mode == "mcq":
        options = _text_list(row.get("options"), "options", where)
        if fields["answer"] not in options:
            raise BenchmarkFormatError(
                f"{where}: answer {fields['answer']!r} is not among the options {options}"
            )
        fields.update(options=tuple(options), correct_index=options.index(fields["answer"]))
    return fields


def parse_row(row: dict, where: str, mode: str, *, benchmark: str, language: str = "en") -> dict:
    """The `Item` fields of one row (all but id, benchmark, subset, mode), by the row's shape."""
    if "prompts" in row:
        return _parse_pacute(row, where, mode)
    if "question" in row:
        return _parse_question(row, where, mode, benchmark)
    if "prompt_en" in row or "prompt_tl" in row:
        return _parse_flat(row, where, mode, language)
    raise BenchmarkFormatError(
        f"{where}: unknown row shape (fields {', '.join(sorted(row))}); a row needs 'prompts' (PACUTE), "
        "'prompt_en'/'prompt_tl' (hierarchical, stress) or 'question' (cute, langgame, multi_digit_addition)"
    )
