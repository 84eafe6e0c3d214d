"""The training plan composed: Hydra reads `conf/train.yaml` and a recipe into the schema (`schema.py`), in struct
mode, so a misspelt key is an error; a run folder's `config.yaml` is read back; a dry run is written down.

    plan = load_plan(["recipe=cpt_patok", "engine=hf"])     # from Python (tests, the demo)
    python training/nemo/run_cpt.py recipe=cpt_patok         # from the command line (Hydra app)

Paths in the YAML may use `${oc.env:VAR,default}` and `${mc.path:NAME}` (a `morphcpt.paths` constant, e.g.
`${mc.path:SAMPLE_TOKENIZER_DIR}`); `resolve_paths` makes every path absolute once, so a run folder records where
things really were.
"""

from __future__ import annotations

from pathlib import Path

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from morphcpt import paths
from morphcpt.plan.schema import CPTPlan, validate


class OutputsNotMounted(ValueError):
    """A run would write where the host never sees it (inside the container)."""


def check_outputs_mounted(plan: CPTPlan, mounts: str | None) -> None:
    """Inside the container (`training/nemo/run_in_enroot.sh` lists the host folders it mounted, colon-separated,
    in MORPHCPT_MOUNTS), refuse a run folder or output root outside them: what a run writes there (checkpoints,
    progress.json, imported weights) would stay inside the container and never reach the host."""
    if not mounts:
        return
    mounted = [Path(m) for m in mounts.split(":") if m]
    for key, value in (("run_dir", plan.run_dir), ("output_root", plan.output_root)):
        path = Path(value)
        if not any(path == m or m in path.parents for m in mounted):
            raise OutputsNotMounted(
                f"{key} {path} is not on a folder mounted into the container ({', '.join(map(str, mounted))}): "
                "what the run writes there would stay inside the container. Put it under OUTPUT_ROOT, or add its "
                "host folder (it must exist on the host) to MORPHCPT_EXTRA_MOUNTS in .env"
            )


def resolve_paths(plan: CPTPlan) -> CPTPlan:
    """Make every filesystem path absolute (relative to the current directory); Hub ids stay as they are."""
    plan.output_root = str(Path(plan.output_root).resolve())
    plan.run_dir = str(Path(plan.run_dir).resolve())
    plan.data.root = str(Path(plan.data.root).resolve())
    plan.cluster.import_dir = str(Path(plan.cluster.import_dir).resolve())
    for attr in ("pretrained", "tokenizer"):
        value = getattr(plan.model, attr)
        if value and Path(value).exists():
            setattr(plan.model, attr, str(Path(value).resolve()))
    return plan


def _mc_path(name: str) -> str:
    return str(getattr(paths, name))


def register() -> None:
    """Register the schema (`train_schema`) and the `mc.path` resolver; idempotent."""
    if not OmegaConf.has_resolver("mc.path"):
        OmegaConf.register_new_resolver("mc.path", _mc_path)
    ConfigStore.instance().store(name="train_schema", node=CPTPlan)


def replicate_name(run_name: str, replicate: int) -> str:
    """Replicate k's run name: the arm's own for seed 0, `<run_name>-seed<k>` after (runs, exports, W&B)."""
    return f"{run_name}-seed{replicate}" if replicate else run_name


def _apply_replicate(cfg) -> None:
    """Seed k >= 1 of an arm: its own run name (and so run folder) and seeds k above the arm's."""
    k = cfg.data.replicate
    if isinstance(k, int) and k > 0:
        cfg.run_name = replicate_name(cfg.run_name, k)
        cfg.data.seed = cfg.data.seed + k
        cfg.loop.seed = cfg.loop.seed + k


def plan_from_config(cfg) -> CPTPlan:
    """A composed Hydra config (DictConfig) -> a validated CPTPlan with absolute paths."""
    _apply_replicate(cfg)
    plan = OmegaConf.to_object(cfg)
    if not isinstance(plan, CPTPlan):
        raise TypeError(
            f"config did not compose to a CPTPlan (got {type(plan).__name__}); is train_schema in defaults?"
        )
    plan.loop.apply_token_budget()
    return validate(resolve_paths(plan))


def load_plan(overrides: list[str] | None = None, config_name: str = "train") -> CPTPlan:
    """Compose `conf/<config_name>.yaml` with Hydra-style `overrides` (e.g. ["recipe=cpt_patok"])."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    register()
    if GlobalHydra.instance().is_initialized():
        GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(paths.CONF_DIR), version_base="1.3"):
        cfg = compose(config_name=config_name, overrides=list(overrides or []))
    return plan_from_config(cfg)


def plan_to_yaml(plan: CPTPlan) -> str:
    return OmegaConf.to_yaml(OmegaConf.structured(plan))


def save_dry_run(plan: CPTPlan, name: str, details: dict) -> Path:
    """Write `<run_dir>/plan/{resolved_plan.yaml,<name>.yaml}` and print both; returns the folder."""
    folder = Path(plan.run_dir) / "plan"
    folder.mkdir(parents=True, exist_ok=True)
    resolved = plan_to_yaml(plan)
    detail_yaml = OmegaConf.to_yaml(OmegaConf.create(details))
    (folder / "resolved_plan.yaml").write_text(resolved)
    (folder / f"{name}.yaml").write_text(detail_yaml)
    print(
        f"# resolved plan ({folder / 'resolved_plan.yaml'})\n{resolved}\n# {name} ({folder / (name + '.yaml')})\n{detail_yaml}"
    )
    return folder


def plan_from_yaml(path: str | Path) -> CPTPlan:
    """Read a run folder's `config.yaml` back into a CPTPlan (paths are already absolute there)."""
    register()
    cfg = OmegaConf.merge(OmegaConf.structured(CPTPlan), OmegaConf.load(path))
    return validate(OmegaConf.to_object(cfg))


register()
