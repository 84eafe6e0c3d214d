"""PBS Pro and Slurm: the directives, variables and commands that differ between them, and nothing else.

Job templates are written once, for PBS Pro (`job_templates/*.pbs`, rendered by `morphcpt.chain.jobs`). A Slurm script
is the rendered PBS script with its `#PBS` directives rewritten as `#SBATCH` ones and the PBS variables and
commands renamed (`to_slurm`): resources, paths and commands have one source of truth, and the two scripts differ
only where the schedulers do. `Scheduler` builds the submit, status and release command lines of each and reads
their answers, for `morphcpt.chain.pipeline`.

    PBS_ARRAY_INDEX -> SLURM_ARRAY_TASK_ID, PBS_JOBID -> SLURM_JOB_ID, qsub -> sbatch, qrls -> scontrol release
    #PBS -l select=2:ncpus=16:ngpus=1:mem=64gb  ->  --nodes=2 --ntasks-per-node=1 --cpus-per-task=16 --gres=gpu:1
                                                    --mem=64G (per node, as PBS's chunks); place=scatter -> nothing
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from morphcpt.errors import UserError

# Shell names PBS Pro sets or reads in a job, and their Slurm counterparts (longest first: PBS_ARRAY_ID before
# PBS_ARRAY_INDEX cannot collide, whole words only).
_VARIABLES = {
    "PBS_ARRAY_INDEX": "SLURM_ARRAY_TASK_ID",
    "PBS_ARRAY_ID": "SLURM_ARRAY_JOB_ID",
    "PBS_JOBID": "SLURM_JOB_ID",
    "PBS_JOBNAME": "SLURM_JOB_NAME",
    "PBS_O_WORKDIR": "SLURM_SUBMIT_DIR",
}
_COMMANDS = [
    (re.compile(r"\bqsub -J (\S+)"), r"sbatch --array=\1"),
    (re.compile(r"\bqsub -v (\w+)"), r"sbatch --export=ALL,\1"),
    (re.compile(r"\bqsub\b"), "sbatch"),
    (re.compile(r"\bqrls\b"), "scontrol release"),
    (re.compile(r"\b(jobs/[\w${}.-]+?)\.pbs\b"), r"\1.slurm"),
]


class SchedulerError(UserError, ValueError):
    """A job script or a scheduler answer that cannot be translated or read."""


def _memory(value: str) -> str:
    """PBS `64gb`/`512mb` as Slurm `64G`/`512M`."""
    match = re.fullmatch(r"(\d+)([kmgt]?)b?", value.strip().lower())
    if not match:
        raise SchedulerError(f"cannot translate memory {value!r} for Slurm (expected e.g. 64gb)")
    return match.group(1) + match.group(2).upper()


def _slurm_directives(option: str, value: str, settings: dict[str, str]) -> list[str]:
    if option == "-N":
        return [f"--job-name={value}"]
    if option == "-q":
        return [f"--partition={settings.get('SLURM_PARTITION') or value}"]
    if option == "-P":
        return [f"--account={settings.get('SLURM_ACCOUNT') or value}"]
    if option == "-J":
        return [f"--array={value}"]
    if option == "-j":
        return []  # Slurm writes stderr to the --output file unless --error is given
    if option == "-o":
        return [f"--output={value.replace('^array_index^', '%a')}"]
    if option == "-l" and value.startswith("place="):
        return []  # one task per node already: --nodes=N --ntasks-per-node=1 from the select statement
    if option == "-l" and value.startswith("walltime="):
        return [f"--time={value.removeprefix('walltime=')}"]
    if option == "-l" and value.startswith("select="):
        chunk = dict(part.split("=", 1) for part in value.removeprefix("select=").split(":")[1:])
        nodes = value.removeprefix("select=").split(":")[0]
        out = [f"--nodes={nodes}", "--ntasks-per-node=1"]
        if "ncpus" in chunk:
            out.append(f"--cpus-per-task={chunk['ncpus']}")
        if int(chunk.get("ngpus", "0")):
            out.append(f"--gres=gpu:{chunk['ngpus']}")
        if "mem" in chunk:
            out.append(f"--mem={_memory(chunk['mem'])}")
        return out
    raise SchedulerError(f"no Slurm equivalent for the directive '#PBS {option} {value}'")


def to_slurm(script: str, settings: dict[str, str] | None = None, source: str = "script") -> str:
    """A rendered PBS Pro script as a Slurm batch script: directives, variables and commands translated."""
    settings = settings or {}
    lines = []
    for number, line in enumerate(script.splitlines(), start=1):
        if line.startswith("#PBS"):
            parts = line.split(None, 2)
            if len(parts) != 3:
                raise SchedulerError(f"{source}:{number}: cannot read the directive {line!r}")
            try:
                lines.extend(f"#SBATCH {d}" for d in _slurm_directives(parts[1], parts[2], settings))
            except SchedulerError as error:
                raise SchedulerError(f"{source}:{number}: {error}") from None
            continue
        for pbs, slurm in _VARIABLES.items():
            line = re.sub(rf"\b{pbs}\b", slurm, line)
        for pattern, replacement in _COMMANDS:
            line = pattern.sub(replacement, line)
        lines.append(line)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Scheduler:
    """The command lines of one scheduler: submit (with dependencies, held), status, release."""

    name: str
    suffix: str  # of rendered scripts
    submit_command: str
    status_command: str

    def submit_argv(self, script: str, after: list[str], hold: bool = False) -> list[str]:
        """Submit `script` to run once every job in `after` has succeeded (`afterok`), held when asked."""
        if self.name == "pbs":
            argv = ["qsub"]
            if after:
                argv += ["-W", "depend=afterok:" + ":".join(after)]
            if hold:
                argv.append("-h")
        else:
            argv = ["sbatch", "--parsable"]
            if after:
                argv.append("--dependency=afterok:" + ":".join(after))
            if hold:
                argv.append("--hold")
        return [*argv, script]

    def parse_job_id(self, stdout: str) -> str:
        """The id the submit command printed: PBS `123.server` / `123[].server`, Slurm `123` or `123;cluster`."""
        text = stdout.strip().splitlines()[-1].strip() if stdout.strip() else ""
        text = text.removeprefix(
            "Submitted batch job "
        )  # sbatch without --parsable (a job resubmitting itself)
        pattern = r"\d+(?:\[\])?(?:\.[\w.-]+)?" if self.name == "pbs" else r"\d+(?:;[\w.-]+)?"
        if not re.fullmatch(pattern, text):
            raise SchedulerError(f"{self.submit_command} printed no job id: {stdout.strip()!r}")
        return text.split(";")[0]

    def status_argv(self, job_id: str) -> list[str]:
        if self.name == "pbs":
            return ["qstat", "-f", job_id] if "[]" not in job_id else ["qstat", "-f", "-t", job_id]
        return ["squeue", "-h", "-j", job_id, "-o", "%T"]

    def parse_state(self, stdout: str) -> str | None:
        """The job's state while the scheduler still holds it (queued, held, running); None once it has left."""
        if self.name == "pbs":
            match = re.search(r"job_state\s*=\s*(\w)", stdout)
            names = {
                "Q": "queued",
                "H": "held",
                "R": "running",
                "B": "running",
                "E": "exiting",
                "W": "waiting",
            }
            return names.get(match.group(1), match.group(1)) if match else None
        states = [line.strip().lower() for line in stdout.splitlines() if line.strip()]
        return states[0] if states else None


SCHEDULERS: dict[str, Scheduler] = {
    "pbs": Scheduler("pbs", ".pbs", "qsub", "qstat"),
    "slurm": Scheduler("slurm", ".slurm", "sbatch", "squeue"),
}


def get(name: str) -> Scheduler:
    if name not in SCHEDULERS:
        raise SchedulerError(f"unknown scheduler {name!r}: SCHEDULER is one of {', '.join(SCHEDULERS)}")
    return SCHEDULERS[name]
