# `make demo` and `make test` do the whole set-up on a fresh Debian machine (as root, or with
# sudo): Debian packages through apt-get, a virtualenv in .venv, this package with its extras.
# The demo needs only Graphviz's `dot`; the tests also need Chromium (the replay page's browser
# test) and PyTorch 2.13.0's CPU wheel (the parity tests).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT    := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get
OUT    ?= graphs
TORCH  := torch==2.13.0

.DEFAULT_GOAL := help
.PHONY: help demo test bench docs-pictures deps demo-deps test-deps clean

help:
	@echo "make demo           set up (Graphviz, .venv) and train the article's network; pictures in $(OUT)/"
	@echo "make test           set up everything the tests need (Chromium, PyTorch $(TORCH) too) and run them all,"
	@echo "                    then the op tests again on the reference kernels"
	@echo "make bench          time the workloads against PyTorch (benchmarks/README.md)"
	@echo "make docs-pictures  regenerate docs/images and the executed docs/tutorial.ipynb"
	@echo "make clean          remove .venv and what the demo wrote"

# (Debian's own python3 makes virtualenvs only with its python3-venv package)
$(VENV)/bin/python:
	@$(PYTHON) -c "import ensurepip, venv" 2>/dev/null || { $(APT) update -qq && $(APT) install -y -qq python3-venv; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# The demo's set-up: dot, and the package with its drawing extra.
$(VENV)/.demo: pyproject.toml | $(VENV)/bin/python
	@command -v dot >/dev/null 2>&1 || { $(APT) update -qq && $(APT) install -y -qq graphviz; }
	$(PY) -m pip install -q -e '.[viz]'
	touch $@

# The tests' set-up: the demo's, then Chromium, the test and example extras, and PyTorch.
$(VENV)/.test: pyproject.toml $(VENV)/.demo
	@command -v chromium >/dev/null 2>&1 || { $(APT) update -qq && $(APT) install -y -qq chromium; } || \
		echo "chromium could not be installed: the browser test of viz.replay will skip"
	$(PY) -m pip install -q -e '.[test,examples,viz]'
	$(PY) -m pip install -q $(TORCH) || \
		echo "$(TORCH) could not be installed: the PyTorch parity tests will skip"
	touch $@

demo-deps: $(VENV)/.demo
test-deps deps: $(VENV)/.test

demo: demo-deps
	$(PY) -m tinygrad_pool demo --out $(OUT)

# The op parity tests once more on the reference kernels (tinygrad_pool.set_kernels): every
# gradient checked on the plain definitions in ops/ too, not only through fast/.
REFERENCE_TESTS := tests/test_conv.py tests/test_conv_transpose.py tests/test_pool.py \
	tests/test_adaptive_pool.py tests/test_elementwise.py tests/test_activation.py \
	tests/test_higher_order.py tests/test_fuzz.py tests/test_numerics.py tests/test_nn.py \
	tests/test_bad_inputs_conv_pool.py tests/test_loss.py tests/test_reduce.py \
	tests/test_conv_nd.py tests/test_pool_nd.py

test: test-deps
	$(PY) -m pytest -q
	TINYGRAD_POOL_KERNELS=reference $(PY) -m pytest -q $(REFERENCE_TESTS)

bench: test-deps
	$(PY) benchmarks/run.py

# Regenerate every picture in docs/ from a real run (the tests compare them with a fresh
# render), and docs/tutorial.ipynb from docs/tutorial.md, executed, with its inline pictures.
docs-pictures: test-deps
	$(PY) examples/docs_pictures.py docs/images
	$(PY) examples/build_notebook.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache $(OUT)
