/* test_export_records: what exported records say, beyond their schema. The prompt of a record is
 * the prompt its model saw: the system and first user message of its trajectory's first recorded
 * request (sft, multiturn, preference), even when the problem's registered spec changed since
 * (kc_synth registers a spec other than the one its trajectories were sent); an imported
 * candidate and an rl prompt get kcollect's system message and the registered spec;
 * --system-prompt replaces the system message only. `--format preference --verdict LIST` keeps
 * correct kernels as chosen and only kernels with those verdicts as rejected; --min-speedup
 * applies to the chosen side only.
 * The database comes from $KC_BIN/kc_synth plus one imported candidate, labelled in-process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/db.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/prompt_text.h"
#include "curate/params.h"
#include "curate/run.h"
#include "export/bundle.h"
#include "export/config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmpdir[] = "/tmp/kc-export-records-XXXXXX";
static char db_path[256];
static sqlite3 *db;           /* read by the checks */
static long long imported_id; /* the imported candidate */
static const char imported_problem[] = "level1/002_synth_op";

/* An imported candidate (no trajectory, no request) with a correct verification. */
static int add_imported_candidate(sqlite3 *d, strbuf *err)
{
    const char src[] = "extern \"C\" __global__ void imported(float *y) { y[0] = 1.0f; }\n"
                       "// @launch imported<<<1, 1>>>(y);\n";
    char sha[SHA256_HEX_LEN + 1];
    if (kc_blob_put(d, src, strlen(src), sha, err))
        return -1;
    strbuf sql = STRBUF_INIT;
    sb_addf(&sql,
            "INSERT INTO candidates(problem_id, source_sha, origin, status) VALUES ('%s', '%s',"
            " 'import', 'verified');"
            "INSERT INTO verifications(candidate_id, verdict, seeds, verifier_version, gpu_name)"
            " VALUES (last_insert_rowid(), 'correct', '1,2,3', 'test', 'none');",
            imported_problem, sha);
    int rc = kc_db_exec(d, sql.buf, err);
    sb_free(&sql);
    imported_id = kc_db_query_int(d, "SELECT max(id) FROM candidates WHERE origin = 'import'");
    return rc;
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir))
        return -1;
    const char *bin = getenv("KC_BIN");
    strbuf cmd = STRBUF_INIT, err = STRBUF_INIT;
    snprintf(db_path, sizeof db_path, "%s/a.db", tmpdir);
    sb_addf(&cmd, "'%s/kc_synth' --db '%s' --candidates 500 --problems 6 --seed 11 --turns 4",
            bin ? bin : "bin", db_path);
    int rc = system(cmd.buf) == 0 ? 0 : -1;
    if (!rc)
        rc = kc_db_open(db_path, KC_DB_EXISTING, &db, &err);
    if (!rc)
        rc = add_imported_candidate(db, &err);
    if (!rc) {
        curate_params p;
        curate_params_defaults(&p);
        curate_summary sum;
        rc = curate_run(db, &p, &sum, &err);
        curate_params_free(&p);
    }
    if (rc)
        fprintf(stderr, "setup: %s\n", err.len ? err.buf : cmd.buf);
    sb_free(&cmd), sb_free(&err);
    return rc;
}

static int teardown(void **state)
{
    (void)state;
    kc_db_close(db);
    remove_tree(tmpdir);
    return 0;
}

/* Exports into tmpdir/name (plain JSONL, every split, no dedup unless said) and returns every
 * record, parsed, in shard order. */
static json_t *export_all(const char *name, const char *format, const char *verdicts,
                          const char *system_prompt, double min_speedup)
{
    export_config c;
    export_config_defaults(&c);
    strbuf out = STRBUF_INIT, err = STRBUF_INIT, path = STRBUF_INIT, data = STRBUF_INIT;
    sb_addf(&out, "%s/%s", tmpdir, name);
    assert_int_equal(export_format_parse(format, &c.format), 0);
    c.dedup = EXPORT_DEDUP_NONE;
    c.sft_every_turn = 1;
    c.gzip = 0;
    if (verdicts)
        c.verdicts = xstrdup(verdicts);
    if (system_prompt)
        c.system_prompt = xstrdup(system_prompt);
    free(c.splits);
    c.splits = xstrdup("train,valid,test,heldout");
    c.min_speedup = min_speedup;
    c.db_path = db_path;
    c.out_dir = out.buf;
    export_summary s;
    if (export_run(&c, &s, &err))
        fail_msg("export %s: %s", name, err.buf);
    path_join(&path, out.buf, "manifest.json");
    json_t *manifest = json_load_file(path.buf, 0, NULL), *shard, *records = json_array();
    assert_non_null(manifest);
    size_t i;
    json_array_foreach(json_object_get(manifest, "shards"), i, shard) {
        path_join(&path, out.buf, json_string_value(json_object_get(shard, "name")));
        assert_int_equal(read_file(path.buf, &data, &err), 0);
        for (char *line = data.buf, *nl; line < data.buf + data.len; line = nl + 1) {
            nl = memchr(line, '\n', (size_t)(data.buf + data.len - line));
            json_t *rec = json_loadb(line, (size_t)(nl - line), 0, NULL);
            assert_non_null(rec);
            json_array_append_new(records, rec);
        }
    }
    assert_true(json_array_size(records) > 0);
    json_decref(manifest);
    export_config_free(&c);
    sb_free(&out), sb_free(&err), sb_free(&path), sb_free(&data);
    return records;
}

static const char *content(json_t *messages, size_t i)
{
    const char *s = json_string_value(json_object_get(json_array_get(messages, i), "content"));
    assert_non_null(s);
    return s;
}

static const char *role(json_t *messages, size_t i)
{
    return json_string_value(json_object_get(json_array_get(messages, i), "role"));
}

/* The first request body of a trajectory as recorded, parsed. */
static json_t *first_request(json_int_t traj)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT CAST(b.data AS TEXT) FROM turns t JOIN requests"
                                            " r ON r.id = t.request_id JOIN blobs b ON b.sha256 ="
                                            " r.body_sha WHERE t.trajectory_id = ? ORDER BY"
                                            " t.turn_index LIMIT 1", -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(st, 1, traj);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    json_t *body = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
    sqlite3_finalize(st);
    assert_non_null(body);
    return body;
}

/* The spec a problem is registered with (problems.spec_sha). */
static char *registered_spec(const char *problem_id)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT CAST(b.data AS TEXT) FROM problems p JOIN blobs"
                                            " b ON b.sha256 = p.spec_sha WHERE p.id = ?", -1, &st,
                                        NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, problem_id, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    char *spec = xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return spec;
}

/* messages opens with the system and first user message of the trajectory's first request
 * (system replaced by system_prompt when given). */
static void expect_recorded_prompt(json_t *messages, json_t *provenance, const char *system_prompt)
{
    json_t *traj = json_object_get(provenance, "trajectory_id");
    assert_true(json_is_integer(traj));
    json_t *body = first_request(json_integer_value(traj)), *sent = json_object_get(body, "messages");
    assert_string_equal(role(sent, 0), "system");
    assert_string_equal(role(sent, 1), "user");
    assert_string_equal(role(messages, 0), "system");
    assert_string_equal(content(messages, 0), system_prompt ? system_prompt : content(sent, 0));
    assert_string_equal(role(messages, 1), "user");
    assert_string_equal(content(messages, 1), content(sent, 1));
    json_decref(body);
}

/* messages opens with the prompt kcollect builds: its system message and the registered spec. */
static void expect_built_prompt(json_t *messages, const char *problem_id)
{
    char *spec = registered_spec(problem_id);
    assert_string_equal(content(messages, 0), prompt_system_text());
    assert_string_equal(content(messages, 1), spec);
    free(spec);
}

static json_t *record_field(json_t *rec, const char *a, const char *b)
{
    json_t *v = json_object_get(rec, a);
    return b ? json_object_get(v, b) : v;
}

static const char *problem_of(json_t *rec) { return json_string_value(record_field(rec, "problem", "id")); }

static void sft_records_carry_the_prompt_the_model_saw(void **state)
{
    (void)state;
    json_t *records = export_all("sft", "sft", "any", NULL, 0), *rec;
    size_t i;
    int collected = 0, imported = 0;
    json_array_foreach(records, i, rec) {
        json_t *messages = json_object_get(rec, "messages"), *prov = json_object_get(rec, "provenance");
        if (json_integer_value(json_object_get(prov, "candidate_id")) == imported_id) {
            expect_built_prompt(messages, problem_of(rec));
            imported++;
            continue;
        }
        expect_recorded_prompt(messages, prov, NULL);
        /* the spec registered later is not the one this model was sent */
        char *spec = registered_spec(problem_of(rec));
        assert_string_not_equal(content(messages, 1), spec);
        free(spec);
        collected++;
    }
    assert_int_equal(imported, 1);
    assert_true(collected > 100);
    json_decref(records);
}

static void multiturn_and_preference_records_carry_the_prompt_the_model_saw(void **state)
{
    (void)state;
    json_t *records = export_all("multiturn", "multiturn", "any", NULL, 0), *rec;
    size_t i;
    json_array_foreach(records, i, rec) {
        json_t *messages = json_object_get(rec, "messages");
        expect_recorded_prompt(messages, json_object_get(rec, "provenance"), NULL);
        for (size_t m = 2; m < json_array_size(messages); m++) /* answers and feedback follow */
            assert_string_equal(role(messages, m), m % 2 ? "user" : "assistant");
    }
    json_decref(records);
    records = export_all("preference", "preference", NULL, NULL, 0);
    json_array_foreach(records, i, rec) {
        json_t *prompt = json_object_get(rec, "prompt");
        expect_recorded_prompt(prompt, record_field(rec, "provenance", "rejected"), NULL);
        json_t *chosen = record_field(rec, "provenance", "chosen");
        if (json_integer_value(json_object_get(chosen, "candidate_id")) == imported_id)
            expect_built_prompt(prompt, problem_of(rec));
        else
            expect_recorded_prompt(prompt, chosen, NULL);
    }
    json_decref(records);
}

static void rl_prompts_are_kcollects(void **state)
{
    (void)state;
    json_t *records = export_all("rl", "rl", NULL, NULL, 0), *rec;
    size_t i;
    json_array_foreach(records, i, rec) {
        const char *pid = json_string_value(record_field(rec, "extra_info", "problem_id"));
        json_t *prompt = json_object_get(rec, "prompt");
        assert_int_equal(json_array_size(prompt), 2);
        expect_built_prompt(prompt, pid);
    }
    assert_int_equal(json_array_size(records), 6);
    json_decref(records);
}

static void system_prompt_override_replaces_the_system_message_only(void **state)
{
    (void)state;
    const char *mine = "Answer with one ```cuda block.";
    json_t *records = export_all("sft-override", "sft", "any", mine, 0), *rec;
    size_t i;
    json_array_foreach(records, i, rec) {
        json_t *messages = json_object_get(rec, "messages"), *prov = json_object_get(rec, "provenance");
        assert_string_equal(content(messages, 0), mine);
        if (json_integer_value(json_object_get(prov, "candidate_id")) != imported_id)
            expect_recorded_prompt(messages, prov, mine);
    }
    json_decref(records);
    records = export_all("rl-override", "rl", NULL, mine, 0);
    json_array_foreach(records, i, rec)
        assert_string_equal(content(json_object_get(rec, "prompt"), 0), mine);
    json_decref(records);
}

static const char *side_verdict(json_t *rec, const char *side)
{
    return json_string_value(
        json_object_get(json_object_get(record_field(rec, "provenance", side), "verification"),
                        "verdict"));
}

/* Counts the preference records whose rejected verdict is v. */
static int rejected_with(json_t *records, const char *v)
{
    json_t *rec;
    size_t i;
    int n = 0;
    json_array_foreach(records, i, rec)
        n += !strcmp(side_verdict(rec, "rejected"), v);
    return n;
}

static void preference_verdict_restricts_the_rejected_side(void **state)
{
    (void)state;
    json_t *all = export_all("pref-any", "preference", "any", NULL, 0);
    json_t *some = export_all("pref-some", "preference", "compile_error,mismatch", NULL, 0), *rec;
    size_t i;
    json_array_foreach(some, i, rec) {
        const char *r = side_verdict(rec, "rejected");
        assert_string_equal(side_verdict(rec, "chosen"), "correct");
        assert_string_equal(json_string_value(json_object_get(record_field(rec, "labels", "chosen"),
                                                              "verdict_class")),
                            "correct");
        if (strcmp(r, "compile_error") && strcmp(r, "mismatch"))
            fail_msg("record %zu: rejected verdict %s is not in the list", i, r);
    }
    assert_true(rejected_with(some, "compile_error") > 0 && rejected_with(some, "mismatch") > 0);
    assert_true(json_array_size(all) > json_array_size(some));
    assert_true(rejected_with(all, "compile_error") + rejected_with(all, "mismatch") <
                (int)json_array_size(all));
    json_decref(all), json_decref(some);
}

/* --min-speedup keeps fast correct kernels as chosen; the rejected side, never timed, stays. */
static void preference_min_speedup_filters_the_chosen_side(void **state)
{
    (void)state;
    json_t *fast = export_all("pref-fast", "preference", "any", NULL, 1.5), *rec;
    size_t i;
    assert_true(json_array_size(fast) > 0);
    json_array_foreach(fast, i, rec) {
        double speedup = json_number_value(
            json_object_get(record_field(rec, "labels", "chosen"), "speedup_eager"));
        if (speedup < 1.5)
            fail_msg("record %zu: chosen kernel's speedup %g is below 1.5", i, speedup);
        assert_string_not_equal(side_verdict(rec, "rejected"), "correct");
    }
    json_decref(fast);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sft_records_carry_the_prompt_the_model_saw),
        cmocka_unit_test(multiturn_and_preference_records_carry_the_prompt_the_model_saw),
        cmocka_unit_test(rl_prompts_are_kcollects),
        cmocka_unit_test(system_prompt_override_replaces_the_system_message_only),
        cmocka_unit_test(preference_verdict_restricts_the_rejected_side),
        cmocka_unit_test(preference_min_speedup_filters_the_chosen_side),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
