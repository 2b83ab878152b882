# tests.mk: the test targets (included by the Makefile).
# make test      installs Debian deps, builds everything with ASan/UBSan under build/asan,
#                runs the CPU suite: tests/unit/test_*.c (cmocka) and tests/cli/test_*.sh.
# make test-gpu  builds normally and runs tests/gpu/run.sh (skips cleanly without a GPU).
# make bench     runs tests/bench/run.sh (GPU parts skip without a GPU).
# make fuzz      builds the libFuzzer targets of tests/fuzz/ (clang, ASan/UBSan) under $(FUZZ_O) and
#                runs each for FUZZ_SECONDS (default 60; FUZZ_TARGETS picks some); `make test`
#                runs each for FUZZ_SMOKE_SECONDS (default 10) after replaying its regressions.

TEST_O      ?= build/asan
UNIT_SRC    := $(wildcard tests/unit/test_*.c)
UNIT_BIN    := $(patsubst tests/unit/%.c,$(BIN)/tests/%,$(UNIT_SRC))
TESTLIB_SRC := $(wildcard tests/lib/*.c)
# verify/cli/serve_request.c (kverify serve's requests and rewards) is outside VERIFY_CLI: added here.
ALL_MODULE_OBJ = $(COMMON_OBJ) $(VERIFY_HOST) $(VERIFY_CLI) $(call obj,verify/cli/serve_request.c) $(call obj,$(COLLECT_SRC)) \
                 $(call obj,$(CURATE_SRC)) $(call obj,$(EXPORT_SRC)) $(call obj,$(TESTLIB_SRC))
TEST_HELPERS := $(patsubst tests/helpers/%.c,$(BIN)/%,$(wildcard tests/helpers/*.c))

$(BIN)/tests/%: $(OBJ)/tests/unit/%.o $(ALL_MODULE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka -lcurl -larchive -lz $(NVRTC) $(LIBS)

# The worker's one CUDA-free module a unit test reads (the rest of verify/worker/ needs the driver).
$(BIN)/tests/test_worker_profile: $(call obj,verify/worker/worker_profile.c)

# Test servers and helper programs (fake LLM server, fixture generators): one file each.
$(BIN)/%: $(OBJ)/tests/helpers/%.o $(COMMON_OBJ) $(call obj,$(TESTLIB_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcurl -larchive -lz $(LIBS)

# NVRTC's own compile time in a bare process (the bench sets it beside the compile servers').
$(BIN)/kc_nvrtc_floor: $(OBJ)/tests/helpers/kc_nvrtc_floor.o $(COMMON_OBJ) $(call obj,verify/service/nvrtc_compile.c verify/service/sandbox.c)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(NVRTC) $(LIBS)

.PHONY: unit-tests test-build
unit-tests: $(UNIT_BIN) $(TEST_HELPERS)
test-build: all unit-tests

test: deps
	@$(MAKE) --no-print-directory O=$(TEST_O) SAN=1 test-build
	@$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk FUZZ_O=$(FUZZ_O)
	@KC_FUZZ_O=$(FUZZ_O) FUZZ_SMOKE_SECONDS=$(FUZZ_SMOKE_SECONDS) sh tests/run.sh $(TEST_O)

FUZZ_O             ?= build/fuzz
FUZZ_SECONDS       ?= 60
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_TARGETS       ?=
.PHONY: fuzz fuzz-build
fuzz-build:
	@$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk FUZZ_O=$(FUZZ_O)
fuzz: fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh fuzz $(FUZZ_O) $(FUZZ_TARGETS)

test-gpu: all $(TEST_HELPERS)
	@sh tests/gpu/run.sh $(O)

bench: all $(TEST_HELPERS)
	@sh tests/bench/run.sh $(O)
