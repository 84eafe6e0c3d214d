# morphcpt — the two set-up commands (`make demo`, `make test`) create and use .venv on a fresh machine.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint format clean-demo

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# CPU build pinned on purpose: any other torch version pulls gigabytes of CUDA wheels.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[dev,plots]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m morphcpt.demo

test: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests scripts training benchmarks
	$(VENV)/bin/ruff format --check src tests scripts training benchmarks

format: $(STAMP)
	$(VENV)/bin/ruff format src tests scripts training benchmarks
	$(VENV)/bin/ruff check --fix src tests scripts training benchmarks

clean-demo:
	rm -rf outputs/demo
