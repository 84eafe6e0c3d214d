#!/bin/bash
# Run one command inside the project's enroot container, from $PROJECT_DIR, with the project and data mounted
# at the same paths as on the host (so every path in a job script means the same thing inside and out).
#   training/nemo/run_in_enroot.sh python training/nemo/data/preprocess_data.py scheme=patok input=...
# Settings come from the environment (job scripts export them), then from $PROJECT_DIR/.env for anything unset:
# PROJECT_DIR, DATA_ROOT, OUTPUT_ROOT, LOG_DIR, HF_HOME, BASE_MODEL, TOKENIZER, CONTAINER_NAME, CONTAINER_SQSH;
# HF_TOKEN, WANDB_API_KEY, HF_HUB_OFFLINE, WANDB_MODE, ... are passed through by name, never by value, and so are
# MORPHCPT_NATIVE and CC (the compiled kernels of preprocessing: tokenization/native).
# MORPHCPT_NO_ENROOT=1 runs the command directly instead (workstations without enroot, and the tests);
# CONTAINER_RUNTIME=pyxis (Slurm) runs it in an srun step with --container-image and the same mounts.
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

# MORPHCPT_IN_CONTAINER=1: already inside the image (a multi-node srun step started by pyxis, torchrun_nodes.sh)
if [[ "${MORPHCPT_NO_ENROOT:-0}" == 1 || "${MORPHCPT_IN_CONTAINER:-0}" == 1 ]]; then
    cd "$PROJECT_DIR"
    export PYTHONPATH="$PROJECT_DIR/src${PYTHONPATH:+:$PYTHONPATH}"
    exec "$@"
fi
# Every host folder the command reads or writes is mounted at its own path: the project, the data, the outputs
# (imports, checkpoints, progress.json, exports: written inside an unmounted path they would stay in the container,
# where the host never sees them), the logs, the Hugging Face cache, and local model/tokenizer folders (offline
# compute nodes). MORPHCPT_EXTRA_MOUNTS (.env) adds more, colon-separated, and so does MORPHCPT_JOB_MOUNTS (set by a
# job script, e.g. the export job's RUN_DIR). A folder inside one already mounted is skipped.
mounts=()
mounted=()
add_mount() {
    local path="$1" parent
    [[ -n "$path" && "$path" == /* ]] || return 0
    path="${path%/}"
    for parent in "${mounted[@]}"; do
        [[ "$path" == "$parent" || "$path" == "$parent"/* ]] && return 0
    done
    mkdir -p "$path" 2>/dev/null || true
    [[ -d "$path" ]] || return 0
    mounted+=("$path")
    mounts+=(--mount "$path:$path")
}
add_mount "$PROJECT_DIR"
for path in "${DATA_ROOT:-}" "${OUTPUT_ROOT:-}" "${LOG_DIR:-}" "${HF_HOME:-}"; do
    add_mount "$path"
done
for path in "${BASE_MODEL:-}" "${TOKENIZER:-}"; do
    [[ -d "$path" ]] && add_mount "$path"  # a Hub id is not a folder
done
IFS=: read -r -a extra <<< "${MORPHCPT_EXTRA_MOUNTS:-}:${MORPHCPT_JOB_MOUNTS:-}"  # .env's, and a job's own
for path in "${extra[@]}"; do
    add_mount "$path"
done

# MORPHCPT_MOUNTS tells the command which folders reach the host: training refuses a run folder outside them,
# whose checkpoints would stay inside the container.
export MORPHCPT_MOUNTS
MORPHCPT_MOUNTS=$(IFS=:; echo "${mounted[*]}")
envs=(--env "PYTHONPATH=$PROJECT_DIR/src" --env "HF_HOME=${HF_HOME:-$PROJECT_DIR/.cache/huggingface}"
      --env MORPHCPT_MOUNTS)
# By name only, so secrets never appear on a command line (enroot copies the value from this environment).
for name in HF_TOKEN WANDB_API_KEY WANDB_PROJECT WANDB_ENTITY WANDB_MODE HF_HUB_OFFLINE TRANSFORMERS_OFFLINE \
    PBS_JOBID PBS_ARRAY_INDEX SLURM_JOB_ID MORPHCPT_NATIVE CC MORPHCPT_HEARTBEAT; do
    [[ -n "${!name:-}" ]] && envs+=(--env "$name")
done
# Multi-node training: the interconnect's settings (NCCL_SOCKET_IFNAME, NCCL_IB_HCA, ...; MELLANOX_VISIBLE_DEVICES
# for enroot's Mellanox hook, which mounts the InfiniBand devices)
for name in $(compgen -e NCCL_) $(compgen -e TORCH_NCCL_) $(compgen -e UCX_) MELLANOX_VISIBLE_DEVICES; do
    [[ -n "${!name:-}" ]] && envs+=(--env "$name")
done
# enroot starts from a clean environment, so the GPUs PBS gave this job (CUDA_VISIBLE_DEVICES, set by the
# cgroup) never reach the container, and its NVIDIA hook would expose every GPU of the node. Hand them over as
# NVIDIA_VISIBLE_DEVICES, which the hook reads from the host environment; inside, they are numbered from 0.
if [[ -n "${CUDA_VISIBLE_DEVICES:-}" && -z "${NVIDIA_VISIBLE_DEVICES:-}" ]]; then
    export NVIDIA_VISIBLE_DEVICES="$CUDA_VISIBLE_DEVICES"
fi
[[ -n "${NVIDIA_VISIBLE_DEVICES:-}" ]] && envs+=(--env NVIDIA_VISIBLE_DEVICES)
# Slurm with pyxis (CONTAINER_RUNTIME=pyxis in .env): one srun step in the image, the same mounts; Slurm hands the
# GPUs over itself and the step inherits the job's environment (secrets included, never on the command line).
# MORPHCPT_SRUN_ARGS replaces the step's one task with others (torchrun_nodes.sh: one task on each node).
if [[ "${CONTAINER_RUNTIME:-enroot}" == pyxis ]]; then
    mount_list=$(IFS=,; echo "${mounted[*]/%/:}" | sed 's/\([^,]*\):/\1:\1/g')
    export PYTHONPATH="$PROJECT_DIR/src" HF_HOME="${HF_HOME:-$PROJECT_DIR/.cache/huggingface}"
    export MORPHCPT_IN_CONTAINER=1
    read -r -a step <<< "${MORPHCPT_SRUN_ARGS:---nodes=1 --ntasks=1}"  # one task on this node
    # Slurm 22.05+ no longer hands the job's --cpus-per-task to srun: without it the step gets one core
    if [[ -n "${SLURM_CPUS_PER_TASK:-}" && "${MORPHCPT_SRUN_ARGS:-}" != *--cpus-per-task* ]]; then
        step+=(--cpus-per-task="$SLURM_CPUS_PER_TASK")
    fi
    exec srun "${step[@]}" --container-image="${CONTAINER_SQSH:-$PROJECT_DIR/containers/nemo.sqsh}" \
        --container-mounts="$mount_list" --container-workdir="$PROJECT_DIR" "$@"
fi
if ! command -v enroot >/dev/null 2>&1; then
    echo "enroot not found; on a machine without it set MORPHCPT_NO_ENROOT=1 to run commands directly" >&2
    exit 127
fi

CONTAINER_NAME="${CONTAINER_NAME:-nemo_framework}"
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

exec enroot start --rw "${mounts[@]}" "${envs[@]}" "$CONTAINER_NAME" \
    bash -c 'cd "$0" && exec "$@"' "$PROJECT_DIR" "$@"
