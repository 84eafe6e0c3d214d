"""The cluster recipes (`conf/recipe/<prefix>_*.yaml`) as the job scripts and the chain see them: one entry per
recipe and seed, with the variables a rendered job passes (jobs.py, chain/stages.py, evaluate/resolve.py).

    runs = cluster_runs(seeds=3)                  # patok, patok_seed1, patok_seed2, stochastok, ...

A recipe is composed once per version of the config tree, not at every call: one chain submission asks for every
recipe a dozen times (each stage list, each rendered job), and each time was a Hydra composition per recipe.
"""

from __future__ import annotations

import functools

from morphcpt import paths
from morphcpt.plan.compose import load_plan, replicate_name


def cluster_runs(seeds: int = 1, prefix: str = "cpt") -> list[dict[str, str]]:
    """The cluster recipes (`conf/recipe/<prefix>_*.yaml`, less EEVE's: `pilot_eeve` runs as `jobs.eeve_runs`) as
    job-script variables, one per seed: VARIANT (`patok`, then `patok_seed1`, ...), RECIPE, RUN_NAME, SCHEME,
    REPLICATE."""
    runs, version = [], _conf_version()
    for path in sorted((paths.CONF_DIR / "recipe").glob(f"{prefix}_*.yaml")):
        run_name, scheme = _name_and_scheme(path.stem, version)
        if scheme == "eeve":
            continue  # EEVE's seven-stage runs are their own jobs (jobs.eeve_runs), never one plain CPT run
        variant = path.stem.removeprefix(f"{prefix}_")
        for k in range(seeds):
            runs.append(
                {
                    "VARIANT": f"{variant}_seed{k}" if k else variant,
                    "RECIPE": path.stem,
                    "RUN_NAME": replicate_name(run_name, k),
                    "SCHEME": scheme,
                    "REPLICATE": str(k),
                }
            )
    return runs


def _conf_version() -> tuple:
    """Every file of the config tree with its size and modification time: an edited file is a new version."""
    stats = ((f, f.stat()) for f in sorted(paths.CONF_DIR.rglob("*")) if f.is_file())
    return tuple((str(f), st.st_mtime_ns, st.st_size) for f, st in stats)


@functools.lru_cache(maxsize=64)
def _name_and_scheme(recipe: str, conf_version: tuple) -> tuple[str, str]:
    plan = load_plan([f"recipe={recipe}"])
    return plan.run_name, plan.data.scheme
