"""The training plan's own commands (docs/training-plan-commands.md). Step 5: its flags (`--data-path
…/vanilla/seapile --checkpoint-dir … --wandb-name … --max-steps 10000`) resolve to the same plan as the key=value
overrides they stand for; an unknown flag, a flag and an override of one key, a data path that is no data are
errors that say what to type; a run folder outside the container's mounts is refused; a train stage typed without
torchrun says what to type. Step 4: a preprocessing job that misses the chunks the plan's Step 3 wrote says where
they are. (Step 6, evaluation of run folders: tests/evaluate/test_resolve.py; Step 1: tests/chain/test_enroot.py.)"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from morphcpt import paths
from morphcpt.chain.jobs import render_jobs, run_local
from morphcpt.plan.compose import check_outputs_mounted, load_plan, plan_to_yaml
from morphcpt.plan.flags import FlagError, data_path_overrides, rewrite_argv, translate
from morphcpt.plan.schema import PlanError
from morphcpt.train.megatron import config, engine
from train_helpers import write_data


@pytest.fixture(scope="module")
def processed(tmp_path_factory, sample_corpus) -> Path:
    """Two preprocessed vanilla chunks and the validation set, as the preprocess jobs write them."""
    return write_data(tmp_path_factory.mktemp("flags") / "processed", sample_corpus, limit=60, num_chunks=2)


def test_the_plans_step5_flags_resolve_to_the_plan_of_their_overrides(processed, tmp_path):
    flags = [
        "--data-path", str(processed / "vanilla" / "seapile"),  # the plan's prefix: no such dataset here
        "--checkpoint-dir", str(tmp_path / "logs" / "checkpoints" / "gemma3-1b-baseline"),
        "--wandb-name", "gemma3-1b-baseline",
        "--max-steps=10000",
        f"output_root={tmp_path / 'out'}",
    ]  # fmt: skip
    hydra_args, overrides, notes = translate(flags)
    typed = [
        f"data.root={processed}",
        "data.scheme=vanilla",
        f"run_dir={tmp_path / 'logs' / 'checkpoints' / 'gemma3-1b-baseline'}",
        "run_name=gemma3-1b-baseline",
        "loop.steps=10000",
        f"output_root={tmp_path / 'out'}",
    ]
    assert sorted(hydra_args) == sorted(typed) and set(overrides) <= set(typed)
    assert any("no dataset 'seapile'" in note for note in notes)
    assert any("data.num_chunks=2" in note for note in notes)  # the folder holds 2 chunks, the plan says 20
    assert plan_to_yaml(load_plan(hydra_args)) == plan_to_yaml(load_plan(typed))
    plan = load_plan(hydra_args)
    assert (plan.loop.steps, plan.run_name, plan.data.scheme) == (10000, "gemma3-1b-baseline", "vanilla")
    assert plan.checkpoint_dir == tmp_path / "logs" / "checkpoints" / "gemma3-1b-baseline" / "checkpoints"


def test_the_earlier_pipelines_other_flags_are_plan_keys(tmp_path):
    flags = [
        "--seq-length",
        "1024",
        "--global-batch-size",
        "128",
        "--micro-batch-size",
        "1",
        "--devices",
        "4",
    ]
    flags += ["--lr", "5e-5", "--min-lr", "5e-6", "--warmup-steps", "100", "--checkpoint-interval", "500"]
    flags += ["--val-check-interval", "250", "--log-every-n-steps", "5", "--wandb-project", "mine"]
    flags += ["--resume-from", "google/gemma-3-1b-pt", f"output_root={tmp_path}"]
    plan = load_plan(translate(flags)[0])
    assert (plan.loop.seq_length, plan.loop.global_batch_size, plan.loop.micro_batch_size) == (1024, 128, 1)
    assert (plan.cluster.gpus_per_node, plan.optim.lr, plan.optim.min_lr) == (4, 5e-5, 5e-6)
    assert (plan.optim.warmup_steps, plan.checkpoint.interval, plan.validation.interval) == (100, 500, 250)
    assert (plan.logging.interval, plan.logging.wandb_project) == (5, "mine")
    assert plan.model.pretrained == "google/gemma-3-1b-pt"


def test_data_path_forms(processed):
    notes: list[str] = []
    vanilla = processed / "vanilla"
    assert data_path_overrides([str(vanilla)], notes)[:2] == [f"data.root={processed}", "data.scheme=vanilla"]
    both = [str(vanilla / "chunk_01_text_document"), str(vanilla / "chunk_02_text_document.bin")]
    assert data_path_overrides(both, notes)[2:] == ["data.num_chunks=2"]
    one = data_path_overrides([str(vanilla / "chunk_02_text_document")], notes)
    assert one[2:] == ["data.chunk_name=chunk_02", "data.num_chunks=1"]
    plan = load_plan(one)
    assert plan.data.chunk_prefixes() == [vanilla / "chunk_02_text_document"]
    for bad, message in [
        ([str(processed)], "one folder per scheme"),
        ([str(processed / "nowhere" / "x")], "neither a dataset"),
        ([str(vanilla / "chunk_02_text_document"), str(vanilla)], "mixes a scheme folder"),
        ([str(vanilla / "chunk_02_text_document")] * 2, "chunk_01"),
    ]:
        with pytest.raises(FlagError, match=message):
            data_path_overrides(bad, [])


@pytest.mark.skipif(Path("/workspace").exists(), reason="this machine has a real /workspace")
def test_the_plans_workspace_path_is_this_checkout(monkeypatch, tmp_path):
    monkeypatch.delenv("DATA_ROOT", raising=False)
    monkeypatch.setattr(paths, "ENV_FILE", tmp_path / "no.env")
    _, overrides, notes = translate(["--data-path", "/workspace/data/processed/vanilla/seapile"])
    assert overrides[:2] == [f"data.root={paths.REPO_ROOT / 'data' / 'processed'}", "data.scheme=vanilla"]
    assert "earlier pipeline mounted the project" in notes[0]


def test_the_plans_step5_command_reads_as_the_cluster_layout_inside_an_ngc_image(monkeypatch, tmp_path):
    """NGC images have a /workspace of their own, and nothing mounts the earlier pipeline's /logs: the plan's
    paths are read as $DATA_ROOT and $OUTPUT_ROOT/runs, so the command trains as typed instead of refusing."""
    from morphcpt.plan import flags

    ngc_workspace = tmp_path / "workspace"
    ngc_workspace.mkdir()  # the image's own, without the project in it
    monkeypatch.setattr(flags, "WORKSPACE", str(ngc_workspace))
    monkeypatch.setattr(flags, "LOGS", str(tmp_path / "logs"))  # absent, as in the container
    monkeypatch.setenv("DATA_ROOT", str(tmp_path / "scratch" / "data"))
    monkeypatch.setenv("OUTPUT_ROOT", str(tmp_path / "scratch" / "outputs"))
    argv = ["--data-path", f"{ngc_workspace}/data/processed/vanilla/seapile",
            "--checkpoint-dir", f"{tmp_path}/logs/checkpoints/gemma3-1b-baseline",
            "--wandb-name", "gemma3-1b-baseline", "--max-steps", "10000"]  # fmt: skip
    _, overrides, notes = translate(argv)
    assert f"data.root={tmp_path}/scratch/data/processed" in overrides and "data.scheme=vanilla" in overrides
    assert f"run_dir={tmp_path}/scratch/outputs/runs/gemma3-1b-baseline" in overrides
    assert any("earlier pipeline mounted its logs" in note for note in notes)
    plan = load_plan([*overrides, "recipe=cpt_baseline"])
    # run_in_enroot.sh mounts the project and OUTPUT_ROOT: the run folder reaches the host, no refusal
    check_outputs_mounted(plan, f"{paths.REPO_ROOT}:{tmp_path}/scratch")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-step", "10"], "unknown option --max-step: plan settings are key=value overrides"),
        (["--max-steps"], "--max-steps needs a value"),
        (["--max-steps", "loop.steps=3"], "--max-steps needs a value"),
        (["--max-steps", "5", "loop.steps=3"], "both set loop.steps"),
        (["--wandb-name", "a", "run_name=b"], "both set run_name"),
        (["--log-dir", "/logs/wandb"], "written inside the run folder"),
        (["--resume-from", "/nowhere/step_1000.nemo"], "no such folder; give a Hugging Face model"),
    ],
)
def test_bad_flags_stop_with_what_to_type(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        rewrite_argv(["run_cpt.py", *argv])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_hydra_options_and_overrides_pass_through_and_the_overrides_print_once(capsys, monkeypatch):
    argv = ["run_cpt.py", "recipe=cpt_patok", "--max-steps", "7", "--cfg", "job"]
    assert rewrite_argv(argv) == ["run_cpt.py", "loop.steps=7", "recipe=cpt_patok", "--cfg", "job"]
    assert capsys.readouterr().err.count("loop.steps=7") == 1
    monkeypatch.setenv("RANK", "3")  # torchrun's other ranks stay quiet
    rewrite_argv(["run_cpt.py", "--max-steps", "7"])
    assert capsys.readouterr().err == ""


def test_run_cpt_takes_the_plans_command_as_written(processed, tmp_path):
    """The plan's Step 5 command (as a dry run): the overrides it stands for are printed, the plan resolved."""
    script = paths.REPO_ROOT / "training" / "nemo" / "run_cpt.py"
    run_dir = tmp_path / "logs" / "checkpoints" / "gemma3-1b-baseline"
    command = [sys.executable, str(script), "--data-path", str(processed / "vanilla" / "seapile")]
    command += [
        "--checkpoint-dir",
        str(run_dir),
        "--wandb-name",
        "gemma3-1b-baseline",
        "--max-steps",
        "10000",
    ]
    command += ["dry_run=true", f"output_root={tmp_path / 'out'}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"run_dir={run_dir} run_name=gemma3-1b-baseline loop.steps=10000" in done.stderr
    resolved = (run_dir / "plan" / "resolved_plan.yaml").read_text()
    assert "steps: 10000" in resolved and f"root: {processed}" in resolved
    assert "train.train_iters: 10000" in done.stdout


def test_a_run_folder_outside_the_containers_mounts_is_refused(tmp_path):
    plan = load_plan(
        ["recipe=cpt_baseline", f"output_root={tmp_path / 'out'}", "run_dir=/logs/checkpoints/x"]
    )
    check_outputs_mounted(plan, None)  # outside a container: nothing to check
    with pytest.raises(ValueError, match="/logs/checkpoints/x is not on a folder mounted into the container"):
        check_outputs_mounted(plan, f"{paths.REPO_ROOT}:{tmp_path / 'out'}")
    check_outputs_mounted(plan, f"{tmp_path / 'out'}:/logs")


def test_the_train_stage_typed_without_torchrun_says_what_to_type(tmp_path, monkeypatch):
    plan = load_plan(["recipe=cpt_baseline", f"output_root={tmp_path / 'out'}", "cluster.stage=train"])
    with pytest.raises(config.WeightVerificationError, match="cluster.stage=prepare") as refused:
        engine.run(plan)
    assert "torchrun --standalone --nproc-per-node 8 training/nemo/run_cpt.py" in str(refused.value)
    (Path(plan.cluster.import_dir) / config.VERIFIED_MARKER).parent.mkdir(parents=True)
    (Path(plan.cluster.import_dir) / config.VERIFIED_MARKER).write_text("{}")
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with pytest.raises(SystemExit, match="trains on 8 GPUs under torchrun, and this is one plain process"):
        engine.run(plan)


def test_the_train_stage_refuses_a_torchrun_of_another_size_than_the_checked_layout(tmp_path, monkeypatch):
    plan = load_plan(["recipe=cpt_baseline", f"output_root={tmp_path / 'out'}", "cluster.stage=train"])
    plan.cluster.nodes = 2
    (Path(plan.cluster.import_dir) / config.VERIFIED_MARKER).parent.mkdir(parents=True)
    (Path(plan.cluster.import_dir) / config.VERIFIED_MARKER).write_text("{}")
    monkeypatch.setenv("WORLD_SIZE", "8")  # one node's torchrun for a two-node plan
    with pytest.raises(PlanError, match="torchrun started 8 processes.* = 2 x 8 = 16 GPUs.*TRAIN_NODES"):
        engine.run(plan)
    monkeypatch.delenv("WORLD_SIZE")
    with pytest.raises(SystemExit, match="torchrun_nodes.sh --nodes 2 --gpus 8") as refused:
        engine.run(plan)
    assert "in a job of 2 nodes" in str(refused.value)


def test_a_preprocessing_job_says_where_the_plans_chunks_are(tmp_path, monkeypatch):
    """The plan splits into the checkout's data/chunks; with DATA_ROOT elsewhere in .env the jobs look there."""
    project = tmp_path / "project"
    (project / "data" / "chunks").mkdir(parents=True)
    (project / "data" / "chunks" / "chunk_01.jsonl").write_text('{"text": "Kumain ako."}\n')
    env = {
        "PROJECT_DIR": str(project),
        "DATA_ROOT": str(tmp_path / "scratch"),
        "LOG_DIR": str(tmp_path / "logs"),
    }
    jobs = render_jobs(paths.REPO_ROOT / "job_templates", tmp_path / "jobs", env)
    script = next(j for j in jobs if j.name == "preprocess_data_vanilla.pbs")
    monkeypatch.chdir(tmp_path)
    assert run_local(script, [1, 2], log_dir=tmp_path / "runlogs") == {1: 1, 2: 1}
    log = (tmp_path / "runlogs" / "preprocess_data_vanilla_1.log").read_text()
    assert f"set DATA_ROOT={project}/data in .env and rerun bash job_templates/setup_jobs.sh" in log
    log = (tmp_path / "runlogs" / "preprocess_data_vanilla_2.log").read_text()
    assert "chunk_02.jsonl not found: split the corpus first" in log


def test_the_docs_table_lists_every_flag_with_its_key():
    from morphcpt.plan.flags import FLAGS

    doc = (paths.REPO_ROOT / "docs" / "training-plan-commands.md").read_text(encoding="utf-8")
    listed = {}
    for flags, keys in re.findall(r"^\| (`--.*?) \| (`.*?) \|", doc, flags=re.MULTILINE):
        for flag, key in zip(
            re.findall(r"`(--[\w-]+)", flags), re.findall(r"`([\w.]+)`", keys), strict=False
        ):
            listed[flag] = key
    assert listed == FLAGS
