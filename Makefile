# Entry points: `make test` (set-up, build, every test, sanitizer builds) and `make demo`.
# Everything the project needs comes from Debian's packages, installed by `make deps`.
SHELL := /bin/bash
JOBS ?= $(shell nproc)
CTEST_FLAGS ?= --output-on-failure -j $(JOBS)
# Debian packages the build, the tests and the plotting tools need.
DEB_PACKAGES := cmake ninja-build g++ make pkg-config libgtest-dev libgmock-dev libbenchmark-dev \
  libfmt-dev nlohmann-json3-dev libcli11-dev libhwloc-dev openmpi-bin libopenmpi-dev \
  mpich libmpich-dev python3 python3-matplotlib python3-numpy clang-format-14 emboss emboss-data \
  clang libclang-rt-14-dev zlib1g-dev slurm-wlm munge ccache time

.PHONY: all deps build test test-mpich demo format format-check clean fuzz-long fuzz-corpus
# build-<preset> and test-<preset> (release, asan, tsan, dev, nompi) are pattern rules below;
# GNU make skips pattern rules for .PHONY targets, so they are forced with FORCE instead.
FORCE:
.PRECIOUS: build/%/build.ninja

all: build

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# The release and MPICH builds share a compiler cache (ccache, from make deps; in build/.ccache
# unless CCACHE_DIR says otherwise): with the same flags, the MPICH build compiles again only the
# sources that see mpi.h (libs/comm). The other builds have flags of their own and no cache.
export CCACHE_DIR ?= $(CURDIR)/build/.ccache
export CCACHE_BASEDIR ?= $(CURDIR)
CACHED_PRESETS := release mpich
build/%/build.ninja:
	launcher=$$(command -v ccache || true); \
	[ -n "$(filter $*,$(CACHED_PRESETS))" ] || launcher=; \
	cmake --preset $* $${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER=$$launcher -DCMAKE_C_COMPILER_LAUNCHER=$$launcher} > /dev/null

build-%: deps build/%/build.ninja FORCE
	cmake --build build/$* -j $(JOBS)

build: build-release

test-%: build-% FORCE
	ctest --test-dir build/$* $(CTEST_FLAGS)

# TSan reports lock-order and double-lock warnings inside Open MPI, PMIx and libevent (not in
# tilepipe); the MPI-launched tests (label mpi) therefore run in the release and asan builds only.
test-tsan: CTEST_FLAGS += -LE mpi

# The MPICH build (TILEPIPE_MPI=mpich, docs/mpi.md): the executable, with the release build's
# flags so that everything but libs/comm comes from the compiler cache, then a smoke run under
# mpiexec.mpich and the refusal of Open MPI's launcher (the release build checks the reverse).
test-mpich: deps build/mpich/build.ninja FORCE
	cmake --build build/mpich -j $(JOBS) --target tilepipe
	tests/mpi/launcher_smoke.sh build/mpich/apps/tilepipe/tilepipe mpiexec.mpich mpirun.openmpi

# The fuzz preset (clang, libFuzzer + ASan + UBSan) builds only the fuzz targets and the libraries
# they need (tests/fuzz); its tests run each target TILEPIPE_FUZZ_SECONDS (10) from the committed
# seed corpus.
build-fuzz: deps build/fuzz/build.ninja FORCE
	cmake --build build/fuzz -j $(JOBS) --target fuzz_targets

test: test-release test-mpich test-asan test-tsan test-fuzz format-check

# A long fuzzing run (docs/benchmarks.md, "Faults"): every target FUZZ_SECONDS, FUZZ_JOBS at once;
# the corpus it learns stays in build/fuzz/corpus/, findings go to build/fuzz/findings/.
FUZZ_TARGETS := fuzz_fasta fuzz_score_matrix fuzz_machine_file fuzz_plan_values fuzz_link fuzz_npy
FUZZ_SECONDS ?= 600
FUZZ_JOBS ?= $(JOBS)
FUZZ_FLAGS = -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1
fuzz-long: build-fuzz
	@mkdir -p build/fuzz/findings
	printf '%s\n' $(FUZZ_TARGETS) | xargs -P $(FUZZ_JOBS) -I{} sh -c \
	  'mkdir -p build/fuzz/corpus/{} && build/fuzz/tests/fuzz/{} -max_total_time=$(FUZZ_SECONDS) \
	   $(FUZZ_FLAGS) -artifact_prefix=build/fuzz/findings/{}- build/fuzz/corpus/{} \
	   tests/fuzz/corpus/{} > build/fuzz/findings/{}.log 2>&1; \
	   status=$$?; tail -n 12 build/fuzz/findings/{}.log | grep -E "stat::|ERROR|SUMMARY"; \
	   echo "{}: exit $$status"; exit $$status'

# Merges what the fuzzers learned into the committed seed corpus (only inputs that add coverage).
fuzz-corpus: build-fuzz
	for t in $(FUZZ_TARGETS); do \
	  build/fuzz/tests/fuzz/$$t -merge=1 tests/fuzz/corpus/$$t build/fuzz/corpus/$$t || exit 1; \
	done

# The seeds' plans, then the seeds' experiment on this machine (issues 5 and 15): calibrate through
# an emulated link that makes moving a tile's face cost about as much as computing the tile (the
# seeds' regime: 48 z bytes at 400 MB/s against 72 z points at about 1.5 ns here), sweep blocking
# against overlapping at every tile height with the model's curves, run the model's choice; the
# plot is build/demo/sweep.png. With one CPU per node the two groupings are one schedule.
DEMO_TP := ./build/release/apps/tilepipe/tilepipe
DEMO_SIZE ?= 12x12x262144
DEMO_LINK ?= latency=10us,bandwidth=400MB/s
DEMO_HEIGHTS ?= 256:32768
demo: build-release
	$(DEMO_TP) plan --kernel wave3d --size 12x12x524288 --nodes 9 --cpus 1 --schedule overlap --tile 1024
	$(DEMO_TP) plan --kernel wave3d --size 16x16x65536 --nodes 8 --cpus 2 --schedule overlap --grouping hyperplane --tile 1024
	@mkdir -p build/demo
	$(DEMO_TP) calibrate -o build/demo/machine.json --link $(DEMO_LINK) --kernel wave3d --size $(DEMO_SIZE) --nodes 2 --cpus 1 --tile-heights $(DEMO_HEIGHTS)
	$(DEMO_TP) sweep --kernel wave3d --size $(DEMO_SIZE) --nodes 2 --cpus 1 --link $(DEMO_LINK) --tile-heights $(DEMO_HEIGHTS) --schemes blocking+hyperplane,overlap+hyperplane --repeat 3 --machine build/demo/machine.json --csv build/demo/sweep.csv --plot build/demo/sweep.png
	$(DEMO_TP) run --kernel wave3d --size $(DEMO_SIZE) --nodes 2 --cpus 1 --link $(DEMO_LINK) --machine build/demo/machine.json
	@echo "make demo: the plot is build/demo/sweep.png (measurement as points with their min-max, model as lines, the model's choice as a star)"

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format-14 -i

format-check:
	@git ls-files '*.cpp' '*.hpp' | xargs clang-format-14 --dry-run --Werror

clean:
	rm -rf build
