"""The megatron engine's entry: one plan, one `cluster.stage` (check, prepare, train) or a dry run, behind the
contract of `morphcpt.train.engine`.

    python training/nemo/run_cpt.py recipe=cpt_patok cluster.stage=check     # or: from morphcpt.train import run

The stages live below this module — `config.py` (dry run, train), `prepare.py` (prepare) and `check.py` (check) —
so that prepare and check can use the engine's config without the engine importing them back.
"""

from __future__ import annotations

import sys

from morphcpt.plan.schema import CPTPlan, PlanError
from morphcpt.train.engine import Engine
from morphcpt.train.megatron import compat, config, prepare
from morphcpt.train.megatron.check import ClusterCheckError, check


class MegatronEngine(Engine):
    """The megatron engine behind the contract of `morphcpt.train.engine`, with its `prepare` stage."""

    name = "megatron"

    def check(self, plan: CPTPlan) -> dict:
        try:
            return check(plan)
        except (ClusterCheckError, compat.UnsupportedBridgeError) as error:
            print(f"\ncluster check FAILED: {error}", file=sys.stderr, flush=True)
            raise SystemExit(1) from None

    def describe(self, plan: CPTPlan):
        return config.dry_run(plan)

    def prepare(self, plan: CPTPlan):
        return prepare.prepare(plan)

    def train(self, plan: CPTPlan):
        return config.train(plan)

    def run(self, plan: CPTPlan):
        """The micro batch first (`auto` -> the number that fits the card, or exit 1), then the dry run, then the
        plan's stage."""
        from morphcpt.train.memory.planner import DoesNotFit, resolve_micro_batch

        if plan.data.scheme == "eeve" and not plan.dry_run:
            raise PlanError("EEVE stages run with the hf engine (engine=hf); for Megatron see docs/eeve.md")
        try:
            resolve_micro_batch(plan, "megatron")
        except DoesNotFit as error:
            print(f"\n{error}", file=sys.stderr, flush=True)
            raise SystemExit(1) from None
        if plan.dry_run:
            return self.describe(plan)
        return super().run(plan)


def run(plan: CPTPlan):
    """One invocation of the megatron engine (what `morphcpt.train.run` does for `engine=megatron`)."""
    return MegatronEngine().run(plan)
