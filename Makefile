# The two commands a newcomer needs: `make demo` and `make test`. Both set themselves up.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV ?= .venv
PY := $(VENV)/bin/python
# SAM builds without Docker only with a real python3.13 first on PATH: the venv's.
SAM := PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/sam
export DATABASE_URL ?= postgresql://postgres:postgres@127.0.0.1:5432/postgres
export REDIS_URL ?= redis://127.0.0.1:6379/0
export AWS_DEFAULT_REGION ?= eu-south-2

# A Python 3.13 that really runs (a pyenv shim may exist and refuse): python3.13 on PATH,
# else pyenv's; its real executable, so the venv does not depend on the shim.
PYTHON313 := $(shell for p in python3.13 $$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.13*/bin/python3.13 2>/dev/null); do \
	$$p -c 'import sys; assert sys.version_info[:2] == (3, 13); print(sys.executable)' 2>/dev/null && break; done)

.PHONY: rds-ca help setup services lint build test test-unit test-integration test-e2e demo caos bench clean \
	sam-local-setup sam-local invoke test-sam-local test-deploy

help:
	@echo "make demo   run the whole order flow locally (no AWS account, no Docker)"
	@echo "make test   lint, sam build and the whole test suite"
	@echo "make bench  run the benchmarks in bench/ (on demand)"
	@echo "make invoke FN=CobroFunction EVENT=events/cobro-pedido.json   one event through sam local invoke (Docker)"

$(VENV)/.installed: requirements/dev.txt requirements/constraints.txt layers/*/requirements.txt pyproject.toml \
		rules/pyproject.toml packages/sam_emulator/pyproject.toml
	@test -n "$(PYTHON313)" || { echo "Python 3.13 is required: install it (e.g. pyenv install 3.13) and put python3.13 on PATH." >&2; exit 1; }
	@test -x $(PY) || $(PYTHON313) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements/dev.txt -c requirements/constraints.txt
	$(PY) -m pip install -q --no-deps -e . -e rules -e packages/sam_emulator
	@touch $@

setup: $(VENV)/.installed

# A tool whose dependencies conflict with the project's pins gets a venv of its own, .venv-<tool>, from
# requirements/<tool>.txt: checkov, and MiniStack (the deploy level's emulated account; it pins an older botocore).
CHECKOV_VENV := .venv-checkov
MINISTACK_VENV := .venv-ministack
.venv-%/.installed: requirements/%.txt
	@test -n "$(PYTHON313)" || { echo "Python 3.13 is required for $*'s venv." >&2; exit 1; }
	@test -x .venv-$*/bin/python || $(PYTHON313) -m venv .venv-$*
	.venv-$*/bin/python -m pip install -q -r $<
	@touch $@

services:
	@tools/ensure-services.sh

lint: setup $(CHECKOV_VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/cfn-lint template.yaml
	$(VENV)/bin/cfn-lint template.yaml -a cfn_lint_serverless.rules
	$(CHECKOV_VENV)/bin/checkov --config-file .checkov.yaml -f template.yaml
	@# checkov evaluates conditions at the parameters' defaults: the Chaos=enabled side is scanned in a copy.
	$(PY) -m mercadofresco_local.caos.fis --plantilla-con-caos template.yaml build/template-con-caos.yaml
	$(CHECKOV_VENV)/bin/checkov --config-file .checkov.yaml -f build/template-con-caos.yaml
	@# ... and what only a profile creates (prueba: the NAT instance) in a copy with its parameters as defaults.
	$(PY) -m mercadofresco_local.perfiles prueba template.yaml build/template-prueba.yaml
	$(CHECKOV_VENV)/bin/checkov --config-file .checkov.yaml -f build/template-prueba.yaml
	$(SAM) validate --lint

build: setup
	$(SAM) build

# The sam local invoke and deploy levels run when Docker can be set up (CI sets it up: a failure there fails).
test: setup services lint build
	$(VENV)/bin/pytest -m "not sam_local and not deploy"
	@if tools/sam_local/ensure-docker.sh; then \
		rc=0; $(MAKE) --no-print-directory test-sam-local && $(MAKE) --no-print-directory test-deploy || rc=$$?; \
		tools/sam_local/stop-docker.sh; exit $$rc; \
	elif [ -n "$$CI" ]; then exit 1; \
	else echo "make test: tests/sam_local and tests/deploy SKIPPED (no Docker, see above); make test-sam-local and make test-deploy run them"; fi

test-unit: setup
	$(VENV)/bin/pytest tests/unit

test-integration: setup services
	$(VENV)/bin/pytest tests/integration

test-e2e: setup services
	$(VENV)/bin/pytest tests/e2e

# sam local invoke (tools/sam_local/): Docker started where it can be, the Lambda base image
# built once (cached), `sam build` for this CPU into .aws-sam/local-<arch>/.
sam-local-setup: setup
	@tools/sam_local/ensure-docker.sh
	@tools/sam_local/build-image.sh

test-sam-local: setup services sam-local-setup
	$(VENV)/bin/pytest tests/sam_local -m sam_local

# The deploy level (tools/emulated_account/): the real template `sam deploy`ed into MiniStack, an
# emulated empty account (README, Tests).
test-deploy: setup services sam-local-setup $(MINISTACK_VENV)/.installed
	$(VENV)/bin/pytest tests/deploy -m deploy

invoke: setup services sam-local-setup
	@test -n "$(FN)" && test -n "$(EVENT)" || { echo "usage: make invoke FN=CobroFunction EVENT=events/cobro-pedido.json" >&2; exit 2; }
	@PYTHONPATH=tools:packages/sam_emulator:layers/comun $(PY) -m sam_local invoke $(FN) $(EVENT)

sam-local: setup services sam-local-setup
	@PYTHONPATH=tools:packages/sam_emulator:layers/comun $(PY) -m sam_local serve

demo: setup services
	$(VENV)/bin/mf-demo --escenario $(or $(ESCENARIO),viernes) $(if $(PEDIDOS),--pedidos $(PEDIDOS))

# The seeded chaos campaign (issue 15): seeds 1..SEMILLAS, PEDIDOS orders each, split across PROCESOS
# child sessions (each its own moto, Redis, PostgreSQL server), merged into one report.
# A violation prints its seed, order, faults and the command that replays it; exit 1.
caos: setup services
	$(VENV)/bin/mf-demo --escenario caos --semillas $(or $(SEMILLAS),200) --procesos $(or $(PROCESOS),3) \
		$(if $(PEDIDOS),--pedidos $(PEDIDOS))

# Every script in bench/ once, each printing its figures, goals and the load it ran at; one that fails
# does not stop the others (exit 1 at the end). Sizes: the BENCH_* variables in each script's docstring.
# The cold-start bench imports the functions from `make build`'s output, hence the dependency, with a
# current CPython 3.13 as Lambda's runtime has (bench/lambda-python.sh; else this venv's, and it says so).
bench: setup services build
	@cold_python=$${BENCH_COLD_PYTHON:-$$(bench/lambda-python.sh || true)}; \
	rc=0; for b in bench/bench_*.py; do echo "== $$b"; \
		BENCH_COLD_PYTHON=$$cold_python BENCH_BUILD_DIR=$${BENCH_BUILD_DIR:-.aws-sam/build} $(PY) $$b \
			|| { echo "== $$b FAILED"; rc=1; }; \
	done; exit $$rc

# Refreshes the layer's CA bundle (committed: Amazon RDS's CAs, so Aurora TLS verifies the server,
# verify-full in layers/comun/mercadofresco/db.py, plus Amazon's root CA for RDS Proxy, whose
# certificate is ACM's) from AWS's own endpoints. Needs the internet; then review the change and
# update the SHA-256 in certificados/README.md and tests/unit/test_certificados_rds.py.
RDS_CA_URL ?= https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem
AMAZON_ROOT_CA_URL ?= https://www.amazontrust.com/repository/AmazonRootCA1.pem
rds-ca:
	mkdir -p layers/comun/mercadofresco/certificados
	{ curl -fsS $(RDS_CA_URL) && curl -fsS $(AMAZON_ROOT_CA_URL); } > layers/comun/mercadofresco/certificados/rds-global-bundle.pem.tmp
	mv layers/comun/mercadofresco/certificados/rds-global-bundle.pem.tmp layers/comun/mercadofresco/certificados/rds-global-bundle.pem

clean:
	rm -rf .aws-sam .pytest_cache .ruff_cache build/deploy-level
