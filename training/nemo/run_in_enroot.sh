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

# Export the settings of a .env file that the job did not set already. morphcpt.dotenv reads it, the same reader
# as the Python side (quotes, inline comments), with the host's python3 and its standard library only.
load_env() {
    local python exports
    python=$(command -v python3 || command -v python) || {
        echo "run_in_enroot.sh: no python3 on this node to read $1" >&2
        exit 127
    }
    exports=$("$python" "$PROJECT_DIR/src/morphcpt/dotenv.py" --shell "$1") || exit 2
    eval "$exports"
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
# enroot starts from a clean environment, so the GPUs the scheduler gave this job never reach the container, and its
# NVIDIA hook would expose every GPU of the node. Hand them over as NVIDIA_VISIBLE_DEVICES, which the hook
# (98-nvidia.sh) reads from the host environment as host indices or UUIDs; inside, they are numbered from 0.
#   Slurm: SLURM_STEP_GPUS / SLURM_JOB_GPUS hold the host indices. CUDA_VISIBLE_DEVICES does not: under
#          ConstrainDevices Slurm renumbers the job's GPUs from 0 (gres.c), and 0 is the node's first GPU, not ours.
#   PBS Pro: CUDA_VISIBLE_DEVICES, set by the cgroup hook (GPU UUIDs).
# A CPU-only job sets NVIDIA_VISIBLE_DEVICES=void itself, so the hook does nothing on a node without GPUs. Under
# pyxis, pyxis and enroot map the step's GPUs themselves.
if [[ -z "${NVIDIA_VISIBLE_DEVICES:-}" && "${CONTAINER_RUNTIME:-enroot}" != pyxis ]]; then
    if [[ -n "${SLURM_JOB_ID:-}" && -n "${SLURM_STEP_GPUS:-${SLURM_JOB_GPUS:-}}" ]]; then
        export NVIDIA_VISIBLE_DEVICES="${SLURM_STEP_GPUS:-$SLURM_JOB_GPUS}"
    elif [[ -n "${CUDA_VISIBLE_DEVICES:-}" && -z "${SLURM_JOB_ID:-}" ]]; then
        export NVIDIA_VISIBLE_DEVICES="$CUDA_VISIBLE_DEVICES"
    fi
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
    # The image's own environment wins over the host's unless --container-env names the variable (pyxis README):
    # NGC images set PYTHONPATH. --container-name keeps the unpacked image for the job's later steps, instead of
    # unpacking it again for each one.
    exec srun "${step[@]}" --container-image="${CONTAINER_SQSH:-$PROJECT_DIR/containers/nemo.sqsh}" \
        --container-name="${CONTAINER_NAME:-nemo_framework}" \
        --container-env="PYTHONPATH,HF_HOME,MORPHCPT_MOUNTS,MORPHCPT_IN_CONTAINER${NVIDIA_VISIBLE_DEVICES:+,NVIDIA_VISIBLE_DEVICES}" \
        --container-mounts="$mount_list" --container-workdir="$PROJECT_DIR" "$@"
fi
if ! command -v enroot >/dev/null 2>&1; then
    echo "enroot not found; on a machine without it set MORPHCPT_NO_ENROOT=1 to run commands directly" >&2
    exit 127
fi

CONTAINER_NAME="${CONTAINER_NAME:-nemo_framework}"
CONTAINER_SQSH="${CONTAINER_SQSH:-$PROJECT_DIR/containers/nemo.sqsh}"
# ENROOT_DATA_PATH is often node-local: a container created on the login node does not exist on a compute node,
# so create it here from the shared .sqsh when missing. Two jobs of an array landing on a fresh node would both
# create it, and the second fails with "File already exists" (enroot's runtime.sh refuses an existing rootfs) or
# starts one still being unpacked. Every job takes the lock before it looks, so it sees a container only once
# made; the lock lives where every job of this user on this node sees it: in ENROOT_DATA_PATH when the
# environment names it, else in /tmp, never in $TMPDIR (PBS Pro gives each job its own: OpenPBS start_exec.c).
lock_dir=/tmp
[[ -n "${ENROOT_DATA_PATH:-}" ]] && mkdir -p "$ENROOT_DATA_PATH" 2>/dev/null && [[ -w "$ENROOT_DATA_PATH" ]] \
    && lock_dir="$ENROOT_DATA_PATH"
(
    flock 9
    grep -Fqx "$CONTAINER_NAME" <(enroot list) && exit 0  # there already, or made by the job before us
    if [[ ! -f "$CONTAINER_SQSH" ]]; then
        echo "no container $CONTAINER_NAME and no image $CONTAINER_SQSH: run training/nemo/setup/setup_enroot.sh" >&2
        exit 1
    fi
    enroot create --name "$CONTAINER_NAME" "$CONTAINER_SQSH" && exit 0
    # a job that did not take this lock (another checkout, by hand) made it meanwhile: use it
    if grep -Fqx "$CONTAINER_NAME" <(enroot list); then
        echo "container $CONTAINER_NAME was created meanwhile by another job; using it" >&2
        exit 0
    fi
    exit 1
) 9>"$lock_dir/.morphcpt-enroot-create-$(id -u)-${CONTAINER_NAME}.lock"

exec enroot start --rw "${mounts[@]}" "${envs[@]}" "$CONTAINER_NAME" \
    bash -c 'cd "$0" && exec "$@"' "$PROJECT_DIR" "$@"
