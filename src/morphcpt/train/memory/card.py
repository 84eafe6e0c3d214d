"""What one GPU holds: the card a plan names (`cluster.gpu_memory`, `cluster.gpu_type`), the memory kept back for
the CUDA context, and the arithmetic of an estimate against it. Both engines' memory estimates
(`memory/hf.py`, `memory/megatron.py`) are `Estimate`s; the planner (`memory/planner.py`) fits them to a `Card`.

    card = Card.of(plan)                      # A100 40GB: 38.0 GiB usable
    est.total(micro_batch=2) <= card.usable   # fits
    est.largest_micro_batch(card.usable, margin=MARGIN)

"40GB" is 40 x 2**30 bytes, as cards are quoted; torch reports a little less for a real card (an A100-SXM4-40GB
shows 39.59 GiB) and the CUDA context, NCCL's buffers and the caching allocator's fragmentation take more, so
`RESERVE_BYTES` comes off before anything is planned. `MARGIN` is the share of the usable memory a default layout
leaves free: the estimates aim to be within 10 % of the measured peak.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from morphcpt.errors import UserError

RESERVE_BYTES = 2 * 2**30  # CUDA context, NCCL buffers, allocator fragmentation, what the driver keeps
MARGIN = 0.10  # free share of the usable memory `auto` and the shipped defaults keep


@dataclass(frozen=True)
class GpuType:
    bf16_tflops: float | None  # dense bf16 peak, for MFU (None: unknown)
    bf16: bool  # the card computes in bf16 (V100 and T4 do not)


GPU_TYPES = {
    "A100": GpuType(312.0, True),
    "H100": GpuType(989.4, True),
    "H200": GpuType(989.4, True),
    "L40S": GpuType(362.1, True),
    "A10G": GpuType(None, True),  # AWS's A10 variant (24 GB); before "A10", which its name contains
    "A10": GpuType(125.0, True),
    "4090": GpuType(None, True),  # GeForce RTX 4090 (24 GB)
    "P100": GpuType(None, False),
    "V100": GpuType(None, False),
    "T4": GpuType(None, False),
}


def gpu_type(name: str) -> GpuType | None:
    """The known facts of a card named `name` ("A100", "NVIDIA A100-SXM4-40GB", "h100"), or None."""
    upper = name.upper()
    return next((facts for key, facts in GPU_TYPES.items() if key in upper), None)


class SizeError(UserError, ValueError):
    """A memory size that cannot be read strictly (no unit, not a number, not above the reserve)."""


def parse_bytes(text: str, setting: str = "gpu_memory") -> int:
    """'80GB', '24GiB', '80G', '512MB' -> bytes (GB and GiB both taken as 2**30, as GPU memory is quoted). The
    unit is required: a bare `40` is refused, not read as 40 bytes."""
    raw = str(text).strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT])(?:i?B)?", raw, re.IGNORECASE)
    if not match:
        hint = (
            f" (no unit: write {raw}GB for {raw} GB of GPU memory)"
            if re.fullmatch(r"\d+(?:\.\d+)?", raw)
            else ""
        )
        raise SizeError(f"{setting} must look like 40GB or 80GiB (a number and its unit); got {text!r}{hint}")
    value = float(match.group(1))
    if value <= 0:
        raise SizeError(f"{setting} must be above zero, like 40GB or 80GiB; got {text!r}")
    return int(value * 1024 ** "BKMGT".index(match.group(2).upper()))


def card_bytes(text: str, setting: str = "gpu_memory") -> int:
    """A card's memory (`parse_bytes`), refused when it does not exceed the reserve: nothing could be planned on
    it, and usable memory below zero would make every plan "fit"."""
    total = parse_bytes(text, setting)
    if total <= RESERVE_BYTES:
        raise SizeError(
            f"{setting}={text} is not above the {gib(RESERVE_BYTES)} every GPU keeps back (CUDA context, NCCL "
            "buffers): give the card's memory with its unit, like 16GB, 40GB or 80GB"
        )
    return total


def gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"


@dataclass(frozen=True)
class Card:
    """One GPU as the plan describes it."""

    name: str
    memory: str
    bytes: int

    @classmethod
    def of(cls, plan) -> Card:
        return cls(
            plan.cluster.gpu_type,
            plan.cluster.gpu_memory,
            card_bytes(plan.cluster.gpu_memory, "cluster.gpu_memory"),
        )

    @property
    def usable(self) -> int:
        return self.bytes - RESERVE_BYTES

    def margin(self, total: int) -> float:
        """Share of the usable memory an estimate of `total` bytes leaves free (negative: it does not fit)."""
        return 1 - total / self.usable

    def describe(self) -> str:
        return f"{self.name} {self.memory} ({gib(self.usable)} usable after a {gib(RESERVE_BYTES)} reserve)"


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

    def static(self) -> int:
        return self.params + self.grads + self.optimizer + self.working

    def total(self, micro_batch: int) -> int:
        """The peak of a step at `micro_batch`, or the load peak when that is higher."""
        return max(self.static() + micro_batch * self.activations_per_sample, self.load)

    def largest_micro_batch(self, usable: int, margin: float = 0.0) -> int:
        """The largest micro batch whose total stays within `usable` x (1 - margin) bytes (0: none fits)."""
        limit = int(usable * (1 - margin))
        if self.load > limit:
            return 0
        return max((limit - self.static()) // max(self.activations_per_sample, 1), 0)


def fitting_micro_batch(est: Estimate, usable: int, per_rank: int, margin: float = MARGIN) -> int:
    """The largest micro batch that divides `per_rank` (the global batch over data-parallel ranks) and fits with
    `margin`; 0 when not even one sample does."""
    limit = est.largest_micro_batch(usable, margin)
    return max((m for m in range(1, min(limit, per_rank) + 1) if per_rank % m == 0), default=0)
