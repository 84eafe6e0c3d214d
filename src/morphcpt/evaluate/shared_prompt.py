"""One forward pass per MCQ prompt: the prompt's tokens once, every option's tokens after it in the same row.

Scoring each option as its own `<bos> + prompt + option` row runs the prompt through the model once per option;
with the benchmarks' short options (2–4 tokens after a 11–30 token prompt, Gemma 3 tokenizer) that is most of the
work. Here a row holds the prompt followed by all its continuations one after another, and an attention mask
shaped like a tree makes each continuation see the prompt and its own earlier tokens only, never another option:

    tokens     <bos> What is ... ?  ␣kain  ␣kumain  ␣um
    positions    0    1   2   .. P-1  P     P  P+1    P      (each continuation restarts at P)
    segment      0    0   0   ..  0   1     2   2     3      (key visible if its segment is 0 or the query's)

Positions (rotary embeddings) and the sliding window are computed from those positions, not from the column, so
every continuation token sees exactly the keys, at exactly the relative positions, that it sees in its own
unshared row: the same log-likelihoods, up to float rounding. Sliding-window layers (Gemma 3's local layers) get
their own mask with `query_pos - key_pos < sliding_window`, the rule transformers applies to ordinary rows.

Only the hidden states that predict a scored token (the prompt's last one, once per row, and each continuation
token but the last) go through the vocabulary projection: with Gemma 3's 262,144 columns it costs more per
position than the rest of a small model, and a batch's padded width times the vocabulary would also be the
largest tensor. A pad sees only itself, so no attention row is fully masked (NaN).

The masks go straight to the attention layers as a dict per layer type, which Gemma 3's text model
(`Gemma3ForCausalLM`, `gemma3_text`) accepts with its `sdpa` and `eager` attention; other models (or flash
attention, which takes no arbitrary mask) are scored one row per option (`supports`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

ATTENTION_IMPLEMENTATIONS = ("sdpa", "eager")
LAYER_TYPES = ("full_attention", "sliding_attention")
# A row holds at most this many distinct continuations of one prompt: bounds a row's length (attention is
# quadratic in it) when many items share one prompt.
MAX_CONTINUATIONS_PER_ROW = 16


def supports(model) -> bool:
    """Whether `model` takes the per-layer-type masks this module builds (verified on Gemma 3 text models)."""
    config = model.config
    return (
        getattr(config, "model_type", None) == "gemma3_text"
        and hasattr(model, "model")
        and hasattr(model, "lm_head")
        and getattr(config, "_attn_implementation", None) in ATTENTION_IMPLEMENTATIONS
        and set(getattr(config, "layer_types", None) or ()) <= set(LAYER_TYPES)
    )


@dataclass
class SharedRow:
    """One prompt and the distinct continuations scored after it; `owners[k]` are the request indices that
    continuation k answers (an option listed twice is scored once)."""

    prompt: list[int]
    continuations: list[list[int]] = field(default_factory=list)
    owners: list[list[int]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.prompt) + sum(len(c) for c in self.continuations)

    @property
    def scored_span(self) -> int:
        """Positions whose logits are needed, counted from the row's end: the prompt's last token onwards."""
        return len(self) - len(self.prompt) + 1


def group_rows(
    prompts: Sequence[Sequence[int]],
    continuations: Sequence[Sequence[int]],
    indices: Sequence[int],
    max_continuations: int = MAX_CONTINUATIONS_PER_ROW,
) -> list[SharedRow]:
    """Requests `indices` (into `prompts`/`continuations`) grouped by identical prompt ids, in first-seen order."""
    by_prompt: dict[tuple[int, ...], list[SharedRow]] = {}
    for index in indices:
        rows = by_prompt.setdefault(tuple(prompts[index]), [])
        target = list(continuations[index])
        row = next((r for r in rows if target in r.continuations), None)
        if row is not None:
            row.owners[row.continuations.index(target)].append(index)
            continue
        if not rows or len(rows[-1].continuations) >= max_continuations:
            rows.append(SharedRow(prompt=list(prompts[index])))
        rows[-1].continuations.append(target)
        rows[-1].owners.append([index])
    return [row for rows in by_prompt.values() for row in rows]


@dataclass
class SharedBatch:
    input_ids: torch.Tensor  # (rows, width), left-padded
    position_ids: torch.Tensor  # (rows, width)
    masks: dict[str, torch.Tensor]  # layer type -> (rows, 1, width, width): bool for sdpa, additive for eager
    rows_at: torch.Tensor  # per hidden state that needs logits: its row
    columns_at: torch.Tensor  # and its column
    logit_at: torch.Tensor  # per scored token: which of those hidden states predicts it,
    targets: torch.Tensor  # the token id it predicts,
    continuation_at: torch.Tensor  # and which continuation (numbered across the batch) it belongs to


def collate(
    rows: Sequence[SharedRow],
    *,
    pad_id: int,
    layer_types: Sequence[str],
    sliding_window: int | None,
    attention: str = "sdpa",
    dtype: torch.dtype = torch.float32,
) -> SharedBatch:
    """Token ids, positions and tree masks for `rows`, and where every continuation token's log-probability is."""
    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    positions = torch.zeros((len(rows), width), dtype=torch.long)
    segments = torch.full((len(rows), width), -1, dtype=torch.long)
    needed: dict[tuple[int, int], int] = {}  # (row, column) -> index among the hidden states that need logits
    logit_at, targets, continuation_at = [], [], []
    number = 0
    for r, row in enumerate(rows):
        prompt_end = width - len(row) + len(row.prompt)  # column after the prompt's last token
        row_ids = list(row.prompt)
        row_positions = list(range(len(row.prompt)))
        row_segments = [0] * len(row.prompt)
        column = prompt_end
        for k, continuation in enumerate(row.continuations, start=1):
            # Token j of the continuation is predicted by the hidden state of the token before it: the prompt's
            # last token for j = 0 (shared by every continuation), else the continuation's own token j - 1.
            for j, token in enumerate(continuation):
                key = (r, prompt_end - 1 if j == 0 else column + j - 1)
                logit_at.append(needed.setdefault(key, len(needed)))
                targets.append(token)
                continuation_at.append(number)
            row_ids += continuation
            row_positions += range(len(row.prompt), len(row.prompt) + len(continuation))
            row_segments += [k] * len(continuation)
            column += len(continuation)
            number += 1
        ids[r, width - len(row) :] = torch.tensor(row_ids)
        positions[r, width - len(row) :] = torch.tensor(row_positions)
        segments[r, width - len(row) :] = torch.tensor(row_segments)
    masks = tree_masks(segments, positions, layer_types, sliding_window, attention=attention, dtype=dtype)
    return SharedBatch(
        input_ids=ids,
        position_ids=positions,
        masks=masks,
        rows_at=torch.tensor([r for r, _ in needed]),
        columns_at=torch.tensor([c for _, c in needed]),
        logit_at=torch.tensor(logit_at),
        targets=torch.tensor(targets),
        continuation_at=torch.tensor(continuation_at),
    )


def tree_masks(
    segments: torch.Tensor,
    positions: torch.Tensor,
    layer_types: Sequence[str],
    sliding_window: int | None,
    *,
    attention: str = "sdpa",
    dtype: torch.dtype = torch.float32,
) -> dict[str, torch.Tensor]:
    """Per layer type, (rows, 1, width, width) masks: a query sees a key at an earlier or equal position that is
    in the prompt (segment 0) or in its own continuation; pads (segment -1) see only themselves."""
    real = segments >= 0
    query_segment, key_segment = segments[:, :, None], segments[:, None, :]
    query_position, key_position = positions[:, :, None], positions[:, None, :]
    visible = (key_segment == 0) | (key_segment == query_segment)
    allowed = visible & (key_position <= query_position) & real[:, :, None] & real[:, None, :]
    own = torch.eye(segments.shape[1], dtype=torch.bool)[None] & ~real[:, :, None]
    masks = {}
    for layer_type in set(layer_types) or {"full_attention"}:
        mask = allowed
        if layer_type == "sliding_attention" and sliding_window is not None:
            mask = mask & (query_position - key_position < sliding_window)
        mask = (mask | own)[:, None]
        if attention == "eager":
            mask = torch.zeros(mask.shape, dtype=dtype).masked_fill(~mask, torch.finfo(dtype).min)
        masks[layer_type] = mask
    return masks
