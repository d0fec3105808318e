# git oxide: every AI coding-agent session of a repository, in that repository's git.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install pyc test test-all lint demo bench bench-quick bench-large reliability soak fuzz compat mutate mutate-sample clean

$(STAMP): pyproject.toml docs/git-oxide.1
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]' --config-settings editable_mode=compat
	mkdir -p $(VENV)/share/man/man1 && cp docs/git-oxide.1 $(VENV)/share/man/man1/
	touch $(STAMP)

install: $(STAMP)  ## venv + editable install + dev tools

# Python writes no bytecode when PYTHONDONTWRITEBYTECODE is set (it is, on some CI machines): every
# `git oxide` a test, a benchmark or a hook starts would then compile what it imports, ~0.4 s of CPU
# for blame. compileall writes it whatever that variable says, and skips what is up to date.
pyc: $(STAMP)
	@$(BIN)/python -m compileall -q -j0 oxide_git tests bench >/dev/null

COVERAGE_DATA := $(CURDIR)/$(VENV)/coverage/.coverage
# pytest-xdist workers: most tests wait on the git processes they start (`git oxide` runs in the test's
# own process but where the process is the point: tests/conftest.py), so one more
# worker than cores keeps both cores busy (TEST_WORKERS=0: one process, for a debugger)
TEST_WORKERS ?= 3

test: pyc  ## the fast suite (+ the compatibility suite when OXIDE_REAL_FIXTURES is set), then its coverage (fails below the targets)
	rm -rf $(VENV)/coverage && mkdir -p $(VENV)/coverage
	COVERAGE_FILE=$(COVERAGE_DATA) $(BIN)/python -m coverage run -m pytest -q -n $(TEST_WORKERS) -m "not bench and not slow and not compat"
	COVERAGE_FILE=$(COVERAGE_DATA) $(BIN)/python -m tests.coverage_gate

test-all: pyc
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) -m "not bench and not compat"

lint: $(STAMP)  ## ruff, mypy, and the layers and circles of .importlinter
	$(BIN)/ruff check oxide_git tests
	$(BIN)/mypy
	$(BIN)/lint-imports

demo: pyc  ## the main job on bundled data, in a temporary repository
	PATH="$(CURDIR)/$(BIN):$$PATH" bash docs/demo.sh

bench: pyc  ## medians and ratios against git itself (100,000-file tree, cached in .bench-cache)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m bench

bench-quick: pyc  ## the same, on a small tree: what CI runs
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m bench --quick

bench-large: pyc  ## issue 17's scale rows (files, messages, import, team remote; BENCH_LARGE_PARTS/SIZES=...), cached in .bench-cache/
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m bench --only large --json .bench-cache/results-large.json

reliability: pyc  ## crash, concurrency and hostile-input suite (OXIDE_RELIABILITY_QUICK=1: ~1 min)
	$(BIN)/python -m pytest -q -m slow

soak: pyc  ## one repository, everything at once, SIGKILLs among it, for SOAK_MINUTES (default 30; CI: 2)
	PATH="$(CURDIR)/$(BIN):$$PATH" SOAK_MINUTES=$${SOAK_MINUTES:-30} $(BIN)/python -m tests.soak

fuzz: pyc  ## the importers under hypothesis for minutes each (OXIDE_FUZZ_EXAMPLES per importer)
	OXIDE_FUZZ_EXAMPLES=$${OXIDE_FUZZ_EXAMPLES:-50000} $(BIN)/python -m pytest -q -m slow -k "fuzz or corpus" --durations=0

compat: pyc  ## the real agents' CLIs (pinned in tests/compat/pins.txt), driven against a local model server
	$(BIN)/python -m tests.compat.install
	rm -f .compat-cache/results.jsonl
	$(BIN)/python -m pytest -q -m compat tests/compat; status=$$?; $(BIN)/python -m tests.compat.report; exit $$status

mutate: pyc  ## mutation testing of the modules that guard users' work (hours; MODULES="rm undo" for some)
	nice -n 19 $(BIN)/python -m tests.mutation.run $(MODULES)

mutate-sample: pyc  ## a few seeded mutants of each fully analysed module: what CI runs
	nice -n 19 $(BIN)/python -m tests.mutation.run --ci

clean:
	rm -rf $(VENV) .bench-cache build *.egg-info
