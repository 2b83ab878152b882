/* kc_nvrtc_floor: NVRTC's own compile time, for the bench to set beside the sandboxed
 * compile servers' figures. In one bare process (no sandbox, no IPC), after a warm-up
 * compile, it compiles each file given with the verifier's options (nvrtc_compile) and prints
 * the time of each file's first compile, then (with --repeat N) the best of N more compiles
 * of the same source. Where a GPU driver is installed NVRTC serves repeats from its on-disk
 * ComputeCache under $HOME/.nv (docs/results/compile-time.md): run it with a fresh HOME to
 * make first compiles misses.
 * Usage: kc_nvrtc_floor [--repeat N] [--arch sm_90] FILE.cu...
 * Output: one "file first_ms repeat_ms" line per file, then
 *         "nvrtc-floor first: n=N p50=... p90=... min=..." and the same for repeats. */
#include "common/error.h"
#include "common/fsutil.h"
#include "verify/service/nvrtc_compile.h"
#include "verify/service/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void print_stats(const char *label, double *v, int n)
{
    if (n == 0)
        return;
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    printf("nvrtc-floor %s: n=%d p50=%.1f p90=%.1f min=%.1f\n", label, n, v[n / 2],
           v[(int)(0.9 * (n - 1) + 0.5)], v[0]);
}

/* Compile time in ms of one source, or a negative value when it does not compile. */
static double compile_ms(const char *source, const char *arch)
{
    compile_output out;
    compile_output_init(&out);
    strbuf err = STRBUF_INIT;
    int rc = nvrtc_compile(source, arch, cuda_include_dir(), &out, &err);
    double ms = rc == 0 && out.ok ? out.ms : -1;
    compile_output_free(&out);
    sb_free(&err);
    return ms;
}

int main(int argc, char **argv)
{
    int repeat = 0, first_file = 1;
    const char *arch = "sm_90";
    for (; first_file + 1 < argc && strncmp(argv[first_file], "--", 2) == 0; first_file += 2) {
        if (strcmp(argv[first_file], "--repeat") == 0)
            repeat = atoi(argv[first_file + 1]);
        else if (strcmp(argv[first_file], "--arch") == 0)
            arch = argv[first_file + 1];
    }
    if (first_file >= argc)
        die("usage: kc_nvrtc_floor [--repeat N] [--arch sm_90] FILE.cu...");
    compile_ms("extern \"C\" __global__ void kc_warm(float *x) { x[0] = 1.0f; }\n", arch);
    int n = argc - first_file, n_ok = 0, n_rep = 0;
    double *first = xmalloc((size_t)n * sizeof(double)), *again = xmalloc((size_t)n * sizeof(double));
    for (int i = first_file; i < argc; i++) {
        strbuf src = STRBUF_INIT, err = STRBUF_INIT;
        if (read_file(argv[i], &src, &err))
            die("%s", err.buf);
        double ms = compile_ms(src.buf, arch), best = -1;
        for (int r = 0; r < repeat && ms >= 0; r++) {
            double t = compile_ms(src.buf, arch);
            if (best < 0 || t < best)
                best = t;
        }
        printf("%s %.1f %.1f\n", argv[i], ms, best);
        if (ms >= 0)
            first[n_ok++] = ms;
        if (best >= 0)
            again[n_rep++] = best;
        sb_free(&src), sb_free(&err);
    }
    print_stats("first compile of each source", first, n_ok);
    print_stats("best repeated compile of the same source", again, n_rep);
    free(first), free(again);
    return n_ok == n ? 0 : 1;
}
