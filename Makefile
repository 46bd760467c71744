# kope — top-level entry points. The README's two commands:
#   make run    install what is missing, build, run the main job offline
#   make test   install what is missing, build, run every test
# CMake does the real work underneath (build/ and build-asan/).

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
WERROR     ?= OFF
CMAKE_ARGS ?=

.PHONY: all setup build run test test-sanitize ci clean

all: build

setup:
	@bash scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKOPE_WERROR=$(WERROR) $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	KOPE=./$(BUILD)/kope bash scripts/run.sh

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-sanitize: setup
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DKOPE_WERROR=$(WERROR) -DKOPE_SANITIZE=ON $(CMAKE_ARGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

ci:
	$(MAKE) test WERROR=ON
	$(MAKE) test-sanitize WERROR=ON

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
