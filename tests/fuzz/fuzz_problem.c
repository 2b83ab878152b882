/* fuzz_problem: libFuzzer target for the problem manifest loader (problem_load,
 * common/problem.c) and what reads a loaded problem (dims, tensor sizes, the
 * bytes/flops expressions, the spec text a model is shown). Input: the
 * manifest's bytes, optionally followed by a NUL byte and the reference
 * source. The harness writes them to a temp tree as the loader expects:
 * <tmp>/<suite>/<name>.json for the manifest's "id" (when it has that form) and
 * its "reference" file beside it, with <tmp>/level1/shared/ holding two shared
 * kernels (one valid, one that includes another file). Properties: no crash,
 * UB or leak; a failed load says why and leaves nothing to free; a "hidden" generator's draw
 * either passes the dims checks or says why. */
#include "common/error.h"
#include "common/fsutil.h"
#include "common/problem.h"
#include "common/prompt_text.h"
#include "fuzz_common.h"

#include <jansson.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp_root[64];

static void write_bytes(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return; /* e.g. a reference named like a directory: the loader reports it */
    fwrite(data, 1, len, f);
    fclose(f);
}

static void remove_root(void) { remove_tree(tmp_root); }

static void make_root(void)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(tmp_root, sizeof tmp_root, "%s/kcfuzz-problem-XXXXXX", base);
    if (!mkdtemp(tmp_root))
        abort();
    atexit(remove_root);
    strbuf p = STRBUF_INIT;
    sb_addf(&p, "%s/level1/shared", tmp_root);
    mkdir_p(p.buf, NULL);
    sb_reset(&p);
    sb_addf(&p, "%s/level1/shared/tile.cuh", tmp_root);
    write_bytes(p.buf, "__device__ float tile(float x) { return x; }\n", 45);
    sb_reset(&p);
    sb_addf(&p, "%s/level1/shared/nested.cuh", tmp_root);
    write_bytes(p.buf, "#include \"shared/tile.cuh\"\n", 27);
    sb_free(&p);
}

/* Whether s is 1..max characters from [A-Za-z0-9_] plus the extra ones. */
static int plain_name(const char *s, size_t max, const char *extra)
{
    size_t n = strlen(s);
    if (n == 0 || n > max || strstr(s, ".."))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= 'A' && s[i] <= 'Z') || strchr(extra, s[i])))
            return 0;
    return 1;
}

static void exercise(const problem *p)
{
    strbuf err = STRBUF_INIT, spec = STRBUF_INIT;
    for (int k = 0; k < 2 + p->n_alt; k++) {
        const dimset *d = k < 2 ? problem_dims(p, k ? KC_DIMS_SMALL : KC_DIMS_DEFAULT, 0)
                                : problem_dims(p, KC_DIMS_ALT, k - 2);
        int64_t v;
        for (int i = 0; i < p->n_inputs; i++)
            if (tensor_numel(&p->inputs[i], d, &v, &err))
                FZ_CHECK(err.len > 0);
        for (int i = 0; i < p->n_outputs; i++)
            if (tensor_numel(&p->outputs[i], d, &v, &err))
                FZ_CHECK(err.len > 0);
        if (expr_eval(p->bytes_expr, d, &v, &err) || expr_eval(p->flops_expr, d, &v, &err))
            FZ_CHECK(err.len > 0);
    }
    for (int i = 0; i < p->n_inputs; i++)
        FZ_CHECK(problem_tensor(p, p->inputs[i].name, NULL) != NULL);
    if (problem_has_hidden(p)) { /* a drawn set passes the fixed sets' checks; a failure says why */
        dimset d;
        sb_reset(&err);
        if (problem_draw_dims(p, 1, 0, &d, &err) == 0) {
            FZ_CHECK(problem_dims_fault(p, &d, NULL, &err) == 0);
            dimset_free(&d);
        } else {
            FZ_CHECK(err.len > 0 && d.n == 0);
        }
    }
    problem_spec_text(p, &spec);
    FZ_CHECK(spec.len > 0);
    sb_free(&err), sb_free(&spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!tmp_root[0])
        make_root();
    const char *bytes = (const char *)data;
    const char *nul = memchr(bytes, '\0', size);
    size_t mlen = nul ? (size_t)(nul - bytes) : size;
    const char *ref = nul ? nul + 1 : "";
    size_t rlen = nul ? size - mlen - 1 : 0;

    /* Where the loader will look: the id's path when it has the form suite/name. */
    char suite[64] = "level1", name[64] = "fuzz", refname[64] = "";
    json_t *root = json_loadb(bytes, mlen, 0, NULL);
    const char *id = json_string_value(json_object_get(root, "id"));
    const char *slash = id ? strchr(id, '/') : NULL;
    if (slash && (size_t)(slash - id) < sizeof suite) {
        snprintf(suite, sizeof suite, "%.*s", (int)(slash - id), id);
        snprintf(name, sizeof name, "%s", slash + 1);
        if (!plain_name(suite, 40, "") || !plain_name(name, 40, ""))
            snprintf(suite, sizeof suite, "level1"), snprintf(name, sizeof name, "fuzz");
    }
    const char *r = json_string_value(json_object_get(root, "reference"));
    if (r && plain_name(r, 40, ".-"))
        snprintf(refname, sizeof refname, "%s", r);
    json_decref(root);

    strbuf dir = STRBUF_INIT, mpath = STRBUF_INIT, rpath = STRBUF_INIT, err = STRBUF_INIT;
    sb_addf(&dir, "%s/%s", tmp_root, suite);
    int made_dir = mkdir(dir.buf, 0700) == 0;
    if (refname[0]) {
        sb_addf(&rpath, "%s/%s", dir.buf, refname);
        write_bytes(rpath.buf, ref, rlen);
    }
    sb_addf(&mpath, "%s/%s.json", dir.buf, name);
    write_bytes(mpath.buf, bytes, mlen);

    problem p;
    if (problem_load(mpath.buf, &p, &err) == 0)
        exercise(&p);
    else
        FZ_CHECK(err.len > 0);
    problem_free(&p);

    unlink(mpath.buf);
    if (rpath.len)
        unlink(rpath.buf);
    if (made_dir)
        rmdir(dir.buf);
    sb_free(&dir), sb_free(&mpath), sb_free(&rpath), sb_free(&err);
    return 0;
}
