"""submit_pipeline: fake qsub/sbatch/qstat/squeue on PATH record submissions; dependencies are exactly inputs."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from morphcpt import paths
from morphcpt.chain import jobs, local, pipeline, scheduler

FAKE = """#!/bin/bash
# records its arguments; prints a new id; fails on the script named in $FAKE_REJECT
echo "$(basename "$0") $*" >> "$FAKE_LOG"
for arg in "$@"; do [[ -n "${FAKE_REJECT:-}" && "$arg" == *"$FAKE_REJECT"* ]] && { echo "qsub: bad resource" >&2; exit 3; }; done
n=$(wc -l < "$FAKE_LOG")
case "$(basename "$0")" in qsub) echo "$n.pbs01";; sbatch) echo "$n";; qstat) [[ -n "${FAKE_QUEUED:-}" ]] && echo "    job_state = Q" || exit 1;; squeue) exit 1;; esac
"""


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("qsub", "sbatch", "qstat", "squeue"):
        (bin_dir / name).write_text(FAKE)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "submitted.log"))
    env = tmp_path / ".env"
    env.write_text(
        f"DATA_ROOT={tmp_path}/data\nOUTPUT_ROOT={tmp_path}/out\nLOG_DIR={tmp_path}/logs\nNUM_CHUNKS=2\n"
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def submitted(tmp_path) -> list[str]:
    log = tmp_path / "submitted.log"
    return (
        [line for line in log.read_text().splitlines() if line.split()[0] in {"qsub", "sbatch"}]
        if log.exists()
        else []
    )


@pytest.mark.parametrize(
    ("schemes", "seeds"),
    [
        (["vanilla", "patok"], 1),
        (["eeve", "patok", "stochastok", "vanilla"], 1),
        (["eeve", "patok", "vanilla"], 2),
    ],
)
def test_every_stage_waits_for_exactly_its_inputs(cluster, schemes, seeds):
    if seeds > 1:
        with open(".env", "a") as env:
            env.write(f"SEEDS={seeds}\n")
    assert pipeline.main(["--env", ".env", "--schemes", *schemes]) == 0
    lines = submitted(cluster)
    ids = {
        line.split()[-1].rsplit("/", 1)[-1].removesuffix(".pbs"): f"{n}.pbs01"
        for n, line in enumerate(lines, 1)
    }
    settings = jobs.derived_settings({**jobs.SETTINGS, **jobs.read_env(".env")})
    stages = pipeline.build_stages(settings, schemes)  # built once: each build composes every run's plan
    script_of = {s.name: s.script for s in stages}
    for stage in stages:
        line = next(line for line in lines if line.endswith(f"/{stage.script}.pbs"))
        waits_for = {
            ids[f"cpt_done_{name[4:]}"] if name.startswith("cpt_") else ids[script_of[name]]
            for name in stage.inputs
        }
        shown = set(line.split("depend=afterok:")[1].split()[0].split(":")) if "depend=" in line else set()
        assert shown == waits_for, (stage.name, line)
    # the gate is held, and the training run knows which job to release when it completes
    gate = next(line for line in lines if "cpt_done_patok" in line)
    assert " -h " in gate
    release = cluster / "out" / "runs"
    assert any(p.read_text().strip() == ids["cpt_done_patok"] for p in release.glob("*/release_on_complete"))
    if (
        seeds > 1
    ):  # seed 1: patok's own data, vanilla's and eeve's shared; its own runs and exports, all evaluated
        names = {stage.name: stage for stage in stages}
        assert names["cpt_patok_seed1"].inputs == ("preprocess_patok_seed1", "preprocess_vanilla")
        assert names["cpt_baseline_seed1"].inputs == ("preprocess_vanilla",)
        assert names["cpt_eeve_seed1"].inputs == ("preprocess_eeve",)
        assert "preprocess_vanilla_seed1" not in names and "preprocess_eeve_seed1" not in names
        assert {"export_patok_seed1", "export_baseline_seed1", "cpt_eeve_seed1"} <= set(
            names["evaluate"].inputs
        )
        script = (cluster / "jobs" / "preprocess_data_patok_seed1.pbs").read_text()
        assert '"replicate=$REPLICATE"' in script and 'REPLICATE="1"' in script
        run = (cluster / "jobs" / "run_cpt_patok_seed1.pbs").read_text()
        assert '"data.replicate=1"' in run and "/runs/gemma3-1b-patok-seed1" in run


def test_the_pilot_chain_runs_the_pilot_recipes_on_gemma3_270m(cluster, capsys):
    args = [
        "--env",
        ".env",
        "--recipes",
        "pilot",
        "--seeds",
        "2",
        "--dry-run",
        "--schemes",
        "vanilla",
        "patok",
    ]
    assert pipeline.main(args) == 0
    out = capsys.readouterr().out
    assert "cpt_patok_seed1" in out and "preprocess_patok_seed1" in out and not submitted(cluster)
    script = (cluster / "jobs" / "run_cpt_patok_seed1.pbs").read_text()
    assert 'RECIPE="pilot_patok"' in script and 'export BASE_MODEL="google/gemma-3-270m"' in script
    assert "/runs/gemma3-270m-patok-seed1" in script and '"data.replicate=1"' in script
    with pytest.raises(SystemExit):
        pipeline.main(["--env", ".env", "--seeds", "0", "--dry-run"])
    assert "--seeds must be 1 or more" in capsys.readouterr().err


def test_a_rerun_with_more_seeds_evaluates_and_reports_again(cluster):
    """The evaluation is done when every run of the chain has results; the report when it is newer than that."""
    (cluster / ".env").write_text((cluster / ".env").read_text() + "SEEDS=2\n")
    settings = jobs.derived_settings({**jobs.SETTINGS, **jobs.read_env(".env")})
    stages = {stage.name: stage for stage in pipeline.build_stages(settings, ["vanilla", "patok"])}
    results = cluster / "out" / "results"
    (results / "analysis").mkdir(parents=True)
    (results / "analysis" / "report.md").write_text("old report")
    os.utime(results / "analysis" / "report.md", (1, 1))
    (results / "evaluation.done").touch()  # done once, with one seed
    for name in ("gemma3-1b-baseline", "gemma3-1b-patok"):
        (results / name).mkdir()
        (results / name / "hierarchical-level2_mcq.json").write_text("{}")
    assert "gemma3-1b-baseline-seed1" in stages["evaluate"].check()
    assert "older than the last evaluation" in stages["analyze"].check()
    for name in ("gemma3-1b-baseline-seed1", "gemma3-1b-patok-seed1"):
        (results / name).mkdir()
        (results / name / "hierarchical-level2_mcq.json").write_text("{}")
    assert stages["evaluate"].check() is None and stages["analyze"].check() is not None
    (results / "analysis" / "report.md").touch()
    assert stages["analyze"].check() is None


def test_dry_run_submits_nothing_and_a_rerun_only_what_is_left(cluster):
    assert pipeline.main(["--env", ".env", "--dry-run", "--to", "split"]) == 0
    assert submitted(cluster) == []
    (cluster / "data" / "corpora").mkdir(parents=True)
    corpus = cluster / "data" / "corpora" / "seapile-v2-filipino.jsonl"
    corpus.write_text("{}\n")
    corpus.with_name(corpus.name + ".done").write_text("3\n")  # download finished: the corpus and its size
    assert pipeline.main(["--env", ".env", "--to", "split"]) == 0
    assert [line.split()[-1].rsplit("/", 1)[-1] for line in submitted(cluster)] == ["split.pbs"]


def test_a_rejected_job_stops_the_chain_which_resumes(cluster, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_REJECT", "preprocess_data_patok")
    assert pipeline.main(["--env", ".env", "--schemes", "patok", "--to", "preprocess"]) == 1
    err = capsys.readouterr().err
    assert "qsub: bad resource" in err and "rerun" in err
    assert not any("preprocess_data_vanilla" in line for line in submitted(cluster))
    monkeypatch.delenv("FAKE_REJECT")
    (cluster / "submitted.log").unlink()
    state = json.loads((cluster / "logs" / "pipeline" / "jobs_pbs.json").read_text())
    assert set(state) == {"download", "split", "benchmarks"}
    monkeypatch.setenv("FAKE_QUEUED", "1")  # the jobs submitted before are still in the queue
    assert pipeline.main(["--env", ".env", "--schemes", "patok", "--to", "preprocess"]) == 0
    names = [line.split()[-1].rsplit("/", 1)[-1] for line in submitted(cluster)]
    assert names == ["preprocess_data_patok.pbs", "preprocess_data_vanilla.pbs"]
    assert all("depend=afterok:2.pbs01" in line for line in submitted(cluster))


def test_bad_input_is_a_clear_error(cluster, capsys, monkeypatch):
    assert pipeline.main(["--env", ".env", "--from", "nonsense"]) == 1
    assert "unknown stage 'nonsense'" in capsys.readouterr().err
    assert pipeline.main(["--env", ".env", "--from", "export", "--to", "split"]) == 1
    assert "comes after" in capsys.readouterr().err
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert pipeline.main(["--env", ".env", "--scheduler", "slurm"]) == 1
    assert "sbatch not found" in capsys.readouterr().err


def test_the_chain_submits_multi_node_runs_and_the_local_runner_refuses_them(cluster, capsys):
    with open(cluster / ".env", "a") as env:
        env.write("TRAIN_NODES=2\n")
    assert pipeline.main(["--env", ".env", "--schemes", "patok", "--to", "cpt"]) == 0
    out = capsys.readouterr().out
    assert "each CPT run trains on 2 nodes of 8 GPUs" in out
    assert re.search(r"cpt_patok +memory: [\d.]+ of 38.0 GiB per GPU \(megatron", out)  # planned at DP 16
    [line] = [line for line in submitted(cluster) if line.endswith("/run_cpt_patok.pbs")]
    script = (cluster / "jobs" / "run_cpt_patok.pbs").read_text()
    assert (
        "#PBS -l select=2:" in script and "#PBS -l place=scatter" in script and '"cluster.nodes=2"' in script
    )
    assert pipeline.main(["--local", "--env", ".env", "--schemes", "patok"]) == 1
    assert "TRAIN_NODES=2 (.env) trains each run across that many nodes" in capsys.readouterr().err
    (cluster / "submitted.log").unlink()
    (cluster / "logs" / "pipeline" / "jobs_pbs.json").unlink()
    with open(cluster / ".env", "a") as env:
        env.write("TRAIN_NODES=3\n")  # 24 GPUs cannot split the global batch of 256
    assert pipeline.main(["--env", ".env", "--schemes", "patok", "--to", "cpt"]) == 1
    err = capsys.readouterr().err
    assert "cpt_patok cannot split its global batch over TRAIN_NODES=3 x TRAIN_NGPUS=8 GPUs" in err
    assert "nothing was submitted" in err and submitted(cluster) == []


def test_slurm_scripts_are_valid_bash_with_slurm_variables(tmp_path):
    env = {"SCHEDULER": "slurm", "LOG_DIR": str(tmp_path / "logs"), "NUM_CHUNKS": "3"}
    scripts = jobs.render_jobs(paths.REPO_ROOT / "job_templates", tmp_path / "jobs", env)
    assert scripts and all(p.suffix == ".slurm" for p in scripts)
    for script in scripts:
        subprocess.run(["bash", "-n", str(script)], check=True)
        text = script.read_text()
        assert "#PBS" not in text and "PBS_ARRAY_INDEX" not in text and "qsub" not in text
    prep = (tmp_path / "jobs" / "preprocess_data_patok.slurm").read_text()
    assert "#SBATCH --array=1-3" in prep and "$SLURM_ARRAY_TASK_ID" in prep
    cpt = (tmp_path / "jobs" / "run_cpt_patok.slurm").read_text()
    assert (
        "#SBATCH --gres=gpu:8" in cpt
        and "scontrol release" in cpt
        and 'sbatch "$PROJECT_DIR/jobs/run_cpt_patok.slurm"' in cpt
    )
    with pytest.raises(scheduler.SchedulerError, match="no Slurm equivalent"):
        scheduler.to_slurm("#!/bin/bash\n#PBS -W sandbox=PRIVATE\n")


def test_local_runner_sets_slurm_variables(tmp_path):
    script = tmp_path / "job.slurm"
    script.write_text(
        '#!/bin/bash\n#SBATCH --array=1-2\necho "task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID"\n'
    )
    assert jobs.run_local(script, [1, 2], log_dir=tmp_path / "logs") == {1: 0, 2: 0}
    assert (tmp_path / "logs" / "job_2.log").read_text().startswith("task 2 of ")


def test_pyxis_runs_the_command_in_an_srun_step_with_the_same_mounts(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text('#!/bin/bash\nprintf "%s\\n" "$@"\n')
    (bin_dir / "srun").chmod(0o755)
    env = {
        **{k: v for k, v in os.environ.items() if k != "MORPHCPT_NO_ENROOT"},
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "CONTAINER_RUNTIME": "pyxis",
        "PROJECT_DIR": str(paths.REPO_ROOT),
        "DATA_ROOT": str(tmp_path / "data"),
        "CONTAINER_SQSH": "/images/nemo.sqsh",
    }
    script = paths.REPO_ROOT / "training" / "nemo" / "run_in_enroot.sh"
    result = subprocess.run(["bash", str(script), "python", "-V"], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    args = result.stdout.splitlines()
    assert "--container-image=/images/nemo.sqsh" in args and args[-2:] == ["python", "-V"]
    mounts = next(a for a in args if a.startswith("--container-mounts=")).split("=", 1)[1].split(",")
    assert f"{paths.REPO_ROOT}:{paths.REPO_ROOT}" in mounts and f"{tmp_path}/data:{tmp_path}/data" in mounts


@pytest.mark.slow
def test_the_local_runner_runs_the_chain_on_the_sample_in_order_to_the_report(tmp_path, capsys):
    out, schemes = tmp_path / "chain", ["vanilla", "patok", "eeve"]
    assert pipeline.main(["--local", "--sample", "--output-dir", str(out), "--schemes", *schemes]) == 0
    printed = capsys.readouterr().out
    ran = [line.split()[0] for line in printed.splitlines() if " ran in " in line]
    settings = jobs.derived_settings({**jobs.SETTINGS, **local.sample_settings(out)})
    stages = pipeline.build_stages(settings, schemes)
    assert sorted(ran) == sorted(stage.name for stage in stages)  # every stage, each once
    for stage in stages:  # each after every stage it reads from
        assert all(ran.index(name) < ran.index(stage.name) for name in stage.inputs), stage.name
    progress = json.loads((out / "runs" / "gemma3-1b-patok" / "progress.json").read_text())
    assert progress["complete"] and progress["iteration"] == progress["steps"] == 20
    report = (out / "results" / "analysis" / "report.md").read_text()
    for model in ("gemma3-1b-baseline", "gemma3-1b-patok", "gemma3-1b-eeve"):
        assert f"| {model} |" in report
    assert f"report: {out / 'results' / 'analysis' / 'report.md'}" in printed
    # a rerun finds everything on disk and runs nothing
    assert pipeline.main(["--local", "--sample", "--output-dir", str(out), "--schemes", *schemes]) == 0
    rerun = capsys.readouterr().out
    assert " ran in " not in rerun and rerun.count("done (its outputs are on disk)") == len(stages)


@pytest.mark.slow
def test_a_two_seed_chain_runs_every_arm_and_seed_to_a_report_with_the_seed_variance(
    tmp_path, capsys, monkeypatch
):
    """`--local --sample --seeds 2`, kept small: two arms, 4 steps a run, hierarchical MCQ only."""
    full = local.sample_settings

    def small(output_dir):
        settings = full(output_dir)
        settings["TRAIN_OVERRIDES"] = settings["TRAIN_OVERRIDES"].replace("loop.steps=20", "loop.steps=4")
        for key in ("validation.interval", "checkpoint.interval"):
            settings["TRAIN_OVERRIDES"] = settings["TRAIN_OVERRIDES"].replace(f"{key}=20", f"{key}=4")
        settings["EVAL_ARGS"] += " --benchmarks hierarchical --eval-mode mcq"
        return settings

    monkeypatch.setattr(local, "sample_settings", small)
    out = tmp_path / "chain"
    args = ["--local", "--sample", "--seeds", "2", "--output-dir", str(out), "--schemes", "vanilla", "patok"]
    assert pipeline.main(args) == 0
    ran = [line.split()[0] for line in capsys.readouterr().out.splitlines() if " ran in " in line]
    assert {
        "preprocess_patok_seed1",
        "cpt_patok_seed1",
        "cpt_baseline_seed1",
        "export_baseline_seed1",
    } <= set(ran)
    assert "preprocess_vanilla_seed1" not in ran  # vanilla's ids do not depend on the seed
    data = out / "data" / "processed"
    assert (data / "patok" / "seed1" / "chunk_01.done.json").exists() and not (
        data / "vanilla" / "seed1"
    ).exists()
    meta = json.loads((out / "exports" / "gemma3-1b-patok-seed1" / "morphcpt_metadata.json").read_text())
    assert meta["replicate"] == 1 and "/patok/seed1/" in meta["data"]["chunks"][0]
    report = (out / "results" / "analysis" / "report.md").read_text()
    assert "Seeds per arm: baseline 2, Patok CPT 2" in report
    design = report.split("## Design")[1].split("## Details")[0]
    assert "Variances (" in design and "Run means" in design and "Minimum detectable difference" in design
    assert pipeline.main(args) == 0 and " ran in " not in capsys.readouterr().out  # a rerun finds it all done


def test_the_local_runner_stops_at_a_failed_job_and_shows_its_log(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(
        f"DATA_ROOT={tmp_path}/data\nOUTPUT_ROOT={tmp_path}/out\nLOG_DIR={tmp_path}/logs\n"
        f"CORPUS_SOURCE={tmp_path}/missing.jsonl\nNUM_CHUNKS=2\n"
    )
    assert pipeline.main(["--local", "--env", ".env", "--to", "split"]) == 1
    err = capsys.readouterr().err
    assert "download failed (exit 1)" in err and "missing.jsonl" in err and "rerun the same command" in err
    assert not (tmp_path / "data" / "chunks").exists()  # nothing after the failure ran


def test_the_local_runner_runs_slurm_scripts_too(tmp_path, capsys):
    out = tmp_path / "chain"
    args = ["--local", "--sample", "--scheduler", "slurm", "--output-dir", str(out), "--to", "split"]
    assert pipeline.main(args) == 0
    assert (out / "jobs" / "split.slurm").exists() and not list((out / "jobs").glob("*.pbs"))
    manifest = json.loads((out / "data" / "chunks" / "manifest.json").read_text())
    assert len(manifest["chunks"]) == 2 and manifest["validation"]["lines"] == 160
    with pytest.raises(SystemExit):
        pipeline.main(["--sample"])  # --sample without --local is refused
    assert "add --local" in capsys.readouterr().err


def test_base_model_wires_its_folder_as_model_and_tokenizer_of_every_stage(tmp_path, capsys):
    base = tmp_path / "base"
    with pytest.raises(SystemExit):
        pipeline.main(["--local", "--base-model", str(base)])  # without --sample
    assert "add --local --sample" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        pipeline.main(["--local", "--sample", "--base-model", str(base)])  # no model there
    assert "not a Hugging Face model folder" in capsys.readouterr().err
    settings = jobs.derived_settings({**jobs.SETTINGS, **local.base_model_settings(tmp_path / "out", base)})
    assert settings["BASE_MODEL"] == settings["TOKENIZER"] == str(base.resolve())
    stages = {stage.name: stage for stage in pipeline.build_stages(settings, ["patok", "eeve"])}
    plan = pipeline.training_plan_overrides(settings, stages["cpt_patok"])
    assert f"model.pretrained={base.resolve()}" in plan and f"model.tokenizer={base.resolve()}" in plan
    assert "recipe=pilot_patok" in plan and "model=tiny" not in " ".join(plan)
    jobs_dir = tmp_path / "jobs"
    jobs.render_jobs(paths.REPO_ROOT / "job_templates", jobs_dir, settings)
    assert f'--base "{base.resolve()}"' in (jobs_dir / "eeve_tokenizer.pbs").read_text()
    assert f'TOKENIZER="{base.resolve()}"' in (jobs_dir / "preprocess_data_patok.pbs").read_text()


@pytest.mark.slow
def test_the_chain_runs_from_a_base_model_folder_to_the_report(tmp_path, capsys):
    """`--local --sample --base-model DIR` on the tiny model saved as an HF folder standing in for a real one:
    every run starts from its weights (the first loss is the base's, not a fresh model's) and is evaluated."""
    from morphcpt.modeling.models import save_tiny_gemma3

    base = save_tiny_gemma3(paths.SAMPLE_TOKENIZER_DIR, tmp_path / "base", seed=3)
    out, schemes = tmp_path / "chain", ["vanilla", "eeve"]
    args = ["--local", "--sample", "--base-model", str(base), "--output-dir", str(out), "--schemes", *schemes]
    assert pipeline.main(args) == 0
    assert not (out / "base-model").exists()  # no tiny random base was made
    run = out / "runs" / "gemma3-270m-baseline"
    config = (run / "config.yaml").read_text()
    assert f"pretrained: {base}" in config and f"tokenizer: {base}" in config
    meta = json.loads((out / "exports" / "gemma3-270m-eeve" / "morphcpt_metadata.json").read_text())
    assert str(base) in json.dumps(meta)
    report = (out / "results" / "analysis" / "report.md").read_text()
    assert "| gemma3-270m-baseline |" in report and "| gemma3-270m-eeve |" in report


def test_the_pilot_chain_has_one_eeve_run_with_its_own_job():
    """`pilot_eeve` is the EEVE job's recipe, never also a plain CPT run (which had an export stage nobody wrote)."""
    settings = jobs.derived_settings({**jobs.SETTINGS, "RECIPES": "pilot"})
    names = [stage.name for stage in pipeline.build_stages(settings, ["vanilla", "eeve"])]
    assert names.count("cpt_eeve") == 1 and "export_eeve" not in names and "export_baseline" in names
