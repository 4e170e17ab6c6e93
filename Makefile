# dimctl — top-level entry points. Each target installs and builds what it needs.
#   sudo make run    build and run the controller in shadow mode on this host (metrics on 127.0.0.1)
#   sudo make test   build and run every test (unit, kernel, e2e, lab, Release build, ASan/UBSan)
#   sudo make asan   the ASan/UBSan tree alone: build $(BUILD)-asan, run unit and kernel tests
#   make bench       benchmarks -> docs/BENCHMARKS.md figures
#   sudo make bench-host  every policy on this host's kernel (veth, software moderation, sockperf)
#   sudo make bench-overhead  what dimctl costs a busy host: flood, QD=1 and a paced rate per state
#   make lab         both labs under qemu: RDMA (Debian 6.1 + rxe + NVMe-oF) and net (7.x + igb)
#   sudo make soak   the churn soak for SOAK_SECONDS (default 1800) instead of CTest's 120
#   sudo make torture  the crash torture for TORTURE_KILLS (default 2000) instead of CTest's 200
#   make fuzz        libFuzzer harnesses in a clang tree (build-fuzz), FUZZ_SECONDS (600) each
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# Release: what users and packagers build, so the tests run on it and make test need not build a
# second optimized tree (scripts/test.sh's release tier checks this tree instead).
BUILD_TYPE ?= Release
CONFIG ?= deploy/config/dimctl.yaml
SOAK_SECONDS ?= 1800
TORTURE_KILLS ?= 2000
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 600

.PHONY: all deps build test asan unit-test run bench bench-host bench-overhead lab soak torture fuzz format format-check clean
.DELETE_ON_ERROR:

all: build

deps:
	@bash scripts/deps.sh

# -Werror here (and in every tree scripts/test.sh builds), not in a plain `cmake` configure.
$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DDIMCTL_WERROR=ON $(CMAKE_FLAGS)

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

# Root: network namespaces, napi-set and BPF. ~30 minutes; bench/host/run.sh says how to run shorter.
bench-host: build
	bash bench/host/run.sh $(BUILD)

# Root: namespaces, BPF. ~20 minutes; bench/host/overhead.sh says how to run shorter or longer.
bench-overhead: build
	bash bench/host/overhead.sh $(BUILD)

# LABS=rdma or LABS=net runs one; each runs even when the other failed.
LABS ?= rdma net
lab: build
	@rc=0; for l in $(LABS); do \
	  case $$l in rdma) bash tests/lab/run.sh $(BUILD) || rc=1 ;; \
	    net) bash tests/lab/net/run.sh $(BUILD) || rc=1 ;; *) echo "unknown lab $$l"; rc=1 ;; esac; \
	done; exit $$rc

soak: build
	SOAK_SECONDS=$(SOAK_SECONDS) bash tests/kernel/soak/soak_test.sh $(BUILD)/userspace/cli/dimctl

# SIGKILL at random moments, restore, compare (docs/TESTING.md, "Crash torture"); TORTURE_SEED=.
torture: build
	TORTURE_KILLS=$(TORTURE_KILLS) bash tests/kernel/torture/torture_test.sh $(BUILD)/userspace/cli/dimctl

# A tree of its own: clang, every target under ASan+UBSan, the harnesses under libFuzzer.
# Warnings are not errors there: clang warns about libbpf's LIBBPF_OPTS macro, gcc does not.
fuzz: deps
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DDIMCTL_FUZZ=ON -DDIMCTL_WERROR=OFF \
	  -DDIMCTL_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) --target fuzz -j $(JOBS)
	bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

format: $(BUILD)/build.ninja
	cmake --build $(BUILD) --target format

format-check: $(BUILD)/build.ninja
	cmake --build $(BUILD) --target format-check

clean:
	rm -rf $(BUILD) $(BUILD)-release $(BUILD)-asan
