"""Cross entropy through the LM head without the logits of the whole vocabulary: chunks of tokens go through the
output layer one at a time, so at most `chunk` x vocabulary logits exist at once (a `[2, 2048, 262144]` fp32
logits tensor is 4.3 GB; at validation's micro batch 64 it was 137 GB). Used by training, validation and bits per
byte (`LossModule`) and by the evaluation's log-likelihoods (`token_logprobs`).

    weighted, nats = chunked_cross_entropy(hidden, head.weight, labels, weights)   # training: grads flow
    logprobs = token_logprobs(hidden, head.weight, targets)                         # scoring: no grads
    loss_module = LossModule(model); weighted, nats = loss_module(tokens, labels, weights)

Training computes the gradients chunk by chunk in the forward pass (the per-token weights, mask / tokens of the
step, are known then): each chunk's logits are made in the compute dtype (bf16 under bf16 weights or autocast),
cast to fp32 for the log-softmax, turned in place into weight x (softmax - one-hot), cast back, and multiplied
into the gradient of the hidden states and, accumulated in fp32, of the head's weight. Backward only scales those
by the incoming gradient. The logits are never kept; the extra memory is the fp32 gradient of the head's weight
(vocabulary x hidden x 4 bytes: 1.1 GiB for gemma-3-1b) and one chunk. In fp32 the result equals
`torch.nn.functional.cross_entropy` on the full logits, and so do the gradients (tests/train/hf/test_speed_levers.py).

A final logit soft-capping (`config.final_logit_softcapping`, Gemma 2 style: cap x tanh(z / cap)) is applied as the
model's own forward applies it.
"""

from __future__ import annotations

import torch

LOGIT_CHUNK_BYTES = 2**30  # default chunk: as many tokens as keep one chunk's fp32 logits at 1 GiB


def default_chunk(vocab: int) -> int:
    """Tokens per chunk for a vocabulary: 1 GiB of fp32 logits (1,024 tokens at Gemma 3's 262,144 rows)."""
    return max(64, LOGIT_CHUNK_BYTES // (4 * vocab))


def _logits(
    h: torch.Tensor, weight: torch.Tensor, softcap: float | None
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """fp32 logits of one chunk (after soft-capping; float64 stays float64, for exact scoring) and the tanh the
    cap's gradient needs."""
    z = h @ weight.T
    z = z if z.dtype == torch.float64 else z.float()
    if softcap is None:
        return z, None
    t = torch.tanh(z / softcap)
    return t * softcap, t


# "device:dtype" -> torch.addmm(..., out_dtype=fp32) gives the right answer there
_MIXED_ADDMM: dict[str, bool] = {}


def _mixed_addmm_works(device: torch.device, dtype: torch.dtype) -> bool:
    """Whether this device accumulates a bf16 product straight into an fp32 tensor (torch.addmm's out_dtype,
    CUDA in torch >= 2.8), checked once on small tensors against the plain product: the fast path is used only
    where it is known to be right."""
    key = f"{device.type}:{dtype}"
    if key not in _MIXED_ADDMM:
        g = torch.Generator(device="cpu").manual_seed(0)
        a, b = (torch.randn(shape, generator=g).to(device, dtype) for shape in ((64, 32), (32, 16)))
        total = torch.ones(64, 16, device=device)
        try:
            torch.addmm(total, a, b, out_dtype=torch.float32, out=total)
            _MIXED_ADDMM[key] = bool(torch.allclose(total, 1 + a.float() @ b.float(), rtol=1e-2, atol=1e-2))
        except (RuntimeError, TypeError, NotImplementedError):
            _MIXED_ADDMM[key] = False
    return _MIXED_ADDMM[key]


def _accumulate(total: torch.Tensor, grad_logits: torch.Tensor, h: torch.Tensor) -> None:
    """total (fp32) += grad_logits^T @ h, without a separate bf16 product where the device can."""
    if total.dtype == grad_logits.dtype:
        total.addmm_(grad_logits.T, h)
    elif _mixed_addmm_works(total.device, grad_logits.dtype):
        torch.addmm(total, grad_logits.T, h, out_dtype=torch.float32, out=total)
    else:
        total.add_(grad_logits.T @ h)


class _ChunkedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, labels, token_weights, chunk, softcap, compute_dtype):
        shape = labels.shape
        h_all = hidden.reshape(-1, hidden.shape[-1])
        y = labels.reshape(-1)
        w = token_weights.reshape(-1).float()
        with torch.autocast(hidden.device.type, enabled=False):
            head = weight.to(compute_dtype)
            grad_hidden = torch.empty_like(h_all)
            # a frozen output layer (LoRA, some EEVE stages) gets no gradient: no fp32 vocab x hidden buffer
            trains_head = ctx.needs_input_grad[1]
            grad_weight = (
                torch.zeros(weight.shape, dtype=torch.float32, device=weight.device) if trains_head else None
            )
            out = torch.empty(shape, dtype=torch.float32, device=hidden.device)  # returned whole, not a view
            nats = out.view(-1)
            total = torch.zeros((), dtype=torch.float32, device=hidden.device)
            for start in range(0, y.numel(), chunk):
                stop = min(start + chunk, y.numel())
                h = h_all[start:stop].to(compute_dtype)
                z, t = _logits(h, head, softcap)
                target = y[start:stop, None]
                lse = torch.logsumexp(z, dim=-1)
                nats[start:stop] = lse - z.gather(1, target).squeeze(1)
                total += (nats[start:stop] * w[start:stop]).sum()
                # d(sum w * nats)/dz = w * (softmax(z) - onehot), made in place in z
                z.sub_(lse[:, None]).exp_()
                z.scatter_add_(1, target, torch.full_like(target, -1.0, dtype=z.dtype))
                z.mul_(w[start:stop, None])
                if t is not None:
                    z.mul_(1 - t * t)
                    del t
                grad_logits = z.to(compute_dtype)
                del z
                grad_hidden[start:stop] = (grad_logits @ head).to(grad_hidden.dtype)
                if trains_head:
                    _accumulate(grad_weight, grad_logits, h)
                del grad_logits
        ctx.save_for_backward(grad_hidden, grad_weight)
        ctx.hidden_shape, ctx.weight_dtype = hidden.shape, weight.dtype
        ctx.mark_non_differentiable(out)
        return total, out

    @staticmethod
    def backward(ctx, grad_total, grad_nats):
        grad_hidden, grad_weight = ctx.saved_tensors
        scale = grad_total.float()
        return (
            (grad_hidden * scale.to(grad_hidden.dtype)).view(ctx.hidden_shape),
            None if grad_weight is None else (grad_weight * scale).to(ctx.weight_dtype),
            None,
            None,
            None,
            None,
            None,
        )


def compute_dtype_for(hidden: torch.Tensor, weight: torch.Tensor) -> torch.dtype:
    """The dtype the output layer computes in: autocast's when it is on (as F.linear would under it), else the
    weight's."""
    device = hidden.device.type
    if torch.is_autocast_enabled(device):
        return torch.get_autocast_dtype(device)
    return weight.dtype


@torch.no_grad()
def _nats_no_grad(hidden, weight, labels, chunk, softcap, compute_dtype) -> torch.Tensor:
    h_all = hidden.reshape(-1, hidden.shape[-1])
    y = labels.reshape(-1)
    # fp32 (float64 when the output layer computes in float64: a float64 model scores exactly, end to end)
    out = torch.empty(
        labels.shape, dtype=torch.promote_types(compute_dtype, torch.float32), device=hidden.device
    )
    nats = out.view(-1)
    with torch.autocast(hidden.device.type, enabled=False):
        head = weight.to(compute_dtype)
        for start in range(0, y.numel(), chunk):
            stop = min(start + chunk, y.numel())
            z, _ = _logits(h_all[start:stop].to(compute_dtype), head, softcap)
            nats[start:stop] = torch.logsumexp(z, dim=-1) - z.gather(1, y[start:stop, None]).squeeze(1)
    return out


def chunked_cross_entropy(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    labels: torch.Tensor,
    token_weights: torch.Tensor | None = None,
    chunk: int | None = None,
    softcap: float | None = None,
) -> tuple[torch.Tensor | None, torch.Tensor]:
    """(sum of token_weights x cross entropy, differentiable; per-token cross entropy in nats, fp32, detached) of
    `labels` under the logits `hidden @ weight.T` (soft-capped), computed `chunk` tokens at a time.

    Without gradients (validation, no_grad) or without `token_weights`, the weighted sum is None."""
    chunk = chunk or default_chunk(weight.shape[0])
    dtype = compute_dtype_for(hidden, weight)
    grads = torch.is_grad_enabled() and (hidden.requires_grad or weight.requires_grad)
    if token_weights is None or not grads:
        return None, _nats_no_grad(hidden, weight, labels, chunk, softcap, dtype)
    return _ChunkedCrossEntropy.apply(hidden, weight, labels, token_weights, chunk, softcap, dtype)


@torch.no_grad()
def token_logprobs(
    hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, chunk: int | None = None, softcap=None
) -> torch.Tensor:
    """log p(target) for each row of `hidden` (N, hidden) under the output layer `weight`, chunked: fp32, or
    float64 for float64 inputs. The log-softmax is `logsumexp(z) - z[target]` per row, whose fp32 reduction stays
    within ~2e-6 of float64 over Gemma 3's 262,144 logits (torch's fp32 `log_softmax` on a CPU does not: see
    docs/evaluation.md, "lm-eval's log-softmax dtype")."""
    chunk = chunk or default_chunk(weight.shape[0])
    return -_nats_no_grad(hidden, weight, targets, chunk, softcap, compute_dtype_for(hidden, weight))


class LossModule(torch.nn.Module):
    """A causal LM whose forward returns the chunked cross entropy of its next-token predictions instead of logits:
    what the hf engine wraps in DDP or shards with FSDP2 (so the output layer's weight is gathered while the loss
    uses it), and calls for training and validation.

        weighted, nats = loss_module(tokens, labels, token_weights)   # weighted: None without gradients
    """

    def __init__(self, model: torch.nn.Module, chunk: int | None = None) -> None:
        super().__init__()
        self.model = model
        self.chunk = chunk
        self.softcap = getattr(model.config, "final_logit_softcapping", None)

    def forward(self, tokens: torch.Tensor, labels: torch.Tensor, token_weights: torch.Tensor | None = None):
        hidden = self.model.get_decoder()(input_ids=tokens, use_cache=False).last_hidden_state
        head = self.model.get_output_embeddings().weight
        return chunked_cross_entropy(hidden, head, labels, token_weights, self.chunk, self.softcap)


def check_against_model(model: torch.nn.Module, vocab_rows: int, device: torch.device) -> float:
    """The chunked loss reproduces the model's own logits on a probe batch (a model whose forward scales or
    biases its logits some other way would train on a different objective): the largest difference in nats,
    ValueError beyond fp32 noise."""
    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, vocab_rows, (2, 16), generator=generator).to(device)
    labels = tokens.roll(-1, dims=1)
    was_training = model.training
    model.eval()
    with torch.no_grad(), torch.autocast(device.type, enabled=False):
        logits = model(input_ids=tokens, use_cache=False).logits.float()
        want = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="none")
        _, got = LossModule(model)(tokens, labels)
    model.train(was_training)
    tolerance = 1e-3 if next(model.parameters()).dtype == torch.float32 else 5e-2
    diff = (got.flatten() - want).abs().max().item()
    if diff > tolerance:
        raise ValueError(
            f"the chunked cross entropy differs from {type(model).__name__}'s own logits by {diff:.3g} nats: its "
            "forward transforms the logits in a way the loss does not know"
        )
    return diff
