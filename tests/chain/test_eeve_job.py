"""The EEVE PBS job renders (morphcpt.chain.jobs conventions) into valid bash that runs the stages under torchrun with
the hf engine and the expanded tokenizer, and the eeve preprocessing array reads the expanded tokenizer."""

from __future__ import annotations

import re
import shlex
import subprocess

from morphcpt.chain.jobs import render_jobs
from morphcpt.plan.compose import load_plan


def test_eeve_jobs_render_to_valid_bash_with_the_expanded_tokenizer(tmp_path):
    env = {"OUTPUT_ROOT": "/shared/out", "DATA_ROOT": "/shared/data", "TRAIN_NGPUS": "4"}
    written = {p.name: p for p in render_jobs("job_templates", tmp_path, env)}
    script = written["run_cpt_eeve.pbs"].read_text()
    assert subprocess.run(["bash", "-n", str(written["run_cpt_eeve.pbs"])]).returncode == 0
    assert "#PBS -l select=1:ncpus=64:ngpus=4:mem=480gb" in script
    assert re.search(
        r'torchrun_nodes.sh --nodes "1" --gpus "4" .*-- training/nemo/run_cpt.py "\$\{PLAN\[@\]\}"',
        script,
        re.S,
    )
    plan_line = script[script.index("PLAN=(") + len("PLAN=(") : script.index(")", script.index("PLAN=("))]
    overrides = shlex.split(plan_line)
    assert "model.tokenizer=/shared/out/tokenizers/gemma3-1b-eeve" in overrides
    plan = load_plan(overrides)  # the job's plan resolves: eeve data, hf engine, seven stages
    assert (plan.engine, plan.data.scheme, plan.eeve.stages) == ("hf", "eeve", [1, 2, 3, 4, 5, 6, 7])
    assert plan.data.validation_prefix().name == "validation_eeve_text_document"
    assert plan.run_dir == "/shared/out/runs/gemma3-1b-eeve" and plan.run_dir in script
    prep = written["preprocess_data_eeve.pbs"].read_text()
    assert 'TOKENIZER="/shared/out/tokenizers/gemma3-1b-eeve"' in prep
    assert 'TOKENIZER="google/gemma-3-1b-pt"' in written["preprocess_data_patok.pbs"].read_text()
    assert '"scheme=$SCHEME"' in prep.split("validation=true", 1)[1]  # validation_eeve from task 1
