# `make demo` and `make test` do the whole set-up on a fresh Debian machine: Graphviz's `dot`
# (apt-get; sudo when not root), a virtualenv in .venv, and this package with its extras.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
OUT    ?= graphs

.PHONY: demo test bench docs-pictures deps system-deps clean

system-deps:
	@command -v dot >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq graphviz; }

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

# Regenerate the pictures embedded in docs/article.md from a real run.
docs-pictures: deps
	$(PY) examples/article_pictures.py docs/images

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache $(OUT)
