#!/bin/bash
# Run one command inside the project's enroot container, from $PROJECT_DIR, with the project and data mounted
# at the same paths as on the host (so every path in a job script means the same thing inside and out).
#   training/nemo/run_in_enroot.sh python training/nemo/data/preprocess_data.py scheme=patok input=...
# Settings come from the environment (job scripts export them), then from $PROJECT_DIR/.env for anything unset:
# PROJECT_DIR, DATA_ROOT, CONTAINER_NAME, CONTAINER_SQSH; HF_TOKEN and WANDB_API_KEY are passed through by name.
# MORPHCPT_NO_ENROOT=1 runs the command directly instead (workstations without enroot, and the tests).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PROJECT_DIR="${PROJECT_DIR:-$(cd "$HERE/../.." && pwd)}"

# Export KEY=VALUE lines of a .env file without overriding what the job already set.
load_env() {
    local key value
    while IFS='=' read -r key value || [[ -n "$key" ]]; do
        key="${key#export }"
        key="${key//[[:space:]]/}"
        [[ "$key" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
        [[ -n "${!key:-}" ]] && continue
        value="${value#\"}"; value="${value%\"}"; value="${value#\'}"; value="${value%\'}"
        export "$key=$value"
    done < "$1"
}
[[ -f "$PROJECT_DIR/.env" ]] && load_env "$PROJECT_DIR/.env"

if [[ $# -eq 0 ]]; then
    echo "usage: $0 COMMAND [ARGS...]" >&2
    exit 2
fi

if [[ "${MORPHCPT_NO_ENROOT:-0}" == 1 ]]; then
    cd "$PROJECT_DIR"
    export PYTHONPATH="$PROJECT_DIR/src${PYTHONPATH:+:$PYTHONPATH}"
    exec "$@"
fi
if ! command -v enroot >/dev/null 2>&1; then
    echo "enroot not found; on a machine without it set MORPHCPT_NO_ENROOT=1 to run commands directly" >&2
    exit 127
fi

CONTAINER_NAME="${CONTAINER_NAME:-morphcpt-nemo}"
CONTAINER_SQSH="${CONTAINER_SQSH:-$PROJECT_DIR/containers/nemo.sqsh}"
# ENROOT_DATA_PATH is often node-local: a container created on the login node does not exist on a compute node,
# so create it here from the shared .sqsh when missing. The lock keeps array tasks on one node from racing.
if ! grep -Fqx "$CONTAINER_NAME" <(enroot list); then
    if [[ ! -f "$CONTAINER_SQSH" ]]; then
        echo "no container $CONTAINER_NAME and no image $CONTAINER_SQSH: run training/nemo/setup/setup_enroot.sh" >&2
        exit 1
    fi
    lock="${TMPDIR:-/tmp}/enroot-create-${CONTAINER_NAME}.lock"
    (
        flock 9
        grep -Fqx "$CONTAINER_NAME" <(enroot list) || enroot create --name "$CONTAINER_NAME" "$CONTAINER_SQSH"
    ) 9>"$lock"
fi

mounts=(--mount "$PROJECT_DIR:$PROJECT_DIR")
if [[ -n "${DATA_ROOT:-}" && "$DATA_ROOT" != "$PROJECT_DIR" && "$DATA_ROOT" != "$PROJECT_DIR"/* ]]; then
    mounts+=(--mount "$DATA_ROOT:$DATA_ROOT")
fi
envs=(--env "PYTHONPATH=$PROJECT_DIR/src" --env "HF_HOME=${HF_HOME:-$PROJECT_DIR/.cache/huggingface}")
for name in HF_TOKEN WANDB_API_KEY WANDB_PROJECT WANDB_ENTITY WANDB_MODE; do
    # By name only, so secrets never appear on a command line.
    [[ -n "${!name:-}" ]] && envs+=(--env "$name")
done
exec enroot start --rw "${mounts[@]}" "${envs[@]}" "$CONTAINER_NAME" \
    bash -c 'cd "$0" && exec "$@"' "$PROJECT_DIR" "$@"
