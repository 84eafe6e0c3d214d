"""What one GPU holds: the card a plan names (`cluster.gpu_memory`, `cluster.gpu_type`), what is known of each GPU
type, and the memory kept back for the CUDA context. The plan's schema checks its sizes here; the memory planner
(`train/memory/`) fits both engines' estimates (`train/memory/estimate.py`) to a `Card`.

    card = Card.of(plan)                      # A100 40GB: 38.0 GiB usable
    card_bytes("40GB")                        # 42949672960
    gpu_type("A100-SXM4-40GB").bf16_tflops    # 312.0

"40GB" is 40 x 2**30 bytes, as cards are quoted; torch reports a little less for a real card (an A100-SXM4-40GB
shows 39.59 GiB) and the CUDA context, NCCL's buffers and the caching allocator's fragmentation take more, so
`RESERVE_BYTES` comes off before anything is planned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from morphcpt.errors import UserError

RESERVE_BYTES = 2 * 2**30  # CUDA context, NCCL buffers, allocator fragmentation, what the driver keeps


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
