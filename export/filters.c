/* filters: a kexport filter value that matches nothing is an error naming it (see filters.h). */
#include "export/filters.h"
#include "common/db.h"
#include "common/error.h"

#include <sqlite3.h>
#include <string.h>

/* What a filter is checked against: the values there are (one SQL column), and the noun. */
typedef struct filter_rule {
    const char *option, *values_sql, *noun, *lister;
} filter_rule;

static const filter_rule rules[] = {
    {"--run", "SELECT CAST(id AS TEXT) FROM runs ORDER BY id", "run", "the runs: kcurate runs"},
    {"--model", "SELECT DISTINCT model FROM runs ORDER BY model", "run of model", "the runs: kcurate runs"},
    {"--level", "SELECT DISTINCT CAST(level AS TEXT) FROM problems ORDER BY level", "problem of level", "the problems: kcurate stats"},
};

/* The values the database has for a rule, comma separated (at most 20, then "..."). */
static void known_values(sqlite3 *db, const filter_rule *r, strbuf *out)
{
    sqlite3_stmt *st = kc_db_prepare(db, r->values_sql, NULL);
    int n = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        if (n++ == 20) {
            sb_adds(out, ", ...");
            break;
        }
        sb_addf(out, "%s%s", n > 1 ? ", " : "", v ? v : "");
    }
    sqlite3_finalize(st);
    if (!n)
        sb_adds(out, "none");
}

static int has_value(sqlite3 *db, const filter_rule *r, const char *value)
{
    strbuf sql = STRBUF_INIT; /* the rule's one column, whatever its name */
    sb_addf(&sql, "WITH v(x) AS (%s) SELECT 1 FROM v WHERE x = ?", r->values_sql);
    sqlite3_stmt *st = kc_db_prepare(db, sql.buf, NULL);
    int found = 0;
    if (st) {
        sqlite3_bind_text(st, 1, value, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    sb_free(&sql);
    return found;
}

static int check_rule(sqlite3 *db, const export_config *c, const filter_rule *r, const char *list,
                      strbuf *err)
{
    if (!list || !*list || !strcmp(list, "any"))
        return 0;
    strbuf item = STRBUF_INIT;
    int rc = 0;
    for (const char *p = list; *p && !rc;) {
        size_t len = strcspn(p, ",");
        sb_reset(&item);
        sb_add(&item, p, len);
        if (!has_value(db, r, item.buf)) {
            strbuf have = STRBUF_INIT;
            known_values(db, r, &have);
            rc = kc_fail(err, "%s %s matches nothing: no %s %s in %s (there: %s); list "
                              "%s --db %s", r->option, item.buf, r->noun, item.buf, c->db_path,
                         have.buf, r->lister, c->db_path);
            sb_free(&have);
        }
        p += len + (p[len] == ',');
    }
    sb_free(&item);
    return rc;
}

int export_check_filters(const export_config *c, strbuf *err)
{
    const char *lists[] = {c->runs, c->models, c->levels};
    int any = 0;
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        any |= lists[i] && *lists[i];
    if (!any)
        return 0;
    sqlite3 *db = NULL;
    if (kc_db_open(c->db_path, KC_DB_READONLY, &db, err) < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0] && !rc; i++)
        rc = check_rule(db, c, &rules[i], lists[i], err);
    kc_db_close(db);
    return rc;
}
