"""run_evaluation on damaged official files: empty, blank, cut, rows of the wrong shape, and cute in MCQ mode
(the release has no cute MCQ file) are one line each from the command, exit 1, never a traceback."""

from __future__ import annotations

import json
import shutil

import pytest

from morphcpt.errors import UserError
from morphcpt.evaluate.runner import EvalConfig, main, run_evaluation
from suite_paths import OFFICIAL

ROW = json.loads((OFFICIAL / "affixation_mcq.jsonl").read_text().splitlines()[0])


class Constant:
    def loglikelihood(self, requests):
        return [-1.0 for _ in requests]

    def generate_until(self, requests):
        return ["x" for _ in requests]


DAMAGED = {
    "empty": ("", "its file is empty"),
    "blank lines": ("\n\n", "its file is empty"),
    "cut": (json.dumps(ROW)[:80], "not valid JSON"),
    "no prompts": (json.dumps({k: v for k, v in ROW.items() if k != "prompts"}), "affixation_mcq.jsonl:1"),
    "prompts empty": (json.dumps({**ROW, "prompts": []}), "affixation_mcq.jsonl:1"),
    "a list": ("[1, 2]", "expected a JSON object"),
    "label past the options": (json.dumps({**ROW, "label": "E"}), "label 'E'"),
    "no text": (
        json.dumps({**ROW, "prompts": [{**ROW["prompts"][0], "text_en": None}]}),
        "has no 'en' prompt",
    ),
}


@pytest.mark.parametrize("damage", DAMAGED)
def test_a_damaged_official_file_is_one_sentence(tmp_path, damage, capsys):
    text, said = DAMAGED[damage]
    (tmp_path / "bench" / "pacute").mkdir(parents=True)
    (tmp_path / "bench" / "pacute" / "affixation_mcq.jsonl").write_text(text)
    cfg = EvalConfig(
        models=["org/model"],
        benchmarks=["pacute-affixation"],
        eval_mode="mcq",
        benchmark_dir=tmp_path / "bench",
        output_dir=tmp_path / "results",
    )
    with pytest.raises(UserError, match=said):
        run_evaluation(cfg, lambda spec, c: Constant())


def test_cute_in_mcq_mode_says_the_release_has_no_such_file(tmp_path, capsys):
    shutil.copytree(OFFICIAL, tmp_path / "bench" / "pacute")
    argv = ["--models", "org/model", "--benchmarks", "cute", "--eval-mode", "mcq"]
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--benchmark-dir", str(tmp_path / "bench"), "--output-dir", str(tmp_path / "results")])
    err = capsys.readouterr().err
    assert stop.value.code == 1 and "Traceback" not in err
    assert "cute has no MCQ file (the release scores cute generatively only" in err
    assert len([line for line in err.splitlines() if "error:" in line]) == 1
