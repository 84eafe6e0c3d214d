"""The resumable evaluation runner: per-item results with model metadata, resume after a crash, larger limits,
settings that get their own results, the command line, and the scoring precision recorded and never mixed."""

from __future__ import annotations

import json

import pytest

from evaluate_helpers import OracleModel, all_items
from morphcpt.evaluate.items import load_benchmark
from morphcpt.evaluate.runner import EvalConfig, model_specs, result_path, run_evaluation


def test_runner_writes_per_item_results_with_model_metadata(tiny_model_dir, benchmark_dir, tmp_path):
    cfg = EvalConfig(
        models=[str(tiny_model_dir)],
        benchmarks=["pacute-affixation", "hierarchical"],
        eval_mode="both",
        benchmark_dir=benchmark_dir,
        output_dir=tmp_path / "results",
        batch_size=4,
        device="cpu",
        max_new_tokens=5,
    )
    written = run_evaluation(cfg)
    assert len(written) == 2 + 3 + 3  # affixation x 2 modes, hierarchical MCQ levels 0/2/3, GEN levels 0/2/4
    result = json.loads(result_path(cfg.output_dir, "model", "hierarchical-level2", "mcq", "en").read_text())
    assert result["model"]["scheme"] == "patok" and result["model"]["step"] == 7
    assert result["summary"]["overall"]["n"] == len(result["predictions"]) == 3
    for prediction in result["predictions"]:
        assert prediction["options"][prediction["correct_index"]] == prediction["answer"]
        assert prediction["acc"] == (prediction["options"][prediction["pred"]] == prediction["answer"])
    gen = json.loads(result_path(cfg.output_dir, "model", "pacute-affixation", "gen", "en").read_text())
    assert {"exact", "prefix", "contains"} <= set(gen["summary"]["overall"])
    assert not list(cfg.output_dir.rglob("*.partial.jsonl"))


class CrashingModel(OracleModel):
    def __init__(self, items, crash_after: int):
        super().__init__(items)
        self.crash_after = crash_after

    def loglikelihood(self, requests):
        if self.calls >= self.crash_after:
            raise KeyboardInterrupt
        return super().loglikelihood(requests)


def test_an_interrupted_run_resumes_and_matches_an_uninterrupted_one(benchmark_dir, tmp_path):
    items = load_benchmark("hierarchical-level2", "mcq", benchmark_dir)["hierarchical-level2"]
    base = dict(models=["fake-org/fake"], benchmarks=["hierarchical-level2"], eval_mode="mcq")
    base.update(benchmark_dir=benchmark_dir, batch_size=1)
    crashing = CrashingModel(items, crash_after=2 * len(items[0].options))
    with pytest.raises(KeyboardInterrupt):
        run_evaluation(EvalConfig(**base, output_dir=tmp_path / "a"), lambda spec, cfg: crashing)
    final = result_path(tmp_path / "a", "fake-org__fake", "hierarchical-level2", "mcq", "en")
    partial = final.with_name(final.stem + ".partial.jsonl")
    assert not final.exists() and len(partial.read_text().splitlines()) == 1 + 2  # header + two items
    resumed = OracleModel(items)
    run_evaluation(EvalConfig(**base, output_dir=tmp_path / "a"), lambda spec, cfg: resumed)
    assert resumed.calls == sum(len(i.options) for i in items[2:])  # only the missing item
    run_evaluation(EvalConfig(**base, output_dir=tmp_path / "b"), lambda spec, cfg: OracleModel(items))
    clean = result_path(tmp_path / "b", "fake-org__fake", "hierarchical-level2", "mcq", "en")
    assert json.loads(final.read_text())["predictions"] == json.loads(clean.read_text())["predictions"]

    def must_not_load(spec, cfg):
        raise AssertionError("a finished task loaded its model again")

    run_evaluation(EvalConfig(**base, output_dir=tmp_path / "a"), must_not_load)


def test_a_larger_limit_scores_only_the_new_items(benchmark_dir, tmp_path):
    items = all_items(benchmark_dir, "pacute", "mcq")
    base = dict(models=["m"], benchmarks=["pacute"], eval_mode="mcq", benchmark_dir=benchmark_dir)
    base.update(output_dir=tmp_path)
    run_evaluation(EvalConfig(**base, limit=1), lambda spec, cfg: OracleModel(items))
    second = OracleModel(items)
    run_evaluation(EvalConfig(**base), lambda spec, cfg: second)
    firsts = {}
    for item in items:
        firsts.setdefault(item.task, item)
    assert len(firsts) == 5  # one per PACUTE subset
    # the first item of every subset was reused
    assert second.calls == sum(len(i.options) for i in items) - sum(len(i.options) for i in firsts.values())


def test_tagalog_prompts_and_changed_settings_get_their_own_results(benchmark_dir, tmp_path):
    items = all_items(benchmark_dir, "hierarchical", "gen")
    base = dict(models=["m"], benchmarks=["hierarchical"], eval_mode="gen", benchmark_dir=benchmark_dir)
    base.update(output_dir=tmp_path)
    tagalog = OracleModel(items, language="tl")  # knows only the Tagalog prompts
    written = run_evaluation(EvalConfig(**base, language="tl"), lambda spec, cfg: tagalog)
    assert all(path.name.endswith("_gen_tl.json") for path in written)
    assert all(json.loads(path.read_text())["summary"]["overall"]["exact"] == 1.0 for path in written)
    calls = []

    class Recording(OracleModel):
        def generate(self, prompts, max_new_tokens=50):
            calls.append(max_new_tokens)
            return super().generate(prompts, max_new_tokens)

    for max_new_tokens in (5, 5, 6):  # the repeat is skipped; a new limit scores again
        run_evaluation(EvalConfig(**base, max_new_tokens=max_new_tokens), lambda spec, cfg: Recording(items))
    assert calls == [5] * len(written) + [6] * len(written)


def test_models_must_have_distinct_names(tmp_path):
    for folder in ("a", "b"):  # two exported models of the same name
        (tmp_path / folder / "step_10").mkdir(parents=True)
        (tmp_path / folder / "step_10" / "config.json").write_text("{}")
    with pytest.raises(ValueError, match="--model-names"):
        model_specs([str(tmp_path / "a" / "step_10"), str(tmp_path / "b" / "step_10")])
    assert [s.name for s in model_specs(["google/gemma-3-1b-pt"])] == ["google__gemma-3-1b-pt"]


def test_the_command_line_runs_end_to_end(tiny_model_dir, benchmark_dir, tmp_path):
    from morphcpt.evaluate.runner import main

    out = tmp_path / "results"
    argv = ["--models", str(tiny_model_dir), "--benchmarks", "pacute-syllabification", "--eval-mode", "both"]
    argv += ["--benchmark-dir", str(benchmark_dir), "--output-dir", str(out), "--device", "cpu"]
    argv += ["--max-new-tokens", "4", "--export-lm-eval", str(tmp_path / "lm_eval")]
    assert main(argv) == 0
    assert sorted(p.name for p in (out / "model").iterdir()) == [
        "pacute-syllabification_gen.json",
        "pacute-syllabification_mcq.json",
    ]
    assert (tmp_path / "lm_eval" / "morphcpt_pacute_syllabification_mcq.yaml").is_file()


def test_the_scoring_precision_is_chosen_recorded_and_never_mixed_on_resume(
    tiny_model_dir, benchmark_dir, tmp_path
):
    """--dtype: the model scores in it (auto: fp32 on a CPU), each result records it among its settings, and a rerun
    in the other precision scores again instead of keeping the first one's log-likelihoods (on an H200 the same
    weights in bf16 and fp32 flipped 2 of 100 Level 2 items)."""
    from morphcpt.evaluate.runner import load_hf_model, model_specs

    base = dict(models=[str(tiny_model_dir)], benchmarks=["hierarchical-level2"], eval_mode="mcq")
    base.update(benchmark_dir=benchmark_dir, output_dir=tmp_path / "results", batch_size=4, device="cpu")
    (spec,) = model_specs(base["models"])
    for dtype, expected in (("auto", "float32"), ("fp32", "float32"), ("bf16", "bfloat16")):
        assert str(load_hf_model(spec, EvalConfig(**base, dtype=dtype)).model.dtype) == f"torch.{expected}"
    path = result_path(base["output_dir"], "model", "hierarchical-level2", "mcq", "en")
    logprobs = {}
    for dtype in ("auto", "bf16"):
        run_evaluation(EvalConfig(**base, dtype=dtype))
        result = json.loads(path.read_text())
        logprobs[dtype] = [p["logprobs"] for p in result["predictions"]]
        assert result["settings"]["dtype"] == {"auto": "fp32", "bf16": "bf16"}[dtype]
    assert logprobs["auto"] != logprobs["bf16"]  # scored again in bf16, not the fp32 file kept
    with pytest.raises(SystemExit):
        from morphcpt.evaluate.runner import build_parser

        build_parser().parse_args(["--models", "m", "--dtype", "fp16"])
