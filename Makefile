# morphcpt — the two set-up commands (`make demo`, `make test`) create and use .venv on a fresh machine.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow test-elsewhere test-cluster docs-check lint format clean-demo

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# CPU build pinned on purpose: any other torch version pulls gigabytes of CUDA wheels.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[dev,plots,lora]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m morphcpt.demo

# The suite in two parts, both run by .ci/run: `test` is everything but the tests marked slow (the units, the
# checks, the fake-scheduler chains, the short runs: under ten minutes on 2 CPU cores); `test-slow` is the marked
# ones (the demo and the local chains end to end, training runs that are killed and resume, several ranks and nodes).
test: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow

# The tests that write, cut or compare absolute paths, once more from a clone of the checkout at another path (of
# another length: a cut at half a file that holds paths lands elsewhere): no test may depend on where the checkout
# lives. The clone holds what is committed; it runs with this checkout's .venv and its own src first on the path.
# (Not a path with non-ASCII characters: Hydra's override grammar refuses them unquoted, e.g. model.tokenizer=.)
ELSEWHERE_TESTS ?= tests/test_json_files.py tests/chain/test_jobs.py tests/chain/test_enroot.py
test-elsewhere: $(STAMP)
	@parent=$$(mktemp -d) && dir="$$parent/a-second-checkout-path" && git clone -q . "$$dir" \
		&& ln -s "$(abspath $(VENV))" "$$dir/.venv" && echo "== from a second path: $$dir" \
		&& (cd "$$dir" && PYTHONPATH="$$dir/src" .venv/bin/python -m pytest -q -p no:cacheprovider $(ELSEWHERE_TESTS)); \
		status=$$?; rm -rf "$$parent"; exit $$status

# Every command block of README.md and docs/*.md marked runnable, the slow ones too, and every relative link
# (tools/docs_check.py; `make test` runs the fast blocks and the links through tests/test_docs.py).
docs-check: $(STAMP)
	$(PY) tools/docs_check.py --all

# The cluster path against the real Megatron-Bridge on a CPU: the NeMo 26.04 release (0.4) and the newest on PyPI
# (0.6), each in a Python 3.12 environment cached outside the checkout (tests/cluster/build_env.sh). The same
# environments hold the containers' transformers (5.3 in NeMo 26.04), so the evaluator's own decoding loop, which
# calls the model's forward directly, is tested under them too.
BRIDGE_SERIES ?= 0.4 0.6
CONTAINER_TESTS ?= tests/cluster tests/evaluate/test_hf_generation.py
test-cluster:
	@for series in $(BRIDGE_SERIES); do \
		env_dir=$$(bash tests/cluster/build_env.sh $$series) || exit 1; \
		echo "== cluster contract tests: Megatron-Bridge $$series ($$env_dir)"; \
		PYTHONPATH=src $$env_dir/bin/python -m pytest -q -p no:cacheprovider $(CONTAINER_TESTS) || exit 1; \
	done

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests scripts training benchmarks tools
	$(VENV)/bin/ruff format --check src tests scripts training benchmarks tools

format: $(STAMP)
	$(VENV)/bin/ruff format src tests scripts training benchmarks tools
	$(VENV)/bin/ruff check --fix src tests scripts training benchmarks tools

clean-demo:
	rm -rf outputs/demo
