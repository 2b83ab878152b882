# fuzz.mk: builds the libFuzzer targets of tests/fuzz/ (make -f tests/fuzz/fuzz.mk, or through
# `make fuzz` / `make test`) with clang -fsanitize=fuzzer,address,undefined into $(FUZZ_O).
# Without a clang that can link libFuzzer it builds nothing and says so (tests/fuzz/run.sh then
# prints SKIP for each target); `make deps` installs clang and libclang-rt-14-dev.

FUZZ_O      ?= build/fuzz
FUZZ_CC     ?= clang
FUZZ_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c17 -O1 -g -Wall -Wextra -Wno-missing-field-initializers -D_GNU_SOURCE \
               -DKC_VERSION='"fuzz"' -I. -Itests/fuzz -MMD -MP $(FUZZ_SAN)
FUZZ_LIBS   := -lsqlite3 -ljansson -lcrypto -lm -lpthread

# The targets (one per parser of untrusted bytes) and the modules they link.
FUZZ_TARGETS := $(shell cat tests/fuzz/targets)
FUZZ_MODULES := common/strbuf.c common/die.c common/error.c common/expr.c common/candidate.c common/schedule.c common/problem.c common/problem_shared.c common/problem_hidden.c common/problem_values.c \
                common/suite.c common/fsutil.c common/prompt_text.c common/hash.c common/verdicts.c common/gpu_peaks.c \
                collect/llm_wire.c collect/sse.c verify/service/ipc.c verify/service/policy.c verify/service/gpu_result.c verify/service/deadline.c \
                common/db.c $(FUZZ_O)/gen/kc_sql.c curate/merge.c curate/db_check.c \
                verify/cli/serve_request.c verify/service/report.c common/reward.c
FUZZ_MOD_OBJ := $(patsubst %.c,$(FUZZ_O)/obj/%.o,$(FUZZ_MODULES))
FUZZ_BINS    := $(patsubst %,$(FUZZ_O)/fuzz_%,$(FUZZ_TARGETS))

# Whether this clang links libFuzzer (clang + libclang-rt-<version>-dev on Debian).
FUZZ_PROBE := $(shell mkdir -p $(FUZZ_O) && printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; return (int)n * 0; }\n' > $(FUZZ_O)/probe.c && $(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_O)/probe.c -o $(FUZZ_O)/probe >/dev/null 2>&1 && echo yes)

.PHONY: all
ifeq ($(FUZZ_PROBE),yes)
all: $(FUZZ_BINS)
else
all:
	@echo "fuzz: SKIP build: '$(FUZZ_CC)' cannot link libFuzzer (install clang and libclang-rt-14-dev: make deps)"
	@rm -f $(FUZZ_BINS)
endif

# The schema as a C string (as the Makefile makes it), for the merge target's databases.
$(FUZZ_O)/gen/kc_sql.c: schemas/kc.sql
	@mkdir -p $(dir $@)
	@{ echo '/* generated from schemas/kc.sql by make: do not edit */'; \
	   echo 'const char kc_schema_sql[] ='; \
	   sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } > $@

$(FUZZ_O)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_O)/fuzz_%: $(FUZZ_O)/obj/tests/fuzz/fuzz_%.o $(FUZZ_MOD_OBJ)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(FUZZ_LIBS)

.SECONDARY:
-include $(shell find $(FUZZ_O)/obj -name '*.d' 2>/dev/null)
