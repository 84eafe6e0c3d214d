"""A Hugging Face causal LM behind the scorers' protocols: batched log-likelihoods and batched greedy decoding.

Every sequence starts with exactly one `<bos>` (Gemma scores badly without it): texts are encoded without
special tokens, whatever the tokenizer's own post-processor would add, and the prefix is prepended here. Literal
special-token text inside a prompt ("<eos>") stays text. Context and continuation are encoded separately, so the
scored tokens are exactly the continuation's own tokens and every option of an item shares the same prompt ids.
Where the model allows it (Gemma 3), those ids go through the model once per prompt with every option after them
(`shared_prompt`); `share_prompt=False` scores one row per option, as before, with the same log-likelihoods.
Greedy generation drops each row from the batch and its KV cache once the row is finished (`_generate_compact`), so
later steps compute only the rows still writing; `drop_finished=False` runs `model.generate`, as before, which
carries every row to the end of the batch's slowest one. Both give the same texts.

    lm = HFCausalLM.load("outputs/export/patok", device="auto", batch_size=32)
    lm.loglikelihood([("Ano ang salitang-ugat ng 'kumain'?", " kain")])
    lm.generate(["Baybayin ang salitang \\"sila\\"."], max_new_tokens=50)
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DynamicCache,
    StoppingCriteria,
    StoppingCriteriaList,
)

from morphcpt import paths
from morphcpt.evaluate import shared_prompt
from morphcpt.evaluate.device import DTYPES, resolve_device, scoring_dtype
from morphcpt.evaluate.gen import first_line
from morphcpt.modeling.loss import token_logprobs as chunked_logprobs


class _LineComplete(StoppingCriteria):
    """Stops a row once its new text holds a finished first line (see `gen.first_line`)."""

    def __init__(self, tokenizer, prompt_length: int):
        self.tokenizer = tokenizer
        self.prompt_length = prompt_length

    def __call__(self, input_ids: torch.LongTensor, scores, **kwargs) -> torch.BoolTensor:
        texts = self.tokenizer.batch_decode(input_ids[:, self.prompt_length :], skip_special_tokens=True)
        return torch.tensor([first_line(t)[1] for t in texts], dtype=torch.bool, device=input_ids.device)


class HFCausalLM:
    """Implements `mcq.LogLikelihoodModel` and `gen.GenerativeModel` for any causal LM."""

    def __init__(
        self,
        model,
        tokenizer,
        *,
        batch_size: int = 32,
        share_prompt: bool = True,
        drop_finished: bool = True,
    ):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.share_prompt = share_prompt  # one forward pass per prompt, where the model allows it
        # generation computes only the rows still writing, where the model's cache can be cut by rows
        self.drop_finished = drop_finished
        self.device = next(model.parameters()).device
        start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        self.prefix = [start] if start is not None else []
        self.pad_id = next(i for i in (tokenizer.pad_token_id, tokenizer.eos_token_id, 0) if i is not None)
        self.max_length = getattr(model.config, "max_position_embeddings", None)
        # transformers 5.x renamed forward's `past_key_values` to `cache` (the old name warns); before the rename
        # an unknown `cache=` would be swallowed by **kwargs and every step would run without the context
        self._cache_key = (
            "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        )

    @classmethod
    def load(
        cls,
        name_or_path: str | Path,
        *,
        device: str = "auto",
        batch_size: int = 32,
        dtype: torch.dtype | None = None,
        share_prompt: bool = True,
        drop_finished: bool = True,
    ) -> HFCausalLM:
        """bf16 on a GPU, fp32 on CPU unless `dtype` says otherwise."""
        target = resolve_device(device)
        dtype = dtype or DTYPES[scoring_dtype(target)]
        source = paths.model_source(name_or_path)  # a missing folder: one clear line, not Hub tracebacks
        try:
            tokenizer = AutoTokenizer.from_pretrained(source)
            model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype)
        except (OSError, ValueError) as error:
            raise OSError(f"cannot load model {name_or_path}: {error}") from None
        model = model.to(target)
        return cls(
            model, tokenizer, batch_size=batch_size, share_prompt=share_prompt, drop_finished=drop_finished
        )

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        if not texts:
            return []
        encoded = self.tokenizer(list(texts), add_special_tokens=False, split_special_tokens=True)
        return [list(ids) for ids in encoded["input_ids"]]

    # ---------------------------------------------------------------------------------------- log-likelihood

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[float]:
        """Summed log-probability of each continuation given `<bos>` + its context."""
        contexts = sorted({c for c, _ in requests})
        context_ids = dict(zip(contexts, self.encode(contexts), strict=True))
        continuation_ids = self.encode([k for _, k in requests])
        prompts = [self.prefix + context_ids[context] for context, _ in requests]
        for (_, continuation), target in zip(requests, continuation_ids, strict=True):
            if not target:
                raise ValueError(f"continuation {continuation!r} encodes to no tokens")
        scores = [0.0] * len(requests)
        unshared = range(len(requests))
        if self.share_prompt and shared_prompt.supports(self.model):
            # A request whose context must be cut to fit the model (or that has no token before its
            # continuation) keeps the one-row-per-option path, its truncation and its errors.
            shareable = [
                len(prompts[i]) > 0
                and (not self.max_length or len(prompts[i]) + len(continuation_ids[i]) <= self.max_length)
                for i in unshared
            ]
            self._score_shared(prompts, continuation_ids, [i for i in unshared if shareable[i]], scores)
            unshared = [i for i in unshared if not shareable[i]]
        rows: list[tuple[list[int], int]] = []  # (token ids, index where the continuation starts)
        for i in unshared:
            ids = prompts[i] + continuation_ids[i]
            if self.max_length and len(ids) > self.max_length:
                ids = ids[-self.max_length :]  # keep the continuation; drop the oldest context
            start = len(ids) - len(continuation_ids[i])
            if start < 1:
                raise ValueError("a continuation needs at least one token before it to be scored")
            rows.append((ids, start))
        # Longest first: rows of a batch have similar lengths, so little is spent on padding.
        order = sorted(range(len(rows)), key=lambda i: -len(rows[i][0]))
        for offset in range(0, len(order), self.batch_size):
            batch = order[offset : offset + self.batch_size]
            for index, value in zip(batch, self._score_batch([rows[i] for i in batch]), strict=True):
                scores[unshared[index]] = value
        return scores

    def sequence_logprobs(self, sequences: Sequence[Sequence[int]]) -> list[float]:
        """Summed log-probability of every id after the first of each sequence, the ids scored as given (no
        re-encoding, no `<bos>` added: start a sequence with `self.prefix` to condition on it)."""
        rows = []
        for n, ids in enumerate(sequences):
            if len(ids) < 2:
                raise ValueError(
                    f"sequence {n} has {len(ids)} ids; scoring needs one before the first scored id"
                )
            if self.max_length and len(ids) > self.max_length:
                raise ValueError(f"sequence {n} has {len(ids)} ids, past the model's {self.max_length}")
            rows.append((list(ids), 1))
        scores = [0.0] * len(rows)
        order = sorted(range(len(rows)), key=lambda i: -len(rows[i][0]))
        for offset in range(0, len(order), self.batch_size):
            batch = order[offset : offset + self.batch_size]
            for index, value in zip(batch, self._score_batch([rows[i] for i in batch]), strict=True):
                scores[index] = value
        return scores

    @torch.inference_mode()
    def _score_shared(
        self,
        prompts: list[list[int]],
        continuations: list[list[int]],
        indices: list[int],
        scores: list[float],
    ) -> None:
        """Scores requests `indices` with one row per distinct prompt (`shared_prompt`), into `scores`."""
        rows = shared_prompt.group_rows(prompts, continuations, indices)
        rows.sort(key=len, reverse=True)
        config = self.model.config
        for offset in range(0, len(rows), self.batch_size):
            batch_rows = rows[offset : offset + self.batch_size]
            batch = shared_prompt.collate(
                batch_rows,
                pad_id=self.pad_id,
                layer_types=getattr(config, "layer_types", None) or (),
                sliding_window=getattr(config, "sliding_window", None),
                attention=config._attn_implementation,
                dtype=self.model.dtype,
            )
            hidden = self._forward_hidden(
                input_ids=batch.input_ids.to(self.device),
                attention_mask={k: m.to(self.device) for k, m in batch.masks.items()},
                position_ids=batch.position_ids.to(self.device),
            )
            selected = hidden[batch.rows_at.to(self.device), batch.columns_at.to(self.device)]
            owners = [owner for row in batch_rows for owner in row.owners]
            sums = self._sum_logprobs(
                selected, batch.logit_at, batch.targets, batch.continuation_at, len(owners)
            )
            for owner, value in zip(owners, sums, strict=True):
                for index in owner:
                    scores[index] = value

    def _forward_hidden(self, **inputs) -> torch.Tensor:
        """The decoder's last hidden states (after its final norm), before the vocabulary projection."""
        return self.model.get_decoder()(**inputs, use_cache=False).last_hidden_state

    def _sum_logprobs(
        self,
        hidden: torch.Tensor,
        logit_at: torch.Tensor,
        targets: torch.Tensor,
        sum_at: torch.Tensor,
        count: int,
    ) -> list[float]:
        """Per scored token: the log-probability of `targets` under the logits of row `logit_at` of `hidden`
        (N, hidden size), summed by `sum_at` into `count` totals (float64, in token order). The logits are made
        through the output layer a chunk of tokens at a time (`morphcpt.modeling.loss.token_logprobs`), soft-capped
        as `Gemma3ForCausalLM.forward` does, never for the whole vocabulary and every token at once."""
        device = hidden.device
        token_logprobs = chunked_logprobs(
            hidden[logit_at.to(device)],
            self.model.get_output_embeddings().weight,
            targets.to(device),
            softcap=getattr(self.model.config, "final_logit_softcapping", None),
        )
        sums = torch.zeros(count, dtype=torch.float64, device=device)
        sums.index_add_(0, sum_at.to(device), token_logprobs.double())
        return sums.tolist()

    @torch.inference_mode()
    def _score_batch(self, rows: list[tuple[list[int], int]]) -> list[float]:
        width = max(len(ids) for ids, _ in rows)
        input_ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, (ids, _) in enumerate(rows):
            # Right padding: under a causal mask no real token can see the pads after it, and positions stay
            # 0..n-1, so a row scores the same whatever else shares its batch.
            input_ids[r, : len(ids)] = torch.tensor(ids)
            mask[r, : len(ids)] = 1
        row_index, position, target = [], [], []
        for r, (ids, start) in enumerate(rows):
            for p in range(start - 1, len(ids) - 1):  # the hidden state at position p predicts token p + 1
                row_index.append(r)
                position.append(p)
                target.append(ids[p + 1])
        hidden = self._forward_hidden(
            input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device)
        )
        rows_at = torch.tensor(row_index, device=hidden.device)
        picked = hidden[rows_at, torch.tensor(position, device=hidden.device)]
        return self._sum_logprobs(picked, torch.arange(len(target)), torch.tensor(target), rows_at, len(rows))

    # ------------------------------------------------------------------------------------------- generation

    def generate(self, prompts: Sequence[str], max_new_tokens: int = 50) -> list[str]:
        """Greedy continuation of each prompt, raw (the caller cuts it at the stop rule)."""
        encoded = [self.prefix + ids for ids in self.encode(prompts)]
        if self.max_length:
            encoded = [ids[-(self.max_length - max_new_tokens) :] for ids in encoded]
        outputs = [""] * len(encoded)
        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
        for offset in range(0, len(order), self.batch_size):
            batch = order[offset : offset + self.batch_size]
            for index, text in zip(
                batch, self._generate_batch([encoded[i] for i in batch], max_new_tokens), strict=True
            ):
                outputs[index] = text
        return outputs

    def _generate_batch(self, rows: list[list[int]], max_new_tokens: int) -> list[str]:
        dynamic_cache = getattr(self.model, "_supports_default_dynamic_cache", lambda: False)
        if self.drop_finished and dynamic_cache():  # else a cache this loop cannot cut by rows
            return self._generate_compact(rows, max_new_tokens)
        return self._generate_hf(rows, max_new_tokens)

    def _left_padded(self, rows: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """(input ids, attention mask), left-padded so every row's next token comes from its last real token."""
        width = max(len(ids) for ids in rows)
        input_ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, ids in enumerate(rows):
            input_ids[r, width - len(ids) :] = torch.tensor(ids)
            mask[r, width - len(ids) :] = 1
        return input_ids.to(self.device), mask.to(self.device)

    def _eos_ids(self) -> set[int]:
        eos = self.tokenizer.eos_token_id
        if eos is None:  # as `generate` does without an explicit id: the model's generation config
            eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        return set(eos) if isinstance(eos, list | tuple) else {eos} - {None}

    def _new_cache(self) -> DynamicCache:
        """An empty KV cache shaped by the model's config (sliding-window layers included)."""
        return DynamicCache(config=self.model.config.get_text_config(decoder=True))

    def _next_logits(self, input_ids, mask, positions, cache: DynamicCache) -> torch.Tensor:
        """One decoding step: the last position's logits [rows, vocab], the cache passed under the forward's own
        name for it."""
        return self.model(
            input_ids=input_ids,
            attention_mask=mask,
            position_ids=positions,
            **{self._cache_key: cache},
            use_cache=True,
            logits_to_keep=1,
        ).logits[:, -1]

    @torch.inference_mode()
    def _generate_compact(self, rows: list[list[int]], max_new_tokens: int) -> list[str]:
        """Greedy decoding that drops each row from the batch and from the KV cache once it is finished (at
        `<eos>`, at the end of its first line, `gen.first_line`), so a step computes only the rows still writing.

        The model sees what `model.generate` gives it step by step: left-padded ids, a 2D attention mask that
        grows by one column a step, positions `cumsum(mask) - 1` (pads at 0) then one more a step, a
        `DynamicCache` built from the config (sliding-window layers included), logits of the last position only.
        Rows are cut from the cache with `DynamicCache.batch_select_indices`, which indexes every layer's key and
        value tensors on the batch dimension (a sliding layer keeps its shared `cumulative_length`)."""
        input_ids, mask = self._left_padded(rows)
        positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
        cache = self._new_cache()
        eos = self._eos_ids()
        new_ids: list[list[int]] = [[] for _ in rows]
        active = list(range(len(rows)))  # the original row of each row of the batch
        for step in range(max_new_tokens):
            chosen = self._next_logits(input_ids, mask, positions, cache).float().argmax(-1)
            keep = []
            for b, (row, token) in enumerate(zip(active, chosen.tolist(), strict=True)):
                new_ids[row].append(token)
                text = self.tokenizer.decode(new_ids[row], skip_special_tokens=True)
                if token not in eos and not first_line(text)[1]:
                    keep.append(b)
            if not keep or step == max_new_tokens - 1:
                break
            if len(keep) < len(active):
                index = torch.tensor(keep, device=self.device)
                cache.batch_select_indices(index)
                mask, positions, chosen = mask[index], positions[index], chosen[index]
                active = [active[b] for b in keep]
            input_ids = chosen[:, None]
            positions = positions[:, -1:] + 1
            mask = torch.cat([mask, mask.new_ones((len(active), 1))], dim=-1)
        return self.tokenizer.batch_decode(new_ids, skip_special_tokens=True)

    @torch.inference_mode()
    def _generate_hf(self, rows: list[list[int]], max_new_tokens: int) -> list[str]:
        """The same decoding through `model.generate`, which computes every row until the last one finishes."""
        input_ids, mask = self._left_padded(rows)
        width = input_ids.shape[1]
        output = self.model.generate(
            input_ids=input_ids,
            attention_mask=mask,
            max_new_tokens=max_new_tokens,
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            eos_token_id=self.tokenizer.eos_token_id,
            pad_token_id=self.pad_id,
            stopping_criteria=StoppingCriteriaList([_LineComplete(self.tokenizer, width)]),
        )
        return self.tokenizer.batch_decode(output[:, width:], skip_special_tokens=True)
