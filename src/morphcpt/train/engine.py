"""The contract every training engine meets: one plan in, one invocation out.

An engine is a small class with three methods, and `run`, which picks one of them for the plan in the order every
engine shares (`cluster.stage` first, then the dry run):

    check(plan)     what a job needs (data, tokenizer, memory on the plan's card), checked before ranks start and
                    before any GPU memory is allocated; exits with status 1 and the reason when something is wrong
    describe(plan)  the dry run: the resolved plan and what the engine would do with it, nothing trained
    train(plan)     train (or resume) to the plan's steps; writes `<run_dir>/progress.json`; returns the result

`prepare(plan)` (`cluster.stage=prepare`) is the megatron engine's weight import; the others refuse it.
`morphcpt.train.run` dispatches on `plan.engine`: `hf/engine.py` (`HFEngine`, and `EEVEEngine` in `eeve/engine.py`
for `data.scheme=eeve`) and `megatron/engine.py` (`MegatronEngine`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from morphcpt.plan.schema import CPTPlan


class Engine(ABC):
    """One way of executing a training plan."""

    name: str

    @abstractmethod
    def check(self, plan: CPTPlan) -> dict:
        """`cluster.stage=check`: the report of what a job needs, or exit status 1 with the reason."""

    @abstractmethod
    def describe(self, plan: CPTPlan) -> dict:
        """`dry_run=true`: what the engine would run, written beside the resolved plan; nothing is trained."""

    @abstractmethod
    def train(self, plan: CPTPlan):
        """`cluster.stage=train`: train to `loop.steps` (resuming what is there) and return the run's result."""

    def prepare(self, plan: CPTPlan):
        """`cluster.stage=prepare`: only the megatron engine imports weights before training."""
        raise ValueError(
            f"cluster.stage=prepare imports weights for the megatron engine; the {self.name} engine has none"
        )

    def run(self, plan: CPTPlan):
        """One invocation: the plan's stage (check, prepare), else its dry run, else training."""
        if plan.cluster.stage == "prepare":
            return self.prepare(plan)
        if plan.cluster.stage == "check":
            return self.check(plan)
        if plan.dry_run:
            return self.describe(plan)
        return self.train(plan)
