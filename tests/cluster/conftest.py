"""Contract tests of the cluster path against the real Megatron-Bridge (pytest marker `cluster`).

They run in the Python 3.12 environment `make test-cluster` builds (tests/cluster/build_env.sh: the Bridge release
of the NeMo container, megatron-core, PyPI torch on a CPU) with tests/cluster/te_stub on sys.path: an import-only
stand-in for Transformer Engine, which Bridge imports unguarded. Everywhere else (the main `make test`
environment) every test here is reported as skipped, with the reason.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

TE_STUB = Path(__file__).parent / "te_stub"


def _bridge_importable() -> str | None:
    if importlib.util.find_spec("megatron") is None or importlib.util.find_spec("megatron.bridge") is None:
        return "megatron.bridge is not installed (make test-cluster builds the contract environment)"
    if importlib.util.find_spec("transformer_engine") is None:
        sys.path.insert(0, str(TE_STUB))  # import-only stand-in: see te_stub/transformer_engine/__init__.py
    return None


SKIP_REASON = _bridge_importable()


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.cluster)
            if SKIP_REASON:
                item.add_marker(pytest.mark.skip(reason=SKIP_REASON))
