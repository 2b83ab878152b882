/* nvrtc_compile: one NVRTC compilation to a cubin for a real architecture,
 * with resource usage (registers, shared memory, spills) read from ptxas's
 * verbose report and a compile log cleaned of compiler chatter and host paths. */
#ifndef KC_NVRTC_COMPILE_H
#define KC_NVRTC_COMPILE_H
#include "common/strbuf.h"

typedef struct compile_output {
    int ok;
    strbuf log;          /* sanitized */
    strbuf cubin;
    double ms;
    strbuf kernels_json; /* [{"name","registers","shared_bytes","stack_bytes","spill_stores","spill_loads"}] */
} compile_output;

void compile_output_init(compile_output *o);
void compile_output_free(compile_output *o);
/* include_dir may be NULL (no -I). No -pch: with NVRTC 13 a reused precompiled header
 * compiled slower than parsing the toolkit headers again (docs/results/compile-time.md). */
int nvrtc_compile(const char *source, const char *arch, const char *include_dir,
                  compile_output *out, strbuf *err);
void nvrtc_version_string(char *buf, size_t n);
/* Trusted code (the harness, the problems' references), in this process with the toolkit
 * headers: the cubin, or -1 with the compile log in err. */
int nvrtc_compile_trusted(const char *source, const char *arch, strbuf *cubin, strbuf *err);
/* The options nvrtc_compile_trusted compiles with for arch, one a line (what names a kept
 * reference cubin, cubin_cache.h, besides the source, arch and NVRTC version). */
void nvrtc_trusted_options(const char *arch, strbuf *out);
/* Exposed for tests. */
void compile_log_sanitize(const char *raw, const char *include_dir, strbuf *out);
void ptxas_report_to_json(const char *raw, strbuf *json);

#endif
