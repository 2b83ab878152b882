/* test_export_schema: every record kexport writes, in every format (sft last-correct and
 * every-turn, multiturn, rl, preference; gzip and plain shards; each --reasoning mode), validates against
 * schemas/record.schema.json; the manifest's record counts match the shards; and the validator
 * (tests/lib/json_schema.c) rejects broken records, so a pass means something; a kernel that is
 * not UTF-8 is a clear error.
 * The database comes from $KC_BIN/kc_synth and is labelled in-process by curate_run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/db.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "curate/params.h"
#include "curate/run.h"
#include "export/bundle.h"
#include "export/config.h"
#include "tests/lib/json_schema.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static char tmpdir[] = "/tmp/kc-export-schema-XXXXXX";
static char db_path[256];
static json_t *schema;

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir))
        return -1;
    const char *bin = getenv("KC_BIN"), *root = getenv("KC_ROOT");
    strbuf cmd = STRBUF_INIT, err = STRBUF_INIT, path = STRBUF_INIT;
    snprintf(db_path, sizeof db_path, "%s/a.db", tmpdir);
    sb_addf(&cmd, "'%s/kc_synth' --db '%s' --candidates 600 --problems 8 --seed 5 --turns 4",
            bin ? bin : "bin", db_path);
    int rc = system(cmd.buf) == 0 ? 0 : -1;
    sqlite3 *db = NULL;
    if (!rc)
        rc = kc_db_open(db_path, KC_DB_EXISTING, &db, &err);
    if (!rc) {
        curate_params p;
        curate_params_defaults(&p);
        curate_params_add_heldout(&p, "level1/000_synth_op");
        curate_summary sum;
        rc = curate_run(db, &p, &sum, &err);
        curate_params_free(&p);
    }
    kc_db_close(db);
    path_join(&path, root ? root : ".", "schemas/record.schema.json");
    if (!rc && !(schema = json_schema_load(path.buf, &err)))
        rc = -1;
    if (rc)
        fprintf(stderr, "setup: %s\n", err.len ? err.buf : cmd.buf);
    sb_free(&cmd), sb_free(&err), sb_free(&path);
    return rc;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(schema);
    remove_tree(tmpdir);
    return 0;
}

/* Reads a shard (gzip or plain: gzread reads both) into out. */
static void read_shard(const char *path, strbuf *out)
{
    gzFile f = gzopen(path, "rb");
    assert_non_null(f);
    sb_reset(out);
    char buf[1 << 16];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0)
        sb_add(out, buf, (size_t)n);
    assert_true(n == 0);
    gzclose(f);
}

/* Validates every line of every shard the manifest of dir lists; returns the record count. */
static long validate_export(const char *dir, const char *format)
{
    strbuf path = STRBUF_INIT, data = STRBUF_INIT, err = STRBUF_INIT;
    path_join(&path, dir, "manifest.json");
    json_t *manifest = json_load_file(path.buf, 0, NULL);
    assert_non_null(manifest);
    json_t *shards = json_object_get(manifest, "shards"), *shard;
    size_t i;
    long records = 0;
    json_array_foreach(shards, i, shard) {
        path_join(&path, dir, json_string_value(json_object_get(shard, "name")));
        read_shard(path.buf, &data);
        long in_shard = 0;
        for (char *line = data.buf, *nl; line < data.buf + data.len; line = nl + 1) {
            nl = memchr(line, '\n', (size_t)(data.buf + data.len - line));
            assert_non_null(nl); /* every record ends with a newline */
            json_error_t je;
            json_t *rec = json_loadb(line, (size_t)(nl - line), 0, &je);
            if (!rec)
                fail_msg("%s line %ld: not JSON: %s", path.buf, in_shard + 1, je.text);
            if (json_schema_validate(schema, rec, &err))
                fail_msg("%s line %ld does not match record.schema.json: %s", path.buf,
                         in_shard + 1, err.buf);
            assert_string_equal(json_string_value(json_object_get(rec, "format")), format);
            json_decref(rec);
            in_shard++;
        }
        assert_int_equal(in_shard, json_integer_value(json_object_get(shard, "records")));
        records += in_shard;
    }
    assert_int_equal(records, json_integer_value(
                                  json_object_get(json_object_get(manifest, "counts"), "records")));
    json_decref(manifest);
    sb_free(&path), sb_free(&data), sb_free(&err);
    return records;
}

typedef struct export_case {
    const char *name, *format, *verdicts, *dedup;
    int every_turn, gzip;
    double shard_mb;
    enum export_reasoning reasoning; /* [field] */
} export_case;

static long export_and_validate(const export_case *k)
{
    export_config c;
    export_config_defaults(&c);
    strbuf out = STRBUF_INIT, err = STRBUF_INIT;
    sb_addf(&out, "%s/%s", tmpdir, k->name);
    assert_int_equal(export_format_parse(k->format, &c.format), 0);
    if (k->dedup)
        assert_int_equal(export_dedup_parse(k->dedup, &c.dedup), 0);
    if (k->verdicts)
        c.verdicts = xstrdup(k->verdicts);
    free(c.splits);
    c.splits = xstrdup("train,valid,test,heldout");
    c.sft_every_turn = k->every_turn;
    c.reasoning = k->reasoning;
    c.gzip = k->gzip;
    if (k->shard_mb > 0)
        c.shard_bytes = (long long)(k->shard_mb * 1048576.0);
    c.db_path = db_path;
    c.out_dir = out.buf;
    export_summary s;
    if (export_run(&c, &s, &err))
        fail_msg("export %s: %s", k->name, err.buf);
    long n = validate_export(out.buf, k->format);
    assert_int_equal(n, s.records);
    assert_true(n > 0);
    export_config_free(&c);
    sb_free(&out), sb_free(&err);
    return n;
}

static void every_record_of_every_format_validates(void **state)
{
    (void)state;
    static const export_case cases[] = {
        {"sft-last", "sft", NULL, NULL, 0, 1, 0},
        {"sft-every-any", "sft", "any", "none", 1, 1, 0.25}, /* several shards per split */
        {"sft-plain", "sft", "correct,mismatch", "exact", 1, 0, 0},
        {"multiturn", "multiturn", "any", "none", 0, 1, 0},
        {"multiturn-solved", "multiturn", NULL, NULL, 0, 0, 0},
        {"rl", "rl", NULL, NULL, 0, 1, 0},
        {"preference", "preference", NULL, "none", 0, 1, 0},
        /* the reasoning of the answers (kc_synth gives a tenth of them some) in each mode */
        {"sft-think", "sft", "any", "none", 1, 0, 0, EXPORT_REASONING_THINK},
        {"sft-drop", "sft", "any", "none", 1, 0, 0, EXPORT_REASONING_DROP},
        {"multiturn-think", "multiturn", "any", "none", 0, 0, 0, EXPORT_REASONING_THINK},
        {"multiturn-drop", "multiturn", "any", "none", 0, 0, 0, EXPORT_REASONING_DROP},
        {"preference-think", "preference", NULL, "none", 0, 0, 0, EXPORT_REASONING_THINK},
    };
    long total = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        total += export_and_validate(&cases[i]);
    assert_true(total > 500);
}

/* The first sft record of an export, parsed. */
static json_t *one_sft_record(void)
{
    export_case k = {"sft-one", "sft", NULL, NULL, 0, 0, 0};
    export_and_validate(&k);
    strbuf path = STRBUF_INIT, data = STRBUF_INIT;
    sb_addf(&path, "%s/sft-one/train-00000-of-00001.jsonl", tmpdir);
    read_shard(path.buf, &data);
    json_t *rec = json_loadb(data.buf, strcspn(data.buf, "\n"), 0, NULL);
    assert_non_null(rec);
    sb_free(&path), sb_free(&data);
    return rec;
}

/* Applies a JSON patch-like change ("set" path value, or "del" path) to a copy of rec and
 * expects the validator to reject it with a message naming want. */
static void expect_rejected(const json_t *rec, const char *what, const char *p1, const char *p2,
                            json_t *value, const char *want)
{
    json_t *copy = json_deep_copy(rec);
    json_t *parent = p2 ? json_object_get(copy, p1) : copy;
    const char *key = p2 ? p2 : p1;
    assert_non_null(parent);
    if (value)
        json_object_set_new(parent, key, value);
    else
        assert_int_equal(json_object_del(parent, key), 0);
    strbuf err = STRBUF_INIT;
    if (!json_schema_validate(schema, copy, &err))
        fail_msg("a record with %s validated", what);
    if (!strstr(err.buf, want))
        fail_msg("%s: the message '%s' does not mention '%s'", what, err.buf, want);
    sb_free(&err);
    json_decref(copy);
}

static void validator_rejects_broken_records(void **state)
{
    (void)state;
    json_t *rec = one_sft_record();
    strbuf err = STRBUF_INIT;
    assert_int_equal(json_schema_validate(schema, rec, &err), 0);
    expect_rejected(rec, "no provenance", "provenance", NULL, NULL, "provenance");
    expect_rejected(rec, "an unknown split", "split", NULL, json_string("everything"), "$.split");
    expect_rejected(rec, "an extra property", "extra", NULL, json_true(), "'extra'");
    expect_rejected(rec, "a short id", "id", NULL, json_string("abc"), "minLength");
    expect_rejected(rec, "an unknown verdict class", "labels", "verdict_class",
                    json_string("great"), "$.labels.verdict_class");
    expect_rejected(rec, "a string reward", "labels", "reward", json_string("1"), "$.labels.reward");
    expect_rejected(rec, "no messages", "messages", NULL, json_array(), "minItems");
    expect_rejected(rec, "a problem level as text", "problem", "level", json_string("1"),
                    "$.problem.level");
    expect_rejected(rec, "an unknown format", "format", NULL, json_string("dpo"), "format");
    json_t *bad = json_deep_copy(rec);
    json_object_set_new(json_array_get(json_object_get(bad, "messages"), 1), "role",
                        json_string("robot"));
    assert_int_equal(json_schema_validate(schema, bad, &err), -1);
    assert_non_null(strstr(err.buf, "$.messages[1].role"));
    json_decref(bad);
    expect_rejected(rec, "an unknown reasoning state", "labels", "reasoning_state",
                    json_string("half"), "$.labels.reasoning_state");
    bad = json_deep_copy(rec);
    json_t *answer = json_array_get(json_object_get(bad, "messages"), 2);
    assert_true(json_is_null(json_object_get(answer, "reasoning_content")) ||
                json_is_string(json_object_get(answer, "reasoning_content")));
    json_object_set_new(answer, "reasoning_content", json_integer(5));
    assert_int_equal(json_schema_validate(schema, bad, &err), -1);
    assert_non_null(strstr(err.buf, "$.messages[2].reasoning_content"));
    json_decref(bad);
    bad = json_loads("[1, 2]", 0, NULL);
    assert_int_equal(json_schema_validate(schema, bad, &err), -1);
    json_decref(bad);
    json_decref(rec);
    sb_free(&err);
}

/* The validator's own keywords on a small schema: a keyword it does not know is an error. */
static void validator_keywords(void **state)
{
    (void)state;
    json_t *s = json_loads(
        "{\"$defs\": {\"n\": {\"type\": \"integer\", \"minimum\": 1}},"
        " \"type\": \"object\", \"required\": [\"a\"], \"additionalProperties\": {\"$ref\": \"#/$defs/n\"},"
        " \"properties\": {\"a\": {\"anyOf\": [{\"const\": \"x\"}, {\"type\": \"array\", \"maxItems\": 1}]},"
        "  \"s\": {\"type\": \"string\", \"maxLength\": 2}}}", 0, NULL);
    assert_non_null(s);
    strbuf err = STRBUF_INIT;
    const char *good[] = {"{\"a\": \"x\"}", "{\"a\": [], \"z\": 3}", "{\"a\": [1], \"s\": \"\\u00e9\\u00e9\"}",
                          "{\"a\": \"x\", \"z\": 2.0}"};
    const char *bad[] = {"{}", "{\"a\": \"y\"}", "{\"a\": [1, 2]}", "{\"a\": \"x\", \"z\": 0}",
                         "{\"a\": \"x\", \"z\": 1.5}", "{\"a\": \"x\", \"s\": \"abc\"}", "[]"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        json_t *v = json_loads(good[i], 0, NULL);
        if (json_schema_validate(s, v, &err))
            fail_msg("%s rejected: %s", good[i], err.buf);
        json_decref(v);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *v = json_loads(bad[i], 0, NULL);
        if (!json_schema_validate(s, v, &err))
            fail_msg("%s accepted", bad[i]);
        json_decref(v);
    }
    json_decref(s);
    s = json_loads("{\"patternProperties\": {\"^a\": true}}", 0, NULL);
    json_t *v = json_string("b");
    assert_int_equal(json_schema_validate(s, v, &err), -1);
    assert_non_null(strstr(err.buf, "unsupported keyword 'patternProperties'"));
    json_decref(s), json_decref(v);
    sb_free(&err);
}

/* A kernel that is not UTF-8 cannot become JSON: the export fails, names the record kind, and
 * writes nothing (checked on a copy of the database). */
static void invalid_utf8_is_an_error(void **state)
{
    (void)state;
    strbuf data = STRBUF_INIT, err = STRBUF_INIT, path = STRBUF_INIT, out = STRBUF_INIT;
    sb_addf(&path, "%s/bad.db", tmpdir);
    sb_addf(&out, "%s/bad-out", tmpdir);
    assert_int_equal(read_file(db_path, &data, &err), 0);
    assert_int_equal(write_file_atomic(path.buf, data.buf, data.len, &err), 0);
    sqlite3 *db;
    assert_int_equal(kc_db_open(path.buf, KC_DB_EXISTING, &db, &err), 0);
    const char bad[] = "extern \"C\" __global__ void k() {} // caf\xe9\n";
    char sha[SHA256_HEX_LEN + 1];
    assert_int_equal(kc_blob_put(db, bad, strlen(bad), sha, &err), 0);
    sqlite3_stmt *st = kc_db_prepare(db, "UPDATE candidates SET source_sha = ? WHERE id ="
                                         " (SELECT max(id) FROM candidates WHERE source_sha IS NOT NULL)",
                                     &err);
    assert_non_null(st);
    sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    kc_db_close(db);
    export_config c;
    export_config_defaults(&c);
    c.sft_every_turn = 1;
    c.verdicts = xstrdup("any");
    c.dedup = EXPORT_DEDUP_NONE;
    free(c.splits);
    c.splits = xstrdup("train,valid,test,heldout");
    c.db_path = path.buf;
    c.out_dir = out.buf;
    export_summary s;
    assert_int_equal(export_run(&c, &s, &err), -1);
    if (!strstr(err.buf, "not UTF-8"))
        fail_msg("unclear error: %s", err.buf);
    sb_reset(&path);
    sb_addf(&path, "%s/manifest.json", out.buf);
    assert_false(file_exists(path.buf));
    export_config_free(&c);
    sb_free(&data), sb_free(&err), sb_free(&path), sb_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(validator_keywords),
        cmocka_unit_test(every_record_of_every_format_validates),
        cmocka_unit_test(validator_rejects_broken_records),
        cmocka_unit_test(invalid_utf8_is_an_error),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
