"""The lm-evaluation-harness export: tasks, groups and their data, our matcher as the GEN metric, and lm-eval
running every exported family to the scores we compute."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evaluate_helpers import OFFICIAL, all_items
from morphcpt.evaluate.answers import first_line
from morphcpt.evaluate.gen import score_gen
from morphcpt.evaluate.items import load_benchmark
from morphcpt.evaluate.mcq import score_mcq
from morphcpt.evaluate.runner import EvalConfig


class _TaskLoader(yaml.SafeLoader):
    """Reads lm-eval's `!function module.name` tag as ("!function", "module.name")."""


_TaskLoader.add_constructor("!function", lambda loader, node: ("!function", loader.construct_scalar(node)))


def test_lm_eval_export_writes_tasks_groups_and_their_data(benchmark_dir, tmp_path):
    from morphcpt.evaluate.lm_eval import export_lm_eval
    from morphcpt.evaluate.runner import load_tasks

    cfg = EvalConfig(benchmarks=["pacute", "hierarchical"], benchmark_dir=benchmark_dir)
    tasks = load_tasks(cfg)
    written = export_lm_eval(tasks, tmp_path)
    configs = {p.stem: yaml.load(p.read_text(), Loader=_TaskLoader) for p in written}
    assert len(configs) == len(tasks) + 4  # one group per benchmark and mode
    mcq = configs["morphcpt_hierarchical_level2_mcq"]
    assert mcq["output_type"] == "multiple_choice"
    assert (mcq["doc_to_choice"], mcq["doc_to_target"], mcq["target_delimiter"]) == ("options", "gold", " ")
    data_file = Path(mcq["dataset_kwargs"]["data_files"]["test"])
    rows = [json.loads(line) for line in data_file.read_text().splitlines()]
    assert len(rows) == len(tasks[("hierarchical-level2", "mcq")])
    assert all(row["gold"] and all(row["options"][g] == row["answer"] for g in row["gold"]) for row in rows)
    gen = configs["morphcpt_pacute_affixation_gen"]
    assert gen["output_type"] == "generate_until" and gen["generation_kwargs"]["until"] == []
    assert gen["process_results"] == ("!function", "morphcpt_answers.process_results")
    assert [m["metric"] for m in gen["metric_list"]] == ["exact", "prefix", "contains"]
    assert configs["morphcpt_hierarchical_mcq"]["task"] == [
        f"morphcpt_hierarchical_level{n}_mcq" for n in (0, 2, 3)
    ]


def test_the_exported_gen_metric_is_our_matcher(tmp_path):
    """lm-eval imports `morphcpt_answers.py` from beside the YAML: it must score raw outputs exactly as we do."""
    import importlib.util

    from morphcpt.evaluate.lm_eval import export_lm_eval

    items = all_items(OFFICIAL, "pacute", "gen") + all_items(OFFICIAL, "hierarchical", "gen")
    export_lm_eval({("pacute-affixation", "gen"): items}, tmp_path)
    spec = importlib.util.spec_from_file_location("exported", tmp_path / "morphcpt_answers.py")
    exported = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exported)
    outputs = [
        "\n kumain\nx",
        " “Naman!”",
        "10",
        " s  i l a",
        "‘tangna",
        "abcdefghijklmnopqrstuvwxyz 0123456789",
    ]
    outputs += [f" {item.answer} at iba pa" for item in items] + [f"{item.answer}." for item in items]

    class Replay:
        def __init__(self, output):
            self.output = output

        def generate(self, prompts, max_new_tokens=50):
            return [self.output] * len(prompts)

    rows = [json.loads(line) for line in (tmp_path / "data" / "morphcpt_pacute_affixation_gen.jsonl").open()]
    for output in outputs:
        ours = score_gen(Replay(output), items)
        theirs = [exported.process_results(row, [output]) for row in rows]
        assert [{m: float(getattr(p, m)) for m in ("exact", "prefix", "contains")} for p in ours] == theirs


def test_a_benchmark_of_one_task_is_exported_as_that_task_not_a_group(tmp_path):
    from morphcpt.evaluate.lm_eval import export_lm_eval

    tasks = {("langgame", mode): all_items(OFFICIAL, "langgame", mode) for mode in ("mcq", "gen")}
    written = export_lm_eval(tasks, tmp_path)
    assert sorted(p.name for p in written) == ["morphcpt_langgame_gen.yaml", "morphcpt_langgame_mcq.yaml"]
    config = yaml.load((tmp_path / "morphcpt_langgame_mcq.yaml").read_text(), Loader=_TaskLoader)
    assert config["output_type"] == "multiple_choice" and "group" not in config


@pytest.mark.slow
def test_lm_eval_runs_every_exported_family_and_scores_what_we_score(tiny_model_dir, tiny_lm, tmp_path):
    """The export of all 17 official-format files, run by lm-evaluation-harness itself on a tiny Gemma 3: every
    task runs, MCQ log-likelihoods are ours (so both scored the same text: the " " and "" delimiters), and GEN
    decodes the same answer lines and scores them alike."""
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager

    from morphcpt.evaluate.items import BENCHMARKS
    from morphcpt.evaluate.lm_eval import export_lm_eval, task_name

    tasks = {}
    for name in BENCHMARKS:
        for mode in ("mcq", "gen"):
            if (name, mode) != ("cute", "mcq"):
                tasks.update({(t, mode): items for t, items in load_benchmark(name, mode, OFFICIAL).items()})
    export_lm_eval(tasks, tmp_path)
    names = {key: task_name(*key) for key in tasks}
    out = lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={tiny_model_dir},add_bos_token=True,dtype=float32",
        tasks=sorted(names.values()),
        task_manager=TaskManager(include_path=str(tmp_path)),
        device="cpu",
        batch_size=8,
        log_samples=True,
        gen_kwargs="max_gen_toks=4",
    )
    assert set(out["samples"]) == set(names.values())
    for key, items in tasks.items():
        samples = {s["doc"]["id"]: s for s in out["samples"][names[key]]}
        assert set(samples) == {item.id for item in items}
        if key[1] == "mcq":
            for p in score_mcq(tiny_lm, items):
                theirs = [float(resp[0]) for resp in samples[p.id]["filtered_resps"]]
                assert theirs == pytest.approx(p.logprobs, abs=1e-4)
                if not p.tied:
                    assert p.acc == bool(samples[p.id]["acc"])
        else:
            for p in score_gen(tiny_lm, items, max_new_tokens=4):
                assert p.prediction == first_line(samples[p.id]["resps"][0][0])[0]
                assert (p.exact, p.contains) == (
                    bool(samples[p.id]["exact"]),
                    bool(samples[p.id]["contains"]),
                )
