#!/bin/bash
# Run a training command so that it stops itself before the job's walltime and the job script lives on to record
# progress and resubmit:
#   training/nemo/before_walltime.sh --walltime HH:MM:SS --margin-minutes M --started EPOCH -- COMMAND ARGS
# COMMAND gets SIGTERM M minutes before the walltime (counted from EPOCH, the job's first second) and saves a
# checkpoint and exits (the hf engine, EEVE stages; torchrun_nodes.sh passes the signal to every node and rank);
# SIGKILL follows only if it is still running half the margin later. Exits with COMMAND's status, or 124 when it
# was stopped for the walltime (GNU timeout's convention), so the job script can tell a stop from a failure.
# Why not wait for the scheduler's own signal: PBS Pro sends SIGKILL kill_delay after its walltime SIGTERM, 10 s
# by default (OpenPBS src/server/requests.c), Slurm KillWait (often 30 s) after its; a 1B checkpoint takes tens of
# seconds to write, and the job script's shell is killed with the job, so nothing after training would run.
set -uo pipefail
walltime="" margin="" started=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --walltime) walltime="$2"; shift 2 ;;
        --margin-minutes) margin="$2"; shift 2 ;;
        --started) started="$2"; shift 2 ;;
        --) shift; break ;;
        *) echo "before_walltime: unknown option $1" >&2; exit 2 ;;
    esac
done
if [[ ! "$margin" =~ ^[0-9]+$ || ! "$started" =~ ^[0-9]+$ || $# -eq 0 \
      || ! "$walltime" =~ ^([0-9]+):([0-9]{1,2}):([0-9]{1,2})$ ]]; then
    echo "usage: $0 --walltime HH:MM:SS --margin-minutes M --started EPOCH -- COMMAND [ARGS...]" >&2
    exit 2
fi
total=$(( 10#${BASH_REMATCH[1]} * 3600 + 10#${BASH_REMATCH[2]} * 60 + 10#${BASH_REMATCH[3]} ))
left=$(( total - margin * 60 - ($(date +%s) - started) ))
grace=$(( margin * 30 > 1 ? margin * 30 : 1 ))
if (( left <= 0 )); then
    echo "[$(date -Is)] before_walltime: the ${margin} min margin before the ${walltime} walltime is already reached; not starting $1" >&2
    exit 124
fi
echo "[$(date -Is)] before_walltime: stopping in ${left} s, ${margin} min before the ${walltime} walltime (SIGTERM; SIGKILL ${grace} s later)"
deadline=$(( $(date +%s) + left ))
status=0
timeout --signal=TERM --kill-after="${grace}s" "${left}s" "$@" || status=$?
# 124: stopped by the SIGTERM; 137 at the deadline: it needed the SIGKILL (137 earlier is another kill, e.g. OOM)
if (( status == 124 || (status == 137 && $(date +%s) >= deadline) )); then
    echo "[$(date -Is)] before_walltime: stopped for the walltime (status $status)"
    status=124
fi
exit "$status"
