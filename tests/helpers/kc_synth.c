/* kc_synth: generates a synthetic kcorpus database for the curate/export tests and benchmarks.
 * It follows schemas/kc.sql: problems, one run, trajectories, turns, requests, responses,
 * candidates with sources (blobs), compiles, verifications and timings, with planted exact
 * duplicates (the same kernel re-indented and re-commented) and planted near duplicates (one or
 * two constants changed) inside a problem. The first request of each trajectory is a chat request
 * as kcollect sends it (kcollect's system message and the problem's spec, common/prompt_text.h);
 * later requests are short stand-ins, which kexport never reads. Each problem's registered spec
 * (problems.spec_sha) differs from the spec its trajectories were sent, as after a manifest
 * change: exports must carry the spec the model saw. --truth writes the planted clusters, one line per
 * candidate: "<candidate id> <exact group> <near group>" (group = the id of the first member).
 * --every-kind (for the export type-stability tests) makes every verdict (compiled included) and
 * flag appear, problems of three suites (level1, level2, attention) with dims of other names and
 * params, the verifier's evidence as kverify writes it (per-run outputs, worst values that are
 * numbers or "nan"/"inf" strings), infinite errors, timings without baselines, and an imported
 * candidate (no trajectory, no run) per problem.
 *
 *   kc_synth --db out.db [--candidates N] [--problems P] [--turns T] [--seed S]
 *            [--exact-rate F] [--near-rate F] [--statements K] [--truth FILE] [--run-tag TAG]
 *            [--page-size BYTES] [--every-kind]
 */
#include "common/db.h"
#include "common/error.h"
#include "common/hash.h"
#include "common/prompt_text.h"
#include "common/strbuf.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct synth_options {
    const char *db_path, *truth_path, *run_tag;
    long candidates;
    int problems, max_turns, statements, page_size;
    int every_kind; /* every verdict, flag and problem kind (see the header) */
    uint64_t seed;
    double exact_rate, near_rate;
} synth_options;

/* How a candidate's source is made: an original from a seed, optionally mutated, optionally
 * re-formatted (an exact duplicate of another candidate). */
typedef struct kernel_recipe {
    uint64_t seed;
    int mutations[2]; /* statement index to change, -1 when none */
    uint64_t mutation_seed;
    long exact_group, near_group;
} kernel_recipe;

typedef struct rng {
    uint64_t state;
} rng;

static uint64_t rng_next(rng *r) { return mix64(r->state++); }
static double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) / 9007199254740992.0; }
static int rng_below(rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }

/* One statement of a synthetic kernel; mutated statements get other constants. */
static void add_statement(strbuf *out, rng *r, int mutated, uint64_t mutation_seed)
{
    unsigned a = (unsigned)rng_below(r, 10000), b = (unsigned)rng_below(r, 10000);
    unsigned c = (unsigned)rng_below(r, 100), d = (unsigned)rng_below(r, 100);
    int shape = rng_below(r, 4);
    if (mutated) {
        rng m = {mutation_seed};
        c = 100 + (unsigned)rng_below(&m, 900);
    }
    switch (shape) {
    case 0: sb_addf(out, "    float v%u = x[i] * %u.%02uf + v%u;\n", a, c, d, b); break;
    case 1: sb_addf(out, "    v%u = fmaxf(v%u, %u.%02uf);\n", a, b, c, d); break;
    case 2: sb_addf(out, "    if (v%u > %u.%02uf) v%u -= v%u;\n", a, c, d, b, a); break;
    default: sb_addf(out, "    acc += __expf(v%u * %u.%02uf) * v%u;\n", a, c, d, b); break;
    }
}

static void kernel_source(const kernel_recipe *k, int statements, strbuf *out)
{
    rng r = {k->seed};
    unsigned name = (unsigned)rng_below(&r, 1 << 30);
    sb_reset(out);
    sb_addf(out,
            "// synthetic kernel\n#include <cuda_fp16.h>\n\n"
            "extern \"C\" __global__ void k%08x(const float* __restrict__ x, float* __restrict__ y, "
            "long long n)\n{\n"
            "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
            "    if (i >= n) return;\n    float acc = 0.0f;\n",
            name);
    for (int s = 0; s < statements; s++)
        add_statement(out, &r, s == k->mutations[0] || s == k->mutations[1], k->mutation_seed);
    sb_addf(out, "    y[i] = acc;\n}\n// @launch k%08x<<<cdiv(B*D, 256), 256>>>(x, y, B*D);\n", name);
}

/* Same tokens, other layout: tabs for indentation, a block comment, blank lines. */
static void reformat(const strbuf *in, strbuf *out)
{
    sb_reset(out);
    sb_adds(out, "/* copied from an earlier answer */\n");
    for (const char *p = in->buf; *p; p++) {
        if (p[0] == ' ' && p[1] == ' ' && p[2] == ' ' && p[3] == ' ' && (p == in->buf || p[-1] == '\n')) {
            sb_addch(out, '\t');
            p += 3;
        } else if (*p == '\n') {
            sb_adds(out, "  \n");
        } else {
            sb_addch(out, *p);
        }
    }
}

static const char *verdicts[] = {"extract_error", "policy_violation", "compile_error",
                                 "launch_error",  "runtime_error",    "timeout",
                                 "mismatch",      "unsafe",           "correct"};

static const char *pick_verdict(const synth_options *o, rng *r, int turn)
{
    if (o->every_kind) /* the nine verdicts of a GPU run and compile-only's "compiled" */
        return rng_below(r, 10) == 9 ? "compiled" : verdicts[rng_below(r, 9)];
    double u = rng_unit(r) - 0.05 * turn;
    if (u < 0.40) return "correct";
    if (u < 0.60) return "mismatch";
    if (u < 0.80) return "compile_error";
    if (u < 0.85) return "runtime_error";
    if (u < 0.88) return "launch_error";
    if (u < 0.90) return "timeout";
    if (u < 0.92) return "unsafe";
    if (u < 0.95) return "policy_violation";
    return verdicts[0];
}

typedef struct synth {
    sqlite3 *db;
    synth_options o;
    sqlite3_stmt *ins_blob, *ins_traj, *ins_req, *ins_resp, *ins_cand, *ins_turn, *ins_comp,
        *ins_ver, *ins_tim;
    FILE *truth;
    strbuf err, src, text, body, spec; /* spec: the current problem's */
    long long run_id, next_candidate;
    kernel_recipe *recipes; /* candidates of the current problem */
    long n_recipes, cap_recipes;
} synth;

static sqlite3_stmt *prep(synth *s, const char *sql)
{
    sqlite3_stmt *st = kc_db_prepare(s->db, sql, &s->err);
    if (!st)
        die("%s", s->err.buf);
    return st;
}

static void step(synth *s, sqlite3_stmt *st)
{
    if (sqlite3_step(st) != SQLITE_DONE)
        die("database: %s", sqlite3_errmsg(s->db));
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* Stores a blob (hash computed here) and returns its sha in sha. */
static void put_blob(synth *s, const char *data, size_t len, char *sha)
{
    sha256_hex(data, len, sha);
    sqlite3_bind_text(s->ins_blob, 1, sha, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s->ins_blob, 2, (sqlite3_int64)len);
    sqlite3_bind_blob64(s->ins_blob, 3, data, len, SQLITE_STATIC);
    step(s, s->ins_blob);
}

static void prepare_all(synth *s)
{
    s->ins_blob = prep(s, "INSERT OR IGNORE INTO blobs(sha256,size,data) VALUES (?,?,?)");
    s->ins_traj = prep(s, "INSERT INTO trajectories(run_id,problem_id,sample_index,status,stop_reason,"
                          "started_at,finished_at) VALUES (?,?,?,'done',?,"
                          "'2025-01-01T00:00:00Z','2025-01-01T00:10:00Z')");
    s->ins_req = prep(s, "INSERT INTO requests(request_hash,endpoint,api,model,body_sha,created_at) "
                         "VALUES (?,'http://127.0.0.1:0/v1','openai','synth-model',?,"
                         "'2025-01-01T00:00:00Z')");
    s->ins_resp = prep(s, "INSERT INTO responses(request_id,http_status,raw_sha,content_sha,"
                          "reasoning_sha,finish_reason,prompt_tokens,completion_tokens,"
                          "reasoning_tokens,latency_ms,created_at) VALUES (?,200,?,?,?,?,?,?,?,?,"
                          "'2025-01-01T00:00:01Z')");
    s->ins_cand = prep(s, "INSERT INTO candidates(problem_id,source_sha,origin,status,extract_error,"
                          "created_at) VALUES (?,?,'turn','verified',?,'2025-01-01T00:00:02Z')");
    s->ins_turn = prep(s, "INSERT INTO turns(trajectory_id,turn_index,prompt_sha,request_id,"
                          "response_id,candidate_id,feedback_sha,tokens_in,tokens_out,latency_ms,"
                          "started_at,finished_at) VALUES (?,?,?,?,?,?,?,?,?,?,"
                          "'2025-01-01T00:00:00Z','2025-01-01T00:00:03Z')");
    s->ins_comp = prep(s, "INSERT INTO compiles(candidate_id,ok,stage,log_sha,duration_ms,arch,"
                          "nvrtc_version,kernels_json,created_at) VALUES (?,?,?,?,12.5,'sm_90',"
                          "'12.4','[]','2025-01-01T00:00:02Z')");
    s->ins_ver = prep(s, "INSERT INTO verifications(candidate_id,verdict,flags,message,evidence_json,"
                         "seeds,max_abs_err,max_rel_err,rel_l2_err,verifier_version,gpu_name,"
                         "driver_version,cuda_version,nvrtc_version,created_at) VALUES "
                         "(?,?,?,?,?,'11,12,13,14,15',?,?,?,'synth-0.1','NVIDIA H100 80GB HBM3',"
                         "'550.54','12.4','12.4','2025-01-01T00:00:03Z')");
    s->ins_tim = prep(s, "INSERT INTO timings(verification_id,median_ms,mean_ms,stdev_ms,min_ms,"
                         "p10_ms,p90_ms,n,eager_ms,compile_ms,speedup_eager,speedup_compile) "
                         "VALUES (?,?,?,?,?,?,?,50,?,?,?,?)");
}

static void finalize_all(synth *s)
{
    sqlite3_stmt *all[] = {s->ins_blob, s->ins_traj, s->ins_req,  s->ins_resp, s->ins_cand,
                           s->ins_turn, s->ins_comp, s->ins_ver, s->ins_tim};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        sqlite3_finalize(all[i]);
}

/* Plain: level1 and level2 in turn; --every-kind: level1, level2 and attention in turn. */
static int problem_kind(const synth *s, int p) { return s->o.every_kind ? p % 3 : p % 2; }

static const char *problem_suite(const synth *s, int p)
{
    static const char *const suites[] = {"level1", "level2", "attention"};
    return suites[problem_kind(s, p)];
}

static void problem_id(const synth *s, int p, char *out, size_t n)
{
    snprintf(out, n, "%s/%03d_synth_op", problem_suite(s, p), p);
}

/* The dims and params of a problem's manifest: other names per kind under --every-kind. */
static void problem_dims_json(const synth *s, int p, strbuf *out)
{
    static const char *const dims[] = {
        "\"dims\": {\"default\": {\"B\": 4096, \"D\": 4096}, \"small\": {\"B\": 4, \"D\": 256}, "
        "\"alt\": [{\"B\": 3, \"D\": 4097}]}",
        "\"dims\": {\"default\": {\"N\": 16, \"C\": 64, \"H\": 256, \"W\": 256}, \"small\": "
        "{\"N\": 2, \"C\": 3, \"H\": 8, \"W\": 8}, \"alt\": [{\"N\": 1, \"C\": 5, \"H\": 33, "
        "\"W\": 17}, {\"N\": 3, \"C\": 1, \"H\": 1, \"W\": 4097}]}, \"params\": [{\"name\": "
        "\"eps\", \"dtype\": \"f32\", \"value\": 1e-05}]",
        "\"dims\": {\"default\": {\"B\": 16, \"H\": 16, \"S\": 2048, \"Dh\": 128}, \"small\": "
        "{\"B\": 1, \"H\": 2, \"S\": 64, \"Dh\": 64}, \"alt\": [{\"B\": 1, \"H\": 3, \"S\": 97, "
        "\"Dh\": 64}]}, \"params\": [{\"name\": \"window\", \"dtype\": \"i32\", \"value\": 256}, "
        "{\"name\": \"softcap\", \"dtype\": \"f32\", \"value\": 30}]"};
    sb_adds(out, dims[s->o.every_kind ? problem_kind(s, p) : 0]);
}

static void insert_problems(synth *s)
{
    sqlite3_stmt *st = prep(s, "INSERT OR IGNORE INTO problems(id,suite,level,title,manifest_sha,"
                               "reference_sha,spec_sha,added_at) VALUES (?,?,?,?,?,?,?,"
                               "'2025-01-01T00:00:00Z')");
    for (int p = 0; p < s->o.problems; p++) {
        char id[64], suite[16], title[64], msha[65], rsha[65], ssha[65];
        int level = 1 + problem_kind(s, p);
        problem_id(s, p, id, sizeof id);
        snprintf(suite, sizeof suite, "%s", problem_suite(s, p));
        snprintf(title, sizeof title, "Synthetic operator %d", p);
        sb_reset(&s->text);
        sb_addf(&s->text,
                "{\"format\": \"kc-problem v1\", \"id\": \"%s\", \"title\": \"%s\", \"level\": %d, "
                "\"description\": \"Synthetic elementwise operator %d.\", \"torch_reference\": "
                "\"class Model(nn.Module):\\n    def forward(self, x):\\n        return x * %d\\n\", ",
                id, title, level, p, p + 2);
        problem_dims_json(s, p, &s->text);
        sb_addf(&s->text, ", \"tolerance\": {\"atol\": %s, \"rtol\": 1e-5}}",
                s->o.every_kind && p % 2 ? "0" : "1e-5");
        put_blob(s, s->text.buf, s->text.len, msha);
        kernel_recipe ref = {.seed = 0xfeedULL + (uint64_t)p, .mutations = {-1, -1}};
        kernel_source(&ref, 4, &s->src);
        put_blob(s, s->src.buf, s->src.len, rsha);
        sb_reset(&s->text);
        sb_addf(&s->text, "Problem %s: %s\nMultiply x (f32[B, D]) by %d elementwise into y.\n", id,
                title, p + 2);
        put_blob(s, s->text.buf, s->text.len, ssha);
        sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 2, suite, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 3, level);
        sqlite3_bind_text(st, 4, title, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 5, msha, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 6, rsha, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 7, ssha, -1, SQLITE_TRANSIENT);
        step(s, st);
    }
    sqlite3_finalize(st);
}

static void insert_run(synth *s)
{
    sqlite3_stmt *st = prep(s, "INSERT INTO runs(run_key,tool,tool_version,config_json,model,endpoint,"
                               "api,host,status,started_at,finished_at) VALUES (?,'kcollect','synth',"
                               "?,'synth-model','http://127.0.0.1:0/v1','openai','synth-host',"
                               "'finished','2025-01-01T00:00:00Z','2025-01-01T01:00:00Z')");
    char key[80], cfg[256];
    snprintf(key, sizeof key, "synth-%s-%llu", s->o.run_tag ? s->o.run_tag : "run",
             (unsigned long long)s->o.seed);
    snprintf(cfg, sizeof cfg,
             "{\"model\": \"synth-model\", \"sampling\": {\"temperature\": 0.7, \"top_p\": 0.95, "
             "\"max_tokens\": 4096, \"seed\": %llu}, \"turns\": %d}",
             (unsigned long long)s->o.seed, s->o.max_turns);
    sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, cfg, -1, SQLITE_TRANSIENT);
    step(s, st);
    sqlite3_finalize(st);
    s->run_id = sqlite3_last_insert_rowid(s->db);
}

/* Chooses how the next candidate's source is made and its planted groups. */
static kernel_recipe next_recipe(synth *s, rng *r, long candidate_id)
{
    kernel_recipe k = {.seed = rng_next(r), .mutations = {-1, -1}, .exact_group = candidate_id,
                       .near_group = candidate_id};
    double u = rng_unit(r);
    if (s->n_recipes > 0 && u < s->o.exact_rate) {
        k = s->recipes[rng_below(r, (int)s->n_recipes)]; /* same text; maybe a new layout */
    } else if (s->n_recipes > 0 && u < s->o.exact_rate + s->o.near_rate) {
        /* a near duplicate of an original (never of another near duplicate): every member of
         * a near group shares the original's seed and differs only in its mutations */
        kernel_recipe base = s->recipes[rng_below(r, (int)s->n_recipes)];
        k.seed = base.seed;
        k.near_group = base.near_group;
        k.mutations[0] = rng_below(r, s->o.statements);
        k.mutations[1] = rng_below(r, 2) ? rng_below(r, s->o.statements) : -1;
        k.mutation_seed = rng_next(r);
    }
    if (s->n_recipes == s->cap_recipes) {
        s->cap_recipes = s->cap_recipes ? 2 * s->cap_recipes : 1024;
        s->recipes = xrealloc(s->recipes, (size_t)s->cap_recipes * sizeof(*s->recipes));
    }
    s->recipes[s->n_recipes++] = k;
    return k;
}

static long long last_id(synth *s) { return sqlite3_last_insert_rowid(s->db); }

/* --every-kind: the evidence kverify writes (verify/worker/worker_check.c): per (dims, seed) run, its
 * outputs' statistics; for a failing output the worst index and values, which are numbers or
 * "nan"/"inf" strings; NULL for the verdicts decided before any run. */
static const char *kind_evidence(rng *r, const char *verdict, strbuf *out)
{
    int ran = !strcmp(verdict, "correct") || !strcmp(verdict, "mismatch") ||
              !strcmp(verdict, "unsafe") || !strcmp(verdict, "runtime_error");
    if (!ran)
        return NULL;
    int bad = strcmp(verdict, "correct") != 0;
    static const char *const worst[] = {"1.5", "\"nan\"", "\"inf\"", "-2.25", "\"-inf\""};
    sb_reset(out);
    sb_adds(out, "{\"runs\": [{\"dims\": \"default\", \"seed\": \"11\", \"outputs\": [{\"output\": "
                 "\"y\", \"numel\": 4096, \"bad\": ");
    sb_addf(out, "%d, \"nan_mismatch\": 0, \"max_abs\": %s, \"max_rel\": 0.25, \"rel_l2\": 0.125",
            bad ? 17 : 0, bad ? "0.5" : "0.0");
    if (bad)
        sb_addf(out, ", \"worst_flat_index\": 7, \"index\": [0, 7], \"got\": %s, \"expected\": %s",
                worst[rng_below(r, 5)], worst[rng_below(r, 5)]);
    sb_addf(out, "}], \"setup_ms\": 1.25, \"candidate_ms\": 0.5, \"reference_ms\": 0.75, \"ok\": %s}]",
            bad ? "false" : "true");
    if (bad)
        sb_adds(out, ", \"first_failure\": {\"dims\": \"default\", \"seed\": \"11\", \"outputs\": []}");
    sb_adds(out, ", \"stage_ms\": {\"load_ms\": 3.5, \"checks_ms\": 20.0, \"timing_ms\": 0.0}}");
    return out->buf;
}

static const char *kind_flags(rng *r, const char *verdict)
{
    static const char *const flags[] = {"", "alt_shape_fail", "nondeterministic",
                                        "suspicious_speedup", "alt_shape_fail,nondeterministic"};
    if (strcmp(verdict, "correct") && strcmp(verdict, "mismatch"))
        return "";
    return flags[rng_below(r, 5)];
}

static void bind_error(synth *s, int col, int correct, double ok_value, double bad_value, rng *r)
{
    int u = s->o.every_kind && !correct ? rng_below(r, 4) : 3;
    if (u == 0)
        sqlite3_bind_double(s->ins_ver, col, INFINITY); /* SQLite keeps infinities (not NaN) */
    else if (u == 1)
        sqlite3_bind_null(s->ins_ver, col);
    else
        sqlite3_bind_double(s->ins_ver, col, correct ? ok_value : bad_value);
}

static void insert_verification(synth *s, rng *r, long long cand, const char *verdict)
{
    char logsha[65];
    int compiled = strcmp(verdict, "extract_error") && strcmp(verdict, "policy_violation");
    int compile_ok = compiled && strcmp(verdict, "compile_error");
    if (compiled) {
        const char *log = compile_ok ? "" : "kernel.cu(12): error: identifier \"v17\" is undefined\n";
        put_blob(s, log, strlen(log), logsha);
        sqlite3_bind_int64(s->ins_comp, 1, cand);
        sqlite3_bind_int(s->ins_comp, 2, compile_ok);
        sqlite3_bind_text(s->ins_comp, 3, "compile", -1, SQLITE_STATIC);
        sqlite3_bind_text(s->ins_comp, 4, logsha, -1, SQLITE_STATIC);
        step(s, s->ins_comp);
    }
    int correct = !strcmp(verdict, "correct");
    double u = rng_unit(r);
    const char *flags = !strcmp(verdict, "mismatch") && u < 0.3 ? "alt_shape_fail"
                        : correct && u < 0.02                   ? "nondeterministic"
                                                                : "";
    double speedup = correct ? exp(log(0.2) + rng_unit(r) * (log(4.0) - log(0.2))) : 0;
    if (correct && rng_unit(r) < 0.01)
        speedup = 12 + 20 * rng_unit(r);
    if (speedup > 10)
        flags = "suspicious_speedup";
    if (s->o.every_kind)
        flags = kind_flags(r, verdict);
    sqlite3_bind_int64(s->ins_ver, 1, cand);
    sqlite3_bind_text(s->ins_ver, 2, verdict, -1, SQLITE_STATIC);
    sqlite3_bind_text(s->ins_ver, 3, flags, -1, SQLITE_STATIC);
    sb_reset(&s->text);
    sb_addf(&s->text, "%s on default dims", verdict);
    sqlite3_bind_text(s->ins_ver, 4, s->text.buf, -1, SQLITE_TRANSIENT);
    strbuf evidence = STRBUF_INIT;
    const char *ev = s->o.every_kind ? kind_evidence(r, verdict, &evidence)
                     : correct       ? "{\"runs\": 6, \"failed\": 0}"
                                     : "{\"runs\": 6}";
    sqlite3_bind_text(s->ins_ver, 5, ev, -1, SQLITE_TRANSIENT);
    sb_free(&evidence);
    bind_error(s, 6, correct, 1e-7, 0.5, r);
    bind_error(s, 7, correct, 1e-6, 2.0, r);
    bind_error(s, 8, correct, 1e-7, 0.3, r);
    step(s, s->ins_ver);
    if (!correct)
        return;
    long long vid = last_id(s);
    double eager = 1.0, median = eager / speedup;
    int no_baseline = s->o.every_kind && rng_below(r, 4) == 0;
    sqlite3_bind_int64(s->ins_tim, 1, vid);
    sqlite3_bind_double(s->ins_tim, 2, median);
    sqlite3_bind_double(s->ins_tim, 3, median * 1.01);
    sqlite3_bind_double(s->ins_tim, 4, median * 0.02);
    sqlite3_bind_double(s->ins_tim, 5, median * 0.97);
    sqlite3_bind_double(s->ins_tim, 6, median * 0.98);
    sqlite3_bind_double(s->ins_tim, 7, median * 1.03);
    if (!no_baseline) {
        sqlite3_bind_double(s->ins_tim, 8, eager);
        sqlite3_bind_double(s->ins_tim, 9, 0.8);
        sqlite3_bind_double(s->ins_tim, 10, speedup);
        sqlite3_bind_double(s->ins_tim, 11, 0.8 / median);
    }
    step(s, s->ins_tim);
}

/* --every-kind: a kernel imported with kverify import (no trajectory, no run), verified
 * correct. */
static void insert_imported(synth *s, rng *r, const char *pid)
{
    char source_sha[65];
    kernel_recipe k = {.seed = rng_next(r), .mutations = {-1, -1}};
    kernel_source(&k, s->o.statements, &s->src);
    put_blob(s, s->src.buf, s->src.len, source_sha);
    sqlite3_stmt *st = prep(s, "INSERT INTO candidates(problem_id,source_sha,origin,status,"
                               "created_at) VALUES (?,?,'import','verified','2025-01-01T00:00:02Z')");
    sqlite3_bind_text(st, 1, pid, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, source_sha, -1, SQLITE_STATIC);
    step(s, st);
    sqlite3_finalize(st);
    s->next_candidate++;
    insert_verification(s, r, last_id(s), "correct");
}

/* The request body of a turn: on the first turn, an OpenAI chat request as kcollect writes it
 * (system message, the problem's spec, a seed per trajectory); a short stand-in afterwards. */
static void request_body(synth *s, long long traj, int turn)
{
    sb_reset(&s->body);
    if (turn) {
        sb_addf(&s->body, "{\"model\": \"synth-model\", \"trajectory\": %lld, \"turn\": %d}",
                traj, turn);
        return;
    }
    json_t *o = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s%}], s:i, s:I}", "model", "synth-model",
                          "messages", "role", "system", "content", prompt_system_text(), "role",
                          "user", "content", s->spec.buf, s->spec.len, "max_tokens", 8192, "seed",
                          (json_int_t)traj);
    char *text = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (!text)
        die("cannot encode a request body");
    sb_adds(&s->body, text);
    free(text);
    json_decref(o);
}

/* One turn: request, response, candidate, verification; returns whether it was correct. */
static int insert_turn(synth *s, rng *r, const char *pid, long long traj, int turn,
                       const char *prompt_sha, char *feedback_sha)
{
    const char *verdict = pick_verdict(&s->o, r, turn);
    int extract_failed = !strcmp(verdict, "extract_error");
    char body_sha[65], raw_sha[65], content_sha[65], reasoning_sha[65], source_sha[65];
    request_body(s, traj, turn);
    put_blob(s, s->body.buf, s->body.len, body_sha);
    sqlite3_bind_text(s->ins_req, 1, body_sha, -1, SQLITE_STATIC);
    sqlite3_bind_text(s->ins_req, 2, body_sha, -1, SQLITE_STATIC);
    step(s, s->ins_req);
    long long req = last_id(s);

    long long next_cand = s->next_candidate++;
    kernel_recipe k = {0};
    if (!extract_failed) {
        k = next_recipe(s, r, (long)next_cand);
        kernel_source(&k, s->o.statements, &s->src);
        if (k.exact_group != next_cand && rng_below(r, 2)) {
            strbuf re = STRBUF_INIT;
            reformat(&s->src, &re);
            sb_reset(&s->src);
            sb_add(&s->src, re.buf, re.len);
            sb_free(&re);
        }
        put_blob(s, s->src.buf, s->src.len, source_sha);
    }
    sb_reset(&s->text);
    sb_addf(&s->text, "Here is my kernel.\n\n```cuda\n%s```\n", extract_failed ? "" : s->src.buf);
    if (extract_failed)
        sb_reset(&s->text), sb_adds(&s->text, "I think the kernel should fuse the loops.");
    put_blob(s, s->text.buf, s->text.len, content_sha);
    put_blob(s, s->text.buf, s->text.len, raw_sha);
    int reasoning = rng_below(r, 10) == 0;
    if (reasoning) {
        sb_reset(&s->body);
        sb_addf(&s->body, "<think>turn %d of trajectory %lld: try a grid-stride loop</think>", turn,
                traj);
        put_blob(s, s->body.buf, s->body.len, reasoning_sha);
    }
    int truncated = rng_below(r, 33) == 0;
    sqlite3_bind_int64(s->ins_resp, 1, req);
    sqlite3_bind_text(s->ins_resp, 2, raw_sha, -1, SQLITE_STATIC);
    sqlite3_bind_text(s->ins_resp, 3, content_sha, -1, SQLITE_STATIC);
    if (reasoning)
        sqlite3_bind_text(s->ins_resp, 4, reasoning_sha, -1, SQLITE_STATIC);
    sqlite3_bind_text(s->ins_resp, 5, truncated ? "length" : "stop", -1, SQLITE_STATIC);
    sqlite3_bind_int(s->ins_resp, 6, 600 + 50 * turn);
    sqlite3_bind_int(s->ins_resp, 7, 400 + rng_below(r, 400));
    sqlite3_bind_int(s->ins_resp, 8, reasoning ? 100 : 0);
    sqlite3_bind_double(s->ins_resp, 9, 1000.0 + rng_below(r, 1000));
    step(s, s->ins_resp);
    long long resp = last_id(s);

    sqlite3_bind_text(s->ins_cand, 1, pid, -1, SQLITE_STATIC);
    if (!extract_failed)
        sqlite3_bind_text(s->ins_cand, 2, source_sha, -1, SQLITE_STATIC);
    if (extract_failed)
        sqlite3_bind_text(s->ins_cand, 3, "no ```cuda block in the answer", -1, SQLITE_STATIC);
    step(s, s->ins_cand);
    long long cand = last_id(s);
    if (cand != next_cand)
        die("candidate ids are not dense (%lld != %lld)", cand, next_cand);
    if (s->truth && !extract_failed)
        fprintf(s->truth, "%lld %ld %ld\n", cand, k.exact_group, k.near_group);
    insert_verification(s, r, cand, verdict);

    sb_reset(&s->text);
    sb_addf(&s->text, "Verdict: %s (turn %d). %s\n", verdict, turn,
            strcmp(verdict, "correct") ? "Fix the error and answer again."
                                       : "Correct. Try to make it faster.");
    put_blob(s, s->text.buf, s->text.len, feedback_sha);

    sqlite3_bind_int64(s->ins_turn, 1, traj);
    sqlite3_bind_int(s->ins_turn, 2, turn);
    sqlite3_bind_text(s->ins_turn, 3, prompt_sha, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s->ins_turn, 4, req);
    sqlite3_bind_int64(s->ins_turn, 5, resp);
    sqlite3_bind_int64(s->ins_turn, 6, cand);
    sqlite3_bind_text(s->ins_turn, 7, feedback_sha, -1, SQLITE_STATIC);
    sqlite3_bind_int(s->ins_turn, 8, 600 + 50 * turn);
    sqlite3_bind_int(s->ins_turn, 9, 500);
    sqlite3_bind_double(s->ins_turn, 10, 1500);
    step(s, s->ins_turn);
    return !strcmp(verdict, "correct");
}

static void generate(synth *s)
{
    rng r = {s->o.seed * 0x9e3779b97f4a7c15ULL + 1};
    long per_problem = (s->o.candidates + s->o.problems - 1) / s->o.problems;
    long made = 0;
    for (int p = 0; p < s->o.problems && made < s->o.candidates; p++) {
        char pid[64], spec_sha[65];
        problem_id(s, p, pid, sizeof pid);
        sb_reset(&s->spec);
        sb_addf(&s->spec, "Write a CUDA kernel for %s.\n", pid);
        put_blob(s, s->spec.buf, s->spec.len, spec_sha);
        s->n_recipes = 0;
        long in_problem = 0;
        for (int sample = 0; in_problem < per_problem && made < s->o.candidates; sample++) {
            sqlite3_bind_int64(s->ins_traj, 1, s->run_id);
            sqlite3_bind_text(s->ins_traj, 2, pid, -1, SQLITE_STATIC);
            sqlite3_bind_int(s->ins_traj, 3, sample);
            int turns = 1 + rng_below(&r, s->o.max_turns);
            sqlite3_bind_text(s->ins_traj, 4, "turns", -1, SQLITE_STATIC);
            step(s, s->ins_traj);
            long long traj = last_id(s);
            char prompt[65], feedback[65];
            memcpy(prompt, spec_sha, sizeof prompt);
            for (int t = 0; t < turns && in_problem < per_problem && made < s->o.candidates; t++) {
                insert_turn(s, &r, pid, traj, t, prompt, feedback);
                memcpy(prompt, feedback, sizeof prompt);
                in_problem++, made++;
            }
        }
        if (s->o.every_kind)
            insert_imported(s, &r, pid);
    }
}

/* A new database file with another page size (large blobs spill into fewer overflow pages). */
static void set_page_size(const char *path, int page_size)
{
    sqlite3 *db = NULL;
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA page_size = %d; VACUUM;", page_size);
    if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        die("cannot set the page size of '%s'", path);
    sqlite3_close(db);
}

static void usage(void)
{
    fprintf(stderr, "usage: kc_synth --db out.db [--candidates N] [--problems P] [--turns T] "
                    "[--seed S] [--exact-rate F] [--near-rate F] [--statements K] [--truth FILE] "
                    "[--run-tag TAG] [--page-size BYTES] [--every-kind]\n");
    exit(2);
}

static void parse_args(int argc, char **argv, synth_options *o)
{
    *o = (synth_options){.candidates = 1000, .problems = 10, .max_turns = 4, .statements = 30,
                         .seed = 1, .exact_rate = 0.05, .near_rate = 0.05};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--every-kind")) {
            o->every_kind = 1;
            continue;
        }
        if (!v)
            usage();
        if (!strcmp(a, "--db")) o->db_path = v;
        else if (!strcmp(a, "--truth")) o->truth_path = v;
        else if (!strcmp(a, "--run-tag")) o->run_tag = v;
        else if (!strcmp(a, "--candidates")) o->candidates = atol(v);
        else if (!strcmp(a, "--problems")) o->problems = atoi(v);
        else if (!strcmp(a, "--turns")) o->max_turns = atoi(v);
        else if (!strcmp(a, "--statements")) o->statements = atoi(v);
        else if (!strcmp(a, "--page-size")) o->page_size = atoi(v);
        else if (!strcmp(a, "--seed")) o->seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--exact-rate")) o->exact_rate = atof(v);
        else if (!strcmp(a, "--near-rate")) o->near_rate = atof(v);
        else usage();
        i++;
    }
    if (!o->db_path || o->problems < 1 || o->max_turns < 1 || o->statements < 2)
        usage();
}

int main(int argc, char **argv)
{
    kc_set_progname("kc_synth");
    synth s = {0};
    parse_args(argc, argv, &s.o);
    if (s.o.page_size)
        set_page_size(s.o.db_path, s.o.page_size);
    if (kc_db_open(s.o.db_path, KC_DB_CREATE, &s.db, &s.err))
        die("%s", s.err.buf);
    if (s.o.truth_path && !(s.truth = fopen(s.o.truth_path, "w")))
        die("cannot write '%s'", s.o.truth_path);
    if (kc_db_exec(s.db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
                                "PRAGMA cache_size = -1048576; BEGIN", &s.err))
        die("%s", s.err.buf);
    prepare_all(&s);
    insert_problems(&s);
    insert_run(&s);
    s.next_candidate = kc_db_query_int(s.db, "SELECT coalesce(max(id), 0) + 1 FROM candidates");
    generate(&s);
    finalize_all(&s);
    if (kc_db_exec(s.db, "COMMIT; PRAGMA journal_mode = WAL", &s.err))
        die("%s", s.err.buf);
    if (s.truth && fclose(s.truth) != 0)
        die("cannot write '%s'", s.o.truth_path);
    kc_db_close(s.db);
    free(s.recipes);
    sb_free(&s.err), sb_free(&s.src), sb_free(&s.text), sb_free(&s.body), sb_free(&s.spec);
    return 0;
}
