#!/usr/bin/env bash
# Build (or reuse) the Python 3.12 environment in which tests/cluster checks our cluster path against the real
# Megatron-Bridge release, on a CPU:
#   bash tests/cluster/build_env.sh 0.4      # NeMo 26.04: Megatron-Bridge 0.4.0 + megatron-core 0.17.0
#   bash tests/cluster/build_env.sh 0.6      # the newest Megatron-Bridge on PyPI
# Prints the environment's folder on its last line. The environment lives outside the checkout
# (MORPHCPT_CLUSTER_ENV_ROOT, default ~/.cache/morphcpt), keyed by a hash of its requirements file, so a rerun
# with unchanged requirements reuses it at once and a changed file builds a fresh one (the profile's others removed).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
profile="${1:?usage: build_env.sh 0.4|0.6}"
requirements="$HERE/requirements-bridge-$profile.txt"
[[ -f "$requirements" ]] || { echo "no $requirements (profiles: 0.4, 0.6)" >&2; exit 2; }
bridge=$(sed -n 's/^# BRIDGE: //p' "$requirements")
[[ -n "$bridge" ]] || { echo "$requirements names no '# BRIDGE: megatron-bridge==X' line" >&2; exit 2; }

key=$(cat "$requirements" "$HERE/build_env.sh" | sha256sum | cut -c1-12)
root="${MORPHCPT_CLUSTER_ENV_ROOT:-$HOME/.cache/morphcpt}"
env_dir="$root/cluster-env-bridge-$profile-$key"
# this profile's environments of other requirements are removed: about 6 GB each (PyPI's CUDA torch), and a machine
# that runs CI again and again would otherwise keep one per change of the requirements
for stale in "$root"/cluster-env-bridge-"$profile"-*; do
    [[ -e "$stale" && "$stale" != "$env_dir" && "$stale" != "$env_dir.partial" ]] || continue
    echo "removing $stale (built from other requirements)" >&2
    rm -rf "$stale"
done
if [[ -f "$env_dir/.complete" ]]; then
    echo "reusing $env_dir" >&2
    echo "$env_dir"
    exit 0
fi

# Python 3.12: on PATH, or through pyenv (Megatron-Bridge 0.4+ requires it)
python312=""
for candidate in "${PYTHON312:-}" python3.12 "$(command -v pyenv >/dev/null && pyenv root)"/versions/3.12*/bin/python3.12 \
    "$HOME"/.pyenv/versions/3.12*/bin/python3.12; do
    [[ -n "$candidate" ]] || continue
    if "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
        python312="$candidate"
        break
    fi
done
[[ -n "$python312" ]] || { echo "Python 3.12 not found (set PYTHON312=/path/to/python3.12)" >&2; exit 1; }

echo "building $env_dir with $python312 ($bridge; takes a few minutes the first time)" >&2
rm -rf "$env_dir" "$env_dir.partial"
mkdir -p "$root"
"$python312" -m venv "$env_dir.partial"
pip=("$env_dir.partial/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" install --upgrade pip >&2
# PyPI's torch is a CUDA build; it runs on a CPU (no GPU is ever touched by these tests)
"${pip[@]}" install -r "$requirements" >&2
"${pip[@]}" install --no-deps "$bridge" >&2
# venvs are not relocatable: rebuild the scripts' shebangs by reinstalling nothing, just rename and record
mv "$env_dir.partial" "$env_dir"
sed -i "s#$env_dir.partial#$env_dir#g" "$env_dir"/bin/* 2>/dev/null || true
"$env_dir/bin/python" -c "import importlib.metadata as m; print('megatron-bridge', m.version('megatron-bridge'), 'megatron-core', m.version('megatron-core'), 'torch', m.version('torch'))" >&2
touch "$env_dir/.complete"
echo "$env_dir"
