"""A synthetic evaluation results folder with a known answer, to see what the report says about it.

    python -m morphcpt.analysis.synthetic --out outputs/synthetic/plus3 --effect 3 --seeds 3
    python -m morphcpt.analysis.synthetic --out outputs/synthetic/null --effect 0 --seeds 3
    python scripts/analyze_inference_results.py --results-dir outputs/synthetic/plus3

It writes what the evaluation writes (`results/<model>/ckpt-<step>/<task>_mcq.json`, `checkpoint_step` recorded):
a base model and the arms (baseline, StochasTok, Patok; EEVE with `--eeve`), `--seeds` runs each, `--checkpoints`
saved checkpoints each, on hierarchical Level 2 and Level 0, PACUTE affixation and the control tasks
(multi-digit addition, LangGame). Every item's options get per-byte log-likelihoods from the option-level model of
`simulate.simulate_options` around a synthetic base; Patok's gold answers on Level 2 are shifted so that its true
acc_norm gain over the others is `--effect` pp; `--forget` shifts every CPT arm's gold answers on the control tasks
down by that many nats per byte (the base model keeps them). Per item: logprobs, acc, acc_norm and, unless
`--no-continuous` (files from before those fields), gold_prob and gold_margin.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from morphcpt.analysis.shift import metrics_from_arrays
from morphcpt.analysis.simulate import OptionRegime, simulate_options
from morphcpt.evaluate.runner import RESULT_FORMAT

TASKS = {  # task -> (benchmark, items)
    "hierarchical-level2": ("hierarchical", 100),
    "hierarchical-level0": ("hierarchical", 100),
    "pacute-affixation": ("pacute", 140),
    "multi_digit_addition": ("multi_digit_addition", 200),
    "langgame": ("langgame", 200),
}
CONTROL = ("multi_digit_addition", "langgame")
OPTION_BYTES = (2, 3, 4, 5, 6, 8)


def _base(rng: np.random.Generator, items: int) -> tuple[np.ndarray, np.ndarray, list[list[str]]]:
    """(per-byte log-likelihoods, gold mask, option texts) of a synthetic base model near 50 % acc_norm."""
    per_byte = rng.normal(-2.0, 1.2, (items, 4))
    gold = np.zeros((items, 4), dtype=bool)
    gold[np.arange(items), rng.integers(0, 4, items)] = True
    per_byte = per_byte + 1.0 * gold
    texts = [
        [f"o{i}{'abcdefgh'[j]}" + "x" * int(rng.choice(OPTION_BYTES)) for j in range(4)] for i in range(items)
    ]
    return per_byte, gold, texts


def _shift_for(per_byte, gold, size, effect: float) -> float:
    """The gold shift whose noiseless acc_norm gain on these items is `effect` (a proportion)."""

    def gain(s):
        before = metrics_from_arrays(per_byte * size, size, size, gold)["acc_norm"].mean()
        return metrics_from_arrays((per_byte + s * gold) * size, size, size, gold)["acc_norm"].mean() - before

    low, high = 0.0, 4.0
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (middle, high) if gain(middle) < effect else (low, middle)
    return high


def write_results(
    out: Path | str,
    *,
    effect_pp: float = 3.0,
    seeds: int = 3,
    checkpoints: int = 3,
    eeve: bool = False,
    forget: float = 0.0,
    continuous: bool = True,
    regime: OptionRegime | None = None,
    seed: int = 0,
    arm_seeds: dict[str, int] | None = None,
) -> Path:
    """Write the folder (module docstring); `arm_seeds` gives some arms fewer seeds than `seeds` (unequal designs)."""
    out = Path(out)
    rng = np.random.default_rng(seed)
    arms = ["vanilla", "stochastok", "patok"] + (["eeve"] if eeve else [])
    regime = regime or OptionRegime(seeds=seeds, arms=len(arms), checkpoints=checkpoints)
    steps = [1000 - 100 * k for k in range(checkpoints)][::-1]
    for task, (benchmark, n) in TASKS.items():
        per_byte, gold, texts = _base(rng, n)
        size = np.array([[len(t.encode()) for t in row] for row in texts], dtype=float)
        shifts = np.zeros(len(arms))
        if task == "hierarchical-level2" and effect_pp:
            shifts[arms.index("patok")] = _shift_for(per_byte, gold, size, effect_pp / 100)
        if task in CONTROL:
            shifts -= forget
        runs = simulate_options(regime, per_byte, gold, shifts, 1, rng)[0]
        base_run = per_byte + rng.normal(0, regime.churn_sd, per_byte.shape)
        models = [("base", "base", 0, [(None, base_run)])]
        for a, arm in enumerate(arms):
            for k in range((arm_seeds or {}).get(arm, regime.seeds)):
                name = f"{arm}{f'-seed{k}' if k else ''}"
                models.append((name, arm, k, [(steps[c], runs[a, k, c]) for c in range(regime.checkpoints)]))
        for name, scheme, replicate, evaluated in models:
            for step, ll in evaluated:
                scores = metrics_from_arrays(ll * size, size, size, gold)
                predictions = []
                for i in range(n):
                    answer = texts[i][int(np.argmax(gold[i]))]
                    p = {
                        "id": f"{task}-{i}",
                        "task": task,
                        "subcategory": "synthetic",
                        "fingerprint": hashlib.sha256(f"{task}{i}".encode()).hexdigest()[:16],
                        "options": texts[i],
                        "answer": answer,
                        "logprobs": [float(x) for x in ll[i] * size[i]],
                        "acc": bool(texts[i][int(np.argmax(ll[i] * size[i]))] == answer),
                        "acc_norm": bool(scores["acc_norm"][i]),
                    }
                    if continuous:
                        p["gold_prob"] = float(scores["gold_prob"][i])
                        p["gold_margin"] = float(scores["gold_margin"][i])
                    predictions.append(p)
                folder = out / name / (f"ckpt-{step}" if step is not None else "")
                folder.mkdir(parents=True, exist_ok=True)
                data = {
                    "format": RESULT_FORMAT,
                    "model": {
                        "name": name,
                        "scheme": scheme,
                        "step": step,
                        "path": None,
                        "metadata": {"replicate": replicate},
                    },
                    "task": task,
                    "benchmark": benchmark,
                    "mode": "mcq",
                    "language": "en",
                    "checkpoint_step": step,
                    "predictions": predictions,
                }
                (folder / f"{task}_mcq.json").write_text(json.dumps(data), encoding="utf-8")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--effect", type=float, default=3.0, help="Patok's true acc_norm gain on Level 2, pp")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--checkpoints", type=int, default=3)
    parser.add_argument("--eeve", action="store_true")
    parser.add_argument(
        "--forget", type=float, default=0.0, help="CPT arms' loss on control tasks, nats/byte"
    )
    parser.add_argument("--no-continuous", dest="continuous", action="store_false")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(
        write_results(
            args.out,
            effect_pp=args.effect,
            seeds=args.seeds,
            checkpoints=args.checkpoints,
            eeve=args.eeve,
            forget=args.forget,
            continuous=args.continuous,
            seed=args.seed,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
