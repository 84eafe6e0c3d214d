"""The cluster recipes (`conf/recipe/<prefix>_*.yaml`) as the job scripts and the chain see them: one entry per
recipe and seed, with the variables a rendered job passes (jobs.py, chain/stages.py, evaluate/resolve.py).

    runs = cluster_runs(seeds=3)                  # patok, patok_seed1, patok_seed2, stochastok, ...
"""

from __future__ import annotations

from morphcpt import paths
from morphcpt.train.plan.compose import load_plan, replicate_name


def cluster_runs(seeds: int = 1, prefix: str = "cpt") -> list[dict[str, str]]:
    """The cluster recipes (`conf/recipe/<prefix>_*.yaml`, less EEVE's: `pilot_eeve` runs as `jobs.eeve_runs`) as
    job-script variables, one per seed: VARIANT (`patok`, then `patok_seed1`, ...), RECIPE, RUN_NAME, SCHEME,
    REPLICATE."""
    runs = []
    for path in sorted((paths.CONF_DIR / "recipe").glob(f"{prefix}_*.yaml")):
        plan = load_plan([f"recipe={path.stem}"])
        if plan.data.scheme == "eeve":
            continue  # EEVE's seven-stage runs are their own jobs (jobs.eeve_runs), never one plain CPT run
        variant = path.stem.removeprefix(f"{prefix}_")
        for k in range(seeds):
            runs.append(
                {
                    "VARIANT": f"{variant}_seed{k}" if k else variant,
                    "RECIPE": path.stem,
                    "RUN_NAME": replicate_name(plan.run_name, k),
                    "SCHEME": plan.data.scheme,
                    "REPLICATE": str(k),
                }
            )
    return runs
