"""`make demo` end to end, shortened: every stage runs on the shipped sample and leaves what it promises."""

from __future__ import annotations

import json

import pytest

from morphcpt.demo import DemoConfig, run

SHORT_TRAINING = [
    "loop.steps=4",
    "optim.warmup_steps=1",
    "validation.interval=2",
    "checkpoint.interval=4",
    "logging.interval=2",
    "eeve.steps=[1,1,1,1,1,2,1]",
    "eeve.warmup_steps=[0,0,0,0,0,0,0]",
]


@pytest.mark.slow
def test_demo_runs_every_stage(tmp_path, capsys):
    cfg = DemoConfig(output_dir=tmp_path / "demo", eval_limit=4, train_overrides=SHORT_TRAINING)
    run(cfg)
    printed = capsys.readouterr().out
    for stage in range(1, 8):
        assert f"[{stage}/7]" in printed
    assert "text altered" in printed and "The same text in each scheme" in printed
    assert "| patok | patok | 4 |" in printed  # the comparison table: run, data it read, steps
    exports = cfg.output_dir / "exports"
    for name, scheme in [
        ("demo-base", "vanilla"),
        *((f"demo-cpt-{s}", s) for s in ("vanilla", "stochastok", "patok")),
    ]:
        metadata = json.loads((exports / name / "morphcpt_metadata.json").read_text())
        assert metadata["scheme"] == scheme and metadata["step"] == 4
    eeve = json.loads((exports / "demo-cpt-eeve" / "morphcpt_metadata.json").read_text())
    assert eeve["scheme"] == "eeve" and eeve["eeve"]["stages"] == [1, 2, 3, 4, 5, 6, 7]
    assert eeve["eeve"]["added_tokens"] == 256 and "| eeve | eeve | 8 |" in printed
    report = (cfg.output_dir / "report" / "report.md").read_text()
    assert "## Answer" in report and "**Answer" in report.split("## Answer", 1)[1]
    # stress is the one subset the demo can never generate: said once, calmly, never as a warning
    assert "**Warning" not in report and report.count("Not evaluated: pacute-stress") == 1
    assert all(
        (cfg.output_dir / "report" / "plots" / f"{p}.png").exists()
        for p in ("levels", "categories", "heatmap")
    )
