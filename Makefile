# pbm: `make demo` and `make test` set up everything in .venv on a fresh machine.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
TEST_INSTALLED := $(VENV)/.installed-test
DEMO_HOME := $(CURDIR)/.demo-home

.PHONY: demo test e2e stress bench strength install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(INSTALLED): $(BIN)/python setup.cfg pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
	touch $@

$(TEST_INSTALLED): $(INSTALLED)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

install: $(INSTALLED)

# A fresh demo home every time: two new users play a whole game by mail.
demo: $(INSTALLED)
	rm -rf $(DEMO_HOME)
	PBM_HOME=$(DEMO_HOME) $(BIN)/python tools/demo.py

# Lint and format check first (ruff, configured in pyproject.toml), then the whole suite, one
# worker a core (pytest-xdist): every test has its own home, ports and processes.
test: $(TEST_INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n auto

# Needs root: installs Postfix and Chromium (from the distribution) when missing, deploys pbm
# behind Postfix the README's way, plays whole games through it, drives the web view in
# Chromium with Playwright (the system browser, no download), then undoes every change.
e2e: $(TEST_INSTALLED)
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,e2e]'
	$(BIN)/python -m pytest -p no:cacheprovider -v e2e

# The reliability suite at full size: 400 racing messages, 240 racing seeks, 150 racing
# tournament joins, 60 kills, 10x the fuzzing,
# 10 variants of each mail bomb under rlimits, 200 clients x 1 MB against `pbm serve`,
# 200,000 RCPT TO and a NOOP siege of its 32 slots, a 2 GB gzip bomb against `pbm restore`,
# 2,000 new random games a game in which each engine agrees with its plugin contract (the
# recorded games of the frozen engines are replayed at every size), ten rounds of four
# handlers writing beside Litestream until killed, each replica restored and checked.
stress: $(TEST_INSTALLED)
	PBM_STRESS=1 $(BIN)/python -m pytest -q -s tests/test_concurrency.py tests/test_crashes.py \
		tests/test_hostile.py tests/test_fuzz.py tests/test_delivery_faults.py tests/test_abuse.py \
		tests/test_grammar.py tests/test_header_safety.py tests/test_password_masking.py \
		tests/test_guessing.py tests/test_mail_bombing.py tests/test_bounded.py tests/test_curable.py \
		tests/test_serve_load.py tests/test_serve_sessions.py tests/test_restore_checks.py \
		tests/test_engine_differential.py tests/test_seek_race.py tests/test_seeks.py \
		tests/test_origin.py tests/test_lockout.py tests/test_confirmation.py \
		tests/test_reset_codes.py tests/test_password_echo.py \
		tests/test_answers.py tests/test_seating.py \
		tests/test_tournament_race.py tests/test_tournament_rules.py tests/test_replica.py

BENCH_INSTALLED := $(VENV)/.installed-bench

# The bench and profile extras (open_spiel, py-spy) only: make test never needs them. A
# machine without a wheel for open_spiel still benches; bench/engines.py says the reference
# is missing and how to add it.
$(BENCH_INSTALLED): $(INSTALLED)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[profile]'
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --only-binary open_spiel -e '.[bench]' \
		&& touch $@ || echo "open_spiel could not be installed: OpenSpiel's Hex is left out of the bench"

# Speed figures, each next to a reference measured in the same run (docs/performance.md);
# the pipe and the writer's CPU also next to BENCH_BASE's code (the landed head before
# issues 25-32), the plugin contract next to CONTRACT_BASE's (the commit before the speed
# issues). Either may be another commit or a directory: make bench BENCH_BASE=...
BENCH_BASE ?= d2703c4
CONTRACT_BASE ?= 4f8799b
bench: $(BENCH_INSTALLED)
	$(BIN)/python bench/bench.py --base $(BENCH_BASE) --contract-base $(CONTRACT_BASE) $(BENCH)

# The robots' measured strength, seeded; hours for every variant, not part of `make test`
# (docs/robots.md). A part: make strength STRENGTH='--only "lox size=9 2p" --games 20'
strength: $(INSTALLED)
	$(BIN)/python tools/strength.py $(STRENGTH)

clean:
	rm -rf $(VENV) $(DEMO_HOME) .pytest_cache .hypothesis *.egg-info
