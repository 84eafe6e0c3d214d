"""Training on several nodes, simulated on this machine: two "nodes" (127.0.0.1 and 127.0.0.2, both loopback) run
the RENDERED job scripts through stand-ins for PBS Pro's pbsdsh and Slurm's srun (tests/fakes), which start each
node's command with its own node number and host, pbsdsh with the job's submission environment only (and, for
the launcher tests, stand-ins for torchrun and the one-process check stage: tests/fakes/torchrun_stub).

- the scripts ask for N nodes and each node's torchrun gets the one rendezvous (a stand-in torchrun records it);
- a node that fails, dies or falls silent ends the job with a message naming it; SIGTERM reaches every node;
- with the real hf engine (gloo, CPU): two nodes train what one process trains (losses within 1e-5), a lost node
  ends the job in under a minute, and the job submitted again resumes and finishes with the same losses.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from morphcpt import paths
from morphcpt.chain import jobs
from morphcpt.train import load_plan
from morphcpt.train.hf.engine import train
from morphcpt.train.hf.metrics import read_metrics
from suite_paths import FAKES
from train_helpers import write_data

HOSTS = ["127.0.0.1", "127.0.0.2"]
LAUNCHER = paths.REPO_ROOT / "training" / "nemo" / "torchrun_nodes.sh"
TINY = (
    "model=tiny loop.steps={steps} loop.seq_length=64 loop.global_batch_size=8 loop.micro_batch_size=2 "
    "loop.precision=fp32 optim.lr=1e-3 optim.min_lr=1e-4 optim.warmup_steps=2 validation.interval=4 "
    "validation.max_batches=2 checkpoint.interval=4 logging.wandb=false logging.progress_bar=false"
)


def processes_marked(marker: str) -> list[int]:
    """This test's processes, wherever they went (torchrun starts its workers in sessions of their own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                if f"MORPHCPT_TEST_JOB={marker}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def descendants(pid: int) -> list[int]:
    """`pid` and every process under it (a node's whole tree: launcher, torchrun, its workers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    tree, todo = [], [pid]
    while todo:
        tree.append(todo.pop())
        todo.extend(children.get(tree[-1], []))
    return tree


class Job:
    """A rendered job script run as PBS Pro or Slurm would run it on the first of two nodes."""

    def __init__(self, tmp: Path, scheduler: str, settings: dict[str, str], stub_torchrun: bool = False):
        self.tmp, self.scheduler = tmp, scheduler
        self.marker = uuid.uuid4().hex
        self.records = tmp / "records"
        self.records.mkdir(parents=True, exist_ok=True)
        self.log = tmp / "scheduler.jsonl"
        self.jobs = jobs.render_jobs(
            paths.REPO_ROOT / "job_templates", tmp / f"jobs_{scheduler}", {"SCHEDULER": scheduler, **settings}
        )
        path = [str(FAKES), str(Path(sys.executable).parent), os.environ["PATH"]]
        if stub_torchrun:
            path.insert(0, str(FAKES / "torchrun_stub"))
        inherited = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PBS_", "SLURM_", "MORPHCPT_", "TORCHELASTIC"))
        }
        (tmp / "home").mkdir(exist_ok=True)
        self.env = {
            **inherited,
            "PATH": os.pathsep.join(path),
            "HOME": str(tmp / "home"),
            "MORPHCPT_NO_ENROOT": "1",
            "MORPHCPT_TEST_JOB": self.marker,
            "MORPHCPT_TEST_RECORDS": str(self.records),
            "FAKE_SCHEDULER_LOG": str(self.log),
            "OMP_NUM_THREADS": "1",
        }
        self.count = 0

    def script(self, name: str) -> Path:
        return next(p for p in self.jobs if p.stem == name)

    def start(self, name: str, **extra_env: str) -> subprocess.Popen:
        self.count += 1
        env = {**self.env, **extra_env}
        if self.scheduler == "pbs":
            nodefile = self.tmp / "nodefile"
            nodefile.write_text("".join(f"{h}\n" for h in HOSTS))
            env.update(
                PBS_JOBID=f"{os.getpid()}{self.count}.fake", PBS_NODEFILE=str(nodefile),
                PBS_ENVIRONMENT="PBS_BATCH", PBS_O_WORKDIR=str(paths.REPO_ROOT),
            )  # fmt: skip
        else:
            env.update(
                SLURM_JOB_ID=f"{os.getpid()}{self.count}", SLURM_JOB_NODELIST=",".join(HOSTS),
                SLURM_CPUS_PER_TASK="4", SLURM_SUBMIT_DIR=str(paths.REPO_ROOT),
            )  # fmt: skip
        self.output = self.tmp / f"{name}_{self.count}.out"
        return subprocess.Popen(
            ["bash", str(self.script(name))], env=env, stdout=open(self.output, "w"),
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def run(self, name: str, timeout: float = 240, **extra_env: str) -> tuple[int, str]:
        proc = self.start(name, **extra_env)
        return proc.wait(timeout=timeout), self.output.read_text()

    def torchruns(self) -> list[dict]:
        return sorted(
            (json.loads(p.read_text()) for p in self.records.glob("torchrun_*.json")), key=lambda r: r["host"]
        )

    def launches(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def cleanup(self) -> None:
        for pid in processes_marked(self.marker):
            for sig in (signal.SIGCONT, signal.SIGKILL):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)


@pytest.fixture
def make_job(tmp_path):
    made: list[Job] = []

    def make(scheduler: str, settings: dict[str, str], **kwargs) -> Job:
        made.append(Job(tmp_path / f"{scheduler}{len(made)}", scheduler, settings, **kwargs))
        return made[-1]

    yield make
    for job in made:
        job.cleanup()


def settings(tmp: Path, **extra: str) -> dict[str, str]:
    return {
        "OUTPUT_ROOT": str(tmp / "out"), "LOG_DIR": str(tmp / "logs"), "DATA_ROOT": str(tmp / "data"),
        "TRAIN_ENGINE": "hf", "TRAIN_NODES": "2", "TRAIN_NGPUS": "1", "NUM_CHUNKS": "2", **extra,
    }  # fmt: skip


# ---- the rendered scripts ------------------------------------------------------------------------------------


def test_the_rendered_scripts_ask_for_every_node_and_one_node_stays_as_it_was(tmp_path):
    two = {"TRAIN_NODES": "2", "OUTPUT_ROOT": "/shared/out", "LOG_DIR": "/shared/logs"}
    pbs = {
        p.name: p.read_text()
        for p in jobs.render_jobs(paths.REPO_ROOT / "job_templates", tmp_path / "a", two)
    }
    for name in ("run_cpt_patok.pbs", "run_cpt_eeve.pbs", "pretrain_scratch.pbs"):
        text = pbs[name]
        assert "#PBS -l select=2:ncpus=64:ngpus=8:mem=480gb\n#PBS -l place=scatter\n" in text, name
        assert '"cluster.nodes=2"' in text, name
        assert (
            'torchrun_nodes.sh --nodes "2" --gpus "8" --log-dir' in text
            and "torchrun --standalone" not in text
        ), name
    assert pbs["run_cpt_patok.pbs"].count("torchrun_nodes.sh --nodes") == 2  # the hf and megatron branches
    assert "select=1:" in pbs["export_patok.pbs"]  # one GPU jobs stay on one node
    slurm = jobs.render_jobs(paths.REPO_ROOT / "job_templates", tmp_path / "b", {**two, "SCHEDULER": "slurm"})
    text = next(p for p in slurm if p.name == "run_cpt_patok.slurm").read_text()
    assert "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=64" in text
    assert "place=" not in text and "#PBS" not in text
    one = jobs.render_jobs(paths.REPO_ROOT / "job_templates", tmp_path / "c", {})
    text = next(p for p in one if p.name == "run_cpt_patok.pbs").read_text()
    assert "#PBS -l select=1:ncpus=64:ngpus=8:mem=480gb\n# one node" in text and "place=" not in text
    for script in [*slurm, *one]:
        subprocess.run(["bash", "-n", str(script)], check=True)
    with pytest.raises(jobs.SettingsError, match="TRAIN_NODES must be a whole number"):
        jobs.render_jobs(paths.REPO_ROOT / "job_templates", tmp_path / "d", {"TRAIN_NODES": "0"})


def test_one_node_runs_torchrun_standalone_as_before(tmp_path):
    (tmp_path / "records").mkdir()
    env = {
        **os.environ, "MORPHCPT_NO_ENROOT": "1", "MORPHCPT_TEST_RECORDS": str(tmp_path / "records"),
        "PATH": f"{FAKES / 'torchrun_stub'}{os.pathsep}{os.environ['PATH']}",
    }  # fmt: skip
    command = ["bash", str(LAUNCHER), "--nodes", "1", "--gpus", "8", "--", "training/nemo/run_cpt.py", "a=1"]
    assert subprocess.run(command, env=env).returncode == 0
    [record] = [json.loads(p.read_text()) for p in (tmp_path / "records").iterdir()]
    assert record["argv"] == ["--standalone", "--nproc-per-node", "8", "training/nemo/run_cpt.py", "a=1"]


@pytest.mark.parametrize("scheduler", ["pbs", "slurm"])
def test_each_node_starts_torchrun_at_one_rendezvous(scheduler, tmp_path, make_job):
    job = make_job(scheduler, settings(tmp_path), stub_torchrun=True)
    status, output = job.run("run_cpt_baseline", timeout=120)
    assert status == 0, output
    runs = job.torchruns()
    assert [r["host"] for r in runs] == HOSTS
    [check] = [
        json.loads(p.read_text()) for p in job.records.glob("python_*.json")
    ]  # once, on the first node
    assert check["host"] == "head" and check["argv"].endswith("engine=hf cluster.stage=check")
    endpoints = set()
    for node, run in enumerate(runs):
        argv = run["argv"]
        option = {argv[i]: argv[i + 1] for i in range(0, argv.index("--max-restarts") + 2, 2)}
        assert option["--nnodes"] == "2" and option["--nproc-per-node"] == "1"
        assert option["--rdzv-backend"] == "c10d" and option["--max-restarts"] == "0"
        assert option["--rdzv-conf"] == f"is_host={1 - node},join_timeout=900"
        endpoints.add((option["--rdzv-endpoint"], option["--rdzv-id"]))
        program = argv[argv.index("--max-restarts") + 2 :]
        assert program[0] == "training/nemo/run_cpt.py" and program[-1] == "engine=hf"
        assert "cluster.nodes=2" in program and "recipe=cpt_baseline" in program
        assert run["env"]["OUTPUT_ROOT"] == str(tmp_path / "out")  # the job's settings reached every node
        assert run["cwd"] == str(paths.REPO_ROOT)
    [(endpoint, rdzv_id)] = endpoints
    host, port = endpoint.split(":")
    assert host == HOSTS[0] and 20000 <= int(port) < 30050 and rdzv_id.startswith("morphcpt-")
    launches = job.launches()
    if scheduler == "pbs":  # node 0 runs on the job's own node, node 1 through pbsdsh with the job's bare env
        assert [launch["argv"][:3] for launch in launches] == [["-n", "1", "--"]]
        assert [r["env"]["PBS_NODENUM"] for r in runs] == [None, "1"]
    else:
        [launch] = launches
        assert launch["argv"][:5] == [
            "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--kill-on-bad-exit=1", "--cpus-per-task=4",
        ]  # fmt: skip
        assert [r["env"]["SLURM_NODEID"] for r in runs] == ["0", "1"]
    assert f"2 nodes ({' '.join(HOSTS)})" in output and f"rendezvous {endpoint}" in output
    assert "[node 1] [" in output  # every node's output reaches the job's log, prefixed


def test_pyxis_starts_every_node_in_the_image_and_torchrun_runs_inside(tmp_path, make_job):
    job = make_job("slurm", settings(tmp_path), stub_torchrun=True)
    del job.env["MORPHCPT_NO_ENROOT"]  # the srun step is the container
    job.env["CONTAINER_RUNTIME"] = "pyxis"  # as .env sets it
    status, output = job.run("run_cpt_baseline", timeout=120)
    assert status == 0, output
    check, launch = job.launches()  # the check stage: one step on one node; training: one task on each node
    assert check["argv"][:3] == ["--nodes=1", "--ntasks=1", "--cpus-per-task=4"]
    assert launch["argv"][:4] == ["--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--kill-on-bad-exit=1"]
    assert all(any(a.startswith("--container-image=") for a in step["argv"]) for step in (check, launch))
    assert [r["env"]["MORPHCPT_IN_CONTAINER"] for r in job.torchruns()] == ["1", "1"]


@pytest.mark.parametrize("scheduler", ["pbs", "slurm"])
def test_a_node_that_fails_ends_the_job_naming_it(scheduler, tmp_path, make_job):
    job = make_job(scheduler, settings(tmp_path), stub_torchrun=True)
    tic = time.monotonic()
    status, output = job.run("run_cpt_baseline", MORPHCPT_TEST_TORCHRUN="127.0.0.1=sleep,127.0.0.2=exit:3")
    assert status != 0 and time.monotonic() - tic < 60
    assert "node 1 of 2 (127.0.0.2) exited with status 3; ending the job" in output
    assert "training FAILED because node 1 exited with status 3" in output
    assert "checkpoint iteration" not in output  # the job stopped there: no resubmission decision was taken
    if scheduler == "pbs":  # the launcher stopped node 0 (under Slurm, srun --kill-on-bad-exit does)
        assert [r["signalled"] for r in job.torchruns()] == [True, False]


@pytest.mark.slow
def test_a_node_that_falls_silent_ends_the_job(tmp_path, make_job):
    job = make_job("pbs", settings(tmp_path, TRAIN_NODE_TIMEOUT="6"), stub_torchrun=True)
    proc = job.start("run_cpt_baseline", MORPHCPT_TEST_TORCHRUN="127.0.0.1=sleep,127.0.0.2=sleep")
    deadline = time.monotonic() + 60
    while len(job.torchruns()) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    [launch] = job.launches()
    tic = time.monotonic()
    for pid in descendants(launch["pgid"]):  # a node that hangs: every process stopped, sockets left open
        os.kill(pid, signal.SIGSTOP)
    status = proc.wait(timeout=90)
    output = job.output.read_text()
    assert status != 0 and time.monotonic() - tic < 6 + 30
    assert "node 1 of 2 (127.0.0.2) fell silent: no heartbeat for" in output


def test_sigterm_reaches_every_node_and_the_launcher_waits_for_them(tmp_path, make_job):
    job = make_job("pbs", settings(tmp_path), stub_torchrun=True)
    job.env["MORPHCPT_TEST_TORCHRUN"] = "127.0.0.1=sleep,127.0.0.2=sleep"
    state = tmp_path / "logs"
    nodefile = tmp_path / "nodefile"
    nodefile.write_text("".join(f"{h}\n" for h in HOSTS))
    env = {**job.env, "PBS_JOBID": "99.fake", "PBS_NODEFILE": str(nodefile), "PBS_ENVIRONMENT": "PBS_BATCH"}
    command = ["bash", str(LAUNCHER), "--nodes", "2", "--gpus", "1", "--log-dir", str(state), "--", "x.py"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while len(job.torchruns()) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)  # PBS at the walltime, qdel, scancel
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 143, output
    assert [r["signalled"] for r in job.torchruns()] == [True, True]
    assert "every node stopped after SIGTERM" in output


def test_a_job_of_another_shape_or_no_job_is_refused_with_the_fix(tmp_path):
    nodefile = tmp_path / "nodefile"
    nodefile.write_text("a\na\nb\nc\n")  # three hosts (a has two lines: two MPI slots)
    base = ["bash", str(LAUNCHER), "--nodes", "2", "--gpus", "8", "--log-dir", str(tmp_path), "--", "x.py"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PBS_", "SLURM_"))}
    done = subprocess.run(base, env={**env, "PBS_JOBID": "1.x", "PBS_NODEFILE": str(nodefile)},
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2
    assert "the job has 3 node(s) (a b c) but trains on 2 (TRAIN_NODES)" in done.stderr
    done = subprocess.run(base, env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "runs inside a PBS Pro or Slurm job" in done.stderr


# ---- real training: the hf engine on two simulated nodes -------------------------------------------------------


@pytest.fixture(scope="module")
def data_root(tmp_path_factory, sample_corpus):
    return write_data(tmp_path_factory.mktemp("data") / "processed", sample_corpus, limit=400, num_chunks=2)


def numbers(run_dir: Path) -> list[tuple]:
    return [
        (r["kind"], r["step"], r["loss"] if r["kind"] == "train" else r["val_loss"])
        for r in read_metrics(run_dir)
    ]


def one_process(data_root: Path, tiny_model: Path, out: Path, steps: int) -> list[tuple]:
    """What the job trains, in this process: the same plan, one rank, the same global batch."""
    overrides = [
        "recipe=cpt_baseline", f"data.root={data_root}", "data.num_chunks=2", f"output_root={out}",
        f"model.pretrained={tiny_model}", f"model.tokenizer={paths.SAMPLE_TOKENIZER_DIR}",
        *TINY.format(steps=steps).split(),
    ]  # fmt: skip
    return numbers(train(load_plan(overrides)).run_dir)


def training_settings(
    tmp: Path, data_root: Path, tiny_model: Path, steps: int, plan: str = ""
) -> dict[str, str]:
    return settings(
        tmp, DATA_ROOT=str(data_root.parent), BASE_MODEL=str(tiny_model), TOKENIZER=str(paths.SAMPLE_TOKENIZER_DIR),
        TRAIN_OVERRIDES=f"{TINY.format(steps=steps)} {plan}".strip(),
    )  # fmt: skip


def assert_same_losses(got: list[tuple], want: list[tuple], label: str) -> None:
    assert [g[:2] for g in got] == [w[:2] for w in want]
    for g, w in zip(got, want, strict=True):
        assert g[2] == pytest.approx(w[2], rel=1e-5), (g, w)
    worst = max(abs(g[2] - w[2]) / abs(w[2]) for g, w in zip(got, want, strict=True))
    train = [(g[1], w[2], g[2]) for g, w in zip(got, want, strict=True) if g[0] == "train"]
    shown = ", ".join(
        f"step {s}: {one:.6f} / {two:.6f}" for s, one, two in (train[0], train[len(train) // 2], train[-1])
    )
    print(
        f"{label}: {len(got)} losses (train + validation), max relative difference {worst:.2e}; one process / "
        f"two nodes: {shown}"
    )


@pytest.mark.slow
def test_two_pbs_nodes_train_as_one_a_lost_node_ends_the_job_and_it_resumes(
    data_root, tiny_gemma3, tmp_path, make_job
):
    steps = 16
    want = one_process(data_root, tiny_gemma3, tmp_path / "one", steps)
    job = make_job("pbs", training_settings(tmp_path, data_root, tiny_gemma3, steps))
    run_dir = tmp_path / "out" / "runs" / "gemma3-1b-baseline"
    proc = job.start("run_cpt_baseline")
    deadline = time.monotonic() + 240
    while proc.poll() is None and time.monotonic() < deadline:  # past the first checkpoint (step 4)
        if (run_dir / "metrics.jsonl").exists() and sum(r[0] == "train" for r in numbers(run_dir)) >= 6:
            break
        time.sleep(0.2)
    assert proc.poll() is None, job.output.read_text()
    [launch] = job.launches()
    tic = time.monotonic()
    for pid in descendants(launch["pgid"]):  # node 1 dies: its launcher, torchrun and worker at once
        os.kill(pid, signal.SIGKILL)
    status = proc.wait(timeout=120)
    lost_after = time.monotonic() - tic
    output = lost_output = job.output.read_text()
    assert status != 0 and lost_after < 60, output
    assert "training FAILED because node" in output
    done = [r[1] for r in numbers(run_dir) if r[0] == "train"]
    assert max(done) < steps  # it really stopped mid-run

    status, output = job.run("run_cpt_baseline")  # submitted again: resumes from the newest checkpoint
    assert status == 0, output
    assert "training complete" in output
    assert_same_losses(numbers(run_dir), want, "pbs, ddp, lost node + resumed")
    meta = json.loads((run_dir / "metadata.json").read_text())
    assert meta["world_size"] == 2 and [r["world_size"] for r in meta["resumes"]] == [2]
    print(f"lost node: job ended {lost_after:.1f} s after node 1 was killed at step {max(done)}; it said:")
    print("\n".join(line for line in lost_output.splitlines() if line.startswith(("torchrun_nodes", "  "))))


@pytest.mark.slow
def test_two_slurm_nodes_with_fsdp_train_as_one(data_root, tiny_gemma3, tmp_path, make_job):
    """fsdp on two nodes: each node holds one copy (HSDP, replicas across the nodes)."""
    steps = 8
    want = one_process(data_root, tiny_gemma3, tmp_path / "one", steps)
    job = make_job(
        "slurm", training_settings(tmp_path, data_root, tiny_gemma3, steps, plan="loop.sharding=fsdp")
    )
    status, output = job.run("run_cpt_baseline")
    assert status == 0, output
    run_dir = tmp_path / "out" / "runs" / "gemma3-1b-baseline"
    assert_same_losses(numbers(run_dir), want, "slurm, fsdp (hsdp)")
    latest = json.loads((run_dir / "progress.json").read_text())
    assert latest["complete"] and latest["iteration"] == steps


@pytest.mark.slow
def test_a_node_whose_training_hangs_while_alive_ends_the_job(tmp_path, make_job):
    """The heartbeat comes from the training loop: node 1's torchrun stays alive (its launcher too) but stops
    stepping after 3 beats, as a stuck collective does; node 0 keeps training."""
    job = make_job("pbs", settings(tmp_path, TRAIN_NODE_TIMEOUT="6"), stub_torchrun=True)
    tic = time.monotonic()
    status, output = job.run("run_cpt_baseline", timeout=120,
                             MORPHCPT_TEST_TORCHRUN="127.0.0.1=train,127.0.0.2=hang:3")  # fmt: skip
    assert status != 0 and time.monotonic() - tic < 90, output
    assert "node 1 of 2 (127.0.0.2) fell silent: no heartbeat for" in output
    assert [r["signalled"] for r in job.torchruns()] == [True, True]  # both stopped, neither had exited


def test_a_missing_pbsdsh_is_named_not_read_as_a_lost_node(tmp_path):
    nodefile = tmp_path / "nodefile"
    nodefile.write_text("".join(f"{h}\n" for h in HOSTS))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PBS_", "SLURM_"))}
    env["PATH"] = os.pathsep.join(
        p for p in env["PATH"].split(os.pathsep) if not (Path(p) / "pbsdsh").exists()
    )
    env.update(PBS_JOBID="7.fake", PBS_NODEFILE=str(nodefile), PBS_ENVIRONMENT="PBS_BATCH")
    command = [
        "bash",
        str(LAUNCHER),
        "--nodes",
        "2",
        "--gpus",
        "1",
        "--log-dir",
        str(tmp_path / "l"),
        "--",
        "x.py",
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "pbsdsh not found on PATH" in done.stderr and "lost" not in done.stdout + done.stderr
