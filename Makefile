# `make demo` and `make test` do the whole set-up on a fresh Debian machine: Graphviz's `dot`
# (apt-get; sudo when not root), a virtualenv in .venv, and this package with its extras.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
OUT    ?= graphs

.PHONY: demo test bench docs-pictures deps system-deps clean

# Chromium runs the replay page's browser test (Playwright drives it); where it cannot be
# installed that test skips, saying so, and everything else still runs.
system-deps:
	@command -v dot >/dev/null 2>&1 && command -v chromium >/dev/null 2>&1 || \
		$(SUDO) apt-get update -qq
	@command -v dot >/dev/null 2>&1 || \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq graphviz
	@command -v chromium >/dev/null 2>&1 || \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium || \
		echo "chromium could not be installed: the browser test of viz.replay will skip"

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,examples,viz]'
	touch $@

deps: system-deps $(VENV)/.installed

demo: deps
	$(PY) -m tinygrad_pool demo --out $(OUT)

test: deps
	$(PY) -m pytest -q

bench: deps
	$(PY) benchmarks/run.py

# Regenerate every picture in docs/ from a real run (the tests compare them with a fresh
# render), and docs/tutorial.ipynb from docs/tutorial.md, executed, with its inline pictures.
docs-pictures: deps
	$(PY) examples/docs_pictures.py docs/images
	$(PY) examples/build_notebook.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache $(OUT)
