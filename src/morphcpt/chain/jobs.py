"""Render PBS Pro (or Slurm) job scripts from `job_templates/` and `.env`, and run a rendered script locally.

    python -m morphcpt.chain.jobs render [--env .env] [--templates job_templates] [--out jobs]   (setup_jobs.sh calls this)
    python -m morphcpt.chain.jobs run jobs/preprocess_data_vanilla.pbs --array 1-3 [--parallel 2] [--no-enroot]

Templates are bash scripts with `${NAME}` placeholders; `$$` writes a literal `$`, so a shell variable that needs
braces is written `$${VAR}` and a plain `$VAR` passes through untouched. A placeholder that is neither a setting
nor a variable of the job is an error, and so is one that names a secret (secrets stay in `.env` and are read
when the job runs, never written into `jobs/`). Settings are `SETTINGS` below, overridden by `.env`, plus values
derived from them (`derived_settings`). `JOBS` declares, in one place, which scripts each template renders to and
with which per-script variables: add a `JobSpec` there for a new template.

With `SCHEDULER=slurm` the scripts are written as `jobs/*.slurm`, translated by `morphcpt.chain.scheduler.to_slurm`.

The local runner executes a rendered script with bash once per array index, with `PBS_ARRAY_INDEX`,
`PBS_O_WORKDIR`, `PBS_JOBID`, `PBS_JOBNAME` and `PBS_NODEFILE` set as PBS Pro would (and, for a Slurm script,
`SLURM_ARRAY_TASK_ID`, `SLURM_JOB_ID`, `SLURM_ARRAY_JOB_ID`, `SLURM_JOB_NAME`, `SLURM_SUBMIT_DIR` as Slurm would); `--no-enroot` sets
`MORPHCPT_NO_ENROOT=1` so `run_in_enroot.sh` runs commands directly when enroot is absent.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from morphcpt import paths
from morphcpt.chain import scheduler
from morphcpt.chain.settings_check import MAX_SEEDS, SettingsError, check_settings, whole
from morphcpt.errors import reported
from morphcpt.paths import read_env

# Every setting a template may use, with the default used when `.env` does not set it. Paths default to the
# checkout, so `jobs/` renders and runs on a workstation without any `.env`.
SETTINGS: dict[str, str] = {
    "PROJECT_DIR": str(paths.REPO_ROOT),
    "DATA_ROOT": "",  # default: $PROJECT_DIR/data
    "LOG_DIR": "",  # default: $PROJECT_DIR/logs
    "PBS_QUEUE": "workq",
    "PBS_PROJECT": "morphcpt",
    # Megatron-Bridge 0.4.0 + megatron-core 0.17.0 ship in 26.04 (morphcpt.train.megatron.compat: supported releases).
    "CONTAINER_IMAGE": "nvcr.io#nvidia/nemo:26.04",
    "CONTAINER_SQSH": "",  # default: $PROJECT_DIR/containers/nemo.sqsh
    "CONTAINER_NAME": "nemo_framework",  # the name the training plan checks: enroot list | grep nemo_framework
    "TOKENIZER": "google/gemma-3-1b-pt",  # a Hub id or a local folder (offline compute nodes)
    "BASE_MODEL": "",  # the weights CPT starts from (Hub id or local HF folder); default: the RECIPES' model
    # Which recipe set the training jobs run: cpt (gemma-3-1b-pt, conf/recipe/cpt_*.yaml and eeve) or pilot
    # (gemma-3-270m on a token budget, conf/recipe/pilot_*.yaml; docs/replicates-and-power.md)
    "RECIPES": "cpt",
    "SEED": "1234",
    # Replicates: training runs per arm (seeds 0..SEEDS-1; seed k of stochastok/patok is its own preprocessing)
    "SEEDS": "1",
    "NUM_CHUNKS": "20",
    "CHUNK_DIR": "",  # default: $DATA_ROOT/chunks
    "PROCESSED_DIR": "",  # default: $DATA_ROOT/processed
    "PREPROCESS_NCPUS": "16",
    "PREPROCESS_MEM": "64gb",
    "PREPROCESS_WALLTIME": "04:00:00",
    "OUTPUT_ROOT": "",  # default: $PROJECT_DIR/outputs (runs, imported weights, exports)
    "TRAIN_NODES": "1",  # nodes one training run spans (docs/multi-node.md): cluster.nodes, select=N / --nodes=N
    "TRAIN_NCPUS": "64",  # per node, as TRAIN_NGPUS and TRAIN_MEM
    "TRAIN_NGPUS": "8",
    "TRAIN_MEM": "480gb",
    "TRAIN_WALLTIME": "24:00:00",
    "TRAIN_EXIT_MARGIN_MINUTES": "20",  # training stops and saves this long before the walltime
    "TRAIN_NODE_TIMEOUT": "60",  # several nodes: a node silent this many seconds is lost and ends the job
    "CHECKPOINT_KEEP": "3",  # checkpoints each training run keeps, the newest (checkpoint.keep); older are deleted
    "AUTO_RESUBMIT": "0",  # 1: a training job that made progress resubmits itself until the run is finished
    "GPU_MEMORY": "40GB",  # one training GPU's memory (A100-SXM4-40GB): cluster.gpu_memory, what the planner fits
    "GPU_TYPE": "A100",  # the card: cluster.gpu_type (bf16 support, MFU peak in benchmarks)
    "TRAIN_ENGINE": "megatron",  # megatron (Megatron-Bridge, the cluster) | hf (transformers, any machine, CPU too)
    "TRAIN_OVERRIDES": "",  # more training-plan overrides for every CPT run (EEVE too), e.g. "loop.steps=2000"
    "SCRATCH_MODEL": "scratch_100m",  # pretrain_scratch.pbs: scratch_tiny | scratch_100m | scratch_1b
    "SCRATCH_TOKENIZER": "",  # default: $DATA_ROOT/tokenizer (what `morphcpt train-tokenizer` wrote)
    "SCRATCH_TRAIN_TOKENS": "1B",  # token budget: 10M, 100M, 1B, 10B or a number (sets the steps)
    "SCRATCH_PROCESSED_DIR": "",  # default: $DATA_ROOT/processed_scratch (the chunks by SCRATCH_TOKENIZER)
    "SCRATCH_PRETRAIN": "0",  # 1: the chain also preprocesses with SCRATCH_TOKENIZER and pretrains from scratch
    "EEVE_TOKENIZER": "",  # default: $OUTPUT_ROOT/tokenizers/gemma3-1b-eeve (python -m morphcpt.tokenization.eeve)
    "EEVE_NUM_NEW": "2048",  # new pieces of the expanded tokenizer the chain's eeve_tokenizer job makes
    "EEVE_OVERRIDES": "",  # more plan overrides for the EEVE run only, e.g. "eeve.steps=[500,500,500,500,500,2000,500]"
    "EXPORT_NCPUS": "16",
    "EXPORT_MEM": "128gb",
    "EXPORT_WALLTIME": "02:00:00",
    # The chain of `morphcpt submit` (morphcpt.chain.pipeline): CPU stages, the evaluation (one GPU), the scheduler.
    "SCHEDULER": "pbs",  # pbs | slurm: which scripts setup_jobs.sh renders and submit_pipeline.py submits
    "SLURM_PARTITION": "",  # default: PBS_QUEUE
    "SLURM_ACCOUNT": "",  # default: PBS_PROJECT
    "CONTAINER_RUNTIME": "enroot",  # enroot | pyxis (Slurm: srun --container-image, read by run_in_enroot.sh)
    "CPU_NCPUS": "4",
    "CPU_MEM": "16gb",
    "CPU_WALLTIME": "12:00:00",
    "CORPUS": "",  # default: $DATA_ROOT/corpora/seapile-v2-filipino.jsonl
    "CORPUS_LANGUAGE": "fil",
    "CORPUS_SOURCE": "",  # a JSONL corpus already on disk: the download job copies it instead of downloading
    "HOLDOUT_LINES": "2000",  # the split's last lines that become the canonical validation set
    "BENCHMARK_OVERRIDES": "",  # generate_benchmarks.py overrides, e.g. "pacute.affixation=70 hierarchical.level2=100"
    "BENCHMARK_DIR": "",  # default: $DATA_ROOT/benchmarks
    "RESULTS_DIR": "",  # default: $OUTPUT_ROOT/results
    "EVAL_NCPUS": "8",
    "EVAL_MEM": "64gb",
    "EVAL_WALLTIME": "12:00:00",
    "EVAL_ARGS": "",  # more run_evaluation.py arguments, e.g. "--limit 200 --batch-size 16"
}
# Settings that hold several arguments: rendered shell-quoted, one word each, as <NAME>_ARGV
_ARGUMENT_LISTS = ("TRAIN_OVERRIDES", "EEVE_OVERRIDES", "BENCHMARK_OVERRIDES", "EVAL_ARGS")
_SECRET = re.compile(r"(?:^|_)(?:TOKEN|SECRET|PASSWORD|KEY)$")  # HF_TOKEN, WANDB_API_KEY; not TOKENIZER
_PLACEHOLDER = re.compile(r"\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)\})")


# recipe set -> (its EEVE recipe, the model its runs start from)
RECIPE_SETS = {"cpt": ("eeve", "google/gemma-3-1b-pt"), "pilot": ("pilot_eeve", "google/gemma-3-270m")}


def derived_settings(settings: dict[str, str]) -> dict[str, str]:
    """Fill the path defaults that depend on other settings, and values computed from settings."""
    out = dict(settings)
    check_settings(out)
    project = out["PROJECT_DIR"]
    out["DATA_ROOT"] = out["DATA_ROOT"] or f"{project}/data"
    out["LOG_DIR"] = out["LOG_DIR"] or f"{project}/logs"
    out["CONTAINER_SQSH"] = out["CONTAINER_SQSH"] or f"{project}/containers/nemo.sqsh"
    out["CHUNK_DIR"] = out["CHUNK_DIR"] or f"{out['DATA_ROOT']}/chunks"
    out["PROCESSED_DIR"] = out["PROCESSED_DIR"] or f"{out['DATA_ROOT']}/processed"
    out["OUTPUT_ROOT"] = out["OUTPUT_ROOT"] or f"{project}/outputs"
    out["CORPUS"] = out["CORPUS"] or f"{out['DATA_ROOT']}/corpora/seapile-v2-filipino.jsonl"
    out["BENCHMARK_DIR"] = out["BENCHMARK_DIR"] or f"{out['DATA_ROOT']}/benchmarks"
    out["RESULTS_DIR"] = out["RESULTS_DIR"] or f"{out['OUTPUT_ROOT']}/results"
    out["SCRATCH_TOKENIZER"] = out["SCRATCH_TOKENIZER"] or f"{out['DATA_ROOT']}/tokenizer"
    out["SCRATCH_PROCESSED_DIR"] = out["SCRATCH_PROCESSED_DIR"] or f"{out['DATA_ROOT']}/processed_scratch"
    out["EEVE_TOKENIZER"] = out["EEVE_TOKENIZER"] or f"{out['OUTPUT_ROOT']}/tokenizers/gemma3-1b-eeve"
    out["TRAIN_PLACEMENT"] = _placement(out["TRAIN_NODES"])
    if out.get("RECIPES", "cpt") not in RECIPE_SETS:
        raise SettingsError(f"RECIPES must be one of {', '.join(RECIPE_SETS)}, got {out['RECIPES']!r}")
    out["BASE_MODEL"] = out["BASE_MODEL"] or RECIPE_SETS[out.get("RECIPES", "cpt")][1]
    # One array task per chunk; PBS Pro refuses `-J 1-1` (X < Y: OpenPBS chk_Jrange.c), so one chunk
    # is a plain job whose index is 1.
    one_chunk = out["NUM_CHUNKS"].strip() == "1"
    out["CHUNK_ARRAY"] = (
        "# one chunk: a plain job, not an array (PBS Pro refuses -J 1-1)"
        if one_chunk
        else f"#PBS -J 1-{out['NUM_CHUNKS']}"
    )
    out["CHUNK_LOG_INDEX"] = "1" if one_chunk else "^array_index^"
    # Chunk files are chunk_01 … chunk_20: the job pads $PBS_ARRAY_INDEX to the same width as the splitter.
    out["CHUNK_DIGITS"] = str(max(2, len(out["NUM_CHUNKS"])))
    for name in _ARGUMENT_LISTS:
        out[f"{name}_ARGV"] = " ".join(shlex.quote(word) for word in shlex.split(out.get(name, "")))
    return out


def _placement(nodes: str) -> str:
    """The training jobs' placement line: several nodes need one chunk per host (`place=scatter`); one node keeps
    the site's own placement (a comment stands in for the directive)."""
    if not nodes.isdigit() or int(nodes) < 1:
        raise SettingsError(f"TRAIN_NODES must be a whole number of nodes >= 1, got {nodes!r} (in .env)")
    if int(nodes) == 1:
        return "# one node (TRAIN_NODES=1): the site's placement"
    return "#PBS -l place=scatter"


def scheme_names() -> list[str]:
    """The schemes the config tree defines (`conf/scheme/*.yaml`), in name order."""
    return sorted(path.stem for path in (paths.CONF_DIR / "scheme").glob("*.yaml"))


@dataclass(frozen=True)
class JobSpec:
    """One template and the scripts it renders to: `output` is formatted with each variant's variables."""

    template: str
    output: str
    variants: Callable[[dict[str, str]], list[dict[str, str]]]


def seeds(settings: dict[str, str]) -> int:
    """SEEDS (training runs per arm) as a number, or a SettingsError saying what to write."""
    return whole(settings, "SEEDS", 1, MAX_SEEDS, "runs per arm", default="1")


def preprocess_variants(settings: dict[str, str]) -> list[dict[str, str]]:
    """One preprocessing array per scheme and, for schemes whose ids depend on the seed, per further seed:
    SCHEME, REPLICATE and DATA_VARIANT (`patok`, `patok_seed1`, ...: the script and stage name)."""
    from morphcpt.tokenization.schemes import draws

    variants = []
    for scheme in scheme_names():
        # eeve reads the expanded tokenizer; every other scheme the base one
        tokenizer = {"TOKENIZER": settings["EEVE_TOKENIZER"]} if scheme == "eeve" else {}
        for k in range(seeds(settings) if draws(scheme) else 1):
            name = f"{scheme}_seed{k}" if k else scheme
            variants.append({"SCHEME": scheme, "REPLICATE": str(k), "DATA_VARIANT": name, **tokenizer})
    # pretraining from scratch: the same chunks by the new language's own tokenizer, in a folder of their own (the
    # run refuses data another tokenizer wrote); its vanilla array writes the validation set there too
    variants.append(
        {"SCHEME": "vanilla", "REPLICATE": "0", "DATA_VARIANT": "scratch", "SCRATCH": "1",
         "TOKENIZER": settings["SCRATCH_TOKENIZER"], "PROCESSED_DIR": settings["SCRATCH_PROCESSED_DIR"]}
    )  # fmt: skip
    return variants


def _one_per_training_run(settings: dict[str, str]) -> list[dict[str, str]]:
    from morphcpt.plan.recipes import cluster_runs  # imports Hydra; only needed when rendering

    return cluster_runs(seeds(settings), prefix=settings.get("RECIPES", "cpt"))


def _cpu_stages(settings: dict[str, str]) -> list[dict[str, str]]:
    """The CPU jobs of the chain (job_templates/cpu_stage.pbs): one command each, run inside the container.

    Each ends by leaving the marker `morphcpt.chain.pipeline` reads to know the stage is done (download and the gates
    have none of their own: the job writes `<corpus>.done`; a gate succeeds only when its run is complete).
    """
    enroot, s = "bash training/nemo/run_in_enroot.sh", settings
    # one command a line: `set -e` ends the job at a failing line (it would not inside an `a && b` list)
    download = (
        f'cp "{s["CORPUS_SOURCE"]}" "{s["CORPUS"]}.partial"\nmv "{s["CORPUS"]}.partial" "{s["CORPUS"]}"'
        if s["CORPUS_SOURCE"]
        else f'{enroot} python scripts/download_seapile.py --output "{s["CORPUS"]}" --language "{s["CORPUS_LANGUAGE"]}"'
    )
    stages = [
        (
            "download",
            f'mkdir -p "$(dirname "{s["CORPUS"]}")"\n{download}\nwc -c < "{s["CORPUS"]}" > "{s["CORPUS"]}.done"',
        ),
        (
            "split",
            f'{enroot} python training/nemo/data/split_jsonl.py --input "{s["CORPUS"]}" '
            f'--output-dir "{s["CHUNK_DIR"]}" --num-chunks {s["NUM_CHUNKS"]} --holdout-lines {s["HOLDOUT_LINES"]}',
        ),
        (
            "benchmarks",
            f'{enroot} python scripts/generate_benchmarks.py --output-dir "{s["BENCHMARK_DIR"]}" --seed 0 '
            f"{s['BENCHMARK_OVERRIDES_ARGV']}".rstrip(),
        ),
        (
            "eeve_tokenizer",
            f'{enroot} python -m morphcpt.tokenization.eeve "{s["CHUNK_DIR"]}"/chunk_*.jsonl --base "{s["TOKENIZER"]}" '
            f'--out-dir "{s["EEVE_TOKENIZER"]}" --num-new {s["EEVE_NUM_NEW"]}',
        ),
        (
            "analyze",
            f'{enroot} python scripts/analyze_inference_results.py --results-dir "{s["RESULTS_DIR"]}"',
        ),
    ]
    for run in _one_per_training_run(settings):
        progress = f"{s['OUTPUT_ROOT']}/runs/{run['RUN_NAME']}/progress.json"
        stages.append((f"cpt_done_{run['VARIANT']}", f'grep -q \'"complete": true\' "{progress}"'))
    # the EEVE job exports the model itself after its last stage: its export is its completion
    for run in eeve_runs(settings):
        export = f"{s['OUTPUT_ROOT']}/exports/{run['RUN_NAME']}/morphcpt_metadata.json"
        stages.append((f"cpt_done_{run['VARIANT']}", f'test -f "{export}"'))
    return [{"STAGE": name, "COMMAND": command} for name, command in stages]


@functools.cache
def eeve_run_name(recipe: str = "eeve") -> str:
    """The EEVE arm's run name (recipe `eeve`, or `pilot_eeve`): its run folder and its export are named after it."""
    from morphcpt.plan.compose import load_plan  # imports Hydra; only needed when rendering

    return load_plan([f"recipe={recipe}"]).run_name


def eeve_runs(settings: dict[str, str]) -> list[dict[str, str]]:
    """The EEVE arm's runs, one per seed: VARIANT (`eeve`, `eeve_seed1`, ...), RUN_NAME, REPLICATE, EEVE_RECIPE."""
    from morphcpt.plan.compose import replicate_name

    recipe = RECIPE_SETS[settings.get("RECIPES", "cpt")][0]
    return [
        {
            "VARIANT": f"eeve_seed{k}" if k else "eeve",
            "RUN_NAME": replicate_name(eeve_run_name(recipe), k),
            "REPLICATE": str(k),
            "EEVE_RECIPE": recipe,
        }
        for k in range(seeds(settings))
    ]


def _evaluation(settings: dict[str, str]) -> list[dict[str, str]]:
    names = [run["RUN_NAME"] for run in _one_per_training_run(settings) + eeve_runs(settings)]
    return [{"RUN_NAMES": " ".join(names)}]


JOBS: list[JobSpec] = [
    JobSpec("preprocess_data.pbs", "preprocess_data_{DATA_VARIANT}.pbs", preprocess_variants),
    JobSpec("run_cpt.pbs", "run_cpt_{VARIANT}.pbs", _one_per_training_run),
    JobSpec("export.pbs", "export_{VARIANT}.pbs", _one_per_training_run),
    JobSpec("pretrain_scratch.pbs", "pretrain_scratch.pbs", lambda settings: [{}]),
    JobSpec("cpu_stage.pbs", "{STAGE}.pbs", _cpu_stages),
    JobSpec("run_evaluation.pbs", "run_evaluation.pbs", _evaluation),
    JobSpec("run_cpt_eeve.pbs", "run_cpt_{VARIANT}.pbs", eeve_runs),
]


def render_template(text: str, variables: dict[str, str], source: str = "template") -> str:
    """Substitute `${NAME}` placeholders and `$$`; unknown or secret names raise `KeyError`."""

    def substitute(match: re.Match) -> str:
        name = match.group(1)
        if name is None:
            return "$"
        if _SECRET.search(name):
            raise KeyError(f"{source}: ${{{name}}} names a secret; read it from .env when the job runs")
        if name not in variables:
            raise KeyError(
                f"{source}: unknown placeholder ${{{name}}} (known: {', '.join(sorted(variables))})"
            )
        return variables[name]

    return _PLACEHOLDER.sub(substitute, text)


def render_jobs(
    templates_dir: str | Path, output_dir: str | Path, env: dict[str, str] | None = None
) -> list[Path]:
    """Render every `JOBS` template into `output_dir`; return the scripts written."""
    templates_dir, output_dir = Path(templates_dir), Path(output_dir)
    settings = derived_settings({**SETTINGS, **(env or {})})
    target_scheduler = scheduler.get(settings["SCHEDULER"])
    output_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for spec in JOBS:
        template = templates_dir / spec.template
        text = template.read_text()
        for variant in spec.variants(settings):
            name = spec.output.format(**variant)
            target = output_dir / (name.removesuffix(".pbs") + target_scheduler.suffix)
            header = f"# Rendered from job_templates/{spec.template} by job_templates/setup_jobs.sh: edit the template.\n"
            body = render_template(text, {**settings, **variant}, source=str(template))
            if target_scheduler.name == "slurm":
                body = scheduler.to_slurm(body, settings, source=str(template))
            shebang, _, rest = body.partition("\n")
            target.write_text(f"{shebang}\n{header}{rest}")
            target.chmod(0o755)
            written.append(target)
    return written


def parse_array(spec: str) -> list[int]:
    """PBS array indices: `1-20`, `1-20:4` (step) or `1,3,7`."""
    indices: list[int] = []
    for part in spec.split(","):
        match = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+))?)?", part.strip())
        if not match:
            raise ValueError(f"bad array spec {spec!r}")
        first, last, step = match.groups()
        indices.extend(range(int(first), int(last or first) + 1, int(step or 1)))
    return indices


def run_local(
    script: str | Path,
    indices: list[int],
    parallel: int = 1,
    no_enroot: bool = False,
    log_dir: str | Path | None = None,
) -> dict[int, int]:
    """Run a rendered job script with bash once per array index (as PBS would); return exit codes by index.

    Output of index i goes to `<log_dir>/<script>_<i>.log` (default `./logs`).
    """
    script = Path(script).resolve()
    workdir = Path.cwd()
    log_dir = Path(log_dir or workdir / "logs")
    log_dir.mkdir(parents=True, exist_ok=True)
    job = f"{os.getpid()}"
    nodefile = Path(tempfile.mkstemp(prefix="pbs_nodefile_")[1])
    nodefile.write_text(socket.gethostname() + "\n")
    base_env = {
        **os.environ,
        # The job's `python` must be this interpreter (the one with morphcpt installed) when no container is used.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PBS_O_WORKDIR": str(workdir),
        "PBS_JOBNAME": script.stem,
        "PBS_ARRAY_ID": f"{job}[].local",
        "PBS_NODEFILE": str(nodefile),
    }
    if no_enroot:
        base_env["MORPHCPT_NO_ENROOT"] = "1"
    slurm = any(line.startswith("#SBATCH") for line in script.read_text().splitlines())
    if slurm:
        base_env.update(
            SLURM_SUBMIT_DIR=str(workdir),
            SLURM_JOB_NAME=script.stem,
            SLURM_ARRAY_JOB_ID=job,
            SLURM_NNODES="1",
        )

    def one(index: int) -> int:
        env = {**base_env, "PBS_ARRAY_INDEX": str(index), "PBS_JOBID": f"{job}[{index}].local"}
        if slurm:
            env.update(SLURM_ARRAY_TASK_ID=str(index), SLURM_JOB_ID=f"{job}_{index}")
        with open(log_dir / f"{script.stem}_{index}.log", "w") as log:
            return subprocess.run(
                ["bash", str(script)], env=env, cwd=workdir, stdout=log, stderr=subprocess.STDOUT
            ).returncode

    try:
        with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
            return dict(zip(indices, pool.map(one, indices), strict=True))
    finally:
        nodefile.unlink(missing_ok=True)


def check_project_dir(project: str) -> None:
    """The jobs `cd $PROJECT_DIR` and run the code there: refuse a PROJECT_DIR that is not a folder here (the
    example value of .env.example, a typo), and say so when it is another checkout than the one rendering."""
    if not project:
        return  # the default: this checkout
    folder = Path(project)
    fix = f"set PROJECT_DIR={paths.REPO_ROOT} in .env (or leave it out: it defaults to this checkout)"
    if not (folder / "training" / "nemo" / "run_in_enroot.sh").is_file():
        raise SettingsError(
            f"PROJECT_DIR={project} is not a morphcpt checkout on this machine, and the jobs run from it: {fix}"
        )
    if folder.resolve() != paths.REPO_ROOT.resolve():
        print(
            f"note: PROJECT_DIR={project} is another checkout than this one ({paths.REPO_ROOT}): the jobs run "
            "its code, not this one's",
            file=sys.stderr,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    render = commands.add_parser("render", help="render job_templates/ into jobs/")
    render.add_argument("--env", default=".env", help="settings file (skipped when missing)")
    render.add_argument("--templates", default=str(paths.REPO_ROOT / "job_templates"))
    render.add_argument("--out", default="jobs")
    render.add_argument(
        "--scheduler", choices=sorted(scheduler.SCHEDULERS), help="overrides SCHEDULER in .env"
    )
    run = commands.add_parser("run", help="run a rendered job script locally")
    run.add_argument("script")
    run.add_argument("--array", default="1", help="array indices, e.g. 1-3 or 1,4")
    run.add_argument("--parallel", type=int, default=1, help="indices run at the same time")
    run.add_argument("--no-enroot", action="store_true", help="run commands directly (MORPHCPT_NO_ENROOT=1)")
    run.add_argument("--log-dir", default=None)
    args = parser.parse_args(argv)
    if args.command == "render":
        env = read_env(args.env) if Path(args.env).exists() else {}
        if args.scheduler:
            env["SCHEDULER"] = args.scheduler
        with reported("morphcpt jobs render"):
            check_project_dir(env.get("PROJECT_DIR", ""))
            for path in render_jobs(args.templates, args.out, env):
                print(path)
        return 0
    codes = run_local(args.script, parse_array(args.array), args.parallel, args.no_enroot, args.log_dir)
    for index, code in codes.items():
        print(f"{Path(args.script).name}[{index}]: {describe_exit(code)}")
    return exit_status(codes)


def describe_exit(code: int) -> str:
    """`ok`, `exit 3`, or `killed by SIGTERM` (subprocess reports death by signal N as -N)."""
    if code == 0:
        return "ok"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


def exit_status(codes: dict[int, int]) -> int:
    """0 when every array index succeeded, else 1 (a death by signal, a negative code, is a failure too)."""
    return 0 if all(code == 0 for code in codes.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
