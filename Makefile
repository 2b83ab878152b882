# kcorpus build. make (tools) · make test (CPU suite, CI) · make test-gpu · make bench · make deps
# O=<dir> puts objects and binaries elsewhere (bin/ and obj/ by default); SAN=1 builds with ASan/UBSan.

O        ?= .
CUDA     ?= /usr/local/cuda
CC       ?= cc
BIN      := $(O)/bin
OBJ      := $(O)/obj
GEN      := $(O)/gen
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

CFLAGS   ?= -O2 -g
CFLAGS   += -std=c17 -Wall -Wextra -Wshadow -Wno-missing-field-initializers -D_GNU_SOURCE \
            -DKC_VERSION='"$(VERSION)"' -I. -I$(GEN) -I$(CUDA)/include -MMD -MP
ifeq ($(SAN),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
endif
CUDA_LIB := -L$(CUDA)/lib64 -Wl,-rpath,$(CUDA)/lib64 -Wl,-rpath,/usr/local/cuda/lib64
LIBS     := -lsqlite3 -ljansson -lcrypto -lm -lpthread -ldl
NVRTC    := $(CUDA_LIB) -lnvrtc
# kverify-gpu loads libcuda at run time (verify/worker/worker_driver.c): it is not linked, so the
# worker starts, and says why it cannot work, on a machine without the driver. CUPTI loads without it.
CUDADRV  := $(CUDA_LIB) -lcupti

COMMON_SRC  := $(wildcard common/*.c) $(GEN)/kc_sql.c
# verify/ holds three programs' code: service/ (the verification library kverify, kcollect and
# kverify-gpu link; verify/service/verify.h), cli/ (kverify's subcommands) and worker/ (kverify-gpu).
SERVICE_SRC := $(wildcard verify/service/*.c)
# kverify serve (libmicrohttpd) is linked into kverify alone; its reward rule is common/reward.c.
SERVE_SRC   := verify/cli/cli_serve.c verify/cli/serve_request.c
CLI_SRC     := $(filter-out verify/cli/main.c $(SERVE_SRC),$(wildcard verify/cli/*.c))
WORKER_SRC  := $(filter-out verify/worker/worker_main.c,$(wildcard verify/worker/*.c))
COLLECT_SRC := $(filter-out collect/main.c,$(wildcard collect/*.c))
CURATE_SRC  := $(filter-out curate/main.c,$(wildcard curate/*.c))
EXPORT_SRC  := $(filter-out export/main.c,$(wildcard export/*.c))

obj = $(patsubst %.c,$(OBJ)/%.o,$(patsubst $(GEN)/%,gen/%,$(1)))
COMMON_OBJ  := $(call obj,$(COMMON_SRC))
# Host-side verifier modules (no driver API, with the harness source the worker compiles) and
# the GPU worker's (verify/worker/, linked only into kverify-gpu, the one binary that loads
# libcuda and CUPTI).
VERIFY_HOST := $(call obj,$(SERVICE_SRC)) $(OBJ)/gen/harness_cu.o $(OBJ)/gen/harness_cubins.o
VERIFY_CLI  := $(call obj,$(CLI_SRC))
VERIFY_GPU  := $(call obj,$(WORKER_SRC))
SERVE_OBJ   := $(call obj,$(SERVE_SRC))

# A tool is built once its main.c exists.
TOOLS := $(if $(wildcard verify/cli/main.c),$(BIN)/kverify) \
         $(if $(wildcard verify/worker/worker_main.c),$(BIN)/kverify-gpu) \
         $(if $(wildcard collect/main.c),$(BIN)/kcollect) \
         $(if $(wildcard collect/main.c),$(BIN)/fake_llm) \
         $(if $(wildcard curate/main.c),$(BIN)/kcurate) \
         $(if $(wildcard export/main.c),$(BIN)/kexport)

.PHONY: all test test-gpu bench deps deps-run clean demo check-tools
# Keep intermediate objects (helpers are built by a pattern rule through them).
.SECONDARY:
all: $(TOOLS)

$(GEN)/kc_sql.c: schemas/kc.sql
	@mkdir -p $(GEN)
	@{ echo '/* generated from schemas/kc.sql by make: do not edit */'; \
	   echo 'const char kc_schema_sql[] ='; \
	   sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } > $@

$(GEN)/harness_cu.c: verify/worker/harness.cu
	@mkdir -p $(GEN)
	@{ echo '/* generated from verify/worker/harness.cu by make: do not edit */'; \
	   echo 'const char kc_harness_source[] ='; \
	   sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } > $@

# The harness compiled at build time for these GPU architectures (verify/service/harness_module.c;
# any other is compiled at run time), by NVRTC with the verifier's trusted options.
HARNESS_ARCHS ?= sm_80 sm_86 sm_89 sm_90 sm_100 sm_120
$(OBJ)/tools/harness_cubin: $(OBJ)/tools/harness_cubin.o $(OBJ)/gen/harness_cu.o $(COMMON_OBJ) \
                            $(call obj,verify/service/nvrtc_compile.c verify/service/sandbox.c)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(NVRTC) $(LIBS)

$(GEN)/harness_cubins.c: $(OBJ)/tools/harness_cubin Makefile
	@mkdir -p $(GEN)
	ASAN_OPTIONS=detect_leaks=0 $< $(HARNESS_ARCHS) > $@.tmp && mv $@.tmp $@

$(OBJ)/gen/%.o: $(GEN)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BIN)/kverify: $(OBJ)/verify/cli/main.o $(SERVE_OBJ) $(VERIFY_CLI) $(VERIFY_HOST) $(COMMON_OBJ)
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(NVRTC) -lmicrohttpd $(LIBS)

$(BIN)/kverify-gpu: $(OBJ)/verify/worker/worker_main.o $(VERIFY_GPU) $(VERIFY_HOST) $(COMMON_OBJ)
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(NVRTC) $(CUDADRV) $(LIBS)

$(BIN)/kcollect: $(OBJ)/collect/main.o $(call obj,$(COLLECT_SRC)) $(VERIFY_HOST) $(COMMON_OBJ)
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(NVRTC) -lcurl $(LIBS)

$(BIN)/kcurate: $(OBJ)/curate/main.o $(call obj,$(CURATE_SRC)) $(COMMON_OBJ)
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BIN)/kexport: $(OBJ)/export/main.o $(call obj,$(EXPORT_SRC)) $(call obj,$(CURATE_SRC)) $(COMMON_OBJ)
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ -larchive -lz $(LIBS)

# deps: everything (build, run and test); deps-run: only what building and running need.
deps:
	@sh tools/deps.sh test
deps-run:
	@sh tools/deps.sh run

# The main job on a fresh machine: installs what is missing (not the test-only packages:
# Chromium, clang, cmocka), builds, runs the whole pipeline.
demo: deps-run
	@$(MAKE) --no-print-directory all $(BIN)/fake_llm
	@sh tools/demo.sh $(O)

clean:
	rm -rf $(BIN) $(OBJ) $(GEN) build

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)
-include tests/tests.mk
