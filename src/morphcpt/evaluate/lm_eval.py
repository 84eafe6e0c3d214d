"""Export the benchmarks as lm-evaluation-harness tasks, so the same items run under `lm_eval` too.

    python scripts/run_evaluation.py --benchmarks pacute hierarchical --export-lm-eval lm_eval_tasks/
    lm_eval --model hf --model_args pretrained=outputs/export/patok,add_bos_token=True \\
        --include_path lm_eval_tasks/ --tasks morphcpt_hierarchical_mcq

Writes, per task and mode, `data/<name>.jsonl` (prompt, options, gold index, answer) and `<name>.yaml`
(`multiple_choice` with acc/acc_norm for MCQ, `generate_until` with exact_match for GEN), plus one group YAML per
benchmark and mode (`morphcpt_pacute_mcq`, ...). Data paths in the YAMLs are absolute, so lm_eval can run from any
folder. Differences from our scorer, by lm-eval's design: ties go to the first option, and generation stops at
the first newline even before any text (we skip leading whitespace first).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from morphcpt.evaluate.items import Item

# Quotes, sentence punctuation and whitespace at either end of an answer are not part of it (gen.normalise).
_EDGES = "[\\s\"'“”‘’«».,;:!?]+"


def task_name(task: str, mode: str, language: str = "en") -> str:
    suffix = "" if language == "en" else f"_{language}"
    return f"morphcpt_{task.replace('-', '_')}_{mode}{suffix}"


def _row(item: Item, language: str) -> dict:
    row = {
        "id": item.id,
        "prompt": item.prompt(language).rstrip(" \t"),
        "answer": item.answer,
        "category": item.category,
        "subcategory": item.subcategory,
        "level": item.level,
    }
    if item.mode == "mcq":
        row.update(options=list(item.options), gold=item.correct_index)
    return row


def _task_config(name: str, data_file: Path, mode: str) -> dict:
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
            target_delimiter=" ",
            metric_list=[
                {"metric": metric, "aggregation": "mean", "higher_is_better": True}
                for metric in ("acc", "acc_norm")
            ],
        )
    else:
        config.update(
            output_type="generate_until",
            doc_to_target="answer",
            target_delimiter=" ",
            generation_kwargs={"until": ["\n"], "do_sample": False, "max_gen_toks": 50},
            metric_list=[
                {
                    "metric": "exact_match",
                    "aggregation": "mean",
                    "higher_is_better": True,
                    "ignore_case": False,
                    "ignore_punctuation": False,
                    "regexes_to_ignore": [f"^{_EDGES}", f"{_EDGES}$"],
                }
            ],
        )
    return config


def export_lm_eval(
    tasks: Mapping[tuple[str, str], Sequence[Item]], out_dir: Path | str, *, language: str = "en"
) -> list[Path]:
    """`tasks` maps (task, mode) to items, as `runner.load_tasks` builds it. Returns the YAML files written."""
    out_dir = Path(out_dir)
    (out_dir / "data").mkdir(parents=True, exist_ok=True)
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
            yaml.safe_dump(_task_config(name, data_file, mode), allow_unicode=True, sort_keys=False)
        )
        written.append(config_file)
        groups[task_name(task.partition("-")[0], mode, language)].append(name)
    for group, members in sorted(groups.items()):
        metrics = ["acc", "acc_norm"] if group.endswith(("_mcq", "_mcq_tl")) else ["exact_match"]
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
