"""The training and export PBS templates render (morphcpt.chain.jobs conventions) into valid bash with the plan's
resources: one node, 8 GPUs, the walltime the training exits before, torchrun inside enroot."""

from __future__ import annotations

import re
import subprocess

import pytest

from morphcpt import paths
from morphcpt.chain.jobs import SETTINGS, derived_settings, render_template
from morphcpt.plan.recipes import cluster_runs

# Settings the training templates use beyond the data pipeline's (defaults proposed for morphcpt.chain.jobs.SETTINGS).
TRAINING_SETTINGS = {
    "OUTPUT_ROOT": "/shared/morphcpt/outputs",
    "TRAIN_NCPUS": "64",
    "TRAIN_NGPUS": "8",
    "TRAIN_MEM": "480gb",
    "TRAIN_WALLTIME": "24:00:00",
    "TRAIN_EXIT_MARGIN_MINUTES": "20",
    "AUTO_RESUBMIT": "0",
    "EXPORT_NCPUS": "16",
    "EXPORT_MEM": "128gb",
    "EXPORT_WALLTIME": "02:00:00",
}


def render(template: str, variant: dict) -> str:
    settings = derived_settings({**SETTINGS, **TRAINING_SETTINGS})
    text = (paths.REPO_ROOT / "job_templates" / template).read_text()
    return render_template(text, {**settings, **TRAINING_SETTINGS, **variant}, source=template)


@pytest.mark.parametrize("variant", cluster_runs(), ids=lambda v: v["VARIANT"])
def test_training_job_renders_to_valid_bash(variant, tmp_path):
    script = render("run_cpt.pbs", variant)
    path = tmp_path / f"run_cpt_{variant['VARIANT']}.pbs"
    path.write_text(script)
    assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
    directives = [line for line in script.splitlines() if line.startswith("#PBS")]
    assert "#PBS -l select=1:ncpus=64:ngpus=8:mem=480gb" in directives
    assert "#PBS -l walltime=24:00:00" in directives
    assert f'RECIPE="{variant["RECIPE"]}"' in script and '"recipe=$RECIPE"' in script
    assert "cluster.walltime=24:00:00" in script
    # torchrun through torchrun_nodes.sh: on one node, torchrun --standalone as before (tests/chain/test_multinode.py)
    assert re.search(r'torchrun_nodes.sh --nodes "1" --gpus "8" .*-- training/nemo/run_cpt.py', script, re.S)
    # the clock starts before anything else runs, and the train stage is told the minutes already used
    body = [line for line in script.splitlines() if line.strip() and not line.startswith("#")]
    assert body[0] == "JOB_START=$(date +%s)"
    assert '"cluster.elapsed_minutes=$ELAPSED_MINUTES"' in script
    assert script.index("ELAPSED_MINUTES=$((") > script.index("cluster.stage=prepare")
    # each job logs to its own file in the run folder, so a resubmitted job keeps the previous job's log
    assert 'tee -a "$RUN_DIR/logs/job_${PBS_JOBID:-local}.log"' in script
    # check (CPU, first minute) -> prepare (import + verify) -> train, each inside the container; the hf engine
    # (TRAIN_ENGINE=hf) is the other branch: its own check stage, then torchrun (torchrun_nodes.sh: one per node)
    assert script.count("training/nemo/run_in_enroot.sh") == 3
    assert script.count("training/nemo/torchrun_nodes.sh --nodes") == 2
    assert "engine=hf cluster.stage=check" in script
    assert '"cluster.gpu_memory=40GB" "cluster.gpu_type=A100"' in script
    assert 'if [[ "megatron" == hf ]]; then' in script
    assert '"data.num_chunks=20"' in script  # the run reads exactly the chunks the arrays wrote
    assert (
        script.index("cluster.stage=check")
        < script.index("cluster.stage=prepare")
        < script.index("cluster.stage=train")
    )
    # the weights and tokenizer may be local folders (offline nodes); every path the run writes is exported
    assert '"model.pretrained=$BASE_MODEL" "model.tokenizer=$TOKENIZER"' in script
    assert 'export OUTPUT_ROOT="/shared/morphcpt/outputs"' in script
    assert f'RUN_DIR="/shared/morphcpt/outputs/runs/{variant["RUN_NAME"]}"' in script  # stable: no job id
    assert f'qsub "$PROJECT_DIR/jobs/run_cpt_{variant["VARIANT"]}.pbs"' in script


def test_export_job_renders_to_valid_bash(tmp_path):
    variant = cluster_runs()[0]
    script = render("export.pbs", variant)
    path = tmp_path / "export.pbs"
    path.write_text(script)
    assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
    assert "ngpus=1" in script and "python -m morphcpt.export --run-dir" in script
    assert f"/runs/{variant['RUN_NAME']}" in script
