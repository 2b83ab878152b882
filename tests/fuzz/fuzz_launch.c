/* fuzz_launch: libFuzzer target for the "// @launch" and "// @scratch" lines of
 * a candidate (candidate_parse and launch_geometry, common/candidate.c), parsed
 * against the level1 problems. Input: a first line naming the problem
 * ("level1/019_relu"; anything else picks one by a hash of the line), then the
 * candidate source. Properties: no crash, UB or leak; an error says why; an
 * accepted unit stays within its limits and its expressions evaluate
 * or fail cleanly under every dims set of the problem. */
#include "common/candidate.h"
#include "common/error.h"
#include "fuzz_common.h"

static problem *problems;
static int n_problems;

static void load_problems(void)
{
    const char *root = getenv("KC_PROBLEMS") ? getenv("KC_PROBLEMS") : "problems";
    char **ids;
    int n;
    strbuf err = STRBUF_INIT, path = STRBUF_INIT;
    if (problems_select(root, "level1", &ids, &n, &err) || n == 0) {
        fprintf(stderr, "fuzz_launch: no problems under %s (set KC_PROBLEMS): %s\n", root, err.buf);
        abort();
    }
    problems = xcalloc((size_t)n, sizeof *problems);
    for (int i = 0; i < n; i++) {
        if (problem_manifest_path(root, ids[i], &path, &err) ||
            problem_load(path.buf, &problems[n_problems], &err)) {
            fprintf(stderr, "fuzz_launch: %s\n", err.buf);
            abort();
        }
        n_problems++;
    }
    problems_free_ids(ids, n);
    sb_free(&err), sb_free(&path);
}

static const problem *pick(const char *line, size_t len)
{
    unsigned h = 0;
    for (int i = 0; i < n_problems; i++)
        if (strlen(problems[i].id) == len && memcmp(problems[i].id, line, len) == 0)
            return &problems[i];
    for (size_t i = 0; i < len; i++)
        h = h * 31 + (unsigned char)line[i];
    return &problems[h % (unsigned)n_problems];
}

static void evaluate(const problem *p, const launch_unit *u)
{
    const dimset *sets[2 + KC_MAX_ALT] = {problem_dims(p, KC_DIMS_DEFAULT, 0),
                                          problem_dims(p, KC_DIMS_SMALL, 0)};
    int n_sets = 2;
    for (int a = 0; a < p->n_alt; a++)
        sets[n_sets++] = problem_dims(p, KC_DIMS_ALT, a);
    strbuf err = STRBUF_INIT;
    for (int s = 0; s < n_sets; s++) {
        for (int i = 0; i < u->n_launches; i++) {
            int64_t grid[3], block[3], smem;
            if (launch_geometry(&u->launches[i], sets[s], grid, block, &smem, &err))
                FZ_CHECK(err.len > 0);
        }
        for (int i = 0; i < u->n_scratch; i++) {
            int64_t count;
            if (expr_eval(u->scratch[i].count, sets[s], &count, &err))
                FZ_CHECK(err.len > 0);
        }
    }
    sb_free(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!problems)
        load_problems();
    char *text = fz_cstr(data, size);
    char *nl = strchr(text, '\n');
    size_t head = nl ? (size_t)(nl - text) : strlen(text);
    const problem *p = pick(text, head);
    const char *source = nl ? nl + 1 : "";
    launch_unit u;
    strbuf err = STRBUF_INIT;
    if (candidate_parse(source, p, &u, &err) == 0) {
        FZ_CHECK(u.n_launches >= 1 && u.n_launches <= KC_MAX_LAUNCHES);
        FZ_CHECK(u.n_scratch >= 0 && u.n_scratch <= KC_MAX_SCRATCH);
        for (int i = 0; i < u.n_launches; i++)
            FZ_CHECK(u.launches[i].n_args >= 0 && u.launches[i].n_args <= KC_MAX_ARGS);
        evaluate(p, &u);
    } else {
        FZ_CHECK(err.len > 0);
    }
    launch_unit_free(&u);
    sb_free(&err);
    free(text);
    return 0;
}
