"""The megatron engine's entry: one plan, one `cluster.stage` (check, prepare, train) or a dry run.

    python training/nemo/run_cpt.py recipe=cpt_patok cluster.stage=check     # or: from morphcpt.train import run

The stages live below this module — `megatron.py` (dry run, prepare, train) and `megatron_check.py` (check, built
on megatron.py's config) — so that the check can use the engine without the engine importing the check back.
"""

from __future__ import annotations

import sys

from morphcpt.train import bridge_compat, megatron
from morphcpt.train.megatron_check import ClusterCheckError, check
from morphcpt.train.plan import CPTPlan


def run(plan: CPTPlan):
    if plan.dry_run:
        return megatron.dry_run(plan)
    if plan.cluster.stage == "check":
        try:
            return check(plan)
        except (ClusterCheckError, bridge_compat.UnsupportedBridgeError) as error:
            print(f"\ncluster check FAILED: {error}", file=sys.stderr, flush=True)
            raise SystemExit(1) from None
    if plan.cluster.stage == "prepare":
        return megatron.prepare(plan)
    return megatron.train(plan)
