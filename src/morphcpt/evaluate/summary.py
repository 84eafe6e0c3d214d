"""A result file's summary (overall, by category, by subcategory) and which cached predictions are current.

    summarise(predictions, "mcq")   # {"overall": {"n", "acc", "acc_norm", "chance", "tied", "gold_prob", ...}, ...}

A block holds n, the mean of each binary metric, for MCQ the guessing rate and the number of tied items, and the
mean of each continuous score (`continuous`) over the items where it is defined; a file from before the
continuous scores has none.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from morphcpt.evaluate.answers import GEN_METRICS
from morphcpt.evaluate.continuous import GEN_CONTINUOUS, MCQ_CONTINUOUS
from morphcpt.evaluate.mcq import MCQ_METRICS


def current(prediction: dict, mode: str) -> bool:
    """Whether a cached prediction holds every field this version writes (one made before the continuous scores
    existed is scored again, so a result file never mixes items with and without them)."""
    return all(name in prediction for name in (MCQ_CONTINUOUS if mode == "mcq" else GEN_CONTINUOUS))


def summarise(predictions: Sequence[dict], mode: str) -> dict:
    metrics = MCQ_METRICS if mode == "mcq" else GEN_METRICS
    continuous = MCQ_CONTINUOUS if mode == "mcq" else GEN_CONTINUOUS

    def block(rows: Sequence[dict]) -> dict:
        summary = {"n": len(rows), **{m: sum(r[m] for r in rows) / len(rows) for m in metrics}}
        for name in continuous:  # the mean over the items where it is defined; absent in older files
            values = [r[name] for r in rows if r.get(name) is not None]
            if values:
                summary[name] = sum(values) / len(values)
        if mode == "mcq":
            guesses = [r["options"].count(r["answer"]) / len(r["options"]) for r in rows]
            summary["chance"] = sum(guesses) / len(rows)
            summary["tied"] = sum(r["tied"] for r in rows)
        return summary

    groups: dict[str, dict[str, list[dict]]] = {
        "by_category": defaultdict(list),
        "by_subcategory": defaultdict(list),
    }
    for row in predictions:
        groups["by_category"][row["category"]].append(row)
        groups["by_subcategory"][f"{row['category']}/{row['subcategory']}"].append(row)
    return {
        "overall": block(predictions) if predictions else {"n": 0},
        **{name: {key: block(rows) for key, rows in sorted(group.items())} for name, group in groups.items()},
    }
