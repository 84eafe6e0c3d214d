"""verify_setup: one screen of checks, each failure with its fix, non-zero exit when something required is
missing, and secrets never printed."""

from __future__ import annotations

from morphcpt.chain.setup_check import main, render, run_checks


def test_workstation_is_ready_without_cluster_tools(tmp_path, capsys):
    assert main(["--env", str(tmp_path / "missing.env")]) == 0
    out = capsys.readouterr().out
    assert "[ ok ] sample tokenizer" in out and "[ ok ] package torch" in out
    assert "enroot" not in out  # cluster-only checks stay out of a workstation's screen
    assert len(out.splitlines()) < 40


def test_cluster_check_fails_with_fixes_and_never_prints_secrets(tmp_path, capsys):
    env = tmp_path / ".env"
    env.write_text(
        f"HF_TOKEN=hf_TopSecretValue123\nWANDB_API_KEY=wandb-secret-456\nPROJECT_DIR={tmp_path}\n"
        f"DATA_ROOT={tmp_path / 'nowhere'}\nLOG_DIR={tmp_path}\nCONTAINER_SQSH={tmp_path / 'nemo.sqsh'}\n"
    )
    assert main(["--cluster", "--env", str(env)]) == 1
    out = capsys.readouterr().out
    assert "TopSecretValue" not in out and "wandb-secret" not in out
    assert "[ ok ] HF_TOKEN: set" in out and "[ ok ] .env PROJECT_DIR" in out
    assert "[FAIL] .env DATA_ROOT" in out and "[FAIL] container image" in out
    assert "fix: bash training/nemo/setup/setup_enroot.sh" in out


def test_base_model_from_a_local_folder(tiny_gemma3, tmp_path):
    env = tmp_path / ".env"
    env.write_text(f"TOKENIZER={tiny_gemma3}\n")
    checks = {c.name: c for c in run_checks(cluster=False, env_file=env)}
    assert checks["base model"].ok and "local folder" in checks["base model"].detail
    assert "ready" in render(list(checks.values())).splitlines()[-1]


def test_missing_base_model_fix_uses_the_current_hf_cli(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no network: the id is simply not cached
    env = tmp_path / ".env"
    env.write_text("TOKENIZER=nobody/not-a-cached-model\n")
    base = {c.name: c for c in run_checks(cluster=False, env_file=env)}["base model"]
    assert not base.ok
    # `huggingface-cli` is deprecated; the fix must be the command .env.example shows
    assert base.fix.startswith("hf download nobody/not-a-cached-model") and "huggingface-cli" not in base.fix


def test_the_kernels_check_reports_a_missing_compiler_as_a_warning(tmp_path, monkeypatch):
    def kernels_check():
        (check,) = [
            c for c in run_checks(cluster=False, env_file=tmp_path / ".env") if c.name == "compiled kernels"
        ]
        return check

    monkeypatch.setenv("MORPHCPT_CACHE_DIR", str(tmp_path / "cache"))  # nothing built yet
    monkeypatch.setenv("CC", "false")
    check = kernels_check()
    assert not check.ok and not check.required and "false failed" in check.detail
    assert "[warn] compiled kernels" in render([check]) and "fix: install a C compiler" in render([check])
    monkeypatch.delenv("CC")
    check = kernels_check()
    assert check.ok and check.detail.startswith(str(tmp_path / "cache" / "native"))


def test_cluster_check_plans_the_cpt_run_on_gpu_memory(tmp_path):
    from morphcpt.chain.setup_check import check_gpu_plan

    checks = {c.name: c for c in check_gpu_plan({})}  # no .env: the A100 40GB default
    assert checks["GPU memory plan"].ok and "the defaults" in checks["GPU memory plan"].detail
    assert checks["CPT memory"].ok and "19.5 of 38.0 GiB" in checks["CPT memory"].detail
    small = {
        c.name: c
        for c in check_gpu_plan({"GPU_MEMORY": "16GB", "TRAIN_OVERRIDES": "loop.micro_batch_size=4"})
    }
    assert not small["CPT memory"].ok
    assert (
        "does not fit one A100 16GB" in small["CPT memory"].detail and "What fits" in small["CPT memory"].fix
    )
    wrong = {c.name: c for c in check_gpu_plan({"GPU_MEMORY": "lots"})}
    assert (
        not wrong["GPU memory plan"].ok
        and "GPU_MEMORY must look like 40GB" in wrong["GPU memory plan"].detail
    )


def test_cluster_check_plans_the_run_on_every_node(monkeypatch):
    from morphcpt.chain.setup_check import check_gpu_plan

    monkeypatch.setenv("PATH", "/nonexistent")  # no pbsdsh here: a warning, not a failure
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    two = {c.name: c for c in check_gpu_plan({"TRAIN_NODES": "2"})}
    assert two["training layout"].ok
    assert two["training layout"].detail == "2 node(s) x 8 GPUs, DP 16, grad accumulation 8"
    assert two["CPT memory"].ok
    launcher = two["multi-node launcher"]
    assert not launcher.ok and not launcher.required and "pbsdsh not on PATH here" in launcher.detail
    three = {c.name: c for c in check_gpu_plan({"TRAIN_NODES": "3"})}
    assert not three["training layout"].ok and "CPT memory" not in three
    assert "3 node(s) x 8 GPUs: global batch 256 is not a multiple of micro batch x DP = 48" in (
        three["training layout"].detail
    )
    assert "choose TRAIN_NODES" in three["training layout"].fix
    slurm = {
        c.name: c for c in check_gpu_plan({"TRAIN_NODES": "2", "SCHEDULER": "slurm", "TRAIN_ENGINE": "hf"})
    }
    assert slurm["training layout"].detail == "2 node(s) x 8 GPUs, 16 data-parallel ranks"
    assert (
        "srun not on PATH here (it starts one torchrun on each of the 2 nodes)"
        in slurm["multi-node launcher"].detail
    )
    assert "command -v srun" in slurm["multi-node launcher"].fix
