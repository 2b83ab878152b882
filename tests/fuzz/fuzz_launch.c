/* fuzz_launch: libFuzzer target for the "// @launch", "// @scratch", "// @for" ... "// @end" and
 * "// @layer" lines of a candidate (candidate_parse, launch_geometry, launch_offset_bytes in
 * common/candidate.c; the loop schedule of common/schedule.c), parsed against the level1 and
 * level3 problems (level 3: a packed input's views as arguments, VIEW[INDEX]). Input: a first
 * line naming the problem ("level1/019_relu", "level3/003_deep_narrow_mlp"; anything else picks
 * one by a hash of the line), then the candidate source. Properties: no crash, UB or leak; an error
 * says why; an accepted unit stays within its limits, its steps nest as its loops say, and under
 * every dims set of the problem its schedule starts, issues exactly the launches it counted (at
 * most KC_MAX_UNIT_LAUNCHES, loop variables bound beside the dims), and every launch's geometry,
 * integer arguments and offsets evaluate within the limits the parser checked; its layer points
 * (at most KC_MAX_UNIT_LAYERS) have names and regions inside their buffers. */
#include "common/candidate.h"
#include "common/error.h"
#include "common/schedule.h"
#include "fuzz_common.h"

static problem *problems;
static int n_problems;

static void load_problems(void)
{
    const char *root = getenv("KC_PROBLEMS") ? getenv("KC_PROBLEMS") : "problems";
    char **ids;
    int n;
    strbuf err = STRBUF_INIT, path = STRBUF_INIT;
    if (problems_select(root, "level1,level3", &ids, &n, &err) || n == 0) {
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

/* The steps of an accepted unit: every launch once, each loop's FOR and END where it says, at
 * its depth, nesting at most KC_MAX_LOOP_DEPTH deep. */
static void check_steps(const launch_unit *u)
{
    int seen[KC_MAX_LAUNCHES] = {0}, open[KC_MAX_LOOP_DEPTH + 1], depth = 0;
    FZ_CHECK(u->n_loops >= 0 && u->n_loops <= KC_MAX_LOOPS);
    FZ_CHECK(u->n_layers >= 0 && u->n_layers <= KC_MAX_LAYER_LINES);
    FZ_CHECK(u->n_steps == u->n_launches + 2 * u->n_loops + u->n_layers);
    for (int s = 0; s < u->n_steps; s++) {
        const kc_step *st = &u->steps[s];
        if (st->kind == KC_STEP_LAYER) {
            FZ_CHECK(st->index >= 0 && st->index < u->n_layers);
            continue;
        }
        if (st->kind == KC_STEP_LAUNCH) {
            FZ_CHECK(st->index >= 0 && st->index < u->n_launches && !seen[st->index]);
            seen[st->index] = 1;
            continue;
        }
        FZ_CHECK(st->index >= 0 && st->index < u->n_loops);
        const loop_spec *l = &u->loops[st->index];
        if (st->kind == KC_STEP_FOR) {
            FZ_CHECK(depth < KC_MAX_LOOP_DEPTH && l->depth == depth && l->body == s + 1);
            FZ_CHECK(l->close > s && l->close < u->n_steps && l->end_line > l->line);
            open[depth++] = st->index;
        } else {
            FZ_CHECK(depth > 0 && open[depth - 1] == st->index && l->close == s);
            depth--;
        }
    }
    FZ_CHECK(depth == 0);
}

/* Element count and dtype of buffer t (inputs, outputs, scratch) under dims. */
static int64_t numel_of(const problem *p, const launch_unit *u, int t, const dimset *dims,
                        enum kc_dtype *dtype)
{
    int64_t n = -1;
    strbuf err = STRBUF_INIT;
    if (t < p->n_inputs + p->n_outputs) {
        const tensor_spec *ts = t < p->n_inputs ? &p->inputs[t] : &p->outputs[t - p->n_inputs];
        FZ_CHECK(tensor_numel(ts, dims, &n, &err) == 0);
        *dtype = ts->dtype;
    } else {
        const scratch_spec *sc = &u->scratch[t - p->n_inputs - p->n_outputs];
        FZ_CHECK(expr_eval(sc->count, dims, &n, &err) == 0);
        *dtype = sc->dtype;
    }
    sb_free(&err);
    return n;
}

/* One launch of the expansion, at a dims set the parser checked: what it accepted evaluates. */
static void check_launch(const problem *p, const launch_unit *u, const launch *l, const dimset *env)
{
    int64_t grid[3], block[3], smem, v;
    strbuf err = STRBUF_INIT;
    FZ_CHECK(launch_geometry(l, env, grid, block, &smem, &err) == 0);
    for (int k = 0; k < 3; k++)
        FZ_CHECK(grid[k] >= 0 && block[k] >= 1 && block[k] <= KC_MAX_BLOCK_THREADS);
    FZ_CHECK(block[0] * block[1] * block[2] <= KC_MAX_BLOCK_THREADS);
    FZ_CHECK(smem >= 0 && smem <= KC_MAX_DYNAMIC_SMEM);
    for (int a = 0; a < l->n_args; a++) {
        const launch_arg *g = &l->args[a];
        FZ_CHECK((g->kind == KC_ARG_OFFSET) == (g->offset != NULL));
        if (g->kind == KC_ARG_INT)
            FZ_CHECK(expr_eval(g->text, env, &v, &err) == 0);
        if (g->kind != KC_ARG_OFFSET)
            continue;
        FZ_CHECK(g->tensor >= 0 && g->tensor < p->n_inputs + p->n_outputs + u->n_scratch);
        enum kc_dtype dtype;
        int64_t numel = numel_of(p, u, g->tensor, env, &dtype);
        FZ_CHECK(launch_offset_bytes(g, env, numel, dtype, &v, &err) == 0);
        FZ_CHECK(v >= 0);
    }
    sb_free(&err);
}

/* A layer point of the expansion: its name and region evaluate, the region inside its buffer. */
static void check_layer(const problem *p, const launch_unit *u, const layer_spec *l,
                        const dimset *env)
{
    strbuf err = STRBUF_INIT, name = STRBUF_INIT;
    enum kc_dtype dtype;
    int64_t index, count;
    FZ_CHECK(l->tensor >= p->n_inputs && l->tensor < p->n_inputs + p->n_outputs + u->n_scratch);
    int64_t numel = numel_of(p, u, l->tensor, env, &dtype);
    FZ_CHECK(dtype == l->dtype);
    FZ_CHECK(layer_name(l, env, &name, &err) == 0 && name.len <= KC_MAX_LAYER_NAME);
    FZ_CHECK(layer_region(l, env, numel, &index, &count, &err) == 0);
    FZ_CHECK(index >= 0 && count >= 1 && index + count <= numel);
    sb_free(&err), sb_free(&name);
}

/* Every dims set the parser checked: the schedule starts and issues what it counted, and its
 * launches evaluate through the evaluator (the parser checked them all through compiled
 * expressions, which fuzz_expr holds to the evaluator): each launch line's first 16 launches
 * and every 1024th after, so that a unit at the launch cap stays within the time limit. */
static void evaluate(const problem *p, const launch_unit *u)
{
    const dimset *sets[2 + KC_MAX_ALT] = {problem_dims(p, KC_DIMS_DEFAULT, 0),
                                          problem_dims(p, KC_DIMS_SMALL, 0)};
    int n_sets = 2;
    for (int a = 0; a < p->n_alt; a++)
        sets[n_sets++] = problem_dims(p, KC_DIMS_ALT, a);
    strbuf err = STRBUF_INIT;
    for (int s = 0; s < n_sets; s++) {
        launch_iter it;
        FZ_CHECK(launch_iter_start(&it, u, sets[s], "fuzz", &err) == 0);
        FZ_CHECK(it.total >= 0 && it.total <= KC_MAX_UNIT_LAUNCHES);
        int64_t issued = 0, seen[KC_MAX_LAUNCHES] = {0};
        for (int i; (i = launch_iter_next(&it)) >= 0; issued++) {
            FZ_CHECK(i < u->n_launches && issued < it.total);
            FZ_CHECK(it.env.n >= it.n_dims && it.env.n <= it.n_dims + KC_MAX_LOOP_DEPTH);
            if (seen[i] < 16 || seen[i] % 1024 == 0)
                check_launch(p, u, &u->launches[i], &it.env);
            seen[i]++;
        }
        FZ_CHECK(issued == it.total);
        launch_iter_free(&it);
        int64_t points = 0;
        FZ_CHECK(launch_iter_start(&it, u, sets[s], "fuzz", &err) == 0);
        for (int i, is_layer; (i = launch_iter_step(&it, &is_layer)) >= 0;)
            if (is_layer && points++ < 64)
                check_layer(p, u, &u->layers[i], &it.env);
        FZ_CHECK(points == it.layers && points <= KC_MAX_UNIT_LAYERS);
        launch_iter_free(&it);
        for (int i = 0; i < u->n_scratch; i++) {
            int64_t count;
            FZ_CHECK(expr_eval(u->scratch[i].count, sets[s], &count, &err) == 0 && count >= 0);
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
        check_steps(&u);
        evaluate(p, &u);
    } else {
        FZ_CHECK(err.len > 0);
    }
    launch_unit_free(&u);
    sb_free(&err);
    free(text);
    return 0;
}
