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
	sam-local-setup sam-local invoke test-sam-local test-deploy iam-evaluator deploy-emulated deploy-emulated-down \
	emulated-setup

help:
	@echo "make demo   run the whole order flow locally (no AWS account, no Docker)"
	@echo "make test   lint, sam build and the whole test suite"
	@echo "make bench  run the benchmarks in bench/ (on demand)"
	@echo "make invoke FN=CobroFunction EVENT=events/cobro-pedido.json   one event through sam local invoke (Docker)"
	@echo "make deploy-emulated   the real template deployed into an emulated AWS account (Docker; docs/emulated-account.md)"

$(VENV)/.installed: requirements/dev.txt requirements/durable.txt requirements/constraints.txt layers/*/requirements.txt \
		functions/*/requirements.txt pyproject.toml rules/pyproject.toml packages/sam_emulator/pyproject.toml \
		packages/template_model/pyproject.toml
	@test -n "$(PYTHON313)" || { echo "Python 3.13 is required: install it (e.g. pyenv install 3.13) and put python3.13 on PATH." >&2; exit 1; }
	@# Debian's python3.13 ships venv without ensurepip until python3.13-venv is installed (as root: installed here).
	@test -x $(VENV)/bin/pip || $(PYTHON313) -m venv $(VENV) >/dev/null 2>&1 || { rm -rf $(VENV); \
		[ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && echo "python3.13 cannot make a venv: installing python3.13-venv" \
		&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.13-venv >/dev/null \
		&& $(PYTHON313) -m venv $(VENV); } \
		|| { rm -rf $(VENV); echo "$(PYTHON313) -m venv failed: on Debian/Ubuntu install python3.13-venv" >&2; exit 1; }
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements/dev.txt -c requirements/constraints.txt
	$(PY) -m pip install -q --no-deps -r requirements/durable.txt -c requirements/constraints.txt
	$(PY) -m pip install -q --no-deps -e . -e rules -e packages/sam_emulator -e packages/template_model
	@touch $@

setup: $(VENV)/.installed

# A tool whose dependencies conflict with the project's pins gets a venv of its own, .venv-<tool>, from
# requirements/<tool>.txt: checkov, and MiniStack (the deploy level's emulated account; it pins an older botocore).
CHECKOV_VENV := .venv-checkov
MINISTACK_VENV := .venv-ministack
.venv-%/.installed: requirements/%.txt
	@test -n "$(PYTHON313)" || { echo "Python 3.13 is required for $*'s venv." >&2; exit 1; }
	@test -x .venv-$*/bin/pip || $(PYTHON313) -m venv .venv-$*
	.venv-$*/bin/python -m pip install -q -r $<
	@touch $@

services:
	@tools/ensure-services.sh

lint: setup $(CHECKOV_VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@# The root and each unit it nests (decision 0130): sam validate --lint reads the root only.
	$(VENV)/bin/cfn-lint template.yaml unidades/*.yaml
	$(VENV)/bin/cfn-lint template.yaml unidades/*.yaml -a cfn_lint_serverless.rules
	@# checkov expands no Fn::ForEach (decision 0130): it scans the flat copies the template model writes,
	@# the template as deployed by default, then each side only a parameter creates.
	$(PY) -m template_model expand template.yaml build/template-expandida.json
	$(CHECKOV_VENV)/bin/checkov --config-file .checkov.yaml -f build/template-expandida.json
	@# checkov evaluates conditions at the parameters' defaults: the Chaos=enabled side is scanned in a copy.
	$(PY) -m template_model expand template.yaml build/template-con-caos.json --parameter Chaos=enabled
	$(CHECKOV_VENV)/bin/checkov --config-file .checkov.yaml -f build/template-con-caos.json
	@# ... and the units, each expanded (the network loops over its endpoints) with its parameters at their
	@# defaults, the network once more as the prueba profile makes it (the NAT instance) with every endpoint,
	@# and Aurora with its RDS Proxy (its role, target group and security group rules exist only then).
	@mkdir -p build/unidades
	@for unidad in $(wildcard unidades/*.yaml); do \
		$(PY) -m template_model expand $$unidad build/unidades/$$(basename $$unidad .yaml).json || exit 1; done
	$(PY) -m template_model expand unidades/red.yaml build/unidades/red-nat-instancia.json \
		--parameter NatGateway=instance --parameter VpcEndpoints=full
	$(PY) -m template_model expand unidades/aurora.yaml build/unidades/aurora-con-proxy.json --parameter RdsProxy=enabled
	$(CHECKOV_VENV)/bin/checkov --config-file .checkov.yaml \
		$(patsubst unidades/%.yaml,-f build/unidades/%.json,$(wildcard unidades/*.yaml)) \
		-f build/unidades/red-nat-instancia.json -f build/unidades/aurora-con-proxy.json
	@# ... and what only a profile creates (prueba: Aurora that pauses, the relay's Valkey signal) in a copy.
	$(PY) -m template_model expand template.yaml build/template-prueba.json --profile prueba
	$(CHECKOV_VENV)/bin/checkov --config-file .checkov.yaml -f build/template-prueba.json
	@# ... and the order saga on Lambda durable functions (WorkflowEngine=DurableFunction, decision 0140).
	$(PY) -m template_model expand template.yaml build/template-durable.json --parameter WorkflowEngine=DurableFunction
	$(CHECKOV_VENV)/bin/checkov --config-file .checkov.yaml -f build/template-durable.json
	$(SAM) validate --lint

build: setup
	$(SAM) build

# The least-privilege check's IAM evaluator: Node + iam-simulate, pinned (docs/decisions/0111-iam-evaluator.md).
IAM_EVALUATOR := tools/levels/least_privilege/iam-simulate/node_modules/.installed
$(IAM_EVALUATOR): tools/levels/least_privilege/iam-simulate/package-lock.json
	@tools/levels/least_privilege/ensure-evaluator.sh
iam-evaluator: $(IAM_EVALUATOR)

# The sam local invoke and deploy levels run when Docker can be set up (CI sets it up: a failure there fails).
test: setup services lint build iam-evaluator
	$(VENV)/bin/pytest -m "not sam_local and not deploy"
	@if tools/levels/sam_local/ensure-docker.sh; then \
		rc=0; $(MAKE) --no-print-directory test-sam-local && $(MAKE) --no-print-directory test-deploy || rc=$$?; \
		tools/levels/sam_local/stop-docker.sh; exit $$rc; \
	elif [ -n "$$CI" ]; then exit 1; \
	else echo "make test: tests/sam_local and tests/deploy SKIPPED (no Docker, see above); make test-sam-local and make test-deploy run them"; fi

test-unit: setup iam-evaluator
	$(VENV)/bin/pytest tests/unit

test-integration: setup services
	$(VENV)/bin/pytest tests/integration

test-e2e: setup services iam-evaluator
	$(VENV)/bin/pytest tests/e2e

# sam local invoke (tools/levels/sam_local/): Docker started where it can be, the Lambda base image
# built once (cached), `sam build` for this CPU into .aws-sam/local-<arch>/.
sam-local-setup: setup
	@tools/levels/sam_local/ensure-docker.sh
	@tools/levels/sam_local/build-image.sh

test-sam-local: setup services sam-local-setup
	$(VENV)/bin/pytest tests/sam_local -m sam_local

# The emulated account (tools/levels/emulated_account/, docs/emulated-account.md): MiniStack in Docker with the
# Lambda image and the Aurora/Valkey image built locally, then the real template built and deployed into it with
# samconfig.toml's parameters (PARAMETROS='K=V ...' adds overrides); it prints the store's URL and what to run next.
# Running it again deploys again. deploy-emulated-down stops the account and removes everything it made.
emulated-setup: setup sam-local-setup $(MINISTACK_VENV)/.installed
	@tools/levels/emulated_account/build-images.sh

deploy-emulated: emulated-setup
	@$(PY) -m emulated_account up $(if $(PARAMETROS),--parametros '$(PARAMETROS)')

deploy-emulated-down: setup
	@$(PY) -m emulated_account down

# The deploy level (tests/deploy): make deploy-emulated, then orders, faults, duplicates, a refund, a burst, the
# stack's own records; sam delete, adoption and a second deploy; make deploy-emulated-down (README, Tests).
test-deploy: emulated-setup iam-evaluator
	$(VENV)/bin/pytest tests/deploy -m deploy

invoke: setup services sam-local-setup
	@test -n "$(FN)" && test -n "$(EVENT)" || { echo "usage: make invoke FN=CobroFunction EVENT=events/cobro-pedido.json" >&2; exit 2; }
	@PYTHONPATH=tools/levels:tools:packages/sam_emulator:layers/comun $(PY) -m sam_local invoke $(FN) $(EVENT)

sam-local: setup services sam-local-setup
	@PYTHONPATH=tools/levels:tools:packages/sam_emulator:layers/comun $(PY) -m sam_local serve

demo: setup services
	$(VENV)/bin/mf-demo --escenario $(or $(ESCENARIO),viernes) $(if $(PEDIDOS),--pedidos $(PEDIDOS)) \
		$(if $(MOTOR),--motor $(MOTOR))

# The seeded chaos campaign (issue 15): seeds 1..SEMILLAS, PEDIDOS orders each, split across PROCESOS
# child sessions (each its own moto, Redis, PostgreSQL server), merged into one report.
# A violation prints its seed, order, faults and the command that replays it; exit 1.
caos: setup services iam-evaluator
	$(VENV)/bin/mf-demo --escenario caos --semillas $(or $(SEMILLAS),200) --procesos $(or $(PROCESOS),3) \
		$(if $(PEDIDOS),--pedidos $(PEDIDOS)) $(if $(MOTOR),--motor $(MOTOR))

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
# update the SHA-256 in certificados/README.md and tests/unit/test_db_certificates.py.
RDS_CA_URL ?= https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem
AMAZON_ROOT_CA_URL ?= https://www.amazontrust.com/repository/AmazonRootCA1.pem
rds-ca:
	mkdir -p layers/comun/mercadofresco/certificados
	{ curl -fsS $(RDS_CA_URL) && curl -fsS $(AMAZON_ROOT_CA_URL); } > layers/comun/mercadofresco/certificados/rds-global-bundle.pem.tmp
	mv layers/comun/mercadofresco/certificados/rds-global-bundle.pem.tmp layers/comun/mercadofresco/certificados/rds-global-bundle.pem

clean:
	rm -rf .aws-sam .pytest_cache .ruff_cache build/deploy-level build/emulated-account
