/* records_preference: kexport --format preference: pairs of a correct (chosen) and a failed or
 * slower (rejected) kernel answering the same prompt of the same problem, each answer with its
 * reasoning under --reasoning (the prompt messages carry none). */
#include "export/records.h"
#include "export/formats.h"
#include "export/records_internal.h"
#include "common/candidate.h"
#include "common/error.h"
#include "common/hash.h"
#include "common/prompt_text.h"
#include "common/fsutil.h"
#include "export/jsonw.h"
#include "export/kernelbench.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A candidate as one side of a preference pair: its answer message, labels and provenance,
 * encoded, and the prompt it answered (an index into its pool's prompts). */
typedef struct side {
    char *answer, *labels, *provenance;
    int prompt;
    int64_t run_id;
    int on_gpu, suspicious; /* its verification ran on a GPU; its label is flagged suspicious */
    long reasoning_chars; /* of the answer's reasoning, -1 when none */
    int reasoning_truncated;
} side;

/* The candidates of one problem: correct ones (chosen, fastest first) and the others (rejected),
 * at most capacity of each, with the distinct prompts they answered, encoded (usually one: the
 * trajectories of a problem share their prompt unless the spec or system message changed). */
typedef struct pair_pool {
    side *chosen, *rejected;
    int n_chosen, n_rejected, capacity;
    char **prompts;
    int n_prompts;
    char split[16];
    int bad_utf8;
} pair_pool;

static void pool_clear(pair_pool *p)
{
    for (int i = 0; i < p->n_chosen; i++)
        free(p->chosen[i].answer), free(p->chosen[i].labels), free(p->chosen[i].provenance);
    for (int i = 0; i < p->n_rejected; i++)
        free(p->rejected[i].answer), free(p->rejected[i].labels), free(p->rejected[i].provenance);
    for (int i = 0; i < p->n_prompts; i++)
        free(p->prompts[i]);
    free(p->prompts);
    p->prompts = NULL;
    p->n_chosen = p->n_rejected = p->n_prompts = 0;
    p->bad_utf8 = 0;
}

static void put_raw_string(jsonw *w, const char *key, const char *json)
{
    jw_key(w, key);
    jw_raw(w, json, strlen(json));
}

/* The chosen side for rejected kernel k: the correct kernels in turn (k-th first, fastest
 * first), skipping those that answered another prompt; -1 when none answered its prompt. */
static int chosen_for(const pair_pool *p, int k)
{
    for (int i = 0; i < p->n_chosen; i++) {
        int c = (k + i) % p->n_chosen;
        if (p->chosen[c].prompt == p->rejected[k].prompt)
            return c;
    }
    return -1;
}

static int pair_record(export_ctx *x, const pair_pool *p, const side *c, const side *r,
                       strbuf *err)
{
    jsonw w;
    export_open_record(x, &w, "preference", p->split, &x->problem_part);
    jw_key(&w, "prompt");
    jw_array(&w);
    jw_raw(&w, p->prompts[r->prompt], strlen(p->prompts[r->prompt]));
    jw_end_array(&w);
    jw_key(&w, "chosen");
    jw_array(&w);
    jw_raw(&w, c->answer, strlen(c->answer));
    jw_end_array(&w);
    jw_key(&w, "rejected");
    jw_array(&w);
    jw_raw(&w, r->answer, strlen(r->answer));
    jw_end_array(&w);
    jw_key(&w, "labels");
    jw_object(&w);
    put_raw_string(&w, "chosen", c->labels);
    put_raw_string(&w, "rejected", r->labels);
    jw_end_object(&w);
    jw_key(&w, "provenance");
    jw_object(&w);
    put_raw_string(&w, "chosen", c->provenance);
    put_raw_string(&w, "rejected", r->provenance);
    jw_end_object(&w);
    jw_end_object(&w);
    w.bad_utf8 |= p->bad_utf8;
    x->counts.records++;
    x->counts.by_split[export_split_index(p->split)]++;
    x->counts.by_class[0]++;
    export_note_run(x, c->run_id);
    export_note_run(x, r->run_id);
    export_note_kernel(x, c->on_gpu ? "gpu" : NULL, c->suspicious);
    export_note_kernel(x, r->on_gpu ? "gpu" : NULL, r->suspicious);
    export_count_reasoning_chars(x, c->reasoning_chars, c->reasoning_truncated);
    export_count_reasoning_chars(x, r->reasoning_chars, r->reasoning_truncated);
    export_count_reasoning_record(x);
    return export_emit(x, p->split, &w, "a preference record", err);
}

/* Pairs each rejected kernel with a correct one that answered the same prompt, up to
 * max_pairs rejected kernels. */
static int flush_pairs(export_ctx *x, void *arg, strbuf *err)
{
    pair_pool *p = arg;
    int rc = 0;
    for (int k = 0; !rc && k < p->n_rejected && k < x->cfg->max_pairs; k++) {
        int c = chosen_for(p, k);
        if (c >= 0)
            rc = pair_record(x, p, &p->chosen[c], &p->rejected[k], err);
    }
    pool_clear(p);
    return rc;
}

static char *encode(strbuf *tmp, jsonw *w, int *bad)
{
    *bad |= w->bad_utf8;
    return sb_detach(tmp);
}

/* The index of the row's prompt (x->prompt) among the pool's, added when new. */
static int pool_prompt(export_ctx *x, pair_pool *p)
{
    for (int i = 0; i < p->n_prompts; i++)
        if (strlen(p->prompts[i]) == x->prompt.encoded.len &&
            !memcmp(p->prompts[i], x->prompt.encoded.buf, x->prompt.encoded.len))
            return i;
    p->prompts = xrealloc(p->prompts, (size_t)(p->n_prompts + 1) * sizeof(char *));
    p->prompts[p->n_prompts] = xstrndup(x->prompt.encoded.buf, x->prompt.encoded.len);
    p->bad_utf8 |= x->prompt.bad_utf8;
    return p->n_prompts++;
}

static int preference_row(export_ctx *x, sqlite3_stmt *st, void *arg, strbuf *err)
{
    pair_pool *p = arg;
    const char *src;
    size_t len;
    int rs = export_row_source(x, st, &src, &len, err);
    if (rs)
        return rs < 0 ? -1 : 0;
    if (!src)
        return 0;
    int correct = export_col_text(st, COL_CLASS) && !strcmp(export_col_text(st, COL_CLASS), "correct");
    if ((correct ? p->n_chosen : p->n_rejected) >= p->capacity)
        return 0;
    export_problem_parts(x, st);
    p->bad_utf8 |= x->parts_bad_utf8;
    snprintf(p->split, sizeof p->split, "%s", export_col_text(st, COL_SPLIT));
    export_reasoning_text r;
    if (export_row_prompt(x, st, err) || export_row_reasoning(x, st, &r, err))
        return -1;
    const char *gpu = export_col_text(st, COL_GPU);
    side s = {.prompt = pool_prompt(x, p), .run_id = export_row_run(st),
              .on_gpu = gpu && *gpu, .suspicious = sqlite3_column_int(st, COL_SUSPICIOUS),
              .reasoning_chars = r.text ? export_utf8_chars(r.text, r.len) : -1,
              .reasoning_truncated = r.truncated};
    strbuf tmp = STRBUF_INIT;
    jsonw w;
    jw_init(&w, &tmp);
    export_put_kernel_message(x, &w, src, len, &r);
    s.answer = encode(&tmp, &w, &p->bad_utf8);
    jw_init(&w, &tmp);
    export_put_labels(&w, st);
    s.labels = encode(&tmp, &w, &p->bad_utf8);
    jw_init(&w, &tmp);
    export_put_provenance(x, &w, st);
    s.provenance = encode(&tmp, &w, &p->bad_utf8);
    if (correct)
        p->chosen[p->n_chosen++] = s;
    else
        p->rejected[p->n_rejected++] = s;
    return 0;
}

/* Chosen kernels are correct; --verdict (when not 'any') restricts the rejected ones. */
int export_preference(export_ctx *x, strbuf *err)
{
    sqlite3_stmt *st = export_candidate_query(
        x, x->cfg->verdicts, VERDICTS_OF_REJECTED, 1,
        " AND c.source_sha IS NOT NULL AND v.verdict IS NOT NULL"
        " ORDER BY cl.verdict_class = 'correct' DESC, coalesce(tm.speedup_eager, 0) DESC, c.id",
        err);
    if (!st)
        return -1;
    int capacity = x->cfg->max_pairs > 0 ? x->cfg->max_pairs : 1;
    pair_pool p = {.chosen = xcalloc((size_t)capacity, sizeof(side)),
                   .rejected = xcalloc((size_t)capacity, sizeof(side)), .capacity = capacity};
    int rc = export_for_each_problem(x, st, preference_row, flush_pairs, &p, err);
    pool_clear(&p);
    free(p.chosen), free(p.rejected);
    sqlite3_finalize(st);
    return rc;
}
