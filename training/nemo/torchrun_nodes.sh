#!/bin/bash
# torchrun on every node of the job, each inside the container on its own node, all meeting at one rendezvous; the
# job ends as soon as one node fails or falls silent. The training job scripts call it where they called torchrun:
#   training/nemo/torchrun_nodes.sh --nodes N --gpus G --log-dir RUN_DIR/logs [--node-timeout 60] -- PROGRAM ARGS
# PROGRAM ARGS are torchrun's (training/nemo/run_cpt.py recipe=cpt_patok ..., or -m morphcpt.train ...).
#
# --nodes 1 runs what the jobs always ran: run_in_enroot.sh torchrun --standalone --nproc-per-node G PROGRAM ARGS.
# --nodes N > 1, inside a PBS Pro or Slurm job of N nodes (docs/multi-node.md):
#   nodes   the hosts of $PBS_NODEFILE in order (a host's first line is its vnode index for pbsdsh), or
#           `scontrol show hostnames $SLURM_JOB_NODELIST`; the first is this node, and hosts the rendezvous.
#   port    20000 + (checksum of the job id mod 10000), the next free one on this node: jobs sharing a node differ.
#   launch  node 0 runs here. PBS Pro: node k through `pbsdsh -n <its first line> -- /bin/bash THIS --node k`.
#           pbsdsh ships with PBS Pro and needs no MPI; its task belongs to the job (killed with it), but starts
#           in the home folder with the job's submission environment only, and pbsdsh exits 0 whatever the task
#           did: so every node reads its settings from launch.env and writes its own exit status. Slurm: one
#           `srun --nodes N --ntasks-per-node 1 --kill-on-bad-exit=1` step (in the image with
#           CONTAINER_RUNTIME=pyxis).
#   node k  torchrun --nnodes N --nproc-per-node G --rdzv-backend c10d --rdzv-endpoint HOST0:PORT --rdzv-id JOB
#           --max-restarts 0, inside the container. Its output: <log-dir>/job_<id>_nodes/node<k>.log, shown here
#           too, each line prefixed [node k].
#   watch   a node that exits non-zero, ends without a status (killed, lost), or whose heartbeat (from the
#           training loop, morphcpt.train.hf.heartbeat, once it has started) stops for
#           --node-timeout seconds fails the job: this says which and why, shows the end of its log, stops the
#           others (SIGTERM; SIGKILL after 10 s) and exits non-zero, and PBS or Slurm ends what is left.
set -uo pipefail
SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
HERE="$(dirname "$SELF")"
BEAT_SECONDS=5           # how often a node writes its heartbeat
JOIN_TIMEOUT=900         # torchrun waits this long for every node to join (containers start on each node first)
STOP_GRACE=10            # after SIGTERM, a node's launcher has this long before SIGKILL (a lost peer leaves nothing to save)
# What a node launched by pbsdsh needs of this job's environment (it starts with the submission environment only).
# Secrets are never written: run_in_enroot.sh reads them from .env on each node.
NODE_ENV_NAMES=(PATH PYTHONPATH PROJECT_DIR DATA_ROOT OUTPUT_ROOT LOG_DIR HF_HOME BASE_MODEL TOKENIZER
    CONTAINER_NAME CONTAINER_SQSH CONTAINER_RUNTIME HF_HUB_OFFLINE TRANSFORMERS_OFFLINE WANDB_MODE WANDB_PROJECT
    WANDB_ENTITY OMP_NUM_THREADS TOKENIZERS_PARALLELISM PBS_JOBID SLURM_JOB_ID)
NODE_ENV_PREFIXES=(MORPHCPT_ NCCL_ TORCH_NCCL_ GLOO_ UCX_ MELLANOX_)

say() { echo "[torchrun_nodes $(date +%H:%M:%S)] $*"; }
die() { echo "torchrun_nodes: $*" >&2; exit 2; }

# ---- node mode: run on each node (here for node 0, through pbsdsh or srun for the others) ------------------
node_main() {
    local rank="$1" state="$2" child rc
    # shellcheck source=/dev/null
    source "$state/launch.env"
    if [[ "$rank" == slurm ]]; then
        rank="${SLURM_NODEID:?srun sets SLURM_NODEID}"  # srun hands the job's environment on itself
    else
        # shellcheck source=/dev/null
        source "$state/node.env"  # pbsdsh does not
    fi
    exec >>"$state/node$rank.log" 2>&1
    echo "[$(date -Is)] node $rank of $NNODES on ${HOSTS[rank]} ($(hostname)): torchrun, $GPUS processes"
    cd "$PROJECT_DIR" || exit 2
    local parent=$$
    # The heartbeat comes from the training loop (morphcpt.train.hf.heartbeat writes $MORPHCPT_HEARTBEAT): this loop
    # passes its count on, so a torchrun that hangs while alive falls silent and the head reads the node as lost.
    # Until training's first beat (loading the model) and for programs that do not beat, the launcher beats; the
    # heartbeat stops with this launcher either way.
    export MORPHCPT_HEARTBEAT="$state/node$rank.train"
    rm -f "$MORPHCPT_HEARTBEAT"
    (
        beat=0
        while kill -0 "$parent" 2>/dev/null; do
            if [[ -s "$MORPHCPT_HEARTBEAT" ]]; then
                echo "training $(cat "$MORPHCPT_HEARTBEAT" 2>/dev/null)" >"$state/node$rank.alive"
            else
                echo $((beat += 1)) >"$state/node$rank.alive"
            fi
            sleep "$BEAT_SECONDS"
        done
    ) &
    local is_host=0
    [[ "$rank" == 0 ]] && is_host=1
    # c10d ranks the nodes by address (sorted), so --node-rank would be ignored; is_host names the node whose
    # agent serves the rendezvous store (the endpoint's), and --local-addr is the name the other nodes reach.
    local torchrun=(torchrun --nnodes "$NNODES" --nproc-per-node "$GPUS"
        --rdzv-backend c10d --rdzv-endpoint "$ENDPOINT" --rdzv-id "$RDZV_ID"
        --rdzv-conf "is_host=$is_host,join_timeout=$JOIN_TIMEOUT" --local-addr "${HOSTS[rank]}"
        --max-restarts 0 "${ARGS[@]}")
    echo "[$(date -Is)] node $rank: ${torchrun[*]}"
    bash "$HERE/run_in_enroot.sh" "${torchrun[@]}" &
    child=$!
    trap 'kill -TERM "$child" 2>/dev/null' TERM INT HUP
    while true; do
        wait "$child"
        rc=$?
        kill -0 "$child" 2>/dev/null || break  # a trapped signal ends `wait` early; wait again until it is gone
    done
    echo "[$(date -Is)] node $rank: torchrun exited with status $rc"
    echo "$rc" >"$state/node$rank.status.tmp" && mv "$state/node$rank.status.tmp" "$state/node$rank.status"
    exit "$rc"
}

if [[ "${1:-}" == --node ]]; then
    node_main "$2" "$4"
fi

# ---- head mode: on the job's first node, from the job script ---------------------------------------------
NNODES=1 GPUS="" LOG_ROOT="" NODE_TIMEOUT=60
while [[ $# -gt 0 ]]; do
    case "$1" in
        --nodes) NNODES="$2"; shift 2 ;;
        --gpus) GPUS="$2"; shift 2 ;;
        --log-dir) LOG_ROOT="$2"; shift 2 ;;
        --node-timeout) NODE_TIMEOUT="$2"; shift 2 ;;
        --) shift; break ;;
        *) die "unknown option $1 (usage: $0 --nodes N --gpus G --log-dir DIR [--node-timeout S] -- PROGRAM ARGS)" ;;
    esac
done
ARGS=("$@")
[[ "$NNODES" =~ ^[1-9][0-9]*$ ]] || die "--nodes must be a whole number >= 1 (TRAIN_NODES in .env), got '$NNODES'"
[[ "$GPUS" =~ ^[1-9][0-9]*$ ]] || die "--gpus must be a whole number >= 1 (TRAIN_NGPUS in .env), got '$GPUS'"
[[ "$NODE_TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "--node-timeout must be whole seconds, got '$NODE_TIMEOUT'"
[[ ${#ARGS[@]} -gt 0 ]] || die "nothing to run: give torchrun's program and arguments after --"

if [[ "$NNODES" == 1 ]]; then
    # --standalone: a free rendezvous port, so two jobs on one node do not collide on torchrun's default 29500
    exec bash "$HERE/run_in_enroot.sh" torchrun --standalone --nproc-per-node "$GPUS" "${ARGS[@]}"
fi
# the project every node runs from (the job scripts export it; a shared file system holds it on every node)
export PROJECT_DIR="${PROJECT_DIR:-$(cd "$HERE/../.." && pwd)}"
[[ -n "$LOG_ROOT" ]] || die "--log-dir is needed with --nodes $NNODES (each node's log and status go there)"

# The job's nodes, in the scheduler's order
HOSTS=() FIRST_LINE=()
if [[ -n "${SLURM_JOB_ID:-}" ]]; then
    SCHEDULER=slurm JOB_ID="$SLURM_JOB_ID"
    mapfile -t HOSTS < <(scontrol show hostnames "${SLURM_JOB_NODELIST:?}")
elif [[ -n "${PBS_JOBID:-}" ]]; then
    SCHEDULER=pbs JOB_ID="$PBS_JOBID"
    [[ -r "${PBS_NODEFILE:-}" ]] || die "PBS_NODEFILE (${PBS_NODEFILE:-unset}) cannot be read: is this a PBS job?"
    declare -A seen=()
    line=0
    while read -r host _; do
        if [[ -n "$host" && -z "${seen[$host]:-}" ]]; then
            seen[$host]=1
            HOSTS+=("$host")
            FIRST_LINE+=("$line")
        fi
        line=$((line + 1))
    done <"$PBS_NODEFILE"
else
    die "--nodes $NNODES runs inside a PBS Pro or Slurm job (PBS_JOBID or SLURM_JOB_ID is unset): submit the job" \
        "script, or set TRAIN_NODES=1 in .env for one machine"
fi
if [[ ${#HOSTS[@]} -ne "$NNODES" ]]; then
    die "the job has ${#HOSTS[@]} node(s) (${HOSTS[*]:-none}) but trains on $NNODES (TRAIN_NODES): every node" \
        "needs one chunk of its own (PBS: select=$NNODES with place=scatter; Slurm: --nodes=$NNODES); render" \
        "the jobs again with bash job_templates/setup_jobs.sh and resubmit"
fi

# A port from the job id, the next free one on this node (the rendezvous host)
port=$((20000 + $(printf '%s' "$JOB_ID" | cksum | cut -d' ' -f1) % 10000))
for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break  # nothing listens: free
    port=$((port + 1))
done
ENDPOINT="${HOSTS[0]}:$port"
RDZV_ID="morphcpt-$(printf '%s' "$JOB_ID" | tr -c 'A-Za-z0-9' '-')"
STATE="$LOG_ROOT/job_$(printf '%s' "$JOB_ID" | tr -c 'A-Za-z0-9.' '_')_nodes"
rm -rf "$STATE"
mkdir -p "$STATE" || die "cannot create $STATE"

# What every node runs (launch.env), and this job's settings for nodes that start without its environment (node.env)
declare -p NNODES GPUS ENDPOINT RDZV_ID HOSTS ARGS BEAT_SECONDS JOIN_TIMEOUT >"$STATE/launch.env"
(
    umask 077
    {
        for name in "${NODE_ENV_NAMES[@]}"; do
            [[ -n "${!name+x}" ]] && printf 'export %s=%q\n' "$name" "${!name}"
        done
        for prefix in "${NODE_ENV_PREFIXES[@]}"; do
            for name in $(compgen -e "$prefix"); do
                [[ "$name" == MORPHCPT_MOUNTS || "$name" =~ (TOKEN|SECRET|PASSWORD|KEY)$ ]] && continue
                printf 'export %s=%q\n' "$name" "${!name}"
            done
        done
    } >"$STATE/node.env"
)

# The other nodes start through pbsdsh (PBS Pro) or srun (Slurm): without it every other node would read as lost
starter=pbsdsh
[[ "$SCHEDULER" == pbs ]] || starter=srun
if ! command -v "$starter" >/dev/null 2>&1; then
    die "$starter not found on PATH on $(hostname): it starts training on the other $((NNODES - 1)) node(s) ($SCHEDULER;" \
        "it ships with the scheduler, e.g. /opt/pbs/bin or /usr/bin). Add its folder to PATH in the job, or set" \
        "TRAIN_NODES=1 in .env and render the jobs again (setup_jobs.sh)"
fi
say "$NNODES nodes (${HOSTS[*]}), $GPUS processes each; rendezvous $ENDPOINT (id $RDZV_ID); $SCHEDULER"
say "node logs: $STATE/node<k>.log"
# Every node's output in this job's log too, line by line, prefixed with its node
TAILS=()
for ((k = 0; k < NNODES; k++)); do
    touch "$STATE/node$k.log"
    tail --pid=$$ -n +1 -F "$STATE/node$k.log" 2>/dev/null | sed -u "s/^/[node $k] /" &
    TAILS+=($!)
done

LAUNCHERS=()  # pids here: node 0's launcher and pbsdsh per node (PBS), or the srun step (Slurm)
if [[ "$SCHEDULER" == pbs ]]; then
    bash "$SELF" --node 0 --state "$STATE" &
    LAUNCHERS+=($!)
    for ((k = 1; k < NNODES; k++)); do
        pbsdsh -n "${FIRST_LINE[k]}" -- /bin/bash "$SELF" --node "$k" --state "$STATE" &
        LAUNCHERS+=($!)
    done
else
    srun_args=(--nodes="$NNODES" --ntasks="$NNODES" --ntasks-per-node=1 --kill-on-bad-exit=1)
    # Slurm 22.05+ no longer hands the job's --cpus-per-task to srun: without it each node gets one core
    [[ -n "${SLURM_CPUS_PER_TASK:-}" ]] && srun_args+=(--cpus-per-task="$SLURM_CPUS_PER_TASK")
    # as run_in_enroot.sh decides: the job's environment, else .env
    runtime="${CONTAINER_RUNTIME:-}"
    env_file="$PROJECT_DIR/.env"
    if [[ -z "$runtime" && -f "$env_file" ]]; then
        runtime=$(sed -n 's/^[[:space:]]*\(export[[:space:]]*\)\{0,1\}CONTAINER_RUNTIME=//p' "$env_file" | tail -n 1)
        runtime="${runtime//[\"\' ]/}"
    fi
    if [[ "$runtime" == pyxis ]]; then
        # the step starts in the image (run_in_enroot.sh's mounts); inside, each node runs torchrun directly
        MORPHCPT_SRUN_ARGS="${srun_args[*]}" bash "$HERE/run_in_enroot.sh" \
            /bin/bash "$SELF" --node slurm --state "$STATE" &
    else
        srun "${srun_args[@]}" /bin/bash "$SELF" --node slurm --state "$STATE" &
    fi
    LAUNCHERS+=($!)
fi

STOPPING=""
on_signal() {
    # the job is ending (walltime, qdel, scancel): pass it on, then wait for the nodes to save and stop
    STOPPING="$1"
    say "received SIG$1: passing it to every node"
    kill -"$1" "${LAUNCHERS[@]}" 2>/dev/null
}
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT

status_of() { cat "$STATE/node$1.status" 2>/dev/null; }
running() { kill -0 "$1" 2>/dev/null; }

stop_others() {
    say "stopping the other nodes (SIGTERM; SIGKILL after $STOP_GRACE s)"
    kill -TERM "${LAUNCHERS[@]}" 2>/dev/null
    local waited=0 pid alive
    while ((waited < STOP_GRACE)); do
        alive=0
        for pid in "${LAUNCHERS[@]}"; do running "$pid" && alive=1; done
        ((alive)) || return 0
        sleep 1
        waited=$((waited + 1))
    done
    kill -KILL "${LAUNCHERS[@]}" 2>/dev/null
}

finish() {
    sleep 1  # let the tails print the last lines
    kill "${TAILS[@]}" 2>/dev/null
    wait "${TAILS[@]}" 2>/dev/null
    exit "$1"
}

fail() {
    local k="$1" why="$2" code="$3"
    echo "torchrun_nodes: node $k of $NNODES (${HOSTS[k]}) $why; ending the job" >&2
    echo "  its log: $STATE/node$k.log (last lines below)" >&2
    tail -n 15 "$STATE/node$k.log" 2>/dev/null | sed 's/^/  | /' >&2
    stop_others
    echo "torchrun_nodes: training FAILED because node $k $why. Resubmit the same job script to resume from" \
        "the last checkpoint once the node is back (qstat/sinfo)." >&2
    finish "$code"
}

# Watch. What failed first is named: under PBS a node whose own launcher ended without a status was lost (the
# others' errors follow from it); then the first non-zero status; under Slurm the nodes srun ended without one
# (srun kills the others after a failure, so a status, where there is one, names the cause); then heartbeats.
declare -A beat_value=() beat_time=()
started=$(date +%s)
first_failure() {
    local k status
    for ((k = 0; k < NNODES; k++)); do
        status=$(status_of "$k")
        [[ -n "$status" && "$status" != 0 ]] && { echo "$k $status"; return; }
    done
}
without_status() {
    local k
    for ((k = 0; k < NNODES; k++)); do
        [[ -z "$(status_of "$k")" ]] && echo "$k"
    done
}
LOST="ended without an exit status (its processes were killed, or the node was lost)"
while true; do
    if [[ -z "$STOPPING" && "$SCHEDULER" == pbs ]]; then
        for k in $(without_status); do
            running "${LAUNCHERS[k]}" && continue
            sleep 2  # a status written just before its launcher ended (shared file systems lag)
            [[ -z "$(status_of "$k")" ]] && fail "$k" "$LOST" 1
        done
    fi
    failed=$(first_failure)
    [[ -n "$failed" && -z "$STOPPING" ]] && fail "${failed% *}" "exited with status ${failed#* }" "${failed#* }"
    missing=$(without_status)
    if [[ -z "$missing" ]]; then
        [[ -n "$STOPPING" ]] && { say "every node stopped after SIG$STOPPING"; finish 143; }
        say "every node finished"
        finish 0
    fi
    ended=1
    for pid in "${LAUNCHERS[@]}"; do running "$pid" && ended=0; done
    if ((ended)); then
        sleep 2
        [[ -n "$STOPPING" ]] && { say "every node stopped after SIG$STOPPING"; finish 143; }
        failed=$(first_failure)
        [[ -n "$failed" ]] && fail "${failed% *}" "exited with status ${failed#* }" "${failed#* }"
        missing=$(without_status)
        [[ -n "$missing" ]] && fail "${missing%%$'\n'*}" "$LOST" 1
        continue
    fi
    now=$(date +%s)
    for k in $missing; do
        value=$(cat "$STATE/node$k.alive" 2>/dev/null)
        if [[ "$value" != "${beat_value[$k]:-}" ]]; then
            beat_value[$k]="$value"
            beat_time[$k]=$now
        fi
        # before a first heartbeat, the node's start (pbsdsh, srun, a shared file system) gets twice as long
        last="${beat_time[$k]:-$started}" limit=$NODE_TIMEOUT
        [[ -z "${beat_value[$k]:-}" ]] && limit=$((2 * NODE_TIMEOUT))
        if ((now - last > limit)) && [[ -z "$STOPPING" ]]; then
            fail "$k" "fell silent: no heartbeat for $((now - last)) s (the node is lost or hung)" 1
        fi
    done
    sleep 1
done
