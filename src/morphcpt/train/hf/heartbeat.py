"""The training loop's heartbeat on a multi-node job: the process that trains says it is still stepping, so a node
whose torchrun hangs while alive (a stuck collective, a dead GPU) falls silent and ends the job.

    from morphcpt.train import heartbeat
    heartbeat.beat()      # in the loop: every micro batch and validation batch; at most once a second

`training/nemo/torchrun_nodes.sh` sets MORPHCPT_HEARTBEAT to a file of its node's state folder (a mounted run
folder). Local rank 0 of each node writes a growing count there; the node's launcher passes it on to the head,
which ends the job when it stops changing for TRAIN_NODE_TIMEOUT seconds. Until the first beat (the model loading)
the launcher beats for the node itself. Without the variable (one node, the tests, the demo) nothing is written.
"""

from __future__ import annotations

import os
import sys
import time

ENV = "MORPHCPT_HEARTBEAT"
_beats = {"count": 0, "last": 0.0, "warned": False}


def beat(every: float = 1.0) -> None:
    """Write the next count to $MORPHCPT_HEARTBEAT, at most once every `every` seconds (local rank 0 only)."""
    path = os.environ.get(ENV)
    if not path or os.environ.get("LOCAL_RANK", "0") != "0":
        return
    now = time.monotonic()
    if now - _beats["last"] < every:
        return
    _beats["count"] += 1
    _beats["last"] = now
    try:
        with open(f"{path}.tmp", "w") as handle:
            handle.write(f"{_beats['count']}\n")
        os.replace(f"{path}.tmp", path)
    except OSError as error:  # the launcher then reads this node as silent, and says so; say why here
        if not _beats["warned"]:
            _beats["warned"] = True
            print(f"heartbeat: cannot write {path} ({error.strerror or error})", file=sys.stderr, flush=True)
