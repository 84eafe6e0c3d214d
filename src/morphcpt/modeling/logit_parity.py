"""Logit parity: did two models (two loads, HF vs Megatron, checkpoint vs export) compute the same function?

Used before training (the weights really loaded) and after export (the exported folder is the checkpoint).
Tolerances: "exact" for the same weights in fp32 on one device; "bf16" for different implementations running
in bf16 (Megatron vs transformers), where kernels differ and only near-equality is meaningful: there the mean
cosine over positions, the WORST position's cosine and the top-1 agreement must all pass. The worst-position
bound catches a conversion that is wrong only at some positions (e.g. a position-dependent bug), which a mean
over many good positions would average away.

Real vocabularies are wide (Gemma 3: 262,144 logits a position), so the statistics are computed in float64: in
fp32 the cosine of two IDENTICAL 262,144-wide logit vectors rounds to anything in about 1 +- 3e-6, below the
"exact" bound, and a real model's identical reload was refused. The "exact" max |diff| is relative to the logit
scale (max |logit| of the reference, at least 1): the fp32 rounding a reordered sum may add grows with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# Fixed Filipino prompts; their ids depend on the tokenizer, so the prompts are turned into ids where a
# tokenizer is known (`prompt_ids`) and into deterministic pseudo-ids otherwise (`prompt_batch`).
PROMPTS = (
    "Magandang umaga sa inyong lahat.",
    "Ang mga bata ay naglalaro sa parke habang umuulan.",
    "Kumain ka na ba? Nagluto ang nanay ko ng adobo.",
    "Ang Pilipinas ay binubuo ng mahigit pitong libong pulo.",
)

TOLERANCES = {
    # max |a-b| on logits of identical weights and kernels (fp32 non-associativity only), in units of the logit
    # scale (max |logit|, at least 1)
    "exact": {"max_abs": 1e-4, "min_cosine": 0.999999, "min_position_cosine": 0.999999, "min_top1": 1.0},
    # bf16 across implementations: the logits' direction (on average and at every position) and the predicted
    # tokens must agree
    "bf16": {"max_abs": float("inf"), "min_cosine": 0.99, "min_position_cosine": 0.98, "min_top1": 0.95},
}


class ParityError(RuntimeError):
    """Two models that should compute the same logits do not."""


@dataclass(frozen=True)
class LogitParity:
    max_abs_diff: float
    mean_abs_diff: float
    cosine: float  # mean over positions of the cosine similarity of the two logit vectors
    min_position_cosine: float  # the worst position's cosine similarity
    top1_agreement: float  # fraction of positions where both models predict the same next token
    tolerance: str
    logit_scale: float = 1.0  # max |logit| of the reference (at least 1): max_abs is bounded relative to it

    def ok(self) -> bool:
        t = TOLERANCES[self.tolerance]
        return (
            self.max_abs_diff <= t["max_abs"] * max(1.0, self.logit_scale)
            and self.cosine >= t["min_cosine"]
            and self.min_position_cosine >= t["min_position_cosine"]
            and self.top1_agreement >= t["min_top1"]
        )

    def check(self, what: str) -> LogitParity:
        if not self.ok():
            raise ParityError(
                f"{what}: logits differ beyond the {self.tolerance!r} tolerance {TOLERANCES[self.tolerance]}: "
                f"max |diff| {self.max_abs_diff:.3g} (logit scale {self.logit_scale:.3g}), "
                f"mean |diff| {self.mean_abs_diff:.3g}, "
                f"cosine {self.cosine:.6f} (worst position {self.min_position_cosine:.6f}), "
                f"top-1 agreement {self.top1_agreement:.3f}"
            )
        return self

    def as_dict(self) -> dict:
        return {
            "max_abs_diff": self.max_abs_diff,
            "mean_abs_diff": self.mean_abs_diff,
            "cosine": self.cosine,
            "min_position_cosine": self.min_position_cosine,
            "top1_agreement": self.top1_agreement,
            "tolerance": self.tolerance,
            "logit_scale": self.logit_scale,
        }


def compare_logits(
    a: torch.Tensor, b: torch.Tensor, tolerance: str = "exact", mask: torch.Tensor | None = None
) -> LogitParity:
    """Compare logits [batch, seq, vocab] (positions where `mask` is False are ignored); `b` is the reference.
    Statistics in float64, so identical logits give cosine 1 whatever the vocabulary's width."""
    if a.shape != b.shape:
        raise ParityError(f"logit shapes differ: {tuple(a.shape)} vs {tuple(b.shape)}")
    a, b = a.double().flatten(0, -2), b.double().flatten(0, -2)
    if mask is not None:
        keep = mask.flatten().bool()
        a, b = a[keep], b[keep]
    diff = (a - b).abs()
    cosines = torch.nn.functional.cosine_similarity(a, b, dim=-1)
    return LogitParity(
        max_abs_diff=diff.max().item(),
        mean_abs_diff=diff.mean().item(),
        cosine=cosines.mean().item(),
        min_position_cosine=cosines.min().item(),
        top1_agreement=(a.argmax(-1) == b.argmax(-1)).float().mean().item(),
        tolerance=tolerance,
        logit_scale=max(1.0, b.abs().max().item()),
    )


def prompt_ids(tokenizer, bos: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """The fixed prompts as a right-padded id batch and its attention mask, each starting with <bos>."""
    rows = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in PROMPTS]
    if bos:
        rows = [[tokenizer.bos_token_id, *r] for r in rows]
    width = max(map(len, rows))
    ids = torch.full((len(rows), width), tokenizer.pad_token_id or 0, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r)
        mask[i, : len(r)] = 1
    return ids, mask


def prompt_batch(vocab_size: int, batch: int = 2, length: int = 16) -> torch.Tensor:
    """Deterministic pseudo-random ids (no tokenizer needed) for comparing two loads of the same weights."""
    generator = torch.Generator().manual_seed(0)
    return torch.randint(3, vocab_size, (batch, length), generator=generator)
