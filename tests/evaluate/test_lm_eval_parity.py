"""The per-item comparison with lm-evaluation-harness (`evaluate.parity`) finds every kind of disagreement: a
log-likelihood off by more than 1e-4, a different acc or acc_norm, a missing or extra item, a NaN, another answer
line; and passes samples that say what we say. Samples are built in lm-eval's logged shape from the tiny model's
own predictions, then altered one way at a time."""

from __future__ import annotations

import copy
import math

import pytest

from morphcpt import paths
from morphcpt.evaluate.gen import score_gen
from morphcpt.evaluate.items import load_benchmark
from morphcpt.evaluate.mcq import score_mcq
from morphcpt.evaluate.parity import compare_gen, compare_mcq

OFFICIAL = paths.REPO_ROOT / "tests" / "data" / "official"


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    from morphcpt.evaluate.hf_model import HFCausalLM
    from morphcpt.modeling.models import save_tiny_gemma3

    folder = save_tiny_gemma3(
        paths.SAMPLE_TOKENIZER_DIR, tmp_path_factory.mktemp("tiny") / "model", num_layers=2, num_heads=2
    )
    return HFCausalLM.load(folder, device="cpu", batch_size=4)


@pytest.fixture(scope="module")
def mcq(tiny_lm):
    items = [i for items in load_benchmark("pacute", "mcq", OFFICIAL).values() for i in items]
    predictions = score_mcq(tiny_lm, items)
    samples = {
        p.id: {
            "doc": {"id": p.id},
            "filtered_resps": [[value, False] for value in p.logprobs],
            "acc": float(p.acc),
            "acc_norm": float(p.acc_norm),
        }
        for p in predictions
    }
    return predictions, samples


def test_samples_that_say_what_we_say_agree(mcq):
    predictions, samples = mcq
    report = compare_mcq(predictions, samples)
    assert report.ok and report.items == len(predictions) > 5
    assert report.agree["acc"] + report.tied["acc"] == report.items
    assert report.max_loglik_diff == 0.0


def altered(samples, item_id, change):
    out = copy.deepcopy(samples)
    change(out, item_id)
    return out


@pytest.mark.parametrize(
    ("change", "what"),
    [
        (
            lambda s, i: s[i]["filtered_resps"][1].__setitem__(0, s[i]["filtered_resps"][1][0] + 2e-4),
            "differ by",
        ),
        (lambda s, i: s[i]["filtered_resps"][0].__setitem__(0, math.nan), "differ by nan"),
        (lambda s, i: s[i].__setitem__("acc", 1.0 - s[i]["acc"]), "acc: ours"),
        (lambda s, i: s[i].__setitem__("acc_norm", 1.0 - s[i]["acc_norm"]), "acc_norm: ours"),
        (lambda s, i: s.pop(i), "no lm-eval sample"),
        (lambda s, i: s.__setitem__("extra", s[i]), "did not"),
        (lambda s, i: s[i]["filtered_resps"].pop(), "options scored"),
    ],
)
def test_each_kind_of_disagreement_is_found(mcq, change, what):
    predictions, samples = mcq
    target = next(p for p in predictions if not p.tied and not p.tied_norm)
    report = compare_mcq(predictions, altered(samples, target.id, change))
    assert not report.ok
    assert [(i, w) for i, w in report.disagreements if what in w][0][0] in (target.id, "extra")


def test_a_gap_within_the_tolerance_is_agreement(mcq):
    predictions, samples = mcq
    target = predictions[0].id
    near = altered(
        samples,
        target,
        lambda s, i: s[i]["filtered_resps"][0].__setitem__(0, s[i]["filtered_resps"][0][0] + 5e-5),
    )
    report = compare_mcq(predictions, near)
    assert report.ok and 4e-5 < report.max_loglik_diff < 6e-5


def test_gen_answer_lines_and_metrics_are_compared(tiny_lm):
    items = [i for items in load_benchmark("langgame", "gen", OFFICIAL).values() for i in items]
    predictions = score_gen(tiny_lm, items, max_new_tokens=4)
    samples = {
        p.id: {"resps": [[p.output]], "exact": p.exact, "prefix": p.prefix, "contains": p.contains}
        for p in predictions
    }
    assert compare_gen(predictions, samples).ok
    target = predictions[0]
    samples[target.id] = {**samples[target.id], "resps": [["zzz not an answer"]], "exact": not target.exact}
    report = compare_gen(predictions, samples)
    assert {w.split(":")[0] for _, w in report.disagreements} == {"answer line", "exact"}
