/* worker_dump: `kverify dump`: regenerates a problem's inputs for a seed and
 * dims set on the GPU, runs the trusted reference, and writes every input and
 * reference output as .npy (little-endian; bf16 as uint16 bits) with a
 * meta.json, so anyone can check our references with their own tools. */
#include "common/error.h"
#include "common/fsutil.h"
#include "verify/service/nvrtc_compile.h"
#include "verify/worker/worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DUMP_CHUNK (256u << 20)

static const char *npy_descr(enum kc_dtype t)
{
    static const char *d[KC_DTYPE_COUNT] = {"<f4", "<f2", "<u2", "<f8", "<i4", "<i8", "|u1", "|b1"};
    return d[t];
}

static void npy_header(const tensor_spec *t, const dimset *dims, strbuf *out)
{
    strbuf dict = STRBUF_INIT;
    sb_addf(&dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", npy_descr(t->dtype));
    for (int i = 0; i < t->rank; i++) {
        int64_t v = 0;
        expr_eval(t->shape[i], dims, &v, NULL);
        sb_addf(&dict, "%lld,%s", (long long)v, i + 1 < t->rank ? " " : "");
    }
    sb_adds(&dict, "), }");
    size_t total = 10 + dict.len + 1;
    size_t pad = (64 - total % 64) % 64;
    for (size_t i = 0; i < pad; i++)
        sb_addch(&dict, ' ');
    sb_addch(&dict, '\n');
    sb_add(out, "\x93NUMPY\x01\x00", 8);
    unsigned char len[2] = {(unsigned char)(dict.len & 255), (unsigned char)(dict.len >> 8)};
    sb_add(out, len, 2);
    sb_add(out, dict.buf, dict.len);
    sb_free(&dict);
}

static int write_npy(const char *path, const tensor_spec *t, const dimset *dims, const wk_buffer *b,
                     strbuf *err)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return kc_fail(err, "cannot create %s: %s", path, strerror(errno));
    strbuf head = STRBUF_INIT;
    npy_header(t, dims, &head);
    int rc = fwrite(head.buf, 1, head.len, f) == head.len ? 0 : -1;
    sb_free(&head);
    char *chunk = xmalloc(DUMP_CHUNK);
    for (size_t off = 0; rc == 0 && off < b->bytes; off += DUMP_CHUNK) {
        size_t n = b->bytes - off < DUMP_CHUNK ? b->bytes - off : DUMP_CHUNK;
        if (cuMemcpyDtoH(chunk, b->ptr + off, n) != CUDA_SUCCESS || fwrite(chunk, 1, n, f) != n)
            rc = -1;
    }
    free(chunk);
    if (fclose(f) != 0)
        rc = -1;
    return rc ? kc_fail(err, "writing %s failed", path) : 0;
}

static json_t *tensor_meta(const tensor_spec *t, const dimset *dims, const char *file)
{
    json_t *shape = json_array();
    for (int i = 0; i < t->rank; i++) {
        int64_t v = 0;
        expr_eval(t->shape[i], dims, &v, NULL);
        json_array_append_new(shape, json_integer(v));
    }
    return json_pack("{s:s,s:s,s:o,s:s}", "name", t->name, "dtype", dtype_name(t->dtype), "shape",
                     shape, "file", file);
}

static json_t *dims_json(const dimset *d)
{
    json_t *o = json_object();
    for (int i = 0; i < d->n; i++)
        json_object_set_new(o, d->names[i], json_integer(d->values[i]));
    return o;
}

static json_t *params_json(const problem *p)
{
    json_t *o = json_object();
    for (int i = 0; i < p->n_params; i++)
        json_object_set_new(o, p->params[i].name, json_real(p->params[i].value));
    return o;
}

/* Writes all tensors and meta.json; buffers hold inputs then reference outputs. */
static int write_dump(const problem *p, const dimset *dims, uint64_t seed, const char *dims_name,
                      wk_buffer *bufs, json_t *profile, const char *out_dir, strbuf *err)
{
    json_t *ins = json_array(), *outs = json_array();
    strbuf path = STRBUF_INIT, file = STRBUF_INIT;
    int rc = 0;
    for (int i = 0; rc == 0 && i < p->n_inputs + p->n_outputs; i++) {
        int is_in = i < p->n_inputs;
        const tensor_spec *t = is_in ? &p->inputs[i] : &p->outputs[i - p->n_inputs];
        sb_reset(&file);
        sb_addf(&file, "%s_%s.npy", is_in ? "in" : "ref", t->name);
        path_join(&path, out_dir, file.buf);
        rc = write_npy(path.buf, t, dims, &bufs[i], err);
        json_array_append_new(is_in ? ins : outs, tensor_meta(t, dims, file.buf));
    }
    char seed_str[32];
    snprintf(seed_str, sizeof(seed_str), "%llu", (unsigned long long)seed);
    json_t *meta = json_pack("{s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:f,s:f,s:s}", "problem", p->id, "seed",
                             seed_str, "dims_name", dims_name, "dims", dims_json(dims), "params",
                             params_json(p), "inputs", ins, "outputs", outs, "atol", p->atol, "rtol",
                             p->rtol, "note", "bf16 tensors are stored as their uint16 bit patterns");
    if (profile)
        json_object_set(meta, "profile", profile);
    path_join(&path, out_dir, "meta.json");
    if (rc == 0 && json_dump_file(meta, path.buf, JSON_INDENT(2)) != 0)
        rc = kc_fail(err, "cannot write %s", path.buf);
    json_decref(meta);
    sb_free(&path), sb_free(&file);
    return rc;
}

/* runs more executions of the loaded reference under CUPTI, by kernel (its outputs are
 * rewritten with the same values: a reference is deterministic). */
static int profile_reference(wk_gpu *g, wk_unit *ref, const problem *p, const dimset *dims,
                             wk_buffer *bufs, int runs, json_t **out, wk_failure *f)
{
    wk_kernel_profile *t = xcalloc(1, sizeof(*t));
    wk_cupti_profile_into(t);
    int begun = wk_cupti_begin(), rc = begun ? 0 : -1;
    if (!begun)
        sb_adds(&f->message, "CUPTI is unavailable: no profile");
    for (int r = 0; rc == 0 && r < runs; r++)
        rc = wk_unit_launch(g, ref, p, dims, bufs, NULL, f) ||
             cuStreamSynchronize(g->stream) != CUDA_SUCCESS;
    wk_cupti_end(begun);
    wk_cupti_profile_into(NULL);
    if (rc == 0)
        *out = wk_profile_json(t, runs);
    free(t);
    return rc;
}

static int run_reference_into(wk_gpu *g, const problem *p, const dimset *dims, wk_buffer *bufs,
                              int profile_runs, json_t **profile, strbuf *err)
{
    strbuf cubin = STRBUF_INIT;
    wk_unit ref = {0};
    wk_failure f = {0};
    int rc = nvrtc_compile_trusted(p->reference_source.buf, g->arch, &cubin, err);
    if (rc == 0 && wk_unit_load(&ref, cubin.buf, p->reference_source.buf, p, &f))
        rc = kc_fail(err, "reference: %s", sb_str(&f.message));
    int base = p->n_inputs + p->n_outputs;
    for (int i = 0; rc == 0 && i < ref.lu.n_scratch; i++) {
        int64_t n;
        rc = expr_eval(ref.lu.scratch[i].count, dims, &n, err) ||
             wk_buffer_alloc(g, &bufs[base + i], ref.lu.scratch[i].dtype, n, err);
    }
    if (rc == 0 && (wk_unit_launch(g, &ref, p, dims, bufs, NULL, &f) ||
                    cuStreamSynchronize(g->stream) != CUDA_SUCCESS))
        rc = kc_fail(err, "the reference failed: %s", sb_str(&f.message));
    if (rc == 0 && profile_runs > 0 &&
        profile_reference(g, &ref, p, dims, bufs, profile_runs, profile, &f))
        rc = kc_fail(err, "profiling the reference failed: %s", sb_str(&f.message));
    for (int i = 0; i < ref.lu.n_scratch; i++)
        wk_buffer_free(&bufs[base + i]);
    wk_unit_free(&ref);
    sb_free(&cubin), sb_free(&f.message);
    return rc;
}

/* Set K of "boundK" or "stratK" with seed into *out. */
static int cover_set(const problem *p, const char *name, uint64_t seed, dimset *out, strbuf *err)
{
    char family[6];
    snprintf(family, sizeof family, "%.5s", name);
    int k = atoi(name + 5);
    dimset sets[KC_MAX_BOUNDARY > KC_MAX_STRATIFIED ? KC_MAX_BOUNDARY : KC_MAX_STRATIFIED];
    int n = problem_cover_sets(p, family, seed, sets, (int)(sizeof sets / sizeof *sets), err);
    if (n < 0)
        return -1;
    int rc = k < n ? 0 : kc_fail(err, "%s has %d %s sets with seed %llu: no %s", p->id, n, family,
                                 (unsigned long long)seed, name);
    for (int i = 0; i < n; i++) {
        if (i == k && rc == 0)
            *out = sets[i]; /* the caller frees it */
        else
            dimset_free(&sets[i]);
    }
    return rc;
}

/* The profile's costliest kernels, one line each (kverify-gpu then says what it dumped). */
static void print_profile(const json_t *profile)
{
    json_t *k = json_object_get(profile, "kernels");
    printf("  reference: %.3f ms of kernels an execution, %.0f launches (%d runs under CUPTI)\n",
           json_number_value(json_object_get(profile, "device_ms")),
           json_number_value(json_object_get(profile, "launches")),
           (int)json_integer_value(json_object_get(profile, "runs")));
    for (size_t i = 0; i < json_array_size(k) && i < 12; i++) {
        json_t *r = json_array_get(k, i);
        printf("  %10.3f ms %8.0f launches  %s\n", json_number_value(json_object_get(r, "ms")),
               json_number_value(json_object_get(r, "launches")),
               json_string_value(json_object_get(r, "kernel")));
    }
}

int wk_dump(wk_gpu *g, const char *problem_id, uint64_t seed, const char *dims_name,
            const char *out_dir, int profile_runs, strbuf *err)
{
    problem p;
    enum kc_dims_kind kind;
    int alt = 0;
    if (problem_load_by_id(problem_id, &p, err))
        return -1;
    dimset drawn = {0};
    int hidden = strncmp(dims_name, "hidden", 6) == 0, rc = 0;
    int cover = !strncmp(dims_name, "bound", 5) || !strncmp(dims_name, "strat", 5);
    const dimset *dims = NULL;
    if (hidden) /* hiddenK: index K of the generator, drawn with the dump's seed */
        rc = problem_draw_dims(&p, seed, atoi(dims_name + 6), &drawn, err);
    else if (cover) /* boundK, stratK: set K of the family, from the dump's seed */
        rc = cover_set(&p, dims_name, seed, &drawn, err);
    else if (dims_kind_parse(dims_name, &kind, &alt) == 0)
        dims = problem_dims(&p, kind, alt);
    if ((hidden || cover) && rc == 0)
        dims = &drawn;
    wk_buffer bufs[2 * KC_MAX_TENSORS + KC_MAX_SCRATCH] = {0};
    if (rc == 0)
        rc = dims ? mkdir_p(out_dir, err)
                  : kc_fail(err, "unknown dims '%s' (default, small, alt0.., hidden0.., bound0.., "
                            "strat0..)", dims_name);
    for (int i = 0; rc == 0 && i < p.n_inputs + p.n_outputs; i++) {
        tensor_spec varied; /* constants varied on hidden dims, as the verifier does */
        const tensor_spec *t = i < p.n_inputs ? &p.inputs[i] : &p.outputs[i - p.n_inputs];
        if ((hidden || cover) && i < p.n_inputs)
            t = tensor_spec_varied(t, &varied);
        int64_t n;
        rc = tensor_numel(t, dims, &n, err) || wk_buffer_alloc(g, &bufs[i], t->dtype, n, err);
        if (rc == 0 && i < p.n_inputs)
            rc = wk_fill_input(g, &bufs[i], t, dims, seed, (unsigned)i, 0, NULL, err);
        else if (rc == 0)
            rc = wk_buffer_poison(g, &bufs[i]);
    }
    json_t *profile = NULL;
    if (rc == 0)
        rc = run_reference_into(g, &p, dims, bufs, profile_runs, &profile, err);
    if (rc == 0)
        rc = write_dump(&p, dims, seed, dims_name, bufs, profile, out_dir, err);
    if (rc == 0 && profile)
        print_profile(profile);
    json_decref(profile);
    for (int i = 0; i < p.n_inputs + p.n_outputs; i++)
        wk_buffer_free(&bufs[i]);
    dimset_free(&drawn);
    problem_free(&p);
    return rc ? -1 : 0;
}
