#!/bin/bash
# Import the NeMo container image once (a .sqsh on shared storage) and create the enroot container from it.
#   bash training/nemo/setup/setup_enroot.sh          (on a login node; reads CONTAINER_* from .env)
# The container is named CONTAINER_NAME (default nemo_framework, the name the training plan greps for:
# `enroot list | grep nemo_framework`). Pulling from nvcr.io needs credentials in $ENROOT_CONFIG_PATH/.credentials
# (see docs/cluster.md). Job scripts create the container again on compute nodes when ENROOT_DATA_PATH is node-local
# (training/nemo/run_in_enroot.sh). Also writes ./run_in_enroot.sh, the plan's shorthand for that script.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"  # the checkout (this is training/nemo/setup/)
if [[ -f "$ROOT/.env" ]]; then
    set -a
    # shellcheck disable=SC1091
    source "$ROOT/.env"
    set +a
fi
CONTAINER_IMAGE="${CONTAINER_IMAGE:-nvcr.io#nvidia/nemo:26.04}"
CONTAINER_SQSH="${CONTAINER_SQSH:-$ROOT/containers/nemo.sqsh}"
CONTAINER_NAME="${CONTAINER_NAME:-nemo_framework}"

# The plan types `./run_in_enroot.sh python ...` from the checkout: a two-line forwarder (not tracked by git).
cat > "$ROOT/run_in_enroot.sh" <<'FORWARD'
#!/bin/bash
# Written by training/nemo/setup/setup_enroot.sh: the training plan's ./run_in_enroot.sh (see that script).
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/training/nemo/run_in_enroot.sh" "$@"
FORWARD
chmod +x "$ROOT/run_in_enroot.sh"

command -v enroot >/dev/null || { echo "enroot is not installed on this node" >&2; exit 127; }
if [[ ! -f "$CONTAINER_SQSH" ]]; then
    mkdir -p "$(dirname "$CONTAINER_SQSH")"
    echo "importing docker://$CONTAINER_IMAGE -> $CONTAINER_SQSH (tens of GB, takes a while)"
    # an interrupted import leaves its output behind, and enroot import refuses to overwrite it
    rm -f "$CONTAINER_SQSH.partial"
    enroot import -o "$CONTAINER_SQSH.partial" "docker://$CONTAINER_IMAGE"
    mv "$CONTAINER_SQSH.partial" "$CONTAINER_SQSH"
fi
existed=0
if grep -Fqx "$CONTAINER_NAME" <(enroot list); then
    existed=1
else
    enroot create --name "$CONTAINER_NAME" "$CONTAINER_SQSH"
fi
# The container must import what the jobs use, and ship a Megatron-Bridge release the cluster engine supports: the
# same probe verify_setup runs (morphcpt.train.megatron.compat); the project comes in through PYTHONPATH at run time.
if ! enroot start --mount "$ROOT:$ROOT" --env "PYTHONPATH=$ROOT/src" "$CONTAINER_NAME" \
    python -m morphcpt.train.megatron.compat; then
    if [[ "$existed" == 1 ]]; then
        # e.g. the earlier pipeline created nemo_framework from nemo:25.11, which has no supported Megatron-Bridge
        echo "the container $CONTAINER_NAME existed before this setup and is not this image ($CONTAINER_SQSH):" \
            "remove it (enroot remove $CONTAINER_NAME) and run this script again, or set another CONTAINER_NAME" \
            "in .env" >&2
    fi
    exit 1
fi
echo "container: $CONTAINER_NAME (image $CONTAINER_SQSH); check it with: enroot list | grep -x $CONTAINER_NAME"
