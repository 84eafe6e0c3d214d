"""Multiple-choice scoring sanity checks: an oracle scores 100 % wherever the answer sits, an indifferent model
scores near chance without a favourite position, acc and acc_norm as lm-evaluation-harness computes them, ties
and NaN. Models are fakes behind the scorer protocol (`evaluate_helpers`)."""

from __future__ import annotations

import json
import random

import pytest

from evaluate_helpers import (
    OFFICIAL,
    ConstantModel,
    ContentModel,
    FirstOptionModel,
    OracleModel,
    all_items,
    shuffled,
    synthetic_items,
)
from morphcpt.evaluate.items import Item
from morphcpt.evaluate.mcq import TIE_TOLERANCE, choose, mcq_requests, score_mcq


def test_an_oracle_scores_100_percent_wherever_the_answer_sits():
    items = all_items(OFFICIAL, "pacute", "mcq") + all_items(OFFICIAL, "hierarchical", "mcq")
    items += synthetic_items(200, seed=1)
    predictions = score_mcq(OracleModel(items), items)
    assert all(p.acc and p.acc_norm for p in predictions)
    assert {p.correct_index for p in predictions} == {0, 1, 2, 3}


def test_shuffling_options_changes_no_per_item_result():
    items = synthetic_items(300, seed=2)
    rng = random.Random(0)
    moved = [shuffled(item, rng) for item in items]
    assert sum(a.correct_index != b.correct_index for a, b in zip(items, moved, strict=True)) > 150
    oracle_before, oracle_after = score_mcq(OracleModel(items), items), score_mcq(OracleModel(moved), moved)
    assert [p.acc for p in oracle_before] == [p.acc for p in oracle_after] == [True] * len(items)
    # A model that judges options by their text alone picks the same text whatever the order.
    before, after = score_mcq(ContentModel(), items), score_mcq(ContentModel(), moved)
    assert [b.options[b.pred] for b in before] == [a.options[a.pred] for a in after]
    assert [(b.acc, b.acc_norm) for b in before] == [(a.acc, a.acc_norm) for a in after]


@pytest.mark.parametrize("correct_at", [0, 3, None])
def test_an_indifferent_model_scores_near_chance_without_favouring_a_position(correct_at):
    items = synthetic_items(2000, correct_at=correct_at, seed=3)
    predictions = score_mcq(ConstantModel(), items)
    accuracy = sum(p.acc for p in predictions) / len(items)
    assert abs(accuracy - 0.25) < 0.035  # ~3.6 binomial standard deviations
    assert all(p.tied for p in predictions)
    for position in range(4):
        assert abs(sum(p.pred == position for p in predictions) / len(items) - 0.25) < 0.035
    assert score_mcq(ConstantModel(), items) == predictions  # the tie-break is reproducible


def test_answers_not_in_first_position_are_scored_against_the_recorded_answer():
    items = synthetic_items(40, correct_at=0, seed=4) + synthetic_items(120, seed=5)
    predictions = score_mcq(FirstOptionModel(items), items)
    for item, prediction in zip(items, predictions, strict=True):
        assert prediction.pred == 0
        assert prediction.acc is (item.correct_index == 0)


def _item(options, answer, item_id="n1"):
    return Item(
        id=item_id,
        benchmark="pacute",
        subset="affixation",
        mode="mcq",
        category="affixation",
        subcategory="x",
        prompt_en="Q?",
        prompt_tl="T?",
        answer=answer,
        options=tuple(options),
        correct_index=list(options).index(answer),
    )


def test_acc_sums_log_probabilities_and_acc_norm_divides_by_characters():
    item = _item(("ka", "pinagsamasama"), "pinagsamasama")

    class LengthModel:
        def loglikelihood(self, requests):  # long right answer: low total, high per character
            return [{" ka": -4.0, " pinagsamasama": -6.5}[k] for _, k in requests]

    (prediction,) = score_mcq(LengthModel(), [item])
    assert (prediction.acc, prediction.acc_norm) == (False, True)
    assert prediction.logprobs == [-4.0, -6.5]


def test_acc_norm_divides_by_the_option_alone_not_the_delimiter():
    # -2/1 < -5/3 picks "bbb"; dividing by the scored " " + option (-2/2 > -5/4) would pick "a".
    item = _item(("a", "bbb"), "bbb")

    class Model:
        def loglikelihood(self, requests):
            return [{" a": -2.0, " bbb": -5.0}[k] for _, k in requests]

    (prediction,) = score_mcq(Model(), [item])
    assert (prediction.pred, prediction.pred_norm, prediction.acc_norm) == (0, 1, True)


def test_acc_and_acc_norm_equal_lm_eval_on_the_fixtures():
    """lm-eval 0.4.x (`ConfigurableTask.process_results`, multiple_choice): pred = argmax(lls), pred_norm =
    argmax(lls / [len(choice) for choice in choices]), right when the pick is in the gold list the export writes."""
    items = all_items(OFFICIAL, "pacute", "mcq") + all_items(OFFICIAL, "hierarchical", "mcq")
    items += synthetic_items(300, seed=6)
    model = ContentModel()
    for item, prediction in zip(items, score_mcq(model, items), strict=True):
        lls = model.loglikelihood(mcq_requests(item))
        gold = [i for i, option in enumerate(item.options) if option == item.answer]
        lengths = [float(len(choice)) for choice in item.options]
        pred_norm = max(range(len(lls)), key=lambda i: (lls[i] / lengths[i], -i))
        if not prediction.tied_norm:
            assert prediction.pred_norm == pred_norm
            assert prediction.acc_norm is (pred_norm in gold)
        if not prediction.tied:
            assert prediction.acc is (max(range(len(lls)), key=lambda i: (lls[i], -i)) in gold)


def test_a_duplicated_answer_counts_either_copy_in_both_evaluators(tmp_path):
    from morphcpt.evaluate.lm_eval import export_lm_eval

    item = _item(("kain", "kumain", "kinain", "kumain"), "kumain")
    assert item.gold_indices == (1, 3)

    class PrefersLastCopy:
        def loglikelihood(self, requests):
            return [-1.0 if i == 3 else -9.0 for i in range(len(requests))]

    (prediction,) = score_mcq(PrefersLastCopy(), [item])
    assert prediction.pred == 3 and prediction.acc and prediction.acc_norm
    export_lm_eval({("pacute-affixation", "mcq"): [item]}, tmp_path)
    (row,) = [
        json.loads(line) for line in (tmp_path / "data" / "morphcpt_pacute_affixation_mcq.jsonl").open()
    ]
    assert row["gold"] == [1, 3]


def test_scores_within_the_tolerance_are_ties():
    noise = TIE_TOLERANCE / 10
    pick, tied = choose([-3.0, -3.0 + noise, -7.0], "k")
    assert tied and pick in (0, 1)
    assert {choose([-3.0 + noise, -3.0, -7.0], f"k{i}")[0] for i in range(50)} == {0, 1}
    assert choose([-3.0, -3.0 + 10 * TIE_TOLERANCE], "k") == (1, False)


def test_requests_join_prompt_and_option_with_one_space():
    item = synthetic_items(1)[0]
    spaced = Item(**{**item.__dict__, "prompt_en": item.prompt_en + "  "})
    assert mcq_requests(spaced) == mcq_requests(item)
    assert all(k == " " + option for (_, k), option in zip(mcq_requests(item), item.options, strict=True))


def test_nan_scores_never_win():
    assert choose([float("nan"), -3.0, -2.0], "k") == (2, False)
