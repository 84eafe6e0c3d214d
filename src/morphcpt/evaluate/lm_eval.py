"""Export the benchmarks as lm-evaluation-harness tasks, so the same items run under `lm_eval` too.

    python scripts/run_evaluation.py --benchmarks pacute hierarchical --export-lm-eval lm_eval_tasks/
    lm_eval --model hf --model_args pretrained=outputs/export/patok,add_bos_token=True \\
        --include_path lm_eval_tasks/ --tasks morphcpt_hierarchical_mcq

Writes, per task and mode, `data/<name>.jsonl` (prompt, options, gold indices, answer) and `<name>.yaml`
(`multiple_choice` with acc/acc_norm for MCQ, `generate_until` for GEN), plus one group YAML per benchmark and
mode (`morphcpt_pacute_mcq`, ...). Data paths in the YAMLs are absolute, so lm_eval can run from any folder.

Both evaluators score alike: MCQ continuations are `target_delimiter + option`, the delimiter " " except for
tasks whose options carry their own separator (question rows: " make" after "Answer:"), exported with
`target_delimiter: ""` so lm-eval scores the same string; MCQ `gold` lists *every* index holding the answer (lm-eval then counts a pick of any
copy, as we do); GEN tasks run our own `answers.process_results` (the module is copied beside the YAMLs as
`morphcpt_answers.py`), so the stop rule, normalisation and exact/prefix/contains are the same code. GEN decoding
stops at `<eos>` or `max_gen_toks` and the first line is cut afterwards (a newline stop would end an answer that
opens with a newline before it starts). The one difference left is lm-eval's design: it breaks exact ties by
taking the first option, we break ties (within `mcq.TIE_TOLERANCE`) by a seeded random pick.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from morphcpt.evaluate import answers
from morphcpt.evaluate.items import Item

ANSWERS_MODULE = "morphcpt_answers"  # answers.py as copied beside the task YAMLs


def task_name(task: str, mode: str, language: str = "en") -> str:
    suffix = "" if language == "en" else f"_{language}"
    return f"morphcpt_{task.replace('-', '_')}_{mode}{suffix}"


def _row(item: Item, language: str) -> dict:
    prompt = item.prompt(language)
    row = {
        "id": item.id,
        "prompt": prompt.rstrip(" \t") if item.delimiter else prompt,
        "answer": item.answer,
        "category": item.category,
        "subcategory": item.subcategory,
        "level": item.level,
    }
    if item.mode == "mcq":
        row.update(options=list(item.options), gold=list(item.gold_indices))
    return row


def _delimiter(items: Sequence[Item], name: str) -> str:
    """lm-eval takes one target_delimiter per task: every item of the task must join prompt and option alike."""
    found = {item.delimiter for item in items}
    if len(found) > 1:
        raise ValueError(
            f"{name}: its items join prompt and option in {len(found)} ways ({sorted(map(repr, found))}); "
            "lm-eval takes one target_delimiter per task, so put such rows in separate files"
        )
    return found.pop() if found else " "


def _task_config(name: str, data_file: Path, mode: str, delimiter: str = " ") -> dict:
    config = {
        "task": name,
        "tag": ["morphcpt"],
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(data_file.resolve())}},
        "test_split": "test",
        "doc_to_text": "{{prompt}}",
        "metadata": {"version": 1.0},
    }
    if mode == "mcq":
        config.update(
            output_type="multiple_choice",
            doc_to_choice="options",
            doc_to_target="gold",
            target_delimiter=delimiter,
            metric_list=[
                {"metric": metric, "aggregation": "mean", "higher_is_better": True}
                for metric in ("acc", "acc_norm")
            ],
        )
    else:
        config.update(
            output_type="generate_until",
            doc_to_target="answer",
            target_delimiter=delimiter,
            generation_kwargs={"until": [], "do_sample": False, "max_gen_toks": 50},
            process_results=_FunctionTag(f"{ANSWERS_MODULE}.process_results"),
            metric_list=[
                {"metric": metric, "aggregation": "mean", "higher_is_better": True}
                for metric in answers.GEN_METRICS
            ],
        )
    return config


class _FunctionTag(str):
    """Written as lm-eval's `!function module.name` tag."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_FunctionTag, lambda dumper, value: dumper.represent_scalar("!function", str(value)))


def export_lm_eval(
    tasks: Mapping[tuple[str, str], Sequence[Item]], out_dir: Path | str, *, language: str = "en"
) -> list[Path]:
    """`tasks` maps (task, mode) to items, as `runner.load_tasks` builds it. Returns the YAML files written."""
    out_dir = Path(out_dir)
    (out_dir / "data").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(answers.__file__, out_dir / f"{ANSWERS_MODULE}.py")
    written: list[Path] = []
    groups: dict[str, list[str]] = defaultdict(list)
    for (task, mode), items in sorted(tasks.items()):
        name = task_name(task, mode, language)
        data_file = out_dir / "data" / f"{name}.jsonl"
        with data_file.open("w", encoding="utf-8") as handle:
            for item in items:
                handle.write(json.dumps(_row(item, language), ensure_ascii=False) + "\n")
        config_file = out_dir / f"{name}.yaml"
        config_file.write_text(
            yaml.dump(
                _task_config(name, data_file, mode, _delimiter(items, name)),
                Dumper=_Dumper,
                allow_unicode=True,
                sort_keys=False,
            )
        )
        written.append(config_file)
        groups[task_name(task.partition("-")[0], mode, language)].append(name)
    for group, members in sorted(groups.items()):
        if members == [group]:  # a benchmark of one task (cute, ...) is its own group
            continue
        metrics = ["acc", "acc_norm"] if group.endswith(("_mcq", "_mcq_tl")) else list(answers.GEN_METRICS)
        config = {
            "group": group,
            "task": members,
            "aggregate_metric_list": [
                {"metric": m, "aggregation": "mean", "weight_by_size": True} for m in metrics
            ],
            "metadata": {"version": 1.0},
        }
        group_file = out_dir / f"{group}.yaml"
        group_file.write_text(yaml.safe_dump(config, sort_keys=False))
        written.append(group_file)
    return written
