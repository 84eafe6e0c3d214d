"""The cache of `make test-cluster`'s environments (tests/cluster/build_env.sh): a rerun reuses the environment of
unchanged requirements, and the profile's environments of other requirements, about 6 GB each, are removed."""

from __future__ import annotations

import hashlib
import os
import subprocess

from morphcpt import paths

CLUSTER = paths.REPO_ROOT / "tests" / "cluster"


def _key(profile: str) -> str:
    requirements = (CLUSTER / f"requirements-bridge-{profile}.txt").read_bytes()
    return hashlib.sha256(requirements + (CLUSTER / "build_env.sh").read_bytes()).hexdigest()[:12]


def test_the_built_environment_is_reused_and_the_profiles_stale_ones_removed(tmp_path):
    current = tmp_path / f"cluster-env-bridge-0.4-{_key('0.4')}"
    stale = tmp_path / "cluster-env-bridge-0.4-0123456789ab"
    other_profile = tmp_path / f"cluster-env-bridge-0.6-{_key('0.6')}"
    for folder in (current, stale, other_profile):
        (folder / "bin").mkdir(parents=True)
        (folder / ".complete").touch()
    done = subprocess.run(
        ["bash", str(CLUSTER / "build_env.sh"), "0.4"],
        capture_output=True,
        text=True,
        env={**os.environ, "MORPHCPT_CLUSTER_ENV_ROOT": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == str(current)
    assert f"removing {stale}" in done.stderr and "reusing" in done.stderr
    assert not stale.exists() and current.is_dir() and other_profile.is_dir()
