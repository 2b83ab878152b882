/* nvrtc_compile: NVRTC compilation and its report (see nvrtc_compile.h). */
#include "verify/service/nvrtc_compile.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "verify/service/sandbox.h"

#include <jansson.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void compile_output_init(compile_output *o) { memset(o, 0, sizeof(*o)); }

void compile_output_free(compile_output *o)
{
    sb_free(&o->log);
    sb_free(&o->cubin);
    sb_free(&o->kernels_json);
}

void nvrtc_version_string(char *buf, size_t n)
{
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    snprintf(buf, n, "%d.%d", major, minor);
}

static int is_chatter(const char *line, size_t len)
{
    static const char *prefixes[] = {"ptxas info", "ptxas         .", NULL};
    static const char *contains[] = {"precompiled header", "#630-D", NULL};
    for (int i = 0; prefixes[i]; i++)
        if (len >= strlen(prefixes[i]) && strncmp(line, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    for (int i = 0; contains[i]; i++) {
        const char *hit = strstr(line, contains[i]);
        if (hit && hit < line + len)
            return 1;
    }
    return 0;
}

void compile_log_sanitize(const char *raw, const char *include_dir, strbuf *out)
{
    sb_reset(out);
    size_t inc_len = include_dir ? strlen(include_dir) : 0;
    for (const char *line = raw; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
        if (!is_chatter(line, len)) {
            for (size_t i = 0; i < len; i++) {
                if (inc_len && i + inc_len <= len && strncmp(line + i, include_dir, inc_len) == 0) {
                    sb_adds(out, "<cuda-include>");
                    i += inc_len - 1;
                } else {
                    sb_addch(out, line[i]);
                }
            }
        }
        line += len;
    }
    sb_trim(out);
}

static long number_before(const char *line, const char *word)
{
    const char *hit = strstr(line, word);
    if (!hit)
        return -1;
    const char *p = hit;
    while (p > line && p[-1] == ' ')
        p--;
    while (p > line && p[-1] >= '0' && p[-1] <= '9')
        p--;
    return strtol(p, NULL, 10);
}

static void set_if_found(json_t *k, const char *key, long v)
{
    if (k && v >= 0)
        json_object_set_new(k, key, json_integer(v));
}

void ptxas_report_to_json(const char *raw, strbuf *out)
{
    json_t *arr = json_array();
    json_t *cur = NULL;
    for (const char *line = raw; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char *l = xstrndup(line, len);
        const char *entry = strstr(l, "Compiling entry function '");
        if (entry) {
            entry += strlen("Compiling entry function '");
            const char *q = strchr(entry, '\'');
            cur = json_object();
            json_object_set_new(cur, "name", json_stringn(entry, q ? (size_t)(q - entry) : strlen(entry)));
            json_array_append_new(arr, cur);
        } else if (cur && strstr(l, "bytes stack frame")) {
            set_if_found(cur, "stack_bytes", number_before(l, "bytes stack frame"));
            set_if_found(cur, "spill_stores", number_before(l, "bytes spill stores"));
            set_if_found(cur, "spill_loads", number_before(l, "bytes spill loads"));
        } else if (cur && strstr(l, "Used ")) {
            set_if_found(cur, "registers", number_before(l, "registers"));
            long smem = number_before(l, "bytes smem");
            set_if_found(cur, "shared_bytes", smem < 0 ? 0 : smem);
        }
        free(l);
        line += len + (nl ? 1 : 0);
    }
    char *s = json_dumps(arr, JSON_COMPACT);
    sb_reset(out);
    sb_adds(out, s);
    free(s);
    json_decref(arr);
}

static void program_log(nvrtcProgram prog, strbuf *raw)
{
    size_t n = 0;
    sb_reset(raw);
    if (nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n == 0)
        return;
    sb_grow(raw, n);
    if (nvrtcGetProgramLog(prog, raw->buf) == NVRTC_SUCCESS)
        raw->len = strlen(raw->buf);
}

/* The options of one compile: the arch, the language, the resource report, the include dirs. */
struct nvrtc_options {
    strbuf arch, inc, cccl;
    const char *v[7];
    int n;
};

static void options_build(struct nvrtc_options *o, const char *arch, const char *include_dir)
{
    *o = (struct nvrtc_options){.arch = STRBUF_INIT, .inc = STRBUF_INIT, .cccl = STRBUF_INIT};
    sb_addf(&o->arch, "-arch=%s", arch);
    o->v[o->n++] = o->arch.buf;
    o->v[o->n++] = "-std=c++17";
    o->v[o->n++] = "-default-device";
    o->v[o->n++] = "-Xptxas=-v";
    if (!include_dir)
        return;
    sb_addf(&o->inc, "-I%s", include_dir);
    o->v[o->n++] = o->inc.buf;
    /* CUDA 13 keeps cuda/std, cuda/barrier and what cooperative_groups.h needs here;
     * nvcc searches it after include/, as here. */
    sb_addf(&o->cccl, "%s/cccl", include_dir);
    struct stat st;
    if (stat(o->cccl.buf, &st) == 0 && S_ISDIR(st.st_mode)) {
        sb_reset(&o->cccl);
        sb_addf(&o->cccl, "-I%s/cccl", include_dir);
        o->v[o->n++] = o->cccl.buf;
    }
}

static void options_free(struct nvrtc_options *o)
{
    sb_free(&o->arch), sb_free(&o->inc), sb_free(&o->cccl);
}

void nvrtc_trusted_options(const char *arch, strbuf *out)
{
    struct nvrtc_options o;
    options_build(&o, arch, cuda_include_dir());
    sb_reset(out);
    for (int i = 0; i < o.n; i++)
        sb_addf(out, "%s\n", o.v[i]);
    options_free(&o);
}

int nvrtc_compile(const char *source, const char *arch, const char *include_dir,
                  compile_output *out, strbuf *err)
{
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, source, "candidate.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
        return kc_fail(err, "nvrtcCreateProgram failed");
    strbuf raw = STRBUF_INIT;
    struct nvrtc_options opts;
    options_build(&opts, arch, include_dir);
    double t0 = now_ms();
    nvrtcResult rc = nvrtcCompileProgram(prog, opts.n, opts.v);
    out->ms = now_ms() - t0;
    program_log(prog, &raw);
    compile_log_sanitize(sb_str(&raw), include_dir, &out->log);
    ptxas_report_to_json(sb_str(&raw), &out->kernels_json);
    out->ok = rc == NVRTC_SUCCESS;
    if (out->ok) {
        size_t size = 0;
        nvrtcGetCUBINSize(prog, &size);
        sb_reset(&out->cubin);
        sb_grow(&out->cubin, size);
        if (size && nvrtcGetCUBIN(prog, out->cubin.buf) == NVRTC_SUCCESS)
            out->cubin.len = size;
        if (out->cubin.len == 0) {
            out->ok = 0;
            sb_adds(&out->log, "\n(no cubin produced: is the arch a real one, e.g. sm_90?)");
        }
    } else if (out->log.len == 0) {
        sb_adds(&out->log, nvrtcGetErrorString(rc));
    }
    nvrtcDestroyProgram(&prog);
    options_free(&opts);
    sb_free(&raw);
    return 0;
}

int nvrtc_compile_trusted(const char *source, const char *arch, strbuf *cubin, strbuf *err)
{
    compile_output out;
    compile_output_init(&out);
    int rc = nvrtc_compile(source, arch, cuda_include_dir(), &out, err);
    if (rc == 0 && !out.ok)
        rc = kc_fail(err, "trusted code failed to compile:\n%s", sb_str(&out.log));
    if (rc == 0) {
        sb_reset(cubin);
        sb_add(cubin, out.cubin.buf, out.cubin.len);
    }
    compile_output_free(&out);
    return rc;
}
