"""How a plan lays out on the cluster's GPUs for Megatron: the data-parallel size, the parallel layout (world size,
data-parallel size, gradient accumulation) and the recomputation overrides.

Read by the megatron engine (`config.py`, which re-exports these names) and by the memory planner
(`memory/planner.py`, `memory/megatron.py`); it sits below both, so the planner can size a plan without importing the
engine that calls the planner.
"""

from __future__ import annotations

from typing import Any

from morphcpt.plan.schema import CPTPlan


def data_parallel_size(plan: CPTPlan) -> int:
    """The job's data-parallel size: its GPUs over TP x PP."""
    world = plan.cluster.nodes * plan.cluster.gpus_per_node
    model_parallel = plan.cluster.tensor_parallel * plan.cluster.pipeline_parallel
    if world % model_parallel:
        raise ValueError(f"{world} GPUs cannot hold TP x PP = {model_parallel}")
    return world // model_parallel


def parallel_layout(plan: CPTPlan, micro_batch: int | None = None) -> dict[str, int]:
    """World size, data-parallel size and the gradient accumulation that reaches the global batch (at the plan's
    micro batch, or `micro_batch`)."""
    data_parallel = data_parallel_size(plan)
    micro = micro_batch or plan.loop.micro_batch_size
    if micro == "auto":
        raise ValueError("loop.micro_batch_size=auto is resolved by the memory planner before the layout")
    per_step = micro * data_parallel
    if plan.loop.global_batch_size % per_step:
        raise ValueError(
            f"global batch {plan.loop.global_batch_size} is not a multiple of micro batch x DP = {per_step}"
        )
    return {
        "world_size": data_parallel * plan.cluster.tensor_parallel * plan.cluster.pipeline_parallel,
        "data_parallel": data_parallel,
        "gradient_accumulation": plan.loop.global_batch_size // per_step,
    }


def recompute_overrides(plan: CPTPlan) -> dict[str, Any]:
    """`loop.activation_checkpointing` in Megatron's terms: recompute every decoder layer in backward (full
    granularity, uniform groups of one layer, as the hf engine checkpoints each layer); off: the recipe's none."""
    if plan.loop.activation_checkpointing:
        return {
            "model.recompute_granularity": "full",
            "model.recompute_method": "uniform",
            "model.recompute_num_layers": 1,
        }
    return {
        "model.recompute_granularity": None,
        "model.recompute_method": None,
        "model.recompute_num_layers": None,
    }
