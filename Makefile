# The README's quick start:
#   make collect   set up, build, and collect evidence for every provider this host supports
#   make test      set up, build, and run every test suite
#   make build     build only
#   make install   install under PREFIX (default /usr/local), honouring DESTDIR
#   make deb       a Debian package (CPack) in BUILD/
#   make collect SIGN_KEY=~/.ssh/id_ed25519   a signed bundle (unsigned without SIGN_KEY)
#   make coverage  run every test suite in an instrumented build; gcovr reports
BUILD ?= build
CMAKE_FLAGS ?=
CTEST_ARGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# Tests at once: three per core. Most of the suite waits on real deadlines
# (timeouts, cancels, a subject that never returns), not on the CPU: on 2
# cores ctest -j4 took 121-129 s and -j6 95-103 s when the suite used
# 165-198 s of CPU (the whole machine's, the daemons' included); with
# 163-168 s, -j6 takes 82.7-85.6 s. The CPU is the floor, so more jobs buy
# little.
TEST_JOBS ?= $(shell echo $$(( $(JOBS) * 3 )))
OUTPUT ?=
PREFIX ?= /usr/local
SIGN_KEY ?=

.PHONY: deps test-deps test-user configure build collect test coverage coverage-tests coverage-report clean install deb

deps:
	./workflows/install-deps.sh

test-deps:
	./workflows/install-deps.sh --test

# The unprivileged user the tests switch to (created when root and missing).
test-user:
	./workflows/test-user.sh

configure:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

collect: deps build
	./$(BUILD)/agsbx-evidence collect $(if $(SIGN_KEY),--sign-key $(SIGN_KEY),--unsigned) $(if $(OUTPUT),--output $(OUTPUT))

install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix $(PREFIX)

deb: build
	cd $(BUILD) && cpack -G DEB

test: test-deps test-user build
	cd $(BUILD) && ctest --output-on-failure -j $(TEST_JOBS) $(CTEST_ARGS)

# Counters from an earlier run would inflate this one: start from zero, run
# the suite in an instrumented build, then write the reports into
# build-coverage/ (coverage.txt, coverage-html/, coverage.xml,
# coverage-summary.json). A failing test fails the target before any report.
# The instrumented build runs several times slower; a test that fails there
# gets one more run (reported by ctest) before it fails the target
# (COVERAGE_RETRY; empty: no retry).
#   make coverage-tests    the reset and the suite only
#   make coverage-report   the reports from the counters there are
COVERAGE_RETRY ?= --repeat until-pass:2
coverage:
	$(MAKE) coverage-tests
	$(MAKE) coverage-report

coverage-tests:
	$(MAKE) configure BUILD=build-coverage CMAKE_FLAGS="-DAGSBX_COVERAGE=ON $(CMAKE_FLAGS)"
	cmake --build build-coverage --target coverage-reset
	$(MAKE) test BUILD=build-coverage CMAKE_FLAGS="-DAGSBX_COVERAGE=ON $(CMAKE_FLAGS)" \
	  CTEST_ARGS="$(COVERAGE_RETRY) $(CTEST_ARGS)"

coverage-report:
	cmake --build build-coverage --target coverage

clean:
	rm -rf $(BUILD) build-coverage
