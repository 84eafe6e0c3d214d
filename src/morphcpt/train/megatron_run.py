"""The megatron engine's entry: one plan, one `cluster.stage` (check, prepare, train) or a dry run.

    python training/nemo/run_cpt.py recipe=cpt_patok cluster.stage=check     # or: from morphcpt.train import run

The stages live below this module — `megatron.py` (dry run, train), `megatron_prepare.py` (prepare) and
`megatron_check.py` (check) — so that prepare and check can use the engine's config without the engine importing
them back.
"""

from __future__ import annotations

import sys

from morphcpt.train import bridge_compat, megatron, megatron_prepare
from morphcpt.train.megatron_check import ClusterCheckError, check
from morphcpt.train.plan import CPTPlan


def run(plan: CPTPlan):
    from morphcpt.train.memory import DoesNotFit, resolve_micro_batch

    try:
        resolve_micro_batch(plan, "megatron")  # loop.micro_batch_size=auto -> the number that fits the card
    except DoesNotFit as error:
        print(f"\n{error}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    if plan.dry_run:
        return megatron.dry_run(plan)
    if plan.cluster.stage == "check":
        try:
            return check(plan)
        except (ClusterCheckError, bridge_compat.UnsupportedBridgeError) as error:
            print(f"\ncluster check FAILED: {error}", file=sys.stderr, flush=True)
            raise SystemExit(1) from None
    if plan.cluster.stage == "prepare":
        return megatron_prepare.prepare(plan)
    return megatron.train(plan)
