"""The continuous per-item scores (`morphcpt.evaluate.continuous`): gold_prob and gold_margin of MCQ items from the
log-likelihoods the scorer already has, gold_bpb of GEN items from one teacher-forced request each; per UTF-8 byte;
result files written before them still load, and a rerun scores their items again."""

from __future__ import annotations

import json
import math

import pytest

from morphcpt.evaluate.continuous import CONTINUOUS_METRICS, value
from morphcpt.evaluate.gen import score_gen
from morphcpt.evaluate.items import Item, load_benchmark
from morphcpt.evaluate.mcq import mcq_requests, score_mcq
from morphcpt.evaluate.runner import EvalConfig, is_complete, result_path, run_evaluation
from morphcpt.evaluate.summary import summarise
from suite_paths import OFFICIAL


def _item(options, answer, *, mode="mcq", prompt="Q?", delimiter=" ", item_id="c1") -> Item:
    return Item(
        id=item_id,
        benchmark="pacute",
        subset="affixation",
        mode=mode,
        category="affixation",
        subcategory="x",
        prompt_en=prompt,
        prompt_tl=prompt,
        answer=answer,
        options=tuple(options),
        correct_index=list(options).index(answer) if options else 0,
        delimiter=delimiter,
    )


class TableModel:
    """Log-likelihoods from a table of continuations; records every request."""

    def __init__(self, table: dict[str, float]):
        self.table = table
        self.requests: list[tuple[str, str]] = []

    def loglikelihood(self, requests):
        self.requests += list(requests)
        return [self.table[k] for _, k in requests]

    def generate(self, prompts, max_new_tokens=50):
        return ["x"] * len(prompts)


def _softmax(values):
    top = max(values)
    weights = [math.exp(v - top) for v in values]
    return [w / sum(weights) for w in weights]


def test_the_contract_names_and_directions():
    assert CONTINUOUS_METRICS == {"gold_prob": "higher", "gold_margin": "higher", "gold_bpb": "lower"}


def test_gold_prob_is_the_golds_share_of_a_softmax_over_per_byte_scores():
    options = ("kain", "kumain", "kinain", "pagkain")
    item = _item(options, "kinain")
    table = {" kain": -9.0, " kumain": -7.5, " kinain": -8.0, " pagkain": -20.0}
    (prediction,) = score_mcq(TableModel(table), [item])
    probs = _softmax([table[" " + o] / len(o.encode()) for o in options])
    assert prediction.gold_prob == pytest.approx(probs[2], abs=1e-12)
    assert sum(probs) == pytest.approx(1.0)  # the gold's share and the others' make the whole
    per_byte = [table[" " + o] / len(o.encode()) for o in options]
    assert prediction.gold_margin == pytest.approx(per_byte[2] - max(per_byte[:2] + per_byte[3:]))


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_tied_per_byte_scores_give_chance(n):
    options = [("a" * (i + 1)) for i in range(n)]  # lengths 1..n, log-likelihoods proportional: per byte tied
    item = _item(options, options[-1])
    (prediction,) = score_mcq(TableModel({" " + o: -1.5 * len(o) for o in options}), [item])
    assert prediction.gold_prob == pytest.approx(1 / n)
    assert prediction.gold_margin == pytest.approx(0.0)


@pytest.mark.parametrize(("gold_score", "other_score"), [(-3.0, -5.0), (-5.0, -3.0), (-2.0, -2.5)])
def test_the_margins_sign_is_the_accuracy_on_two_options_of_equal_length(gold_score, other_score):
    item = _item(("bata", "mata"), "mata")
    (prediction,) = score_mcq(TableModel({" mata": gold_score, " bata": other_score}), [item])
    assert (prediction.gold_margin > 0) is prediction.acc is prediction.acc_norm
    assert (prediction.gold_prob > 0.5) is prediction.acc


def test_multi_byte_characters_count_in_bytes_not_characters():
    # "ñ" and "é" are one character and two UTF-8 bytes each. Per character the plain distractor wins
    # (-6.6/3 = -2.2 > -7.5/3 = -2.5); per byte the accented gold does (-7.5/6 = -1.25 > -6.6/3 = -2.2).
    item = _item(("aba", "ñéñ"), "ñéñ")
    (prediction,) = score_mcq(TableModel({" aba": -6.6, " ñéñ": -7.5}), [item])
    assert not prediction.acc_norm
    assert prediction.gold_margin == pytest.approx(-1.25 - -2.2)
    assert prediction.gold_prob == pytest.approx(_softmax([-2.2, -1.25])[1])


def test_an_answer_listed_twice_gets_both_copies_mass():
    item = _item(("kain", "kumain", "kumain"), "kumain")
    (prediction,) = score_mcq(TableModel({" kain": -4.0, " kumain": -6.0}), [item])
    assert prediction.gold_prob == pytest.approx(2 / 3)  # tied per byte: chance is 2/3 here
    assert prediction.gold_margin == pytest.approx(0.0)


def test_gold_bpb_is_minus_the_answers_log_likelihood_in_bits_per_byte():
    items = [
        _item((), "kumain", mode="gen", item_id="g1"),
        _item((), "ñino", mode="gen", item_id="g2"),  # 5 bytes, 4 characters
        _item((), " make", mode="gen", prompt="… Answer: ", delimiter="", item_id="g3"),
    ]
    model = TableModel({" kumain": -7.0, " ñino": -3.0, " make": -2.5})
    predictions = score_gen(model, items)
    assert [p.gold_bpb for p in predictions] == pytest.approx(
        [7.0 / math.log(2) / 6, 3.0 / math.log(2) / 5, 2.5 / math.log(2) / 5]
    )
    # the same continuation the MCQ path scores: delimiter + answer after the prompt, rstripped only with a delimiter
    assert model.requests == [("Q?", " kumain"), ("Q?", " ñino"), ("… Answer: ", " make")]


def test_a_generator_without_log_likelihoods_gets_no_bpb():
    class Replay:
        def generate(self, prompts, max_new_tokens=50):
            return ["kain"] * len(prompts)

    (prediction,) = score_gen(Replay(), [_item((), "kain", mode="gen")])
    assert prediction.exact and prediction.gold_bpb is None


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory, sample_tokenizer_dir):
    from morphcpt.evaluate.hf_model import HFCausalLM
    from morphcpt.modeling.models import save_tiny_gemma3

    folder = save_tiny_gemma3(
        sample_tokenizer_dir,
        tmp_path_factory.mktemp("tiny") / "model",
        num_layers=2,
        num_heads=2,
        intermediate_size=128,
    )
    return HFCausalLM.load(folder, device="cpu", batch_size=4)


def test_the_tiny_models_scores_follow_from_its_log_likelihoods(tiny_lm):
    mcq = [i for items in load_benchmark("hierarchical", "mcq", OFFICIAL).values() for i in items]
    mcq += [i for items in load_benchmark("langgame", "mcq", OFFICIAL).values() for i in items]
    for item, prediction in zip(mcq, score_mcq(tiny_lm, mcq), strict=True):
        per_byte = [s / len(o.encode()) for s, o in zip(prediction.logprobs, item.options, strict=True)]
        probs = _softmax(per_byte)
        gold = item.gold_indices
        assert prediction.gold_prob == pytest.approx(sum(probs[i] for i in gold), abs=1e-9)
        assert 0.0 < prediction.gold_prob < 1.0
        distractors = [s for i, s in enumerate(per_byte) if i not in gold]
        assert prediction.gold_margin == pytest.approx(max(per_byte[i] for i in gold) - max(distractors))
    # GEN: bits/byte of the answer equal the MCQ path's log-likelihood of the same continuation
    gen = [i for items in load_benchmark("multi_digit_addition", "gen", OFFICIAL).values() for i in items]
    predictions = score_gen(tiny_lm, gen, max_new_tokens=2)
    for item, prediction in zip(gen, predictions, strict=True):
        (logprob,) = tiny_lm.loglikelihood(
            [
                mcq_requests(
                    _item((item.answer,), item.answer, prompt=item.prompt_en, delimiter=item.delimiter)
                )[0]
            ]
        )
        assert prediction.gold_bpb == pytest.approx(
            -logprob / math.log(2) / len(item.answer.encode()), rel=1e-6
        )
        assert prediction.gold_bpb > 0


def test_old_result_files_load_and_their_items_are_scored_again(tmp_path):
    items = load_benchmark("langgame", "mcq", OFFICIAL)["langgame"]
    cfg = EvalConfig(models=["fake-org/m"], benchmarks=["langgame"], eval_mode="mcq", benchmark_dir=OFFICIAL)
    cfg.output_dir = tmp_path
    table = {" " + o.strip(): -float(len(o)) for i in items for o in i.options}

    class Model:
        calls = 0

        def loglikelihood(self, requests):
            Model.calls += len(requests)
            return [table[" " + k.strip()] for _, k in requests]

    (path,) = run_evaluation(cfg, lambda spec, c: Model())
    result = json.loads(path.read_text())
    assert all(isinstance(p["gold_prob"], float) for p in result["predictions"])
    assert "gold_prob" in result["summary"]["overall"]
    for prediction in result["predictions"]:  # as a file from before the continuous scores
        del prediction["gold_prob"], prediction["gold_margin"]
    path.write_text(json.dumps(result))
    assert summarise(result["predictions"], "mcq")["overall"]["n"] == len(items)
    assert "gold_prob" not in summarise(result["predictions"], "mcq")["overall"]
    assert value(result["predictions"][0], "gold_prob") is None
    assert not is_complete(path, result["settings"], items)
    Model.calls = 0
    run_evaluation(cfg, lambda spec, c: Model())
    assert Model.calls == sum(len(i.options) for i in items)
    again = json.loads(result_path(tmp_path, "fake-org__m", "langgame", "mcq", "en").read_text())
    assert all(value(p, "gold_prob") is not None for p in again["predictions"])


def test_controls_name_the_forgetting_checks_in_both_modes(tmp_path):
    from morphcpt.evaluate.runner import build_parser, config_from_args

    args = build_parser().parse_args(
        ["--models", "m", "--benchmarks", "controls", "langgame", "--eval-mode", "both"]
    )
    cfg = config_from_args(args)
    assert cfg.benchmarks == ["langgame", "multi_digit_addition"]
    cfg.benchmark_dir, cfg.output_dir = OFFICIAL, tmp_path
    items = {
        t: i
        for n in cfg.benchmarks
        for m in ("mcq", "gen")
        for t, i in load_benchmark(n, m, OFFICIAL).items()
    }

    class Oracle(TableModel):
        def __init__(self):
            super().__init__({})

        def loglikelihood(self, requests):
            answers = {i.prompt_en: i.answer for task in items.values() for i in task}
            return [-1.0 if k == answers.get(c) else -9.0 for c, k in requests]

        def generate(self, prompts, max_new_tokens=50):
            answers = {i.prompt_en: i.answer for task in items.values() for i in task}
            return [answers[p] for p in prompts]

    written = run_evaluation(cfg, lambda spec, c: Oracle())
    assert sorted(p.name for p in written) == [
        "langgame_gen.json",
        "langgame_mcq.json",
        "multi_digit_addition_gen.json",
        "multi_digit_addition_mcq.json",
    ]
    for path in written:
        result = json.loads(path.read_text())
        assert result["control"] is True
        overall = result["summary"]["overall"]
        if result["mode"] == "mcq":
            assert overall["acc_norm"] == 1.0 and overall["gold_prob"] > 0.5 and overall["gold_margin"] > 0
        else:
            assert overall["exact"] == 1.0 and 0 < overall["gold_bpb"] < 1.0
