# Starling's front door. `make demo` and `make test` each install what is missing, build,
# and run. Everything below is a thin wrapper over scripts/ and CMake.
MAKEFLAGS += --no-print-directory
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
STARLING = $(BUILD)/cli/starling

.PHONY: all deps bench-deps configure build starling demo test arm64 docs readme bench experiments scaling fuzz faults soak clean

all: build

deps:
	@scripts/deps.sh

bench-deps:
	@scripts/deps.sh bench

configure: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

# Everything: the executable, the tests, the benchmarks and the examples.
build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Only what the demo runs: the `starling` executable and its libraries.
starling: configure
	@cmake --build $(BUILD) -j $(JOBS) --target starling

# The single-node run, then a short experiment (4 peers, 3 sync modes and PyTorch DDP).
demo: starling
	$(STARLING) train --config configs/fmnist-mlp.toml --summary $(BUILD)/demo-summary.json
	$(STARLING) experiment --config configs/experiments/demo.toml --out results/demo

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Cross-build for 64-bit Arm into build-arm64/ and run the unit suites, a short MLP and GPT
# training and `starling --version` under qemu-aarch64-static (scripts/arm64.sh).
arm64:
	JOBS=$(JOBS) scripts/arm64.sh build-arm64

# The config reference's key table (docs/config.md) from the schema (cli/config_schema.cpp);
# a test fails until it is rerun. `readme` is its old name.
docs: starling
	scripts/config_keys_doc.sh $(STARLING) docs/config.md

readme: docs

bench: bench-deps build
	@scripts/bench.sh $(BUILD)

# The shipped experiments into results/<name>/ (bandwidth needs root for its namespaces).
experiments: build
	for e in compare-sync compare-codecs crossbow bandwidth noniid; do \
	  $(STARLING) experiment --config configs/experiments/$$e.toml --out results/$$e || exit 1; done

# Predicted speedup at 1-1024 peers for every exchange mode, 10 and 1 Gbit/s, MLP and CNN
# (starling simulate): results/scaling/*.json and scaling-{mlp,cnn}.png.
scaling: build
	/usr/bin/python3 scripts/plot_scaling.py --starling $(STARLING) --out results/scaling

# libFuzzer on every decoder and the frame parser (clang from Debian), FUZZ_SECONDS each.
FUZZ_SECONDS ?= 60
fuzz: build
	tests/protocols/fuzz/build.sh $(BUILD) $(BUILD)/fuzz $(FUZZ_SECONDS)

# Fault scenarios on Fashion-MNIST: peers killed, a train resumed, a flood (scripts/faults.sh).
faults: build
	scripts/faults.sh $(BUILD)

# 8 peers for 20 minutes, resident memory sampled (scripts/soak.sh; SOAK_SECONDS to shorten).
soak: build
	scripts/soak.sh $(BUILD)

clean:
	rm -rf $(BUILD)
