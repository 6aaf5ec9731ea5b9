# The README's quick start:
#   make collect   set up, build, and collect evidence for every provider this host supports
#   make test      set up, build, and run every test suite
#   make build     build only
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
OUTPUT ?=

.PHONY: deps test-deps test-user configure build collect test coverage clean

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
	./$(BUILD)/agsbx-evidence collect --unsigned $(if $(OUTPUT),--output $(OUTPUT))

test: test-deps test-user build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

coverage:
	$(MAKE) test BUILD=build-coverage CMAKE_FLAGS="-DAGSBX_COVERAGE=ON"
	cmake --build build-coverage --target coverage

clean:
	rm -rf $(BUILD) build-coverage
