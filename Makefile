# strata — two commands: `make demo` and `make test`. Both install what they need first.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
DEMO_DIR ?= runs/demo
CMAKE_FLAGS ?=

.PHONY: all deps build test demo bench fuzz clean

all: build

deps:
	bash scripts/install-deps

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

demo: build
	bash scripts/demo $(BUILD_DIR)/strata $(DEMO_DIR)

bench: build
	bash scripts/bench $(BUILD_DIR)

# libFuzzer on every parser for FUZZ_SECONDS each (default 60); see docs/reliability.md.
fuzz: deps
	bash scripts/fuzz

clean:
	rm -rf $(BUILD_DIR)
