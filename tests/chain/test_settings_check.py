"""Number and size settings are read strictly where they are written, so nothing fails after a queue wait:
GPU_MEMORY needs its unit and must exceed the reserve; TRAIN_NODES, TRAIN_NODE_TIMEOUT and SEEDS are plain whole
numbers within bounds at render and plan time; the memory command refuses bad `gpus=` in one line and says what it
cannot check about the card."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from morphcpt import paths
from morphcpt.chain import jobs
from morphcpt.plan import card


@pytest.mark.parametrize(
    "text", ["40", "-1", "", " ", "1.2.3GB", "40 G B", "0GB", "GB", "40XB", "nan", "1e3GB"]
)
def test_a_gpu_memory_without_a_unit_or_readable_number_is_refused(text):
    with pytest.raises(card.SizeError, match="must look like 40GB|must be above zero"):
        card.card_bytes(text, "GPU_MEMORY")


def test_a_bare_number_is_refused_naming_the_unit_and_a_card_under_the_reserve_is_refused():
    with pytest.raises(card.SizeError, match=r"no unit: write 40GB"):
        card.card_bytes("40", "GPU_MEMORY")
    for small in ("2GB", "1GB", "512MB", "2048MiB"):
        with pytest.raises(card.SizeError, match="not above the 2.0 GiB"):
            card.card_bytes(small, "GPU_MEMORY")
    assert card.card_bytes("40GB") == 40 * 2**30 and card.card_bytes("2.5GiB") == int(2.5 * 2**30)


@pytest.mark.parametrize(
    "name, value, said",
    [
        ("TRAIN_NODES", "02", "leading zero"),
        ("TRAIN_NODES", "01", "leading zero"),
        ("TRAIN_NODES", "0", "out of range"),
        ("TRAIN_NODES", "-1", "not a whole number"),
        ("TRAIN_NODES", "two", "not a whole number"),
        ("TRAIN_NODE_TIMEOUT", "0", "out of range"),
        ("TRAIN_NODE_TIMEOUT", "abc", "not a whole number"),
        ("TRAIN_NODE_TIMEOUT", "060", "leading zero"),
        ("TRAIN_NODE_TIMEOUT", "1.5", "not a whole number"),
        ("SEEDS", "1000", "out of range"),
        ("SEEDS", "21", "out of range"),
        ("SEEDS", "03", "leading zero"),
        ("GPU_MEMORY", "40", "no unit"),
        ("GPU_MEMORY", "-1", "must look like"),
        ("GPU_MEMORY", "", "must look like"),
        ("GPU_MEMORY", "1.2.3GB", "must look like"),
        ("GPU_MEMORY", "1GB", "not above"),
        ("TRAIN_NGPUS", "08", "leading zero"),
        ("NUM_CHUNKS", "0", "out of range"),
        ("AUTO_RESUBMIT", "2", "out of range"),
        ("EVAL_NCPUS", "x", "not a whole number"),
    ],
)
def test_rendering_refuses_a_bad_number_setting_before_anything_is_written(tmp_path, name, value, said):
    with pytest.raises(jobs.SettingsError, match=f"{name}.*{said}"):
        jobs.render_jobs(paths.REPO_ROOT / "job_templates", tmp_path / "jobs", {name: value})
    assert not (tmp_path / "jobs").exists() or not any((tmp_path / "jobs").iterdir())


def test_good_values_still_render(tmp_path):
    env = {"TRAIN_NODES": "2", "TRAIN_NODE_TIMEOUT": "6", "SEEDS": "20", "GPU_MEMORY": "80GiB"}
    assert jobs.derived_settings({**jobs.SETTINGS, **env})["TRAIN_PLACEMENT"] == "#PBS -l place=scatter"


def test_the_chain_refuses_a_thousand_seeds_at_once(tmp_path):
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            str(paths.REPO_ROOT / "scripts" / "submit_pipeline.py"),
            "--env",
            str(tmp_path / "none"),
            "--seeds",
            "1000",
            "--dry-run",
            "--jobs-dir",
            str(tmp_path / "jobs"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "SEEDS must be a whole number of runs per arm from 1 to 20" in done.stderr
    assert time.perf_counter() - started < 60


@pytest.mark.parametrize(
    "args, said",
    [
        (["gpus=abc"], "gpus= must be a whole number"),
        (["gpus=0"], "gpus= must be a whole number"),
        (["gpus=-1"], "gpus= must be a whole number"),
        (["cluster.gpu_memory=40"], "no unit"),
        (["cluster.gpu_memory=1.2.3GB"], "must look like"),
    ],
)
def test_the_memory_command_refuses_in_one_line(args, said):
    done = subprocess.run(
        [sys.executable, "-m", "morphcpt.train.memory.planner", "recipe=demo_cpt", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_memory_command_names_an_unknown_card_and_bf16_on_a_card_without_it(capsys):
    # in this process (the command's own process is test_the_memory_command_refuses_in_one_line's): three fresh
    # interpreters importing torch cost most of this test's time
    from morphcpt.train.memory import planner

    def run(*args):
        code = planner.main(["recipe=cpt_baseline", "engine=hf", *args])
        return code, capsys.readouterr().out

    unknown = run("cluster.gpu_type=Z9", "cluster.gpu_memory=16GB")
    assert unknown[0] == 0 and "Z9 is not a card the planner knows" in unknown[1]
    t4 = run("cluster.gpu_type=T4", "cluster.gpu_memory=16GB")
    assert "T4 has no bf16" in t4[1] and "cannot run on T4" in t4[1]
    fp16 = run("cluster.gpu_type=T4", "cluster.gpu_memory=16GB", "loop.precision=fp16-mixed")
    assert "no bf16" not in fp16[1]


def test_training_with_an_auto_micro_batch_that_fits_nothing_is_one_line(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "morphcpt.train",
            "recipe=cpt_baseline",
            "engine=hf",
            "cluster.gpu_memory=3GB",
            "loop.micro_batch_size=auto",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "loop.micro_batch_size=auto does not fit" in done.stderr
