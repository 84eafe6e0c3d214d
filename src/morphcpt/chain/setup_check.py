"""Is this machine ready? One screen of checks, each failure with the command or setting that fixes it.

    python scripts/verify_setup.py              # a workstation: the demo and the tests
    python scripts/verify_setup.py --cluster    # a cluster login node: also GPUs, enroot, the container, .env
                                                # (without --cluster, a node with enroot still gets the container
                                                # checks, as warnings)

Checks Python packages and versions, GPUs and their memory (against GPU_MEMORY in `.env`, and whether the CPT plan
the jobs run fits it), enroot and the container image, `.env` values (paths
exist; HF_TOKEN and WANDB_API_KEY present — their values are never printed), the sample tokenizer and the base
model, and the data folders with their preprocessing markers. Exit status 1 if anything required is missing;
optional checks only warn.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from morphcpt import paths

SCHEMES = ("vanilla", "stochastok", "patok")
SECRETS = ("HF_TOKEN", "WANDB_API_KEY")
# distribution name, why it matters, required on a workstation, required on the cluster
PACKAGES = (
    ("torch", "training and evaluation", True, True),
    ("transformers", "Gemma 3 models and tokenizers", True, True),
    ("tokenizers", "fast tokenization", True, True),
    ("megatron-core", "indexed datasets, GPTDataset", True, True),
    ("hydra-core", "configuration", True, True),
    ("omegaconf", "configuration", True, True),
    ("safetensors", "checkpoints", True, True),
    ("tensorboard", "training logs", True, True),
    ("wandb", "W&B logging (optional)", False, False),
    ("megatron-bridge", "the cluster engine (inside the NeMo container)", False, False),
)


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_packages(cluster: bool) -> list[Check]:
    checks = []
    for name, why, local_required, cluster_required in PACKAGES:
        version = _version(name)
        if name == "megatron-bridge" and not cluster:
            continue
        checks.append(
            Check(
                f"package {name}",
                version is not None,
                version or f"not installed ({why})",
                fix=f"pip install {name}" if name != "megatron-bridge" else "run inside the NeMo container",
                required=cluster_required if cluster else local_required,
            )
        )
    return checks


def check_gpus(cluster: bool) -> list[Check]:
    import torch

    if not torch.cuda.is_available():
        return [
            Check("GPUs", False, "no CUDA GPU visible", "run on a GPU node (the demo runs on CPU)", cluster)
        ]
    names = [
        f"{torch.cuda.get_device_name(i)} ({torch.cuda.get_device_properties(i).total_memory / 2**30:.0f} GiB)"
        for i in range(torch.cuda.device_count())
    ]
    return [Check("GPUs", True, f"{len(names)}: " + ", ".join(names), required=cluster)]


def check_gpu_plan(env: dict[str, str]) -> list[Check]:
    """GPU_MEMORY / GPU_TYPE (.env): readable, no larger than the GPUs visible here, and the CPT plan the jobs
    would run fits them (the memory planner, on TRAIN_ENGINE with TRAIN_NGPUS and TRAIN_OVERRIDES)."""
    import shlex

    import torch

    from morphcpt.chain.jobs import SETTINGS
    from morphcpt.plan.card import card_bytes, gib

    memory, kind = (
        env.get("GPU_MEMORY") or SETTINGS["GPU_MEMORY"],
        env.get("GPU_TYPE") or SETTINGS["GPU_TYPE"],
    )
    try:
        planned = card_bytes(memory, "GPU_MEMORY")
    except ValueError as error:
        return [Check("GPU memory plan", False, str(error), "set GPU_MEMORY=40GB (or 80GB) in .env")]
    checks = []
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        checks.append(
            Check(
                "GPU memory plan",
                props.total_memory >= 0.95 * planned,
                f"GPU_MEMORY={memory}, GPU_TYPE={kind}; this node's {props.name}: {gib(props.total_memory)}",
                f"set GPU_MEMORY in .env to the training GPUs' memory (this one: {props.total_memory / 2**30:.0f}GB)",
            )
        )
    else:
        source = ".env" if env.get("GPU_MEMORY") else "the defaults: set GPU_MEMORY and GPU_TYPE in .env"
        checks.append(Check("GPU memory plan", True, f"GPU_MEMORY={memory}, GPU_TYPE={kind} ({source})"))
    engine = env.get("TRAIN_ENGINE") or SETTINGS["TRAIN_ENGINE"]
    nodes = env.get("TRAIN_NODES") or SETTINGS["TRAIN_NODES"]
    if not nodes.isdigit() or int(nodes) < 1:
        return [
            *checks,
            Check("training nodes", False, f"TRAIN_NODES={nodes!r}", "set TRAIN_NODES=1 (or 2, ...)"),
        ]
    overrides = [
        "recipe=cpt_baseline",
        f"engine={engine}",
        f"cluster.nodes={nodes}",
        f"cluster.gpus_per_node={env.get('TRAIN_NGPUS') or SETTINGS['TRAIN_NGPUS']}",
        f"cluster.gpu_memory={memory}",
        f"cluster.gpu_type={kind}",
        *shlex.split(env.get("TRAIN_OVERRIDES", "")),
    ]
    try:
        from morphcpt.plan.compose import load_plan
        from morphcpt.train.memory.planner import DoesNotFit, check_fits, engine_world

        plan = load_plan(overrides)
        layout = check_layout(plan, engine, env)
        checks.extend(layout)
        if not layout[0].ok:  # the GPUs do not divide the global batch: no memory plan for that shape
            return checks
        fit = check_fits(plan, engine, engine_world(plan, engine))
        checks.append(
            Check(
                "CPT memory",
                True,
                f"{engine} engine: {fit['estimate_gib']:.1f} of {fit['usable_gib']:.1f} GiB per GPU at micro batch "
                f"{fit['micro_batch']} ({fit['margin']:.0%} free)",
            )
        )
    except DoesNotFit as error:
        checks.append(
            Check("CPT memory", False, str(error).splitlines()[0], " ".join(str(error).splitlines()[1:2]))
        )
    except (
        OSError,
        ValueError,
    ) as error:  # a plan that does not load: say so, the jobs will fail the same way
        checks.append(
            Check("CPT memory", False, f"the CPT plan does not load: {error}", "fix TRAIN_OVERRIDES")
        )
    return checks


def check_layout(plan, engine: str, env: dict[str, str]) -> list[Check]:
    """The job's shape (TRAIN_NODES x TRAIN_NGPUS): the global batch divides over its GPUs, and on several nodes
    the scheduler's launcher (pbsdsh, srun) is here (docs/multi-node.md)."""
    from morphcpt.chain.jobs import SETTINGS
    from morphcpt.train.megatron.config import parallel_layout

    cluster = plan.cluster
    shape = f"{cluster.nodes} node(s) x {cluster.gpus_per_node} GPUs"
    try:
        layout = parallel_layout(plan) if engine == "megatron" else None
        world = cluster.nodes * cluster.gpus_per_node
        if engine == "hf" and plan.loop.global_batch_size % world:
            raise ValueError(f"global batch {plan.loop.global_batch_size} does not divide over {world} ranks")
    except ValueError as error:
        return [
            Check(
                "training layout",
                False,
                f"{shape}: {error}",
                "choose TRAIN_NODES (or TRAIN_NGPUS) so that the GPUs divide loop.global_batch_size, or another "
                "loop.global_batch_size in TRAIN_OVERRIDES",
            )
        ]
    detail = (
        f"{shape}, DP {layout['data_parallel']}, grad accumulation {layout['gradient_accumulation']}"
        if layout
        else f"{shape}, {world} data-parallel ranks"
    )
    checks = [Check("training layout", True, detail)]
    if cluster.nodes > 1:
        scheduler = env.get("SCHEDULER") or SETTINGS["SCHEDULER"]
        launcher = "srun" if scheduler == "slurm" else "pbsdsh"
        found = shutil.which(launcher)
        checks.append(
            Check(
                "multi-node launcher",
                found is not None,
                f"{found or launcher + ' not on PATH here'} (it starts one torchrun on each of the "
                f"{cluster.nodes} nodes)",
                f"the training jobs need {launcher} on the compute nodes (docs/multi-node.md); check there "
                f"(command -v {launcher}), or set TRAIN_NODES=1",
                required=False,
            )
        )
    return checks


def check_enroot(env: dict[str, str], required: bool = True) -> list[Check]:
    from morphcpt.chain.jobs import SETTINGS

    enroot = shutil.which("enroot")
    sqsh = env.get("CONTAINER_SQSH") or str(paths.REPO_ROOT / "containers" / "nemo.sqsh")
    checks = [
        Check(
            "enroot",
            enroot is not None,
            enroot or "not on PATH",
            "ask the cluster admins to install enroot",
            required,
        ),
        Check(
            "container image",
            Path(sqsh).is_file(),
            sqsh if Path(sqsh).is_file() else f"{sqsh} not found",
            "bash training/nemo/setup/setup_enroot.sh (imports CONTAINER_IMAGE once)",
            required,
        ),
    ]
    if enroot:
        checks.append(check_container_name(env.get("CONTAINER_NAME") or SETTINGS["CONTAINER_NAME"]))
    if enroot and Path(sqsh).is_file():
        versions = check_container_versions(env)
        versions.required = required
        checks.append(versions)
    return checks


def check_container_name(name: str) -> Check:
    """The container setup_enroot.sh creates (CONTAINER_NAME; the plan greps `enroot list` for it). Optional: a
    job creates it from the image on a compute node whose enroot data is node-local."""
    try:
        listed = subprocess.run(["enroot", "list"], capture_output=True, text=True, timeout=60).stdout.split()
    except (OSError, subprocess.SubprocessError) as error:
        return Check("container", False, f"enroot list failed: {error}", required=False)
    return Check(
        "container",
        name in listed,
        f"{name} (enroot list | grep -x {name})" if name in listed else f"{name} not created on this node",
        "bash training/nemo/setup/setup_enroot.sh (jobs create it from CONTAINER_SQSH where it is missing)",
        required=False,
    )


def check_container_versions(env: dict[str, str]) -> Check:
    """The Megatron-Bridge and megatron-core inside the container, and whether the cluster engine supports them."""
    project = env.get("PROJECT_DIR") or str(paths.REPO_ROOT)
    runner = Path(project) / "training" / "nemo" / "run_in_enroot.sh"
    fix = "use CONTAINER_IMAGE=nvcr.io#nvidia/nemo:26.04 (Megatron-Bridge 0.4.0) and rerun setup_enroot.sh"
    try:
        done = subprocess.run(
            [
                "bash",
                str(runner),
                "python",
                "-m",
                "morphcpt.train.megatron.compat",
            ],  # setup_enroot.sh runs it too
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, **{k: v for k, v in env.items() if k not in SECRETS}},
        )
    except subprocess.TimeoutExpired:
        return Check("container Megatron-Bridge", False, "the container did not answer within 300 s", fix)
    lines = (done.stdout + done.stderr).strip().splitlines()
    versions = next((line for line in lines if line.startswith("megatron-bridge")), None)
    supported = any(line.startswith("supported:") for line in lines)
    if done.returncode == 0 and versions and supported:
        return Check("container Megatron-Bridge", True, versions)
    reason = lines[-1] if lines else f"exit {done.returncode}"
    return Check("container Megatron-Bridge", False, f"{versions or 'unknown'}: {reason}", fix)


def check_env(env_file: Path, env: dict[str, str], cluster: bool) -> list[Check]:
    checks = []
    if cluster:
        checks.append(Check(".env", env_file.is_file(), str(env_file), "cp .env.example .env and fill it in"))
        for key in ("PROJECT_DIR", "DATA_ROOT", "OUTPUT_ROOT", "LOG_DIR"):
            value = env.get(key)
            checks.append(
                Check(
                    f".env {key}",
                    bool(value) and Path(value).is_dir(),
                    value or "not set",
                    f"set {key} in .env to an existing folder on shared storage (mkdir -p it)",
                )
            )
    fixes = {
        "HF_TOKEN": "add HF_TOKEN=... to .env: a Hugging Face token with access to google/gemma-3-1b-pt",
        "WANDB_API_KEY": "add WANDB_API_KEY=... to .env, or log offline (WANDB_MODE=offline)",
    }
    for key in SECRETS:
        present = bool(env.get(key) or os.environ.get(key))
        checks.append(
            Check(
                f"{key}", present, "set" if present else "not set", fixes[key], cluster and key == "HF_TOKEN"
            )
        )
    return checks


def check_models(env: dict[str, str], cluster: bool) -> list[Check]:
    from morphcpt.tokenization.vocabulary import Vocabulary

    checks = []
    try:
        vocab = Vocabulary.load(paths.SAMPLE_TOKENIZER_DIR)
        checks.append(Check("sample tokenizer", True, f"{paths.SAMPLE_TOKENIZER_DIR} ({vocab.size} ids)"))
    except Exception as err:  # any failure to load means the same fix
        checks.append(Check("sample tokenizer", False, f"{err}", "restore data/tokenizer from git"))
    base = env.get("BASE_MODEL") or env.get("TOKENIZER", "google/gemma-3-1b-pt")
    found, detail = _base_model_reachable(base, env.get("HF_TOKEN") or os.environ.get("HF_TOKEN"))
    checks.append(
        Check(
            "base model",
            found,
            f"{base}: {detail}",
            f"hf download {base} on a node with network (HF_HOME on shared storage)",
            cluster,
        )
    )
    return checks


def _base_model_reachable(name: str, token: str | None) -> tuple[bool, str]:
    if Path(name).is_dir():
        return (Path(name) / "config.json").is_file(), "local folder"
    from huggingface_hub import try_to_load_from_cache

    if isinstance(try_to_load_from_cache(name, "config.json"), str):
        return True, "in the local Hugging Face cache"
    if os.environ.get("HF_HUB_OFFLINE") == "1":
        return False, "not cached, and HF_HUB_OFFLINE=1"
    try:
        from huggingface_hub import HfApi

        HfApi().model_info(name, token=token, timeout=10)
        return True, "reachable on the Hub"
    except Exception as err:  # network, auth and gating errors all mean "not reachable from here"
        return False, f"not reachable ({type(err).__name__})"


def check_data(env: dict[str, str]) -> list[Check]:
    checks = [
        Check(
            "sample corpus",
            paths.SAMPLE_CORPUS.is_file(),
            str(paths.SAMPLE_CORPUS),
            "restore data/sample from git",
        )
    ]
    processed = Path(env.get("PROCESSED_DIR") or Path(env.get("DATA_ROOT") or paths.DATA_DIR) / "processed")
    expected = int(env.get("NUM_CHUNKS", "20"))
    done = {scheme: len(list((processed / scheme).glob("*.done.json"))) for scheme in SCHEMES}
    validation = any((processed / "validation").glob("*.done.json"))
    missing = [scheme for scheme, count in done.items() if count < expected]
    checks.append(
        Check(
            "preprocessed data",
            not missing and validation,
            f"{processed}: "
            + ", ".join(f"{scheme} {count}/{expected}" for scheme, count in done.items())
            + f", validation {'ok' if validation else 'missing'}",
            "qsub jobs/preprocess_data_<scheme>.pbs for " + ", ".join(missing or ["the validation set"]),
            required=False,
        )
    )
    return checks


def check_kernels() -> Check:
    """StochasTok's and Patok's compiled kernels (`tokenization/native`), built here with the C compiler."""
    from morphcpt.tokenization import native

    try:
        path = native.build()
    except native.NativeUnavailable as error:
        return Check(
            "compiled kernels",
            False,
            f"{error}; StochasTok and Patok would run in Python (the same ids, slower)",
            fix="install a C compiler (gcc) or set CC",
            required=False,
        )
    return Check("compiled kernels", True, str(path))


def run_checks(cluster: bool, env_file: Path) -> list[Check]:
    from morphcpt.chain.jobs import read_env

    env = read_env(env_file) if env_file.is_file() else {}
    return [
        *check_packages(cluster),
        check_kernels(),
        *check_gpus(cluster),
        *(check_gpu_plan(env) if cluster else []),
        # a login node with enroot gets the container checks without --cluster (warnings only)
        *(check_enroot(env, required=cluster) if cluster or shutil.which("enroot") else []),
        *check_env(env_file, env, cluster),
        *check_models(env, cluster),
        *check_data(env),
    ]


def render(checks: list[Check]) -> str:
    lines = []
    for check in checks:
        status = " ok " if check.ok else ("FAIL" if check.required else "warn")
        lines.append(f"[{status}] {check.name}: {check.detail}")
        if not check.ok and check.fix:
            lines.append(f"       fix: {check.fix}")
    failed = sum(not c.ok and c.required for c in checks)
    lines.append("ready" if not failed else f"{failed} required check(s) failed")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="verify_setup", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cluster", action="store_true", help="also require GPUs, enroot, the container and .env"
    )
    parser.add_argument("--env", default=str(paths.REPO_ROOT / ".env"), help="settings file (default: .env)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    checks = run_checks(args.cluster, Path(args.env))
    print(render(checks))
    return int(any(not c.ok and c.required for c in checks))


if __name__ == "__main__":
    sys.exit(main())
