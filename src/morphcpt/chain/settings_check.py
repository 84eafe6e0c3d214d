"""Strict checks of the `.env` settings that are numbers or sizes, run when jobs are rendered and when the chain is
planned, so a bad value is refused at once instead of failing every job at its first line after the queue wait.

    from morphcpt.chain.settings_check import check_settings
    check_settings(settings)     # SettingsError naming the setting, what it got and what to write

Each integer is written plainly (digits, no sign, no leading zero: `02` is refused, since the job scripts compare
it as text) and within bounds; GPU_MEMORY is a size with its unit above the memory every GPU keeps back.
"""

from __future__ import annotations

import re

from morphcpt.errors import UserError

MAX_SEEDS = 20  # runs per arm; the power command (analysis/power.py) searches designs up to 12 seeds
MAX_TRAIN_NODES = 1024
# seconds: longer than one heartbeat interval (5 s, training/nemo/torchrun_nodes.sh), at most a day
MIN_NODE_TIMEOUT, MAX_NODE_TIMEOUT = 6, 86_400
# The other whole-number settings the job scripts use as they are (a directive, an array range, a shell test)
WHOLE = (
    ("TRAIN_NGPUS", 1, 64, "GPUs per node"),
    ("NUM_CHUNKS", 1, 9999, "chunks"),
    ("TRAIN_EXIT_MARGIN_MINUTES", 0, 1440, "minutes"),
    ("AUTO_RESUBMIT", 0, 1, ""),
    ("EEVE_NUM_NEW", 1, 1_000_000, "new pieces"),
    *((f"{job}_NCPUS", 1, 1024, "CPU cores") for job in ("PREPROCESS", "TRAIN", "EXPORT", "CPU", "EVAL")),
)


class SettingsError(UserError, ValueError):
    """A setting of `.env` (or its command-line stand-in) that cannot be used, with what to write instead."""


def whole(
    settings: dict[str, str], name: str, low: int, high: int, unit: str, default: str | None = None
) -> int:
    """`settings[name]` as a plain whole number in [low, high], or a `SettingsError` saying what to write."""
    raw = settings.get(name)
    raw = (raw if raw not in (None, "") else default) or ""
    text = raw.strip()
    if not re.fullmatch(r"[1-9][0-9]*|0", text) or not low <= int(text) <= high:
        why = (
            "a leading zero"
            if re.fullmatch(r"0[0-9]+", text)
            else "not a whole number"
            if not re.fullmatch(r"[0-9]+", text)
            else "out of range"
        )
        raise SettingsError(
            f"{name} must be a whole number{f' of {unit}' if unit else ''} from {low} to {high}, written plainly; got "
            f"{raw!r} ({why}; "
            "in .env or on the command line)"
        )
    return int(text)


def check_settings(settings: dict[str, str]) -> None:
    """Refuse, one line each, the number and size settings the rendered jobs and the chain would trip on later."""
    from morphcpt.plan.card import SizeError, card_bytes

    whole(settings, "SEEDS", 1, MAX_SEEDS, "runs per arm", default="1")
    whole(settings, "TRAIN_NODES", 1, MAX_TRAIN_NODES, "nodes", default="1")
    whole(settings, "TRAIN_NODE_TIMEOUT", MIN_NODE_TIMEOUT, MAX_NODE_TIMEOUT, "seconds", default="60")
    for name, low, high, unit in WHOLE:
        if settings.get(name) not in (None, ""):
            whole(settings, name, low, high, unit)
    if "GPU_MEMORY" in settings:
        try:
            card_bytes(settings["GPU_MEMORY"], "GPU_MEMORY")
        except SizeError as error:
            raise SettingsError(f"{error} (in .env)") from None
