/* kc_degenerate: writes degenerate candidates for a problem (tests only):
 * all-zero outputs, a constant, the first input passed through (where dtype and
 * size allow), and the poison pattern. Each must fail verification.
 * usage: kc_degenerate PROBLEM_ID OUT_DIR   (prints the files written) */
#include "common/error.h"
#include "common/fsutil.h"
#include "common/problem.h"

#include <stdio.h>
#include <string.h>

static const char kernels[] =
    "extern \"C\" __global__ void fill_elems(unsigned char *y, long long n, int esize,\n"
    "                                        unsigned long long pattern)\n"
    "{\n"
    "    long long stride = (long long)gridDim.x * blockDim.x;\n"
    "    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)\n"
    "        for (int b = 0; b < esize; b++)\n"
    "            y[i * esize + b] = (unsigned char)(pattern >> (8 * b));\n"
    "}\n"
    "extern \"C\" __global__ void copy_bytes(const unsigned char *x, unsigned char *y, long long n)\n"
    "{\n"
    "    long long stride = (long long)gridDim.x * blockDim.x;\n"
    "    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)\n"
    "        y[i] = x[i];\n"
    "}\n";

/* The bit pattern of the value 0.5 (floats) or 1 (integers) in a dtype. */
static unsigned long long constant_bits(enum kc_dtype t)
{
    switch (t) {
    case KC_F32: return 0x3F000000ull;
    case KC_F64: return 0x3FE0000000000000ull;
    case KC_F16: return 0x3800ull;
    case KC_BF16: return 0x3F00ull;
    default: return 1ull;
    }
}

static void numel_expr(const tensor_spec *t, strbuf *out)
{
    sb_reset(out);
    sb_adds(out, "1");
    for (int i = 0; i < t->rank; i++)
        sb_addf(out, "*(%s)", t->shape[i]);
}

static int can_pass_through(const problem *p)
{
    const tensor_spec *in = &p->inputs[0], *out = &p->outputs[0];
    int64_t a, b;
    return in->dtype == out->dtype && tensor_numel(in, &p->dims_default, &a, NULL) == 0 &&
           tensor_numel(out, &p->dims_default, &b, NULL) == 0 && a == b;
}

static void fill_launch(strbuf *src, const tensor_spec *t, unsigned long long pattern)
{
    strbuf n = STRBUF_INIT;
    numel_expr(t, &n);
    /* Printed signed: launch expressions are int64 (all ones is -1). */
    sb_addf(src, "// @launch fill_elems<<<4096, 256>>>(%s, %s, %zu, %lld);\n", t->name, n.buf,
            dtype_size(t->dtype), (long long)pattern);
    sb_free(&n);
}

static int write_variant(const problem *p, const char *dir, const char *kind, strbuf *err)
{
    strbuf src = STRBUF_INIT, path = STRBUF_INIT, n = STRBUF_INIT;
    sb_addf(&src, "// Degenerate candidate (%s) for %s: must fail verification.\n%s", kind, p->id,
            kernels);
    for (int k = 0; k < p->n_outputs; k++) {
        const tensor_spec *t = &p->outputs[k];
        if (strcmp(kind, "passthrough") == 0 && k == 0) {
            numel_expr(t, &n);
            sb_addf(&src, "// @launch copy_bytes<<<4096, 256>>>(%s, %s, (%s)*%zu);\n",
                    p->inputs[0].name, t->name, n.buf, dtype_size(t->dtype));
            continue;
        }
        unsigned long long pattern = strcmp(kind, "constant") == 0 ? constant_bits(t->dtype)
                                     : strcmp(kind, "poison") == 0 ? ~0ull
                                                                   : 0ull;
        fill_launch(&src, t, pattern);
    }
    sb_addf(&path, "%s/%s.cu", dir, kind);
    int rc = write_file_atomic(path.buf, src.buf, src.len, err);
    if (rc == 0)
        printf("%s\n", path.buf);
    sb_free(&src), sb_free(&path), sb_free(&n);
    return rc;
}

int main(int argc, char **argv)
{
    kc_set_progname("kc_degenerate");
    if (argc != 3)
        die("usage: kc_degenerate PROBLEM_ID OUT_DIR");
    problem p;
    strbuf err = STRBUF_INIT;
    if (problem_load_by_id(argv[1], &p, &err) || mkdir_p(argv[2], &err))
        die("%s", err.buf);
    const char *kinds[] = {"zeros", "constant", "poison", "passthrough"};
    int n = can_pass_through(&p) ? 4 : 3;
    for (int i = 0; i < n; i++)
        if (write_variant(&p, argv[2], kinds[i], &err))
            die("%s", err.buf);
    problem_free(&p);
    return 0;
}
