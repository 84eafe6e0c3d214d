"""Which parameters train in each EEVE stage, and how the rows of a matrix that trains only in part stay frozen,
on one rank, under DDP and under FSDP2 (`morphcpt.train.eeve.engine` runs the stages; this is its `TrainHooks`):

    params = StageParams(stage, (first_new_id, rows))
    hf.train(plan, hf.TrainHooks(params.param_groups, params.on_optimizer, params.freeze))

`freeze` sets `requires_grad` on the bare model before the loop lays it out over ranks; `param_groups` builds the
optimiser's groups on the laid-out model and masks the gradients of the frozen rows; `on_optimizer` applies
AdamW's decoupled decay to the new rows alone. Under FSDP2 a matrix is a DTensor whose rows are split over the
ranks: each rank masks and decays only the rows of its own slice, found from the slice's global offset.
"""

from __future__ import annotations

import torch

STAGE_NAMES = {
    1: "new input rows",
    2: "new output rows",
    3: "new input and output rows",
    4: "whole output head",
    5: "new input rows + whole output head",
    6: "all parameters",
    7: "transformer layers only",
}
# stage -> (input embedding, output head, transformer layers): "new" rows, "all" rows, or None (frozen)
STAGE_TRAINS = {
    1: ("new", None, False),
    2: (None, "new", False),
    3: ("new", "new", False),
    4: (None, "all", False),
    5: ("new", "all", False),
    6: ("all", "all", True),
    7: (None, None, True),
}


class StageParams:
    """`TrainHooks` for one stage: which tensors train (`freeze`, on the bare model before DDP or FSDP2 wraps it),
    the row masks and parameter groups (`param_groups`, on the laid-out model), and the row-wise decay.

    Under FSDP2 each rank holds a slice of rows of each matrix (a DTensor sharded on dim 0): the masks and the
    decay act on the rows of the new range that fall inside this rank's slice, found from the shard's global
    offset, never from the matrix's global shape."""

    def __init__(self, stage: int, new_rows: tuple[int, int]) -> None:
        self.stage = stage
        self.new_rows = new_rows
        self.counts: dict[str, int] = {}

    def _modes(self, model: torch.nn.Module) -> list[tuple[torch.nn.Parameter, str | None]]:
        """(parameter, "new" | "all" | None) for every parameter: what of it trains in this stage."""
        embed = model.get_input_embeddings().weight
        head = model.get_output_embeddings().weight
        if embed is head:
            raise ValueError("EEVE stages need untied input and output embeddings (resize the model first)")
        train_in, train_out, train_body = STAGE_TRAINS[self.stage]
        body = "all" if train_body else None
        return [(p, train_in if p is embed else train_out if p is head else body) for p in model.parameters()]

    def freeze(self, model: torch.nn.Module) -> None:
        """Set `requires_grad` for this stage, before the model is laid out over ranks: DDP builds its gradient
        buckets and FSDP2 its reduce-scatters from it, and a tensor frozen afterwards breaks both."""
        counts = {"total": 0, "trainable": 0}
        for param, mode in self._modes(model):
            param.requires_grad_(mode is not None)
            counts["total"] += param.numel()
            if mode == "new":
                counts["trainable"] += (self.new_rows[1] - self.new_rows[0]) * param.shape[1]
            elif mode == "all":
                counts["trainable"] += param.numel()
        self.counts = counts

    def param_groups(self, model: torch.nn.Module, weight_decay: float) -> list[dict]:
        """The optimiser's groups over the laid-out model's trainable tensors; masks the frozen rows of the
        matrices of which only the new rows train."""
        decay, no_decay, row_decay = [], [], []
        for param, mode in self._modes(model):
            if (mode is not None) != param.requires_grad:
                raise RuntimeError(
                    f"EEVE stage {self.stage}: StageParams.freeze was not called before layout"
                )
            if mode == "new":
                self._mask_rows(param)
                row_decay.append(param)
            elif mode == "all":
                (decay if param.ndim >= 2 else no_decay).append(param)
        groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
        if row_decay:
            groups.append(
                {
                    "params": row_decay,
                    "weight_decay": 0.0,
                    "row_decay": weight_decay,
                    "rows": list(self.new_rows),
                }
            )
        return [g for g in groups if g["params"]]

    def _mask_rows(self, param: torch.nn.Parameter) -> None:
        """Zero the gradient of every row outside the new range. A plain tensor (one rank, DDP) masks the
        gradient as autograd makes it, before it is accumulated or all-reduced; an FSDP2 shard masks its rows
        of the reduce-scattered gradient (FSDP2 runs post-accumulate-grad hooks on the shard after the reduce)."""
        if _is_dtensor(param):

            @torch.no_grad()
            def mask_shard(shard: torch.nn.Parameter) -> None:
                start, stop = local_rows(shard, self.new_rows)
                local = shard.grad.to_local()
                local[:start].zero_()
                local[stop:].zero_()

            param.register_post_accumulate_grad_hook(mask_shard)
            return
        frozen = torch.ones(param.shape[0], 1, dtype=torch.bool, device=param.device)
        frozen[self.new_rows[0] : self.new_rows[1]] = False
        param.register_hook(lambda grad: grad.masked_fill(frozen, 0.0))

    @staticmethod
    def on_optimizer(optimizer: torch.optim.Optimizer) -> None:
        """AdamW's decoupled decay, p <- p (1 - lr wd), on the new rows only (masked rows are never decayed);
        under FSDP2 on the new rows inside this rank's shard."""

        @torch.no_grad()
        def decay_rows(opt, args, kwargs) -> None:
            for group in opt.param_groups:
                if group.get("row_decay"):
                    for param in group["params"]:
                        start, stop = local_rows(param, group["rows"])
                        local = param.to_local() if _is_dtensor(param) else param
                        local[start:stop].mul_(1 - group["lr"] * group["row_decay"])

        optimizer.register_step_pre_hook(decay_rows)


def _is_dtensor(tensor: torch.Tensor) -> bool:
    from torch.distributed.tensor import DTensor

    return isinstance(tensor, DTensor)


def local_rows(param: torch.Tensor, rows) -> tuple[int, int]:
    """Global rows [start, stop) as indices into this rank's part of `param`: all of it, or the slice of rows an
    FSDP2 shard (a DTensor sharded on dim 0) holds, at its global offset. An empty range when none is here."""
    offset, count = 0, param.shape[0]
    if _is_dtensor(param):
        from torch.distributed.tensor._utils import compute_local_shape_and_global_offset

        shape, offsets = compute_local_shape_and_global_offset(
            param.shape, param.device_mesh, param.placements
        )
        offset, count = offsets[0], shape[0]
    start = min(max(rows[0] - offset, 0), count)
    return start, min(max(rows[1] - offset, start), count)
