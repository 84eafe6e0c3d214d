"""The chunked cross entropy (`morphcpt.modeling.loss`), what training, validation, bits per byte and the evaluation's
log-likelihoods go through: it equals the full cross entropy in fp32, values and gradients, with and without logit
soft-capping, at any chunk size; it never holds the logits of every token; the loss module reproduces the model's
own logits, and refuses a model that transforms them some other way."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from morphcpt.modeling.loss import LossModule, check_against_model, chunked_cross_entropy, token_logprobs
from morphcpt.modeling.models import build_model, tiny_config


def _problem(tokens=37, hidden=16, vocab=301, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(2, tokens, hidden, generator=g, dtype=dtype)
    w = torch.randn(vocab, hidden, generator=g, dtype=dtype) * 0.5
    labels = torch.randint(0, vocab, (2, tokens), generator=g)
    weights = torch.rand(2, tokens, generator=g) * (torch.rand(2, tokens, generator=g) > 0.2)
    return h, w, labels, weights


def _full(h, w, labels, weights, softcap=None):
    logits = (h @ w.T).float()
    if softcap is not None:
        logits = torch.tanh(logits / softcap) * softcap
    nats = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="none").view_as(labels)
    return (nats * weights).sum(), nats


@pytest.mark.parametrize("softcap", [None, 30.0])
@pytest.mark.parametrize("chunk", [1, 10, 1000])
def test_the_chunked_cross_entropy_equals_the_full_one_with_its_gradients(chunk, softcap):
    h, w, labels, weights = _problem()
    h1, w1 = h.clone().requires_grad_(), w.clone().requires_grad_()
    want, want_nats = _full(h1, w1, labels, weights, softcap)
    want.backward()
    h2, w2 = h.clone().requires_grad_(), w.clone().requires_grad_()
    got, got_nats = chunked_cross_entropy(h2, w2, labels, weights, chunk=chunk, softcap=softcap)
    (2.5 * got).backward()  # the incoming gradient scales both
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(got_nats, want_nats, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(h2.grad, 2.5 * h1.grad, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(w2.grad, 2.5 * w1.grad, rtol=1e-5, atol=1e-6)


def test_bf16_chunks_stay_close_to_the_fp32_loss():
    h, w, labels, weights = _problem()
    want, _ = _full(h, w, labels, weights)
    got, _ = chunked_cross_entropy(h.bfloat16().requires_grad_(), w.bfloat16(), labels, weights, chunk=16)
    assert got.dtype == torch.float32 and got.item() == pytest.approx(want.item(), rel=2e-2)


def test_token_logprobs_are_the_log_softmax_at_the_targets():
    h, w, labels, _ = _problem()
    want = torch.log_softmax((h @ w.T).float(), dim=-1).gather(-1, labels[..., None]).squeeze(-1)
    got = token_logprobs(h.flatten(0, 1), w, labels.flatten(), chunk=7)
    torch.testing.assert_close(got, want.flatten(), rtol=1e-6, atol=1e-6)


def test_token_logprobs_of_a_float64_model_are_float64_end_to_end():
    # float64 scoring is how the evaluator's parity with lm-eval is checked below fp32 rounding: a cast to fp32
    # anywhere would leave ~1e-6 gaps and hide which side drifts
    h, w, labels, _ = _problem(tokens=5, vocab=4099, dtype=torch.float64)
    h = h * 40  # logits of Gemma 3's scale, where an fp32 log-softmax is off by 1e-5 and more
    want = torch.log_softmax(h @ w.T, dim=-1).gather(-1, labels[..., None]).squeeze(-1)
    got = token_logprobs(h.flatten(0, 1), w, labels.flatten(), chunk=3)
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, want.flatten(), rtol=0, atol=1e-12)


def _peak_bytes(fn) -> int:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    live = peak = 0
    for event in sorted(
        (e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"),
        key=lambda e: e.start_ns(),
    ):
        live += event.nbytes()
        peak = max(peak, live)
    return peak


def test_a_training_step_never_holds_the_logits_of_every_token():
    h, w, labels, weights = _problem(tokens=512, hidden=32, vocab=8192)
    full_logits = h.shape[0] * h.shape[1] * w.shape[0] * 4  # what one fp32 [batch, seq, vocab] tensor takes

    def step():
        hg, wg = h.clone().requires_grad_(), w.clone().requires_grad_()
        loss, _ = chunked_cross_entropy(hg, wg, labels, weights, chunk=64)
        loss.backward()

    assert (
        _peak_bytes(step) < 0.35 * full_logits
    )  # one 64-token chunk, the fp32 head gradient, the inputs' grads
    assert _peak_bytes(lambda: _full(h, w, labels, weights)) > full_logits  # what it replaces


def test_the_loss_module_reproduces_the_models_logits_and_refuses_one_it_does_not(vocab):
    model = build_model(tiny_config(vocab.size), seed=0)
    assert check_against_model(model, vocab.size, torch.device("cpu")) < 1e-5
    model.config.final_logit_softcapping = 5.0  # the loss module reads it: still the same objective
    assert check_against_model(model, vocab.size, torch.device("cpu")) < 1e-5
    model.config.final_logit_softcapping = None
    original = model.lm_head.forward
    model.lm_head.forward = lambda x: 2 * original(x)  # logits scaled by the model: the loss would not know
    with pytest.raises(ValueError, match="differs from Gemma3ForCausalLM's own logits"):
        check_against_model(model, vocab.size, torch.device("cpu"))
    nats = LossModule(build_model(tiny_config(vocab.size), seed=0))(
        torch.tensor([[2, 5, 7]]), torch.tensor([[5, 7, 1]])
    )[1]
    assert nats.shape == (1, 3) and torch.isfinite(nats).all()
