# The recipe the layers' and the functions' Makefiles include (layers/comun, layers/postgres,
# functions; `sam build` runs them, BuildMethod: makefile, with ARTIFACTS_DIR set).
#
# Why not SAM's default python builder: it installs every transitive dependency, and
# aws-xray-sdk depends on botocore, so the layer shipped its own botocore (plus jmespath,
# python-dateutil, six, urllib3: 30 MB) in /opt/python, ahead of, and shadowing, the copy
# that Lambda's python3.13 runtime ships with its boto3. Here each layer's requirements.txt
# lists its complete closure minus what the runtime (and, for layers/postgres, layers/comun)
# provides, installed with --no-deps for the template's architecture; then every module is
# compiled once, layers and functions alike, because /opt and /var/task are read-only in
# Lambda: a module without its .pyc is compiled again on every cold start. unchecked-hash .pyc
# files stay valid whatever mtimes the zip round trip leaves. bench/bench_cold_start.py
# measures the result (sizes, runtime packages, import time).
#
# SAM's build cache (samconfig.toml: cached = true) hashes each layer's or function's own folder,
# not this file nor functions/Makefile: after editing them, run `sam build --no-cached` once.
#
# The architecture of the layers' compiled wheels: SAM tells a makefile build nothing but
# ARTIFACTS_DIR (aws-lambda-builders' custom_make workflow), so each layer's Metadata names
# ContextPath: layers/${Architecture}, and the Makefile there (layers/arm64, layers/x86_64) sets
# ARCHITECTURE and includes the layers' recipes. `sam build --parameter-overrides
# Architecture=x86_64` alone therefore builds x86_64 wheels, and SAM's cache keeps one build per
# architecture (BuildArchitecture and that Makefile are part of a layer's cache key).

PYTHON ?= python3
MACHINE = $(if $(filter x86_64,$(ARCHITECTURE)),x86_64,aarch64)
PLATFORMS = manylinux2014_$(MACHINE) manylinux_2_28_$(MACHINE)
PYTHON_VERSION := 3.13

# $(call install_requirements,<requirements.txt>): the pinned wheels for ARCHITECTURE into
# $(ARTIFACTS_DIR)/python.
define install_requirements
	$(if $(filter arm64 x86_64,$(ARCHITECTURE)),,$(error ARCHITECTURE is '$(ARCHITECTURE)': build the layers through layers/<arm64|x86_64>/Makefile, as sam build does))
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --no-deps --no-compile --only-binary=:all: \
		$(foreach p,$(PLATFORMS),--platform $(p)) --implementation cp --python-version $(PYTHON_VERSION) \
		--target "$(ARTIFACTS_DIR)/python" -r "$(1)"
endef

# $(call compile,<dir>): every module under <dir> compiled once, by the runtime's Python version,
# nothing stale kept.
define compile
	$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 13), "the .pyc files must match the runtime: python3.13"'
	find "$(1)" -name __pycache__ -prune -exec rm -rf {} +
	$(PYTHON) -m compileall -q -j 0 --invalidation-mode unchecked-hash "$(1)" > /dev/null
endef

# $(compile_layer): the same for a layer, whose modules Lambda finds under /opt/python.
compile_layer = $(call compile,$(ARTIFACTS_DIR)/python)

# $(call install_pure_requirements,<requirements.txt>,<dir>): a function's own requirements (the durable SDK)
# into <dir>, pure-Python wheels only: SAM builds the functions with ContextPath functions, which tells
# nothing of the architecture, so a compiled wheel is refused here rather than shipped for the wrong CPU.
define install_pure_requirements
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --no-deps --no-compile --only-binary=:all: \
		--platform any --implementation py --python-version $(PYTHON_VERSION) --target "$(2)" -r "$(1)"
endef
