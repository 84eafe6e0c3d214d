"""The bytes one GPU holds for a layout, as both engines' memory estimates state them (`hf.py`, `megatron.py`), and
the arithmetic of fitting one to a card (`morphcpt.plan.card.Card`):

    est.total(micro_batch=2) <= card.usable   # fits
    est.largest_micro_batch(card.usable, margin=MARGIN)

`MARGIN` is the share of the usable memory a default layout leaves free: the estimates aim to be within 10 % of the
measured peak.
"""

from __future__ import annotations

from dataclasses import dataclass

MARGIN = 0.10  # free share of the usable memory `auto` and the shipped defaults keep


@dataclass
class Estimate:
    """Bytes one GPU holds for a layout: what lives through the run (parameters, gradients, optimiser state), what
    one step adds whatever the micro batch (`working`: gathered layers, weight copies, loss chunks), and what each
    sample of a micro batch adds at the peak (activations, logits)."""

    layout: str
    params: int
    grads: int
    optimizer: int
    working: int
    activations_per_sample: int
    host: int = 0  # bytes kept in host memory (offload)
    load: int = 0  # bytes on the GPU at the peak of loading the model, before training (a second peak)
    host_load: int = 0  # bytes each rank holds in host memory while it loads
    # Logits that grow with the micro batch only up to a cap: a loss chunk longer than a sample holds the logits of
    # min(micro batch x sequence, chunk) tokens, so each sample adds `logits_per_sample` until `logits_cap`.
    logits_per_sample: int = 0
    logits_cap: int = 0

    def static(self) -> int:
        return self.params + self.grads + self.optimizer + self.working

    def per_micro_batch(self, micro_batch: int) -> int:
        """What a micro batch adds to `static`: its activations and its logits (at most `logits_cap`)."""
        return micro_batch * self.activations_per_sample + min(
            micro_batch * self.logits_per_sample, self.logits_cap
        )

    def total(self, micro_batch: int) -> int:
        """The peak of a step at `micro_batch`, or the load peak when that is higher."""
        return max(self.static() + self.per_micro_batch(micro_batch), self.load)

    def largest_micro_batch(self, usable: int, margin: float = 0.0) -> int:
        """The largest micro batch whose total stays within `usable` x (1 - margin) bytes (0: none fits)."""
        limit = int(usable * (1 - margin))
        room = limit - self.static()
        if self.load > limit or room < 0:
            return 0
        if not self.logits_per_sample:
            return room // max(self.activations_per_sample, 1)
        # below the cap each sample adds activations and logits; above it, activations only
        below = min(
            room // max(self.activations_per_sample + self.logits_per_sample, 1),
            self.logits_cap // self.logits_per_sample,
        )
        above = (
            (room - self.logits_cap) // max(self.activations_per_sample, 1) if room >= self.logits_cap else 0
        )
        return max(below, above)


def fitting_micro_batch(est: Estimate, usable: int, per_rank: int, margin: float = MARGIN) -> int:
    """The largest micro batch that divides `per_rank` (the global batch over data-parallel ranks) and fits with
    `margin`; 0 when not even one sample does."""
    limit = est.largest_micro_batch(usable, margin)
    return max((m for m in range(1, min(limit, per_rank) + 1) if per_rank % m == 0), default=0)
