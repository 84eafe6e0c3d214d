"""PBS job scripts: strict template rendering, valid bash, and a local array run of the preprocessing job."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from morphcpt import paths
from morphcpt.chain import jobs
from morphcpt.corpus.split import split_jsonl

TEMPLATES = paths.REPO_ROOT / "job_templates"


def test_placeholders_are_strict_and_shell_variables_pass_through():
    text = 'echo ${NAME} $HOME $${PBS_ARRAY_INDEX:-} "$(date)" $$'
    assert jobs.render_template(text, {"NAME": "x"}) == 'echo x $HOME ${PBS_ARRAY_INDEX:-} "$(date)" $'
    with pytest.raises(KeyError, match="unknown placeholder"):
        jobs.render_template("${MISSING}", {"NAME": "x"})
    for secret in ("HF_TOKEN", "WANDB_API_KEY"):
        with pytest.raises(KeyError, match="secret"):
            jobs.render_template(f"${{{secret}}}", {secret: "abc"})
    assert (
        jobs.render_template("${TOKENIZER}", {"TOKENIZER": "google/gemma-3-1b-pt"}) == "google/gemma-3-1b-pt"
    )


def test_env_file_parsing(tmp_path):
    env = tmp_path / ".env"
    env.write_text('# comment\n\nexport A=1\nB="two words"\nC=nvcr.io#nvidia/nemo:25.09 # trailing\nD=\n')
    assert jobs.read_env(env) == {"A": "1", "B": "two words", "C": "nvcr.io#nvidia/nemo:25.09", "D": ""}
    env.write_text("not a setting\n")
    with pytest.raises(ValueError, match=":1:"):
        jobs.read_env(env)


def test_array_specs():
    assert jobs.parse_array("1-3") == [1, 2, 3]
    assert jobs.parse_array("1-10:4") == [1, 5, 9]
    assert jobs.parse_array("2,7") == [2, 7]
    with pytest.raises(ValueError):
        jobs.parse_array("a-b")


@pytest.fixture
def rendered(tmp_path):
    env = {
        "PROJECT_DIR": str(paths.REPO_ROOT),
        "DATA_ROOT": str(tmp_path / "data"),
        "LOG_DIR": str(tmp_path / "logs"),
        "TOKENIZER": str(paths.SAMPLE_TOKENIZER_DIR),
        "NUM_CHUNKS": "2",
        "PREPROCESS_NCPUS": "1",
        "HF_TOKEN": "hf_secret_value",
    }
    return tmp_path, jobs.render_jobs(TEMPLATES, tmp_path / "jobs", env)


def test_every_rendered_script_is_valid_bash_with_one_script_per_scheme(rendered):
    _, scripts = rendered
    names = {p.name for p in scripts}
    assert {f"preprocess_data_{s}.pbs" for s in jobs.scheme_names()} <= names
    assert {
        f"{job}_{run}.pbs" for job in ("run_cpt", "export") for run in ("baseline", "stochastok", "patok")
    } <= names
    assert set(jobs.scheme_names()) >= {"vanilla", "stochastok", "patok"}
    for script in scripts:
        subprocess.run(["bash", "-n", str(script)], check=True)
        text = script.read_text()
        assert "hf_secret_value" not in text and "${SCHEME}" not in text
    patok = next(p for p in scripts if p.name == "preprocess_data_patok.pbs").read_text()
    assert "#PBS -J 1-2" in patok and 'SCHEME="patok"' in patok and "chunk_%02d" in patok


def test_setup_jobs_renders_into_jobs_dir(tmp_path):
    env_file = tmp_path / "env"
    env_file.write_text(f"PROJECT_DIR={paths.REPO_ROOT}\nNUM_CHUNKS=120\n")
    result = subprocess.run(
        ["bash", str(TEMPLATES / "setup_jobs.sh")],
        env={**os.environ, "ENV_FILE": str(env_file), "JOBS_DIR": str(tmp_path / "jobs")},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "chunk_%03d" in (tmp_path / "jobs" / "preprocess_data_vanilla.pbs").read_text()


def test_job_refuses_to_run_outside_an_array(rendered):
    _, scripts = rendered
    env = {k: v for k, v in os.environ.items() if k != "PBS_ARRAY_INDEX"}
    result = subprocess.run(["bash", str(scripts[0])], env=env, capture_output=True, text=True)
    assert result.returncode == 2 and "qsub -J" in result.stderr


def test_a_task_killed_by_a_signal_fails_the_local_run(tmp_path, capsys):
    script = tmp_path / "job.pbs"
    script.write_text('#!/bin/bash\nif [ "$PBS_ARRAY_INDEX" = 2 ]; then kill -TERM $$; fi\necho done\n')
    codes = jobs.run_local(script, [1, 2], log_dir=tmp_path / "logs")
    assert codes == {1: 0, 2: -15}
    assert jobs.main(["run", str(script), "--array", "1-2", "--log-dir", str(tmp_path / "logs")]) == 1
    assert "job.pbs[2]: killed by SIGTERM" in capsys.readouterr().out
    assert jobs.exit_status({1: 0, 2: 0}) == 0 and jobs.exit_status({1: 3}) == 1


@pytest.mark.skipif(shutil.which("enroot") is not None, reason="enroot is installed here")
def test_run_in_enroot_without_enroot_needs_the_switch(tmp_path):
    script = paths.REPO_ROOT / "training" / "nemo" / "run_in_enroot.sh"
    env = {k: v for k, v in os.environ.items() if k != "MORPHCPT_NO_ENROOT"}
    result = subprocess.run(["bash", str(script), "true"], env=env, capture_output=True, text=True)
    assert result.returncode == 127 and "MORPHCPT_NO_ENROOT=1" in result.stderr
    env["MORPHCPT_NO_ENROOT"] = "1"
    result = subprocess.run(["bash", str(script), "pwd"], env=env, capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == str(paths.REPO_ROOT)


@pytest.mark.slow
def test_local_array_run_preprocesses_each_chunk(rendered, sample_corpus, monkeypatch):
    tmp_path, _ = rendered
    corpus = tmp_path / "small.jsonl"
    corpus.write_text("".join(sample_corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:40]))
    split_jsonl(corpus, tmp_path / "data" / "chunks", 2, holdout_lines=5)
    monkeypatch.chdir(tmp_path)
    codes = jobs.run_local(
        tmp_path / "jobs" / "preprocess_data_vanilla.pbs", [1, 2], parallel=2, no_enroot=True
    )
    logs = {i: (tmp_path / "logs" / f"preprocess_data_vanilla_{i}.log").read_text() for i in (1, 2)}
    assert codes == {1: 0, 2: 0}, logs
    for index in (1, 2):
        marker = tmp_path / "data" / "processed" / "vanilla" / f"chunk_0{index}.done.json"
        assert json.loads(marker.read_text())["documents"] > 0
        assert f"chunk_0{index}" in logs[index]
    # The vanilla array's first task also built the shared validation set from the held-out lines.
    validation = tmp_path / "data" / "processed" / "validation" / "validation.done.json"
    assert json.loads(validation.read_text())["documents"] == 5


def test_every_setting_of_env_example_reads_the_same_in_python_and_in_the_jobs_shell(tmp_path):
    """.env.example with every commented-out setting uncommented, as a user does: the shell (run_in_enroot.sh)
    exports exactly what Python parsed; inline comments are comments in both."""
    lines = (paths.REPO_ROOT / ".env.example").read_text().splitlines()
    uncommented = [re.sub(r"^#\s*(?=[A-Za-z_][A-Za-z0-9_]*=)", "", line) for line in lines]
    assert sum(a != b for a, b in zip(lines, uncommented, strict=True)) >= 10  # the HF_HOME line among them
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text("\n".join(uncommented) + "\n")
    (project / "src").symlink_to(paths.REPO_ROOT / "src")
    want = jobs.read_env(project / ".env")
    assert want["HF_HOME"] == "/scratch/me/hf-cache" and want["SEEDS"] == "1"
    assert want["TRAIN_OVERRIDES"] == "loop.steps=2000 checkpoint.interval=500"
    assert want["CONTAINER_IMAGE"] == "nvcr.io#nvidia/nemo:26.04"
    del want["PROJECT_DIR"]  # the job sets it (to this checkout), and what the job set wins
    env = {k: v for k, v in os.environ.items() if k not in want}
    env.update(MORPHCPT_NO_ENROOT="1", PROJECT_DIR=str(project))
    runner = paths.REPO_ROOT / "training" / "nemo" / "run_in_enroot.sh"
    show = "import json, os, sys; json.dump(dict(os.environ), sys.stdout)"
    done = subprocess.run(
        ["bash", str(runner), sys.executable, "-c", show], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert {key: seen.get(key) for key in want} == want
    # a setting the job already exported wins over .env
    done = subprocess.run(["bash", str(runner), sys.executable, "-c", show], env={**env, "SEEDS": "3"},
                          capture_output=True, text=True)  # fmt: skip
    assert json.loads(done.stdout)["SEEDS"] == "3"


def test_every_array_is_one_qsub_accepts_and_one_chunk_is_a_plain_job(tmp_path):
    for chunks in ("1", "2", "20"):
        rendered = jobs.render_jobs(
            paths.REPO_ROOT / "job_templates", tmp_path / chunks, {"NUM_CHUNKS": chunks}
        )
        for script in rendered:
            for first, last in re.findall(r"^#PBS -J (\d+)-(\d+)", script.read_text(), flags=re.M):
                assert int(first) < int(last), (
                    script
                )  # qsub refuses -J X-Y unless X < Y (OpenPBS chk_Jrange.c)
    one = tmp_path / "1" / "preprocess_data_vanilla.pbs"
    text = one.read_text()
    assert "#PBS -J" not in text and "^array_index^" not in text
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBS_")}
    done = subprocess.run(
        ["bash", str(one)], env={**env, "MORPHCPT_NO_ENROOT": "1"}, capture_output=True, text=True
    )
    assert "chunk_01.jsonl not found" in done.stderr  # the plain job is chunk 1, not "submit as an array"


def test_rendering_refuses_a_project_dir_that_is_not_a_checkout_here(tmp_path, capsys):
    env = tmp_path / ".env"
    env.write_text("PROJECT_DIR=/home/me/morphcpt\n")  # .env.example's value, left as it was
    with pytest.raises(SystemExit):
        jobs.main(["render", "--env", str(env), "--out", str(tmp_path / "jobs")])
    err = capsys.readouterr().err
    assert "PROJECT_DIR=/home/me/morphcpt is not a morphcpt checkout" in err and str(paths.REPO_ROOT) in err
    assert not (tmp_path / "jobs").exists()


def test_the_docs_submit_rendered_jobs_not_templates():
    pages = [paths.REPO_ROOT / "README.md", *sorted((paths.REPO_ROOT / "docs").glob("*.md"))]
    for page in pages:
        text = page.read_text()
        assert not re.search(r"(qsub|sbatch)( -\S+)* job_templates/", text), page
        assert "```bash\n```" not in text, page  # a fence opened twice


def test_the_configuration_page_lists_every_env_setting():
    """docs/configuration.md says 'every setting': every one the jobs render, .env.example names or the container
    runner passes on."""
    page = (paths.REPO_ROOT / "docs" / "configuration.md").read_text()
    table = page[page.index("## `.env`") : page.index("## The training plan")]
    example = (paths.REPO_ROOT / ".env.example").read_text()
    runner = (paths.REPO_ROOT / "training" / "nemo" / "run_in_enroot.sh").read_text()
    passed = (
        re.search(r"for name in (HF_TOKEN.*?); do", runner, flags=re.S).group(1).replace("\\", " ").split()
    )
    names = set(jobs.SETTINGS) | set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", example, flags=re.M))
    names |= {
        n for n in passed if not n.startswith(("PBS_", "SLURM_"))
    }  # set by the scheduler, not by a user
    missing = sorted(n for n in names if f"`{n}`" not in table)
    assert not missing, f"docs/configuration.md does not list {missing}"


def test_pretraining_from_scratch_reads_chunks_its_own_tokenizer_wrote_and_the_chain_can_make_them(tmp_path):
    from morphcpt.chain.stages import build_stages

    env = {"DATA_ROOT": "/shared/data", "OUTPUT_ROOT": "/shared/out"}
    rendered = {
        p.name: p.read_text() for p in jobs.render_jobs(paths.REPO_ROOT / "job_templates", tmp_path, env)
    }
    prep = rendered["preprocess_data_scratch.pbs"]
    assert (
        'export TOKENIZER="/shared/data/tokenizer"' in prep
        and 'PROCESSED_DIR="/shared/data/processed_scratch"' in prep
    )
    assert 'SCHEME="vanilla"' in prep
    scratch = rendered["pretrain_scratch.pbs"]
    # not $DATA_ROOT/processed: Gemma's ids, which the run's tokenizer fingerprint check refuses
    assert (
        '"data.root=/shared/data/processed_scratch"' in scratch and '/shared/data/processed"' not in scratch
    )
    settings = jobs.derived_settings({**jobs.SETTINGS, **env})
    assert not [s for s in build_stages(settings) if "scratch" in s.name]  # only when asked
    stages = {s.name: s for s in build_stages({**settings, "SCRATCH_PRETRAIN": "1"})}
    assert stages["preprocess_scratch"].inputs == ("split",)
    assert stages["preprocess_scratch"].script == "preprocess_data_scratch"
    assert stages["pretrain_scratch"].inputs == ("preprocess_scratch",)
