# The two commands a newcomer needs (see README.md):
#   make run    set up on first use, then run Recollect at http://127.0.0.1:8000/
#   make test   set up on first use, then run the whole test suite
#   make fuzz   the API fuzzed against its OpenAPI schema at length (tests/test_fuzz.py)
# Set-up (a virtualenv with the pinned requirements) runs again only when requirements.txt changes.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.requirements-installed

.PHONY: run test lint fuzz

$(STAMP): requirements.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Recollect needs Python 3.11 or newer (set PYTHON=...)")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $(STAMP)

run: $(STAMP)
	@$(BIN)/python -m config.stack

test: $(STAMP)
	@$(BIN)/python -m pytest $(ARGS)

# The API fuzzed against its schema at length: every phase, 200 cases per operation (a few minutes).
fuzz: $(STAMP)
	@FUZZ_PHASES=$${FUZZ_PHASES:-examples,coverage,fuzzing,stateful} FUZZ_MAX_EXAMPLES=$${FUZZ_MAX_EXAMPLES:-200} \
		$(BIN)/python -m pytest tests/test_fuzz.py -s $(ARGS)

lint: $(STAMP)
	@$(BIN)/ruff check . && $(BIN)/ruff format --check .
