"""What a job hands to enroot, seen by a fake `enroot` on PATH that records every call: every host path the run
writes is mounted, the job's GPUs are handed over, secrets pass by name only; an interrupted image import does
not block the next; verify_setup reports the container's Megatron-Bridge and refuses an unsupported one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from morphcpt import paths
from morphcpt.chain.jobs import render_jobs, run_local
from morphcpt.chain.setup_check import check_container_versions
from suite_paths import FAKES

RUNNER = paths.REPO_ROOT / "training" / "nemo" / "run_in_enroot.sh"
SECRET = "hf_TopSecret_value_42"

# A stand-in for enroot: `list` names the container, `import` refuses an existing output (as enroot does),
# `start` records its arguments and the environment it was given, and with FAKE_ENROOT_EXEC=1 runs the command
# locally with only the variables passed by --env (enroot starts from a clean environment).
FAKE_ENROOT = r"""#!/usr/bin/env python3
import json, os, subprocess, sys
log = os.environ["FAKE_ENROOT_LOG"]
with open(log, "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "env": dict(os.environ)}) + "\n")
cmd = sys.argv[1:]
if cmd[0] == "list":
    print("nemo_framework")
elif cmd[0] == "import":
    out = cmd[cmd.index("-o") + 1]
    if os.path.exists(out):
        sys.exit(f"[ERROR] File already exists: {out}")
    open(out, "w").write("image")
elif cmd[0] == "start" and os.environ.get("FAKE_ENROOT_EXEC") == "1":
    args, env = cmd[1:], {"PATH": os.environ["PATH"]}
    while args[0].startswith("--"):
        option = args.pop(0)
        if option in ("--mount", "--env"):
            value = args.pop(0)
            if option == "--env":
                key, _, val = value.partition("=")
                env[key] = val if _ else os.environ.get(key, "")
    args.pop(0)  # container name
    if "FAKE_SITE" in os.environ:
        env["PYTHONPATH"] = os.environ["FAKE_SITE"] + ":" + env.get("PYTHONPATH", "")
    sys.exit(subprocess.run(args, env=env).returncode)
"""


@pytest.fixture()
def fake_enroot(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    enroot = bin_dir / "enroot"
    enroot.write_text(FAKE_ENROOT)
    enroot.chmod(0o755)
    log = tmp_path / "enroot.log"
    # the fake container's `python` is this interpreter (the real one has the container's packages)
    monkeypatch.setenv(
        "PATH", os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]])
    )
    monkeypatch.setenv("FAKE_ENROOT_LOG", str(log))
    monkeypatch.delenv("MORPHCPT_NO_ENROOT", raising=False)
    monkeypatch.delenv("NVIDIA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("CONTAINER_NAME", "nemo_framework")  # the name the fake lists (hosts may set another)

    def calls(verb: str = "start") -> list[dict]:
        if not log.exists():
            return []
        return [c for c in map(json.loads, log.read_text().splitlines()) if c["argv"][0] == verb]

    return calls


def _mounts(argv: list[str]) -> list[str]:
    pairs = [argv[i + 1] for i, a in enumerate(argv) if a == "--mount"]
    assert all(src == dst for src, dst in (p.split(":", 1) for p in pairs)), pairs  # same path inside and out
    return [p.split(":", 1)[0] for p in pairs]


def _env_args(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "--env"]


def _is_mounted(path: str, mounts: list[str]) -> bool:
    return any(path == m or path.startswith(m.rstrip("/") + "/") for m in mounts)


def test_training_job_mounts_what_it_writes_hands_over_gpus_and_passes_secrets_by_name(
    fake_enroot, tmp_path, monkeypatch
):
    shared = tmp_path / "shared"
    model = shared / "models" / "gemma-3-1b-pt"
    model.mkdir(parents=True)
    env = {  # .env.example's layout: outputs outside both the project and the data root
        "PROJECT_DIR": str(paths.REPO_ROOT),
        "DATA_ROOT": str(shared / "data"),
        "OUTPUT_ROOT": str(shared / "outputs"),
        "LOG_DIR": str(tmp_path / "logs"),
        "BASE_MODEL": str(model),
        "TOKENIZER": str(model),
        "AUTO_RESUBMIT": "0",
    }
    jobs = render_jobs(paths.REPO_ROOT / "job_templates", tmp_path / "jobs", env)
    script = next(j for j in jobs if j.name == "run_cpt_patok.pbs")
    monkeypatch.setenv("HF_TOKEN", SECRET)
    monkeypatch.setenv("WANDB_API_KEY", SECRET + "_wandb")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-1a2b,GPU-3c4d")  # what the PBS cgroup sets (UUIDs)
    monkeypatch.chdir(tmp_path)
    codes = run_local(script, [1], log_dir=tmp_path / "runlogs")
    assert codes == {1: 0}, (tmp_path / "runlogs" / "run_cpt_patok_1.log").read_text()

    starts = fake_enroot("start")
    stages = [next(a for a in c["argv"] if a.startswith("cluster.stage=")) for c in starts]
    assert stages == ["cluster.stage=check", "cluster.stage=prepare", "cluster.stage=train"]
    for call in starts:
        argv, mounts = call["argv"], _mounts(call["argv"])
        # every host path the command reads or writes is visible inside the container
        written = [a.split("=", 1)[1] for a in argv if a.startswith(("output_root=", "data.root="))]
        written += [
            a.split("=", 1)[1] for a in argv if a.startswith(("model.pretrained=", "model.tokenizer="))
        ]
        assert written and all(_is_mounted(p, mounts) for p in written), (written, mounts)
        assert _is_mounted(env["LOG_DIR"], mounts) and _is_mounted(env["OUTPUT_ROOT"], mounts)
        # the job's GPUs, not the node's: the hook reads NVIDIA_VISIBLE_DEVICES from the host environment
        assert call["env"]["NVIDIA_VISIBLE_DEVICES"] == "GPU-1a2b,GPU-3c4d"
        assert "NVIDIA_VISIBLE_DEVICES" in _env_args(argv)
        # secrets by name only: never a value on a command line
        assert "HF_TOKEN" in _env_args(argv) and "WANDB_API_KEY" in _env_args(argv)
        assert not any(SECRET in a for a in argv)
    assert SECRET not in script.read_text()


def test_without_a_cgroup_gpu_list_nothing_is_forced(fake_enroot, tmp_path, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("PROJECT_DIR", str(paths.REPO_ROOT))
    subprocess.run(["bash", str(RUNNER), "true"], check=True)
    (call,) = fake_enroot("start")
    assert "NVIDIA_VISIBLE_DEVICES" not in _env_args(call["argv"])


def test_the_command_runs_inside_with_only_what_was_passed(fake_enroot, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_ENROOT_EXEC", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("MORPHCPT_NATIVE", "require")  # the preprocessing kernels: auto, off or require
    monkeypatch.setenv("UNRELATED_HOST_VARIABLE", "x")
    monkeypatch.setenv("PROJECT_DIR", str(paths.REPO_ROOT))
    out = subprocess.run(
        ["bash", str(RUNNER), "python3", "-c", "import os, json; print(json.dumps(dict(os.environ)))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    inside = json.loads(out.strip().splitlines()[-1])
    assert inside["HF_HUB_OFFLINE"] == "1" and inside["PYTHONPATH"] == f"{paths.REPO_ROOT}/src"
    assert inside["MORPHCPT_NATIVE"] == "require"
    assert "UNRELATED_HOST_VARIABLE" not in inside


def test_an_interrupted_image_import_does_not_block_the_next(fake_enroot, tmp_path, monkeypatch):
    sqsh = tmp_path / "containers" / "nemo.sqsh"
    sqsh.parent.mkdir()
    (sqsh.parent / "nemo.sqsh.partial").write_text("half an image")  # left by a killed import
    monkeypatch.setenv("CONTAINER_SQSH", str(sqsh))
    monkeypatch.setenv("CONTAINER_IMAGE", "nvcr.io#nvidia/nemo:26.04")
    setup = paths.REPO_ROOT / "training" / "nemo" / "setup" / "setup_enroot.sh"
    done = subprocess.run(["bash", str(setup)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert sqsh.read_text() == "image" and not (sqsh.parent / "nemo.sqsh.partial").exists()
    probe = fake_enroot("start")[-1]["argv"]
    assert probe[-2:] == ["-m", "morphcpt.train.megatron.compat"]  # the one probe, shared with verify_setup
    assert _mounts(probe) == [str(paths.REPO_ROOT)] and f"PYTHONPATH={paths.REPO_ROOT / 'src'}" in probe
    # the name the training plan greps for, and its ./run_in_enroot.sh (forwarding to the real script)
    assert (
        "container: nemo_framework" in done.stdout and "enroot list | grep -x nemo_framework" in done.stdout
    )
    forwarder = paths.REPO_ROOT / "run_in_enroot.sh"
    assert "training/nemo/run_in_enroot.sh" in forwarder.read_text() and os.access(forwarder, os.X_OK)
    assert subprocess.run(["git", "check-ignore", "-q", str(forwarder)], cwd=paths.REPO_ROOT).returncode == 0
    inside = subprocess.run(
        [str(forwarder), "python", "-c", "import os; print(os.getcwd())"],
        capture_output=True,
        text=True,
        env={**os.environ, "MORPHCPT_NO_ENROOT": "1"},
        cwd=tmp_path,
    )
    assert inside.stdout.strip() == str(paths.REPO_ROOT)


def test_an_older_container_of_the_same_name_is_named_with_the_fix(fake_enroot, tmp_path, monkeypatch):
    """The earlier pipeline created `nemo_framework` from nemo:25.11: setup must not take it for this image."""
    sqsh = tmp_path / "nemo.sqsh"
    sqsh.write_text("image")
    monkeypatch.setenv("CONTAINER_SQSH", str(sqsh))
    monkeypatch.setenv("FAKE_ENROOT_EXEC", "1")
    monkeypatch.setenv("FAKE_SITE", str(_fake_site(tmp_path, "0.1.0", "0.14.0")))
    setup = paths.REPO_ROOT / "training" / "nemo" / "setup" / "setup_enroot.sh"
    done = subprocess.run(["bash", str(setup)], capture_output=True, text=True)
    assert done.returncode == 1
    assert "existed before this setup" in done.stderr and "enroot remove nemo_framework" in done.stderr
    assert fake_enroot("create") == []  # the listed container was kept, not replaced silently


def test_verify_setup_on_a_node_with_enroot_checks_the_plans_container(fake_enroot, tmp_path):
    from morphcpt.chain.setup_check import run_checks

    env = tmp_path / ".env"
    env.write_text(f"CONTAINER_SQSH={tmp_path / 'missing.sqsh'}\n")
    checks = {c.name: c for c in run_checks(cluster=False, env_file=env)}
    assert checks["container"].ok and "nemo_framework" in checks["container"].detail
    assert not checks["container image"].ok and not checks["container image"].required  # a warning here
    env.write_text(f"CONTAINER_NAME=mine\nCONTAINER_SQSH={tmp_path / 'missing.sqsh'}\n")
    checks = {c.name: c for c in run_checks(cluster=False, env_file=env)}
    assert not checks["container"].ok and "setup_enroot.sh" in checks["container"].fix


def _fake_site(tmp_path: Path, bridge: str, core: str) -> Path:
    site = tmp_path / "site"
    for name, version in (("megatron_bridge", bridge), ("megatron_core", core)):
        info = site / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n"
        )
    return site


@pytest.mark.slow
@pytest.mark.parametrize(("bridge", "ok"), [("0.4.0", True), ("0.6.2", True), ("0.3.1", False)])
def test_verify_setup_reports_the_containers_bridge(fake_enroot, tmp_path, monkeypatch, bridge, ok):
    monkeypatch.setenv("FAKE_ENROOT_EXEC", "1")
    monkeypatch.setenv("FAKE_SITE", str(_fake_site(tmp_path, bridge, "0.17.0")))
    check = check_container_versions({"PROJECT_DIR": str(paths.REPO_ROOT), "HF_TOKEN": SECRET})
    assert check.ok is ok and f"megatron-bridge {bridge}" in check.detail
    if not ok:
        assert "not a release this code was checked against" in check.detail and "26.04" in check.fix


@pytest.mark.slow
def test_the_container_probe_names_a_module_the_jobs_need_that_does_not_import(
    fake_enroot, tmp_path, monkeypatch
):
    site = _fake_site(tmp_path, "0.4.0", "0.17.0")
    (site / "pyarrow").mkdir()
    (site / "pyarrow" / "__init__.py").write_text("raise ImportError('no pyarrow in this container')\n")
    monkeypatch.setenv("FAKE_ENROOT_EXEC", "1")
    monkeypatch.setenv("FAKE_SITE", str(site))
    check = check_container_versions({"PROJECT_DIR": str(paths.REPO_ROOT), "HF_TOKEN": SECRET})
    assert not check.ok and "megatron-bridge 0.4.0" in check.detail
    assert "cannot import what the jobs need: pyarrow (no pyarrow in this container)" in check.detail


# enroot as its runtime.sh behaves (NVIDIA/enroot src/runtime.sh, runtime::create): `create` refuses an existing
# rootfs ("File already exists"), then unsquashfs -d makes the folder (failing if it exists) and unpacks the image
# into it (seconds to minutes for NeMo);
# `list` names every rootfs folder of ENROOT_DATA_PATH, finished or not; `start` of a half-unpacked one fails.
STATEFUL_ENROOT = r"""#!/bin/bash
data="${ENROOT_DATA_PATH:?}"
mkdir -p "$data"  # enroot makes its data path itself
case "$1" in
    list) find "$data" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' ;;
    create)
        rootfs="$data/$3"
        [[ -e "$rootfs" ]] && { echo "[ERROR] File already exists: $rootfs" >&2; exit 1; }
        mkdir "$rootfs" 2>/dev/null || { echo "[ERROR] File already exists: $rootfs" >&2; exit 1; }
        sleep 1; touch "$rootfs/unpacked"; echo "$TMPDIR" >> "$data/../creates" ;;
    start)
        while [[ "$2" == --* ]]; do shift $([[ "$2" == --rw ]] && echo 1 || echo 2); done
        [[ -f "$data/$2/unpacked" ]] || { echo "start: $2 is not a complete rootfs" >&2; exit 1; } ;;
esac
"""


def test_two_jobs_on_a_fresh_node_create_the_container_once_and_both_run(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "enroot").write_text(STATEFUL_ENROOT)
    (bin_dir / "enroot").chmod(0o755)
    sqsh = tmp_path / "nemo.sqsh"
    sqsh.write_text("image")
    node_data = tmp_path / "node" / "enroot-data"  # node-local, one per user; TMPDIR: one per job
    env = {k: v for k, v in os.environ.items() if k not in ("MORPHCPT_NO_ENROOT", "NVIDIA_VISIBLE_DEVICES")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", PROJECT_DIR=str(paths.REPO_ROOT),
               CONTAINER_NAME="nemo_framework", CONTAINER_SQSH=str(sqsh), ENROOT_DATA_PATH=str(node_data))  # fmt: skip
    jobs = []
    for job in (1, 2):  # PBS Pro: each job its own TMPDIR (OpenPBS src/resmom/start_exec.c)
        tmpdir = tmp_path / f"pbs.{job}.server"
        tmpdir.mkdir()
        jobs.append(
            subprocess.Popen(
                ["bash", str(RUNNER), "true"],
                env={**env, "TMPDIR": str(tmpdir)},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )  # fmt: skip
        )
    results = [(job.wait(timeout=60), job.stdout.read()) for job in jobs]
    assert [status for status, _ in results] == [0, 0], results
    assert (
        len((tmp_path / "node" / "creates").read_text().splitlines()) == 1
    )  # one create, reused by the other
    assert "File already exists" not in "".join(out for _, out in results)


def test_under_slurm_the_hook_gets_the_jobs_host_gpus_not_the_renumbered_ones(fake_enroot, monkeypatch):
    # Slurm with ConstrainDevices: the job's one GPU, host GPU 3, is CUDA_VISIBLE_DEVICES=0 inside the job (gres.c
    # renumbers from 0); SLURM_JOB_GPUS keeps the host index, which enroot's 98-nvidia.sh reads.
    monkeypatch.setenv("PROJECT_DIR", str(paths.REPO_ROOT))
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.setenv("SLURM_JOB_GPUS", "3")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    subprocess.run(["bash", str(RUNNER), "true"], check=True)
    (call,) = fake_enroot("start")
    assert call["env"]["NVIDIA_VISIBLE_DEVICES"] == "3" and "NVIDIA_VISIBLE_DEVICES" in _env_args(
        call["argv"]
    )


def test_cpu_only_jobs_tell_the_nvidia_hook_there_is_no_gpu(fake_enroot, tmp_path, monkeypatch):
    rendered = {p.name: p.read_text() for p in render_jobs(paths.REPO_ROOT / "job_templates", tmp_path, {})}
    cpu = [name for name, text in rendered.items() if "ngpus=" not in text]
    assert {"preprocess_data_vanilla.pbs", "download.pbs", "split.pbs"} <= set(cpu)
    for name in cpu:
        assert "export NVIDIA_VISIBLE_DEVICES=void" in rendered[name], name
    for name, text in rendered.items():
        if name not in cpu:
            assert "NVIDIA_VISIBLE_DEVICES=void" not in text, name
    monkeypatch.setenv("PROJECT_DIR", str(paths.REPO_ROOT))
    monkeypatch.setenv("NVIDIA_VISIBLE_DEVICES", "void")  # what the CPU job exported
    subprocess.run(["bash", str(RUNNER), "true"], check=True)
    (call,) = fake_enroot("start")
    assert call["env"]["NVIDIA_VISIBLE_DEVICES"] == "void" and "NVIDIA_VISIBLE_DEVICES" in _env_args(
        call["argv"]
    )


def test_pyxis_keeps_the_container_between_steps_and_our_variables_over_the_images(tmp_path):
    log = tmp_path / "scheduler.jsonl"
    fakes = FAKES
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "MORPHCPT_", "NVIDIA_"))}
    env.update(PATH=f"{fakes}{os.pathsep}{env['PATH']}", PROJECT_DIR=str(paths.REPO_ROOT),
               CONTAINER_RUNTIME="pyxis", CONTAINER_NAME="nemo_framework", SLURM_JOB_ID="7",
               SLURM_JOB_NODELIST="127.0.0.1", SLURM_JOB_GPUS="3", CUDA_VISIBLE_DEVICES="0",
               FAKE_SCHEDULER_LOG=str(log))  # fmt: skip
    subprocess.run(["bash", str(RUNNER), "true"], env=env, check=True)
    [step] = [json.loads(line)["argv"] for line in log.read_text().splitlines()]
    options = dict(a.split("=", 1) for a in step if a.startswith("--container-"))
    # pyxis README: --container-name keeps the unpacked image for the job's later steps; the image's environment
    # wins over the host's unless --container-env names the variable
    assert options["--container-name"] == "nemo_framework"
    assert {"PYTHONPATH", "HF_HOME", "MORPHCPT_MOUNTS"} <= set(options["--container-env"].split(","))
    assert "NVIDIA_VISIBLE_DEVICES" not in options["--container-env"]  # pyxis maps the step's GPUs itself
