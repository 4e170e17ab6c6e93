# dimctl — top-level entry points. Each target installs and builds what it needs.
#   sudo make run    build and run the controller in shadow mode on this host (metrics on 127.0.0.1)
#   sudo make test   build and run every test (unit, kernel, e2e, lab, Release build, ASan/UBSan)
#   sudo make asan   the ASan/UBSan tree alone: build $(BUILD)-asan, run unit and kernel tests
#   make bench       benchmarks -> docs/BENCHMARKS.md figures
#   make lab         the RDMA lab alone (qemu + Debian 6.1 kernel + rxe + NVMe-oF)
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
CONFIG ?= deploy/config/dimctl.yaml

.PHONY: all deps build test asan unit-test run bench lab format format-check clean
.DELETE_ON_ERROR:

all: build

deps:
	@bash scripts/deps.sh

# -Werror here (and in every tree scripts/test.sh builds), not in a plain `cmake` configure.
$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DDIMCTL_WERROR=ON $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

test: build
	CMAKE_FLAGS="$(CMAKE_FLAGS)" JOBS=$(JOBS) bash scripts/test.sh $(BUILD)

asan: deps
	CMAKE_FLAGS="$(CMAKE_FLAGS)" JOBS=$(JOBS) bash scripts/test.sh $(BUILD) asan

unit-test: build
	ctest --test-dir $(BUILD) -L unit --output-on-failure -j $(JOBS)

run: build
	bash scripts/run.sh $(BUILD) $(CONFIG)

bench: build
	bash scripts/bench.sh $(BUILD)

lab: build
	bash tests/lab/run.sh $(BUILD)

format: $(BUILD)/build.ninja
	cmake --build $(BUILD) --target format

format-check: $(BUILD)/build.ninja
	cmake --build $(BUILD) --target format-check

clean:
	rm -rf $(BUILD) $(BUILD)-release $(BUILD)-asan
