#!/bin/bash
# Import the NeMo container image once (a .sqsh on shared storage) and create the enroot container from it.
#   bash training/nemo/setup/setup_enroot.sh          (on a login node; reads CONTAINER_* from .env)
# Pulling from nvcr.io needs credentials in $ENROOT_CONFIG_PATH/.credentials (see README). Job scripts create the
# container again on compute nodes when ENROOT_DATA_PATH is node-local (training/nemo/run_in_enroot.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if [[ -f "$ROOT/.env" ]]; then
    set -a
    # shellcheck disable=SC1091
    source "$ROOT/.env"
    set +a
fi
CONTAINER_IMAGE="${CONTAINER_IMAGE:-nvcr.io#nvidia/nemo:26.04}"
CONTAINER_SQSH="${CONTAINER_SQSH:-$ROOT/containers/nemo.sqsh}"
CONTAINER_NAME="${CONTAINER_NAME:-morphcpt-nemo}"

command -v enroot >/dev/null || { echo "enroot is not installed on this node" >&2; exit 127; }
if [[ ! -f "$CONTAINER_SQSH" ]]; then
    mkdir -p "$(dirname "$CONTAINER_SQSH")"
    echo "importing docker://$CONTAINER_IMAGE -> $CONTAINER_SQSH (tens of GB, takes a while)"
    # an interrupted import leaves its output behind, and enroot import refuses to overwrite it
    rm -f "$CONTAINER_SQSH.partial"
    enroot import -o "$CONTAINER_SQSH.partial" "docker://$CONTAINER_IMAGE"
    mv "$CONTAINER_SQSH.partial" "$CONTAINER_SQSH"
fi
if ! grep -Fqx "$CONTAINER_NAME" <(enroot list); then
    enroot create --name "$CONTAINER_NAME" "$CONTAINER_SQSH"
fi
# The container must import what the jobs use, and ship a Megatron-Bridge release the cluster engine supports
# (morphcpt.train.bridge_compat); the project itself comes in through PYTHONPATH at run time.
enroot start --mount "$ROOT:$ROOT" --env "PYTHONPATH=$ROOT/src" "$CONTAINER_NAME" \
    python -c "import megatron.core, hydra, omegaconf, transformers, pyarrow, torch
from morphcpt.train.bridge_compat import require_supported
import importlib.metadata as m
version, api = require_supported()
print('megatron-bridge', version, '| megatron-core', m.version('megatron-core'), '| torch', torch.__version__,
      '| transformers', transformers.__version__)
print('container ready:', api.container)"
