/* worker_layers: the diagnosis run after a mismatch (docs/LEVEL3.md, "Which layer went wrong
 * first"). The layer points ("// @layer" lines) of the reference and of the candidate are
 * matched by name under the failing run's dims; the reference's regions, then the candidate's,
 * are copied into two arenas in stream order as each unit runs (cuMemcpyDtoDAsync at each layer
 * point, no synchronisation between launches), the earliest layers first up to a memory cap;
 * then each pair is compared with the harness's kc_compare and kc_worst_index. What it finds
 * is evidence only: it never changes a verdict, flag or timing. */
#include "common/error.h"
#include "common/schedule.h"
#include "verify/worker/worker.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LAYERS_CAP_BYTES (1ull << 30) /* both arenas together, at most a quarter of free memory */

/* One layer name both units have: the reference's first point of it and the candidate's. */
typedef struct layer_pair {
    char *name;
    int ref_line, cand_line;
    int64_t count, cand_count;
    enum kc_dtype dtype, cand_dtype;
    size_t offset; /* in each arena */
    int kept;      /* fits under the cap (and the sizes agree) */
    int copied[2]; /* the reference's and the candidate's region reached the arena */
} layer_pair;

struct wk_layers {
    layer_pair *pairs;
    int n, unmatched_reference, unmatched_candidate;
    const char *cut_at; /* the first pair the cap left out, or NULL */
    size_t bytes;
    CUdeviceptr arena[2]; /* the reference's, the candidate's */
    int side;             /* which arena the running unit's points go to */
};

/* A layer point of one execution: its name under env and its region. */
typedef struct layer_point {
    char *name;
    int line;
    int64_t count;
    enum kc_dtype dtype;
} layer_point;

static void free_points(layer_point *pts, int n)
{
    for (int i = 0; i < n; i++)
        free(pts[i].name);
    free(pts);
}

static int find_point(const layer_point *pts, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(pts[i].name, name) == 0)
            return i;
    return -1;
}

/* The first point of each name in one execution of u under dims, in schedule order. */
static layer_point *list_points(const launch_unit *u, const dimset *dims, int *n)
{
    layer_point *pts = xcalloc(KC_MAX_UNIT_LAYERS, sizeof(*pts));
    launch_iter it;
    strbuf err = STRBUF_INIT, name = STRBUF_INIT;
    *n = 0;
    if (launch_iter_start(&it, u, dims, NULL, &err) == 0) {
        int i, is_layer = 0;
        int64_t index, count;
        while ((i = launch_iter_step(&it, &is_layer)) >= 0 && *n < KC_MAX_UNIT_LAYERS) {
            const layer_spec *l = &u->layers[i];
            if (!is_layer || layer_name(l, &it.env, &name, &err) ||
                layer_region(l, &it.env, INT64_MAX, &index, &count, &err) ||
                find_point(pts, *n, name.buf) >= 0)
                continue;
            pts[(*n)++] = (layer_point){xstrdup(name.buf), l->line, count, l->dtype};
        }
        launch_iter_free(&it);
    }
    sb_free(&err), sb_free(&name);
    return pts;
}

/* The pairs in the reference's order, kept while both arenas fit under cap. */
static void pair_points(wk_layers *L, const layer_point *rp, int nr, const layer_point *cp, int nc,
                        size_t cap)
{
    L->pairs = xcalloc((size_t)(nr ? nr : 1), sizeof(*L->pairs));
    for (int i = 0; i < nr; i++) {
        int k = find_point(cp, nc, rp[i].name);
        if (k < 0) {
            L->unmatched_reference++;
            continue;
        }
        layer_pair *pr = &L->pairs[L->n++];
        *pr = (layer_pair){xstrdup(rp[i].name), rp[i].line, cp[k].line, rp[i].count, cp[k].count,
                           rp[i].dtype, cp[k].dtype, 0, 0, {0, 0}};
        size_t bytes = ((size_t)pr->count * dtype_size(pr->dtype) + 255) & ~(size_t)255;
        int same = pr->count == pr->cand_count && pr->dtype == pr->cand_dtype;
        if (same && !L->cut_at && 2 * (L->bytes + bytes) <= cap) {
            pr->offset = L->bytes;
            pr->kept = 1;
            L->bytes += bytes;
        } else if (same && !L->cut_at) {
            L->cut_at = pr->name;
        }
    }
    for (int k = 0; k < nc; k++)
        L->unmatched_candidate += find_point(rp, nr, cp[k].name) < 0;
}

wk_layers *wk_layers_plan(const launch_unit *ref, const launch_unit *cand, const dimset *dims)
{
    if (!ref->n_layers || !cand->n_layers)
        return NULL;
    int nr, nc;
    layer_point *rp = list_points(ref, dims, &nr), *cp = list_points(cand, dims, &nc);
    size_t free_b = 0, total_b = 0, cap = LAYERS_CAP_BYTES;
    if (cuMemGetInfo(&free_b, &total_b) == CUDA_SUCCESS && free_b / 4 < cap)
        cap = free_b / 4;
    wk_layers *L = xcalloc(1, sizeof(*L));
    pair_points(L, rp, nr, cp, nc, cap);
    free_points(rp, nr), free_points(cp, nc);
    if (L->n == 0 || L->bytes == 0) {
        wk_layers_free(L);
        return NULL;
    }
    for (int s = 0; s < 2; s++)
        if (cuMemAlloc(&L->arena[s], L->bytes) != CUDA_SUCCESS) {
            wk_layers_free(L);
            return NULL;
        }
    return L;
}

void wk_layers_free(wk_layers *L)
{
    if (!L)
        return;
    for (int i = 0; i < L->n; i++)
        free(L->pairs[i].name);
    /* the reference's layer outputs are scrubbed before their memory goes back to the driver,
     * as the reference's outputs are after a run: no later allocation starts with them */
    if ((L->arena[0] || L->arena[1]) && cuCtxSynchronize() == CUDA_SUCCESS) {
        for (int s = 0; s < 2; s++)
            if (L->arena[s])
                cuMemsetD8Async(L->arena[s], WK_POISON, L->bytes, 0);
        cuCtxSynchronize();
    }
    for (int s = 0; s < 2; s++)
        if (L->arena[s]) {
            cuMemFree(L->arena[s]);
            wk_note_release(L->bytes);
        }
    free(L->pairs);
    free(L);
}

void wk_layers_side(wk_layers *L, int side)
{
    L->side = side;
}

int wk_layers_point(wk_gpu *g, wk_layers *L, const layer_spec *l, const dimset *env,
                    const wk_buffer *buf)
{
    strbuf name = STRBUF_INIT, err = STRBUF_INIT;
    int64_t index, count;
    int rc = 0;
    if (layer_name(l, env, &name, &err) == 0 &&
        layer_region(l, env, buf->numel, &index, &count, &err) == 0) {
        for (int i = 0; i < L->n; i++) {
            layer_pair *pr = &L->pairs[i];
            if (!pr->kept || pr->copied[L->side] || strcmp(pr->name, name.buf) != 0)
                continue;
            if (count != pr->count || l->dtype != pr->dtype)
                break; /* a later point of the name with another size: not the one planned */
            size_t es = dtype_size(l->dtype);
            rc = cuMemcpyDtoDAsync(L->arena[L->side] + pr->offset, buf->ptr + (size_t)index * es,
                                   (size_t)count * es, g->stream) == CUDA_SUCCESS ? 0 : -1;
            pr->copied[L->side] = rc == 0;
            break;
        }
    }
    sb_free(&name), sb_free(&err);
    return rc;
}


/* The value of element i of an arena region, as a double (the float dtypes and integers). */
static double read_value(CUdeviceptr region, unsigned long long i, enum kc_dtype t)
{
    unsigned char raw[8] = {0};
    size_t es = dtype_size(t);
    if (cuMemcpyDtoH(raw, region + i * es, es) != CUDA_SUCCESS)
        return NAN;
    float fv;
    uint16_t h;
    uint32_t w;
    switch (t) {
    case KC_F32: memcpy(&fv, raw, 4); return fv;
    case KC_F64: { double d; memcpy(&d, raw, 8); return d; }
    case KC_BF16: memcpy(&h, raw, 2); w = (uint32_t)h << 16; memcpy(&fv, &w, 4); return fv;
    case KC_F16: {
        memcpy(&h, raw, 2);
        int e = (h >> 10) & 31, m = h & 1023;
        double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
        return h >> 15 ? -v : v; }
    case KC_I32: { int32_t i32; memcpy(&i32, raw, 4); return i32; }
    case KC_I64: { int64_t i64; memcpy(&i64, raw, 8); return (double)i64; }
    default: return raw[0];
    }
}

/* One pair compared: kc_compare, then kc_worst_index when something is off. */
static json_t *compare_pair(wk_gpu *g, const wk_layers *L, const layer_pair *pr, double atol,
                            double rtol, int *bad)
{
    wk_cmp_stats st = {0};
    st.worst_index = ~0ull;
    CUdeviceptr out = L->arena[1] + pr->offset, ref = L->arena[0] + pr->offset,
                sp = g->scratch_u64;
    long long n = pr->count;
    int dtype = (int)pr->dtype;
    void *args[] = {&out, &ref, &n, &dtype, &atol, &rtol, &sp};
    if (cuMemcpyHtoDAsync(sp, &st, sizeof(st), g->stream) != CUDA_SUCCESS ||
        wk_launch_harness(g, g->k_compare, n, args) ||
        wk_launch_harness(g, g->k_worst, n, args) ||
        cuMemcpyDtoHAsync(&st, sp, sizeof(st), g->stream) != CUDA_SUCCESS ||
        cuStreamSynchronize(g->stream) != CUDA_SUCCESS)
        return NULL;
    double rel_l2 = st.sum_sq_ref > 0 ? sqrt(st.sum_sq_diff / st.sum_sq_ref) : sqrt(st.sum_sq_diff);
    double max_abs = wk_bits_to_double(st.max_abs_bits);
    json_t *o = json_pack("{s:s,s:i,s:i,s:I,s:I}", "name", pr->name, "line", pr->cand_line,
                          "reference_line", pr->ref_line, "numel", (json_int_t)n, "bad",
                          (json_int_t)st.n_bad);
    json_object_set_new(o, "max_abs", isfinite(max_abs) ? json_real(max_abs) : json_null());
    json_object_set_new(o, "rel_l2", isfinite(rel_l2) ? json_real(rel_l2) : json_null());
    if (st.n_bad && st.worst_index != ~0ull) {
        double got = read_value(out, st.worst_index, pr->dtype);
        double want = read_value(ref, st.worst_index, pr->dtype);
        json_object_set_new(o, "index", json_integer((json_int_t)st.worst_index));
        json_object_set_new(o, "got", isfinite(got) ? json_real(got) : json_null());
        json_object_set_new(o, "expected", isfinite(want) ? json_real(want) : json_null());
    }
    *bad = st.n_bad > 0;
    return o;
}

json_t *wk_layers_evidence(wk_gpu *g, wk_layers *L, const char *dims_name, const char *seed,
                           double atol, double rtol)
{
    json_t *compared = json_array(), *differ = json_array();
    const char *first_bad = NULL, *last_good = NULL;
    for (int i = 0; i < L->n; i++) {
        const layer_pair *pr = &L->pairs[i];
        if (pr->count != pr->cand_count || pr->dtype != pr->cand_dtype)
            json_array_append_new(differ, json_string(pr->name));
        if (!pr->kept || !pr->copied[0] || !pr->copied[1])
            continue;
        int bad = 0;
        json_t *o = compare_pair(g, L, pr, atol, rtol, &bad);
        if (!o)
            break;
        json_array_append_new(compared, o);
        if (bad && !first_bad)
            first_bad = pr->name;
        if (!bad && !first_bad)
            last_good = pr->name;
    }
    json_t *ev = json_pack("{s:s,s:s,s:o,s:s?,s:s?,s:i,s:i,s:s?,s:o}", "dims", dims_name, "seed",
                           seed, "compared", compared, "first_bad", first_bad, "last_good",
                           last_good, "unmatched_reference", L->unmatched_reference,
                           "unmatched_candidate", L->unmatched_candidate, "cut_at", L->cut_at,
                           "sizes_differ", differ);
    return ev;
}
