/* fuzz_expr: libFuzzer target for the dim-expression evaluator (common/expr.c),
 * which reads manifests' shapes and candidates' launch/scratch expressions.
 * Properties: no crash, UB or leak; an error always says why; whatever
 * expr_eval accepts, expr_names (same grammar, no arithmetic) accepts too; a
 * compiled expression (expr_compile, expr_run) succeeds exactly where expr_eval
 * does, with the same value. */
#include "common/expr.h"
#include "fuzz_common.h"

static const dimset *env(void)
{
    static dimset d;
    if (!d.n) {
        dimset_set(&d, "N", 1024);
        dimset_set(&d, "B", 3);
        dimset_set(&d, "Z", 0);
        dimset_set(&d, "O", -1);
        dimset_set(&d, "M", INT64_MAX);
        dimset_set(&d, "K", INT64_MIN);
    }
    return &d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_cstr(data, size);
    strbuf err = STRBUF_INIT;
    int64_t v = 0;
    int eval_rc = expr_eval(text, env(), &v, &err);
    FZ_CHECK(eval_rc == 0 || err.len > 0);
    sb_reset(&err);
    char names[32][64]; /* as many as candidate.c asks for */
    int n = expr_names(text, names, 32, &err);
    FZ_CHECK(n >= -1 && n <= 32);
    FZ_CHECK(n >= 0 || err.len > 0);
    FZ_CHECK(eval_rc != 0 || n >= 0);
    for (int i = 0; i < n; i++)
        FZ_CHECK(memchr(names[i], '\0', 64) != NULL);
    expr_prog prog;
    int64_t w = 0;
    sb_reset(&err);
    int run_rc = expr_compile(text, env(), &prog, &err);
    FZ_CHECK(run_rc == 0 || err.len > 0);
    if (run_rc == 0)
        run_rc = expr_run(&prog, env()->values, &w);
    FZ_CHECK(run_rc == eval_rc);
    FZ_CHECK(run_rc != 0 || w == v);
    expr_prog_free(&prog);
    sb_free(&err);
    free(text);
    return 0;
}
