"""The Hugging Face scorer on a tiny random Gemma 3 built on the fly (never downloaded): batched log-likelihoods
against an unbatched reference, exactly one BOS, option order, batched greedy generation."""

from __future__ import annotations

import random

import pytest

from evaluate_helpers import all_items, shuffled, synthetic_items
from morphcpt.evaluate.mcq import mcq_requests, score_mcq


def reference_loglikelihood(lm, context: str, continuation: str) -> float:
    """One unpadded sequence at a time, straight from the model's logits."""
    import torch

    bos = lm.tokenizer.bos_token_id
    ctx = lm.tokenizer(context, add_special_tokens=False)["input_ids"]
    cont = lm.tokenizer(continuation, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([[bos, *ctx, *cont]])
    with torch.no_grad():
        logprobs = lm.model(input_ids=ids).logits[0].float().log_softmax(-1)
    return sum(logprobs[len(ctx) + j, token].item() for j, token in enumerate(cont))


def test_batched_log_likelihoods_equal_an_unbatched_reference(tiny_lm, benchmark_dir):
    items = all_items(benchmark_dir, "pacute", "mcq") + all_items(benchmark_dir, "hierarchical", "mcq")
    requests = [r for item in items for r in mcq_requests(item)][::2] + [("Oo", " at"), ("Q", " a")]
    lengths = {len(tiny_lm.encode([c + k])[0]) for c, k in requests}
    assert min(lengths) < 8 < max(lengths)  # padded batches, and rows past the sliding window (8)
    batched = tiny_lm.loglikelihood(requests)
    for (context, continuation), value in zip(requests, batched, strict=True):
        assert value == pytest.approx(reference_loglikelihood(tiny_lm, context, continuation), abs=1e-4)


@pytest.mark.parametrize("add_bos_token", [True, False])
def test_every_scored_and_generated_sequence_starts_with_exactly_one_bos(tiny_model_dir, add_bos_token):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from morphcpt.evaluate.hf_model import HFCausalLM

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir, add_bos_token=add_bos_token)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    seen = []  # on the decoder, which scoring (per option or prompt-shared) and generation all run
    model.model.register_forward_pre_hook(
        lambda _, args, kwargs: seen.append(kwargs["input_ids"]), with_kwargs=True
    )
    lm = HFCausalLM(model, tokenizer, batch_size=3)
    lm.loglikelihood(
        [("Ano ang ugat ng <bos> kumain?", " kain"), ("Q", " a b"), ("Mahabang tanong dito", " x")]
    )
    lm.generate(["Baybayin ang salitang sila.", "Q"], max_new_tokens=3)
    bos, pad = tokenizer.bos_token_id, lm.pad_id
    first_calls = [
        ids for ids in seen if ids.shape[1] > 1
    ]  # scoring and generation prefill, not decode steps
    assert first_calls
    for batch in first_calls:
        for row in batch.tolist():
            real = row[next(i for i, t in enumerate(row) if t != pad or i == len(row) - 1) :]
            assert real[0] == bos and real.count(bos) == 1


def test_hf_predictions_do_not_depend_on_option_order(tiny_lm):
    items = synthetic_items(12, seed=6)
    rng = random.Random(1)
    moved = [shuffled(item, rng) for item in items]
    before, after = score_mcq(tiny_lm, items), score_mcq(tiny_lm, moved)
    assert [b.options[b.pred_norm] for b in before] == [a.options[a.pred_norm] for a in after]
    assert [b.acc for b in before] == [a.acc for a in after]


def test_batched_greedy_generation_equals_one_prompt_at_a_time(tiny_lm, benchmark_dir):
    prompts = [i.prompt() for i in all_items(benchmark_dir, "pacute", "gen")]
    steps: list[
        int
    ] = []  # forward calls per batch: a prefill (several ids a row) starts one, each new id adds one

    def count(module, args, kwargs):  # re-encoding decoded text is no measure: count the steps themselves
        if kwargs["input_ids"].shape[1] > 1:
            steps.append(0)
        steps[-1] += 1

    hook = tiny_lm.model.register_forward_pre_hook(count, with_kwargs=True)
    try:
        tiny_lm.batch_size = 1
        single = tiny_lm.generate(prompts, max_new_tokens=8)
        tiny_lm.batch_size = 4
        batched = tiny_lm.generate(prompts, max_new_tokens=8)
    finally:
        hook.remove()
    assert batched == single
    assert steps and max(steps) <= 8
