# The README names two targets: `make quick` (set up, calibrate the default testbed and
# run the quick benchmark scaled to it) and `make test`. Everything they need is
# installed by `setup`.
SHELL := /bin/bash
# bpftool, ip and sysctl live in /usr/sbin, which a non-login shell may lack
export PATH := $(PATH):/usr/sbin:/sbin
VENV := .venv
PY := $(VENV)/bin/python
ITB := $(VENV)/bin/itb
APT_PACKAGES := iproute2 iputils-ping iperf3 ethtool procps chromium
# ITB's eBPF congestion controls (bpf/) are compiled against the running kernel's BTF;
# Linux's own source of them (linux-source-6.12) is the oracle of their differential test.
BPF_OUT := build/bpf/$(shell uname -r)
BPF_STAMP := $(BPF_OUT)/.built
# linkem and flow come from one cargo build; the stamp says it ran.
NATIVE_STAMP := native/target/release/.built

.PHONY: setup system-deps python native bpf enoslib calibrate quick test root lint unit integration native-test bench clean

# Once the system packages are there, the Python environments, the native build and the
# eBPF objects need nothing of each other: they are made side by side (-j, each one's
# output kept together, -O).
setup: system-deps
	@$(MAKE) --no-print-directory -j4 -O python native bpf enoslib

system-deps:
	@missing=""; for t in ip:iproute2 ping:iputils-ping iperf3:iperf3 ethtool:ethtool sysctl:procps chromium:chromium \
	  clang:clang bpftool:bpftool /usr/include/bpf/bpf_helpers.h:libbpf-dev gcc:gcc \
	  /usr/src/linux-source-6.12.tar.xz:linux-source-6.12 g++:g++ /usr/include/udt/udt.h:libudt-dev \
	  globus-url-copy:globus-gass-copy-progs /usr/sbin/globus-gridftp-server:globus-gridftp-server-progs \
	  /usr/sbin/sshd:openssh-server sudo:sudo /usr/include/nlohmann/json.hpp:nlohmann-json3-dev \
	  /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4:libtcmalloc-minimal4; do \
	  { command -v $${t%%:*} || test -e $${t%%:*}; } >/dev/null || missing="$$missing $${t##*:}"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; fi
	@command -v cargo >/dev/null || { echo "cargo (Rust) is required: https://rustup.rs"; exit 1; }

python: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,sim]'
	touch $@

# EnOSlib (reservations on Grid'5000, Chameleon, Vagrant, static inventories) pins rich 12,
# which ITB's CLI cannot share: it gets an environment of its own, which ITB calls
# (src/itb/backends/ssh/enos_helper.py).
ENOS_VENV := .venv-enoslib
enoslib: $(ENOS_VENV)/.installed
$(ENOS_VENV)/.installed:
	python3 -m venv $(ENOS_VENV)
	$(ENOS_VENV)/bin/pip install -q --upgrade pip
	$(ENOS_VENV)/bin/pip install -q 'enoslib>=10,<11'
	touch $@

# The UDT endpoint (C++ on Debian's libudt, UDT4): profile pursuit with UDT.
UDT_BIN := build/native/itb-udt

native: $(NATIVE_STAMP) $(UDT_BIN)
$(UDT_BIN): native/udt/itb_udt.cpp
	mkdir -p $(dir $@)
	g++ -std=c++17 -O2 -Wall -o $@ $< -ludt -lpthread

$(NATIVE_STAMP): $(shell find native -path native/target -prune -o \( -name '*.rs' -o -name Cargo.toml -o -name Cargo.lock \) -print)
	cd native && cargo build --release --quiet
	touch $@

bpf: $(BPF_STAMP)
$(BPF_STAMP): $(wildcard bpf/*.c bpf/*.h)
	mkdir -p $(BPF_OUT)
	bpftool btf dump file /sys/kernel/btf/vmlinux format c > $(BPF_OUT)/vmlinux.h
	for f in bpf/*.bpf.c; do \
	  clang -O2 -g -Wall -target bpf -D__TARGET_ARCH_x86 -I$(BPF_OUT) -c $$f -o $(BPF_OUT)/$$(basename $${f%.c}).o || exit 1; done
	touch $@

# Calibrate the default testbed against its configuration (exit 1 if a check is off).
calibrate: setup
	$(ITB) calibrate --json-file runs/calibration.json

# The main job: calibrate, then the quick benchmark scaled to the calibrated rate. A
# check that is off is reported by the calibration and recorded with the results.
quick: setup
	$(ITB) calibrate --json-file runs/calibration.json || test -s runs/calibration.json
	$(ITB) bench --quick

# The whole suite: every test, native and Python (the integration tests build namespaces:
# root). The 25 slowest tests are printed. What builds no testbed runs beside what does
# (integration: one at a time, under their own lock), so that a testbed's timing is not
# disturbed: the unit and service tests (some of which time themselves) at the lowest CPU
# priority, then the native tests, lint and types, the simulation tests and the
# differential test of the congestion controls (which time nothing) under the idle
# scheduling policy (SCHED_IDLE: only on a core nothing else wants, preempted at once by a
# waking testbed process); their output follows.
test: root setup
	@mkdir -p build; { nice -n 19 $(PY) -m pytest tests/unit tests/service -q -ra \
	  --durations=10 -p no:cacheprovider --basetemp=build/pytest-unit; u=$$?; \
	  chrt --idle 0 $(MAKE) --no-print-directory native-test; n=$$?; \
	  chrt --idle 0 $(MAKE) --no-print-directory lint; l=$$?; \
	  chrt --idle 0 $(PY) -m pytest tests/sim -q -ra --durations=5 -p no:cacheprovider \
	  --basetemp=build/pytest-sim; s=$$?; \
	  chrt --idle 0 $(PY) -m pytest tests/difftest -q -ra --durations=3 -p no:cacheprovider \
	  --basetemp=build/pytest-difftest; exit $$(( u || n || l || s || $$? )); } \
	  > build/unit-tests.log 2>&1 & \
	  pid=$$!; \
	  $(PY) -m pytest tests/integration -q -ra --durations=25; rc=$$?; \
	  wait $$pid; urc=$$?; \
	  echo "--- tests/unit, tests/service, native tests, lint, tests/sim, tests/difftest (run alongside):"; \
	  cat build/unit-tests.log; \
	  exit $$(( rc || urc ))

root:
	@[ "$$(id -u)" = 0 ] || { echo "make test needs root: the integration tests build network namespaces (run it as root, or \`make unit\` for the tests that do not)"; exit 1; }

# ruff on the Python (the lint rules, then the formatting: `ruff format --check` fails on
# any file `ruff format` would change), mypy on src/itb, rustfmt (native/rustfmt.toml) and
# clippy on the Rust.
lint: python
	$(PY) -m ruff check src tests bench
	$(PY) -m ruff format --check src tests bench
	$(PY) -m mypy src/itb
	cargo clippy --version >/dev/null 2>&1 || rustup component add clippy
	cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt
	cd native && cargo fmt --all --check
	cd native && cargo clippy --release --all-targets --quiet -- -D warnings

native-test:
	cd native && cargo test --release --quiet

unit: python
	$(PY) -m pytest tests/unit -q

integration: setup
	$(PY) -m pytest tests/integration -q -ra

bench: setup
	$(PY) bench/emulator.py
	$(PY) bench/frames.py
	$(PY) bench/endpoint.py

clean:
	-$(ITB) clean
