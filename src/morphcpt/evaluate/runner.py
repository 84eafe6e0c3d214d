"""Evaluate models x benchmarks x modes and write one result JSON per model, task and mode. Resumable.

    python scripts/run_evaluation.py --models outputs/export/vanilla outputs/export/patok \\
        --benchmarks pacute hierarchical --eval-mode both [--benchmark-dir data/benchmarks] [--output-dir results]

Layout: `<output-dir>/<model>/<task>_<mode>.json` (with `--last-checkpoints k`, a run's k checkpoints each under
`<output-dir>/<run_name>/ckpt-<step>/`, see docs/evaluation.md) (task `pacute-affixation`, `hierarchical-level2`, ...; a
`_tl` suffix when prompts are Tagalog), holding the model's metadata (scheme and step from the export's
`morphcpt_metadata.json`), the run settings (the scoring precision among them, `--dtype`), a summary (overall, by
category, by subcategory) and every item's prediction (acc/acc_norm or exact/prefix/contains, and the continuous
scores of `continuous`). While a task runs, finished items are appended to `<same name>.partial.jsonl`; a rerun
reuses them and the predictions of an earlier result file (same model, settings and item fingerprint), scores only
what is missing, and skips a task whose result is complete without loading the model at all.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from tqdm.auto import tqdm

from morphcpt import paths
from morphcpt.errors import reported
from morphcpt.evaluate.gen import GEN_METRICS, score_gen
from morphcpt.evaluate.items import (
    BENCHMARK_DIR,
    CONTROL_TASKS,
    LANGUAGES,
    BenchmarkEmpty,
    Item,
    benchmark_name,
    check_manifest,
    expand_benchmark,
    expand_groups,
    load_benchmark,
    missing_subsets,
    not_generated,
    not_generated_note,
    survey,
)
from morphcpt.evaluate.mcq import MCQ_METRICS, score_mcq
from morphcpt.evaluate.resolve import ModelResolutionError, resolve_models
from morphcpt.evaluate.summary import current, summarise

log = logging.getLogger(__name__)
RESULTS_DIR = paths.REPO_ROOT / "results"
RESULT_FORMAT = "morphcpt-eval/1"


@dataclass
class EvalConfig:
    models: list[str] = field(default_factory=list)
    benchmarks: list[str] = field(default_factory=lambda: ["pacute", "hierarchical"])
    eval_mode: str = "both"  # "mcq" | "gen" | "both"
    benchmark_dir: Path = BENCHMARK_DIR
    output_dir: Path = RESULTS_DIR
    model_names: list[str] | None = None
    limit: int | None = None  # first N items of every task
    batch_size: int = 32
    share_prompt: bool = True  # MCQ: one forward pass per prompt, not per option (same scores)
    device: str = "auto"
    # The precision the model scores in: "auto" is bf16 on a GPU and fp32 on a CPU; "fp32" or "bf16" anywhere. Part of
    # a result's settings: the same weights in bf16 and fp32 give other log-likelihoods (benchmarks/RESULTS.md).
    dtype: str = "auto"
    language: str = "en"
    max_new_tokens: int = 50
    export_lm_eval: Path | None = None
    last_checkpoints: int | None = (
        None  # a run: its last k checkpoints, each scored (results/<run>/ckpt-<step>/)
    )

    def __post_init__(self) -> None:
        self.benchmarks = expand_groups(self.benchmarks)  # `controls` -> langgame, multi_digit_addition

    @property
    def modes(self) -> list[str]:
        return ["mcq", "gen"] if self.eval_mode == "both" else [self.eval_mode]


@dataclass(frozen=True)
class ModelSpec:
    name: str
    path: str
    metadata: dict
    checkpoint_set: dict | None = None  # one of a run's last k checkpoints (`models.ResolvedModel`)

    @property
    def folder(self) -> str:
        """Its results folder under the output dir: the name, or `<name>/ckpt-<step>` in a checkpoint set."""
        return f"{self.name}/ckpt-{self.checkpoint_set['step']}" if self.checkpoint_set else self.name

    @property
    def identity(self) -> dict:
        """What must match for cached predictions to be reused."""
        keep = ("scheme", "step", "config_hash", "created")
        return {"path": self.path, **{k: self.metadata.get(k) for k in keep if k in self.metadata}}

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "path": self.path,
            "scheme": self.metadata.get("scheme"),
            "step": self.metadata.get("step"),
            "metadata": self.metadata,
            "checkpoint_set": self.checkpoint_set,
        }


def model_specs(
    models: Sequence[str], names: Sequence[str] | None = None, last: int | None = None
) -> list[ModelSpec]:
    """A folder is named after itself, a hub id `org/name` becomes `org__name`, a training run (or one of its
    checkpoints) `<run_name>-step<N>` after its export (`morphcpt.evaluate.resolve`), or with `last` each of its last
    checkpoints `<run_name>/ckpt-<step>`; names must not collide."""
    if names is not None and len(names) != len(models):
        raise ValueError(f"{len(names)} --model-names for {len(models)} --models")
    renamed = dict(zip(models, names, strict=True)) if names else {}
    specs = [
        ModelSpec(
            name=renamed.get(found.given, found.name),
            path=found.path,
            metadata=found.metadata,
            checkpoint_set=found.checkpoint_set,
        )
        for found in resolve_models(models, last=last)
    ]
    seen = defaultdict(list)
    for spec in specs:
        seen[spec.folder].append(spec.path)
    clashes = {name: found for name, found in seen.items() if len(found) > 1}
    if clashes:
        raise ValueError(f"models share a name {clashes}; tell them apart with --model-names")
    return specs


def result_path(output_dir: Path, model: str, task: str, mode: str, language: str) -> Path:
    suffix = "" if language == "en" else f"_{language}"
    return Path(output_dir) / model / f"{task}_{mode}{suffix}.json"


def load_tasks(cfg: EvalConfig) -> dict[tuple[str, str], list[Item]]:
    """(task, mode) -> items, for every benchmark and mode asked for, cut to `limit`. A benchmark with files in
    only one of the modes asked for runs in that one, with a note (cute has no MCQ file); one with no file in any
    of them is an error, as is a task without items (its result would hold n=0, and look done) and a file that
    differs from the generator's manifest."""
    tasks: dict[tuple[str, str], list[Item]] = {}
    absent: dict[str, list[tuple[str, FileNotFoundError]]] = defaultdict(list)
    for mode in cfg.modes:
        for name in cfg.benchmarks:
            try:
                loaded = load_benchmark(name, mode, cfg.benchmark_dir, language=cfg.language)
            except FileNotFoundError as error:
                absent[name].append((mode, error))
                continue
            for task, items in loaded.items():
                if not items:
                    raise BenchmarkEmpty(
                        f"{task} ({mode}) has no items under {cfg.benchmark_dir}: its file is empty; "
                        "regenerate the benchmarks or leave that task out"
                    )
                tasks[(task, mode)] = items[: cfg.limit] if cfg.limit else items
    for name, failures in absent.items():
        if len(failures) == len(cfg.modes):
            raise failures[0][1]
        for mode, _ in failures:
            log.info(
                "%s has no %s file under %s: scored in the other mode only",
                name,
                mode.upper(),
                cfg.benchmark_dir,
            )
    check_manifest(Path(cfg.benchmark_dir), tasks)
    skipped = not_generated(cfg.benchmark_dir)
    for name in cfg.benchmarks:
        benchmark, subsets = expand_benchmark(name)
        for subset in subsets:
            if f"{benchmark}/{subset}" in skipped and len(subsets) > 1:
                log.info(not_generated_note(cfg.benchmark_dir, benchmark, subset))
    one_prompt = sorted({t for (t, _), items in tasks.items() if items[0].prompt_en == items[0].prompt_tl})
    if cfg.language != "en" and one_prompt:
        log.info(
            "%s: one prompt per row (no %s version), asked as written", ", ".join(one_prompt), cfg.language
        )
    return tasks


# -------------------------------------------------------------------------------------------- resumable cache


def _settings(spec: ModelSpec, task: str, mode: str, cfg: EvalConfig) -> dict:
    from morphcpt.evaluate.device import scoring_dtype  # torch only, not transformers

    settings = {
        "model": spec.identity,
        "task": task,
        "mode": mode,
        "language": cfg.language,
        "dtype": scoring_dtype(cfg.device, cfg.dtype),
    }
    if mode == "gen":
        settings["max_new_tokens"] = cfg.max_new_tokens
    return settings


def read_result(path: Path) -> dict | None:
    """A result file, or None when there is none or it is unreadable (truncated, not JSON): then it is scored
    again, with a warning that names it."""
    if not path.is_file():
        return None
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(result, dict) or not isinstance(result.get("predictions"), list):
            raise ValueError("not a result object")
        return result
    except ValueError as error:
        log.warning("%s is unreadable (%s); scoring that task again", path, error)
        return None


def _cached_predictions(final: Path, partial: Path, settings: dict) -> dict[str, dict]:
    """Predictions already made under the same settings: from an earlier result file and the partial log."""
    cached: dict[str, dict] = {}
    result = read_result(final)
    if result is not None:
        if result.get("settings") == settings:
            cached.update((p["id"], p) for p in result["predictions"])
        else:
            log.warning("%s was made with other settings; scoring again", final)
    if partial.is_file():
        rows = []
        for line in partial.read_text(encoding="utf-8").splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:  # the line being written when the run was killed
                continue
        if rows and rows[0] == {"settings": settings}:
            cached.update((prediction["id"], prediction) for prediction in rows[1:])
        else:
            log.warning("%s was made with other settings; discarding it", partial)
            partial.unlink()
    return cached


def _write_json_atomic(path: Path, payload: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def is_complete(path: Path, settings: dict, items: Sequence[Item]) -> bool:
    result = read_result(path)
    if result is None or not items or result.get("settings") != settings:
        return False
    mode = settings["mode"]
    done = {p["id"]: p["fingerprint"] for p in result["predictions"] if current(p, mode)}
    return all(done.get(item.id) == item.fingerprint for item in items) and len(done) == len(items)


def evaluate_task(
    model,
    spec: ModelSpec,
    task: str,
    mode: str,
    items: Sequence[Item],
    cfg: EvalConfig,
    missing: Sequence[str] = (),
    not_generated: dict[str, str] | None = None,
) -> Path:
    """Score the items still missing, then write the complete result file and drop the partial log."""
    final = result_path(cfg.output_dir, spec.folder, task, mode, cfg.language)
    partial = final.with_name(final.stem + ".partial.jsonl")
    final.parent.mkdir(parents=True, exist_ok=True)
    settings = _settings(spec, task, mode, cfg)
    cached = _cached_predictions(final, partial, settings)
    wanted = {item.id: item for item in items}
    cached = {
        i: p
        for i, p in cached.items()
        if i in wanted and p["fingerprint"] == wanted[i].fingerprint and current(p, mode)
    }
    todo = [item for item in items if item.id not in cached]
    started = time.perf_counter()
    if todo:
        if not partial.is_file():
            partial.write_text(json.dumps({"settings": settings}) + "\n", encoding="utf-8")
        with (
            partial.open("a", encoding="utf-8") as log_file,
            tqdm(
                total=len(todo), desc=f"{spec.folder} {task} {mode}", unit="item", leave=False, disable=None
            ) as bar,
        ):
            for offset in range(0, len(todo), cfg.batch_size):
                chunk = todo[offset : offset + cfg.batch_size]
                if mode == "mcq":
                    scored = score_mcq(model, chunk, language=cfg.language)
                else:
                    scored = score_gen(model, chunk, language=cfg.language, max_new_tokens=cfg.max_new_tokens)
                for prediction in scored:
                    row = prediction.to_json()
                    cached[row["id"]] = row
                    log_file.write(json.dumps(row, ensure_ascii=False) + "\n")
                log_file.flush()
                bar.update(len(chunk))
    predictions = [cached[item.id] for item in items]
    benchmark, _, subset = task.partition("-")
    _write_json_atomic(
        final,
        {
            "format": RESULT_FORMAT,
            "model": spec.to_json(),
            "task": task,
            "benchmark": benchmark,
            "subset": subset,
            "mode": mode,
            "language": cfg.language,
            "settings": settings,
            "benchmark_dir": str(Path(cfg.benchmark_dir).resolve()),
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "checkpoint_set": spec.checkpoint_set,  # {"run_name", "step", "steps"} under --last-checkpoints
            "control": benchmark in CONTROL_TASKS,  # a forgetting check (`--benchmarks controls`)
            "missing_subsets": list(missing),  # of this benchmark, not evaluated in this run
            "not_generated": dict(not_generated or {}),  # of this benchmark, which the generator cannot make
            "scored_now": len(todo),
            "seconds": round(time.perf_counter() - started, 3),
            "summary": summarise(predictions, mode),
            "predictions": predictions,
        },
    )
    partial.unlink(missing_ok=True)
    overall = summarise(predictions, mode)["overall"]
    shown = ", ".join(f"{m}={overall[m]:.3f}" for m in (MCQ_METRICS if mode == "mcq" else GEN_METRICS))
    log.info("%s %s %s: n=%d %s", spec.folder, task, mode, len(predictions), shown)
    return final


ModelFactory = Callable[[ModelSpec, EvalConfig], object]


def load_hf_model(spec: ModelSpec, cfg: EvalConfig):
    from morphcpt.evaluate.device import DTYPES, scoring_dtype
    from morphcpt.evaluate.hf_model import HFCausalLM

    dtype = DTYPES[scoring_dtype(cfg.device, cfg.dtype)]
    return HFCausalLM.load(
        spec.path, device=cfg.device, batch_size=cfg.batch_size, dtype=dtype, share_prompt=cfg.share_prompt
    )


def run_evaluation(cfg: EvalConfig, model_factory: ModelFactory = load_hf_model) -> list[Path]:
    """Every model on every task; a model is loaded only if one of its tasks is unfinished."""
    if cfg.language not in LANGUAGES:
        raise ValueError(f"--language must be one of {LANGUAGES}")
    tasks = load_tasks(cfg)
    for (task, mode), items in tasks.items():
        log.info("%s %s: %d items", task, mode, len(items))
    files = survey(cfg.benchmark_dir, cfg.benchmarks, cfg.modes)
    log.info("benchmark files read under %s: %s", cfg.benchmark_dir, ", ".join(files["found"]))
    if files["skipped"]:
        log.warning("benchmark files skipped (not asked for): %s", ", ".join(files["skipped"]))
    if cfg.export_lm_eval:
        from morphcpt.evaluate.lm_eval import export_lm_eval

        written = export_lm_eval(tasks, cfg.export_lm_eval, language=cfg.language)
        log.info("wrote %d lm-eval task files under %s", len(written), cfg.export_lm_eval)
    outputs = []
    for spec in model_specs(cfg.models, cfg.model_names, cfg.last_checkpoints):
        pending = [
            key
            for key, items in tasks.items()
            if not is_complete(
                result_path(cfg.output_dir, spec.folder, *key, cfg.language),
                _settings(spec, *key, cfg),
                items,
            )
        ]
        outputs += [
            result_path(cfg.output_dir, spec.folder, *key, cfg.language)
            for key in tasks
            if key not in pending
        ]
        if not pending:
            log.info("%s: every task already done", spec.folder)
            continue
        model = model_factory(spec, cfg)
        skipped = not_generated(cfg.benchmark_dir)
        for task, mode in pending:
            benchmark = task.partition("-")[0]
            absent = missing_subsets(task, [t for t, m in tasks if m == mode])
            missing = [s for s in absent if f"{benchmark}/{s}" not in skipped]
            unmade = {s: skipped[f"{benchmark}/{s}"] for s in absent if f"{benchmark}/{s}" in skipped}
            outputs.append(evaluate_task(model, spec, task, mode, tasks[(task, mode)], cfg, missing, unmade))
        del model
        gc.collect()
    return outputs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--models",
        nargs="*",
        default=[],
        help="exported model folders, hub ids, training run folders, their checkpoints/ or one checkpoint",
    )
    parser.add_argument(
        "--model-names", nargs="*", help="result folder names, one per model (default: folder name)"
    )
    parser.add_argument(
        "--benchmarks",
        nargs="+",
        type=benchmark_name,
        default=["pacute", "hierarchical"],
        help="pacute, pacute-<subset>, hierarchical, hierarchical-level<N>, cute, langgame, multi_digit_addition; "
        "controls (= langgame multi_digit_addition)",
    )
    parser.add_argument("--eval-mode", choices=["mcq", "gen", "both"], default="both")
    parser.add_argument("--benchmark-dir", type=Path, default=BENCHMARK_DIR)
    parser.add_argument("--output-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--limit", type=int, help="only the first N items of every task")
    parser.add_argument("--batch-size", type=int, default=32, help="rows per forward pass")
    parser.add_argument(
        "--share-prompt",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="MCQ: run each prompt once with all its options in one row (Gemma 3; same log-likelihoods)",
    )
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1, ...")
    parser.add_argument(
        "--dtype",
        choices=("auto", "bf16", "fp32"),
        default="auto",
        help="precision of the scoring (auto: bf16 on a GPU, fp32 on a CPU); compare models scored in the same one",
    )
    parser.add_argument("--language", choices=LANGUAGES, default="en", help="prompt language")
    parser.add_argument("--max-new-tokens", type=int, default=50)
    parser.add_argument(
        "--export-lm-eval", type=Path, metavar="DIR", help="also write lm-eval task YAMLs here"
    )
    parser.add_argument(
        "--last-checkpoints",
        type=int,
        metavar="K",
        help="a training run: score each of its last K checkpoints, into <output-dir>/<run_name>/ckpt-<step>/",
    )
    return parser


def config_from_args(args: argparse.Namespace) -> EvalConfig:
    if not args.models and not args.export_lm_eval:
        raise SystemExit("nothing to do: give --models and/or --export-lm-eval")
    return EvalConfig(**{k: v for k, v in vars(args).items()})


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    with reported("run_evaluation"):
        try:
            written = run_evaluation(config_from_args(build_parser().parse_args(argv)))
        except ModelResolutionError as error:  # a --models entry: one sentence each, no traceback
            print(f"run_evaluation: {error}", file=sys.stderr)
            return 1
    for path in written:
        print(path)
    return 0
