"""Benchmarks and evaluation under faults (issue #14): crafted JSON lines, an empty benchmark file, a truncated
result file, a regeneration that did not finish, altered files, mistyped sizes, a missing model folder."""

from __future__ import annotations

import importlib
import json
import logging

import pytest

from morphcpt.bench.generate import generate, load_config, main
from morphcpt.bench.settings import BenchmarkConfig
from morphcpt.bench.suites import HIERARCHICAL_LEVELS, PACUTE_SUBSETS
from morphcpt.evaluate.items import BenchmarkFormatError, load_file
from morphcpt.evaluate.runner import EvalConfig, result_path, run_evaluation

GOOD_ROW = json.dumps({"level": 1, "category": "c", "prompt_en": "q", "options": ["a", "b"], "answer": "a"})
ONLY_AFFIXATION = {s: 8 if s == "affixation" else 0 for s in PACUTE_SUBSETS}


class Oracle:
    """Gives the recorded answer the highest log-likelihood."""

    def __init__(self, items):
        self.answers = {item.prompt("en").rstrip(): item.answer for item in items}
        self.calls = 0

    def loglikelihood(self, requests):
        self.calls += len(requests)
        return [-1.0 if option[1:] == self.answers[context] else -9.0 for context, option in requests]


@pytest.fixture
def generated(tmp_path):
    out = tmp_path / "bench"
    cfg = BenchmarkConfig(
        output_dir=str(out),
        word_pool=2000,
        pacute=dict(ONLY_AFFIXATION),
        hierarchical={f"level{n}": 0 for n in HIERARCHICAL_LEVELS},
    )
    generate(cfg)
    return out


def evaluate(benchmark_dir, output_dir, factory=None):
    cfg = EvalConfig(
        models=["org/model"],
        benchmarks=["pacute-affixation"],
        eval_mode="mcq",
        benchmark_dir=benchmark_dir,
        output_dir=output_dir,
    )
    from morphcpt.evaluate.items import load_benchmark

    items = load_benchmark("pacute-affixation", "mcq", benchmark_dir)["pacute-affixation"]
    model = Oracle(items)
    return run_evaluation(cfg, factory or (lambda spec, c: model)), model


@pytest.mark.parametrize(
    "line",
    ["[" * 1000 + "]" * 1000, '{"level": 1, "n": ' + "9" * 5000 + "}"],
    ids=["nested 1,000 deep", "5,000-digit integer"],
)
def test_a_crafted_benchmark_line_is_a_format_error_with_file_and_line(tmp_path, line):
    path = tmp_path / "crafted_mcq.jsonl"
    path.write_text(GOOD_ROW + "\n" + line + "\n")
    with pytest.raises(BenchmarkFormatError, match=f"{path}:2: JSON nested too deep or number too long"):
        load_file(path, "hierarchical", "mcq")


def test_an_empty_benchmark_file_is_refused_before_any_result_is_written(generated, tmp_path):
    (generated / "manifest.json").unlink()
    (generated / "pacute" / "affixation_mcq.jsonl").write_text("")
    with pytest.raises(ValueError, match="pacute-affixation \\(mcq\\) has no items"):
        evaluate(generated, tmp_path / "results")
    assert not (tmp_path / "results").exists()


def test_a_truncated_result_file_is_named_and_scored_again(generated, tmp_path, caplog):
    (written,), _ = evaluate(generated, tmp_path / "results")
    complete = written.read_text()
    written.write_text(complete[: len(complete) // 2])
    with caplog.at_level(logging.WARNING, logger="morphcpt.evaluate.runner"):
        _, model = evaluate(generated, tmp_path / "results")
    assert f"{written} is unreadable" in caplog.text
    assert model.calls == 8 * 4  # every item scored again
    assert json.loads(written.read_text())["summary"]["overall"]["acc"] == 1.0


def test_an_unfinished_regeneration_or_an_altered_file_is_refused(generated, tmp_path):
    manifest = json.loads((generated / "manifest.json").read_text())
    assert manifest["complete"] is True
    evaluate(generated, tmp_path / "a")
    # A regeneration killed after rewriting some files leaves this manifest behind.
    (generated / "manifest.json").write_text(json.dumps({"complete": False}))
    with pytest.raises(ValueError, match="did not finish"):
        evaluate(generated, tmp_path / "b")
    (generated / "manifest.json").write_text(json.dumps(manifest))
    mcq = generated / "pacute" / "affixation_mcq.jsonl"
    mcq.write_text("".join(mcq.read_text().splitlines(keepends=True)[:4]))
    with pytest.raises(ValueError, match="affixation_mcq.jsonl is not the file .*manifest.json lists"):
        evaluate(generated, tmp_path / "c")


def test_generation_marks_the_manifest_incomplete_until_the_last_file(tmp_path, monkeypatch):
    module = importlib.import_module("morphcpt.bench.generate")  # the package exports a function of that name
    cfg = BenchmarkConfig(
        output_dir=str(tmp_path),
        word_pool=2000,
        pacute=dict(ONLY_AFFIXATION),
        hierarchical={f"level{n}": 0 for n in HIERARCHICAL_LEVELS},
    )
    generate(cfg)
    real = module.write_records
    calls = []

    def killed_after_one_file(path, records):
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the run is killed between two files
        real(path, records)

    monkeypatch.setattr(module, "write_records", killed_after_one_file)
    with pytest.raises(KeyboardInterrupt):
        generate(BenchmarkConfig(**{**cfg.__dict__, "seed": 1}))
    assert json.loads((tmp_path / "manifest.json").read_text())["complete"] is False


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("pacute.affixaton=70", "unknown pacute subset 'affixaton'"),
        ("hierarchical.level9=5", "unknown hierarchical subset 'level9'"),
        ("pacute.affixation=-5", "pacute.affixation must be a size of 0 (skip) or more, got -5"),
    ],
)
def test_mistyped_or_negative_sizes_are_refused(override, message, tmp_path, capsys):
    with pytest.raises(ValueError, match=message.replace("(", "\\(").replace(")", "\\)")):
        load_config(None, [override])
    assert main(["--output-dir", str(tmp_path), override]) == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_a_missing_model_folder_is_one_clear_error_before_any_task(generated, tmp_path):
    cfg = EvalConfig(
        models=[str(tmp_path / "exports" / "gemma3-1b-patok")],
        benchmarks=["pacute-affixation"],
        eval_mode="mcq",
        benchmark_dir=generated,
        output_dir=tmp_path / "results",
    )
    with pytest.raises(FileNotFoundError, match="model folder not found: .*gemma3-1b-patok") as error:
        run_evaluation(cfg)
    assert error.value.__context__ is None
    assert not (tmp_path / "results").exists()
    path = result_path(tmp_path / "results", "gemma3-1b-patok", "pacute-affixation", "mcq", "en")
    assert not path.exists()


def test_the_hf_loader_names_a_missing_or_broken_folder(tmp_path, tiny_gemma3):
    import shutil

    from morphcpt.evaluate.hf_model import HFCausalLM

    with pytest.raises(FileNotFoundError, match="model folder not found"):
        HFCausalLM.load(tmp_path / "nowhere", device="cpu")
    broken = tmp_path / "broken"
    shutil.copytree(tiny_gemma3, broken)
    (broken / "config.json").write_text("{")
    with pytest.raises(OSError, match=f"cannot load model {broken}"):
        HFCausalLM.load(broken, device="cpu")
