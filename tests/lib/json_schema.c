/* json_schema: validates JSON against the JSON Schema subset our schemas use (see json_schema.h). */
#include "tests/lib/json_schema.h"
#include "common/error.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct vctx {
    const json_t *root;
    strbuf path;  /* where in the instance we are: $.a.b[3] */
    int depth;    /* of $ref indirections, against reference loops */
} vctx;

json_t *json_schema_load(const char *path, strbuf *err)
{
    json_error_t je;
    json_t *s = json_load_file(path, 0, &je);
    if (!s)
        kc_fail(err, "%s:%d: %s", path, je.line, je.text);
    else if (!json_is_object(s) && !json_is_boolean(s)) {
        json_decref(s);
        s = NULL;
        kc_fail(err, "%s: a schema is an object or a boolean", path);
    }
    return s;
}

static int fail(vctx *c, strbuf *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(vctx *c, strbuf *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_reset(err);
    sb_addf(err, "%s: ", c->path.len ? c->path.buf : "$");
    sb_vaddf(err, fmt, ap);
    va_end(ap);
    return -1;
}

/* Resolves "#" or "#/a/b~1c" within the root schema (JSON pointer, ~0 and ~1 unescaped). */
static const json_t *resolve(const json_t *root, const char *ref)
{
    if (ref[0] != '#')
        return NULL;
    const json_t *node = root;
    const char *p = ref + 1;
    strbuf key = STRBUF_INIT;
    while (node && *p == '/') {
        p++;
        sb_reset(&key);
        for (; *p && *p != '/'; p++) {
            if (p[0] == '~' && p[1] == '0')
                sb_addch(&key, '~'), p++;
            else if (p[0] == '~' && p[1] == '1')
                sb_addch(&key, '/'), p++;
            else
                sb_addch(&key, *p);
        }
        node = json_is_object(node) ? json_object_get(node, sb_str(&key)) : NULL;
    }
    sb_free(&key);
    return *p ? NULL : node;
}

static int is_type(const json_t *v, const char *type)
{
    if (!strcmp(type, "object")) return json_is_object(v);
    if (!strcmp(type, "array")) return json_is_array(v);
    if (!strcmp(type, "string")) return json_is_string(v);
    if (!strcmp(type, "number")) return json_is_number(v);
    if (!strcmp(type, "boolean")) return json_is_boolean(v);
    if (!strcmp(type, "null")) return json_is_null(v);
    if (!strcmp(type, "integer"))
        return json_is_integer(v) ||
               (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)));
    return -1;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

/* Code points of a UTF-8 string (jansson strings are valid UTF-8). */
static size_t utf8_length(const char *s, size_t bytes)
{
    size_t n = 0;
    for (size_t i = 0; i < bytes; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

/* Numbers compare by value (1 equals 1.0), everything else by json_equal. */
static int same_value(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    return json_equal((json_t *)a, (json_t *)b);
}

static int validate(vctx *c, const json_t *schema, const json_t *v, strbuf *err);
static int check_conditional(vctx *c, const json_t *schema, const json_t *v, strbuf *err);

static int check_type(vctx *c, const json_t *t, const json_t *v, strbuf *err)
{
    size_t i;
    const json_t *one;
    if (json_is_string(t)) {
        int ok = is_type(v, json_string_value(t));
        if (ok < 0)
            return fail(c, err, "schema: unknown type '%s'", json_string_value(t));
        return ok ? 0 : fail(c, err, "expected %s", json_string_value(t));
    }
    if (!json_is_array(t))
        return fail(c, err, "schema: 'type' must be a string or an array");
    strbuf want = STRBUF_INIT;
    json_array_foreach(t, i, one) {
        int ok = json_is_string(one) ? is_type(v, json_string_value(one)) : -1;
        if (ok < 0) {
            sb_free(&want);
            return fail(c, err, "schema: bad member of 'type'");
        }
        if (ok) {
            sb_free(&want);
            return 0;
        }
        sb_addf(&want, "%s%s", i ? " or " : "", json_string_value(one));
    }
    sb_addf(&want, ", not %s", type_name(v));
    int rc = fail(c, err, "expected %s", want.buf);
    sb_free(&want);
    return rc;
}

static int check_object(vctx *c, const json_t *schema, const json_t *v, strbuf *err)
{
    const json_t *required = json_object_get(schema, "required");
    const json_t *props = json_object_get(schema, "properties");
    const json_t *additional = json_object_get(schema, "additionalProperties");
    size_t i;
    const json_t *one;
    json_array_foreach(required, i, one)
        if (json_is_string(one) && !json_object_get(v, json_string_value(one)))
            return fail(c, err, "missing required property '%s'", json_string_value(one));
    const json_t *minp = json_object_get(schema, "minProperties");
    if (minp && (json_int_t)json_object_size(v) < json_integer_value(minp))
        return fail(c, err, "%zu properties are too few (minProperties)", json_object_size(v));
    const json_t *dependent = json_object_get(schema, "dependentRequired"), *names;
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)dependent, key, names) {
        if (!json_object_get(v, key))
            continue;
        json_array_foreach(names, i, one)
            if (json_is_string(one) && !json_object_get(v, json_string_value(one)))
                return fail(c, err, "'%s' needs property '%s' (dependentRequired)", key,
                            json_string_value(one));
    }
    const json_t *property_names = json_object_get(schema, "propertyNames");
    size_t mark = c->path.len;
    int rc = 0;
    json_object_foreach((json_t *)v, key, value) {
        if (property_names) {
            json_t *name = json_string(key);
            rc = validate(c, property_names, name, err);
            json_decref(name);
            if (rc)
                break;
        }
        const json_t *sub = json_object_get(props, key);
        if (!sub && additional && json_is_false(additional)) {
            rc = fail(c, err, "property '%s' is not allowed here", key);
            break;
        }
        if (!sub)
            sub = additional;
        if (!sub)
            continue;
        sb_addf(&c->path, "%s.%s", c->path.len ? "" : "$", key);
        rc = validate(c, sub, value, err);
        sb_setlen(&c->path, mark);
        if (rc)
            break;
    }
    return rc;
}

static int check_array(vctx *c, const json_t *schema, const json_t *v, strbuf *err)
{
    const json_t *min = json_object_get(schema, "minItems"), *max = json_object_get(schema, "maxItems");
    const json_t *items = json_object_get(schema, "items");
    size_t n = json_array_size(v);
    if (min && (json_int_t)n < json_integer_value(min))
        return fail(c, err, "%zu items are too few (minItems)", n);
    if (max && (json_int_t)n > json_integer_value(max))
        return fail(c, err, "%zu items are too many (maxItems)", n);
    if (json_is_true(json_object_get(schema, "uniqueItems")))
        for (size_t a = 0; a < n; a++)
            for (size_t b = a + 1; b < n; b++)
                if (same_value(json_array_get(v, a), json_array_get(v, b)))
                    return fail(c, err, "items %zu and %zu are equal (uniqueItems)", a, b);
    size_t i, mark = c->path.len;
    const json_t *one;
    if (items)
        json_array_foreach(v, i, one) {
            sb_addf(&c->path, "%s[%zu]", c->path.len ? "" : "$", i);
            int rc = validate(c, items, one, err);
            sb_setlen(&c->path, mark);
            if (rc)
                return rc;
        }
    return 0;
}

/* "pattern": a POSIX extended regular expression, unanchored as in JSON Schema (the patterns of
 * our schemas are ECMA-262 ones that ERE reads the same way: classes, alternation, ^ and $). */
static int check_pattern(vctx *c, const json_t *pattern, const char *s, strbuf *err)
{
    regex_t re;
    if (!json_is_string(pattern) || regcomp(&re, json_string_value(pattern), REG_EXTENDED | REG_NOSUB))
        return fail(c, err, "schema: 'pattern' is not a regular expression");
    int match = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return match ? 0 : fail(c, err, "'%s' does not match the pattern %s", s, json_string_value(pattern));
}

static int check_string(vctx *c, const json_t *schema, const json_t *v, strbuf *err)
{
    const json_t *min = json_object_get(schema, "minLength"), *max = json_object_get(schema, "maxLength");
    size_t len = utf8_length(json_string_value(v), json_string_length(v));
    if (min && (json_int_t)len < json_integer_value(min))
        return fail(c, err, "a string of %zu characters is too short (minLength)", len);
    if (max && (json_int_t)len > json_integer_value(max))
        return fail(c, err, "a string of %zu characters is too long (maxLength)", len);
    const json_t *pattern = json_object_get(schema, "pattern");
    return pattern ? check_pattern(c, pattern, json_string_value(v), err) : 0;
}

static int check_number(vctx *c, const json_t *schema, const json_t *v, strbuf *err)
{
    const json_t *min = json_object_get(schema, "minimum"), *max = json_object_get(schema, "maximum");
    double x = json_number_value(v);
    if (min && x < json_number_value(min))
        return fail(c, err, "%g is below the minimum", x);
    if (max && x > json_number_value(max))
        return fail(c, err, "%g is above the maximum", x);
    const json_t *xmin = json_object_get(schema, "exclusiveMinimum"),
                 *xmax = json_object_get(schema, "exclusiveMaximum");
    if (xmin && x <= json_number_value(xmin))
        return fail(c, err, "%g is not above the exclusiveMinimum", x);
    if (xmax && x >= json_number_value(xmax))
        return fail(c, err, "%g is not below the exclusiveMaximum", x);
    return 0;
}

/* oneOf (exactly one), anyOf (at least one), allOf (every one). On failure the message is the one
 * of the branch that got deepest into the instance: usually the branch that was meant. */
static int check_combination(vctx *c, const char *kw, const json_t *branches, const json_t *v,
                             strbuf *err)
{
    if (!json_is_array(branches) || !json_array_size(branches))
        return fail(c, err, "schema: '%s' must be a non-empty array", kw);
    size_t i, matched = 0;
    const json_t *one;
    strbuf e = STRBUF_INIT, best = STRBUF_INIT;
    json_array_foreach(branches, i, one) {
        if (!validate(c, one, v, &e)) {
            matched++;
            continue;
        }
        if (!strcmp(kw, "allOf")) {
            sb_reset(err), sb_add(err, e.buf, e.len);
            sb_free(&e), sb_free(&best);
            return -1;
        }
        size_t depth = strcspn(e.buf, " ");
        if (!best.len || depth > strcspn(best.buf, " "))
            sb_reset(&best), sb_add(&best, e.buf, e.len);
    }
    int rc = 0;
    if (!strcmp(kw, "oneOf") && matched > 1)
        rc = fail(c, err, "matches more than one branch of oneOf");
    else if (strcmp(kw, "allOf") && matched == 0) {
        sb_reset(err);
        sb_addf(err, "%s (no branch of %s matches)", best.buf, kw);
        rc = -1;
    }
    sb_free(&e), sb_free(&best);
    return rc;
}

/* "not" (the instance must fail the schema), then "if" / "then" / "else" (the instance meets
 * then when it meets if, else otherwise). */
static int check_conditional(vctx *c, const json_t *schema, const json_t *v, strbuf *err)
{
    const json_t *not = json_object_get(schema, "not"), *cond = json_object_get(schema, "if");
    strbuf ignored = STRBUF_INIT;
    int not_met = not && validate(c, not, v, &ignored) == 0;
    int met = cond && validate(c, cond, v, &ignored) == 0;
    sb_free(&ignored);
    if (not_met)
        return fail(c, err, "matches the schema of 'not'");
    const json_t *branch = cond ? json_object_get(schema, met ? "then" : "else") : NULL;
    return branch ? validate(c, branch, v, err) : 0;
}

static int known_keyword(const char *k)
{
    static const char *const known[] = {
        "$schema", "$id", "$defs", "definitions", "title", "description", "$comment", "examples",
        "default", "$ref", "type", "enum", "const", "required", "properties",
        "additionalProperties", "items", "minItems", "maxItems", "minLength", "maxLength",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "oneOf", "anyOf", "allOf",
        "pattern", "propertyNames", "minProperties", "dependentRequired", "uniqueItems", "if",
        "then", "else", "not"};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (!strcmp(k, known[i]))
            return 1;
    return 0;
}

static int validate(vctx *c, const json_t *schema, const json_t *v, strbuf *err)
{
    if (json_is_true(schema))
        return 0;
    if (json_is_false(schema))
        return fail(c, err, "nothing is allowed here (false schema)");
    if (!json_is_object(schema))
        return fail(c, err, "schema: a schema is an object or a boolean");
    const char *key;
    json_t *kwv;
    json_object_foreach((json_t *)schema, key, kwv)
        if (!known_keyword(key))
            return fail(c, err, "schema: unsupported keyword '%s'", key);
    const json_t *ref = json_object_get(schema, "$ref");
    if (ref) {
        const json_t *target = json_is_string(ref) ? resolve(c->root, json_string_value(ref)) : NULL;
        if (!target)
            return fail(c, err, "schema: cannot resolve $ref '%s'",
                        json_is_string(ref) ? json_string_value(ref) : "?");
        if (c->depth > 64)
            return fail(c, err, "schema: $ref '%s' loops", json_string_value(ref));
        c->depth++;
        int rc = validate(c, target, v, err);
        c->depth--;
        if (rc)
            return rc;
    }
    const json_t *t = json_object_get(schema, "type");
    if (t && check_type(c, t, v, err))
        return -1;
    const json_t *e = json_object_get(schema, "enum");
    if (e) {
        size_t i;
        const json_t *one;
        int found = 0;
        json_array_foreach(e, i, one)
            found |= same_value(one, v);
        if (!found)
            return fail(c, err, "not one of the values of the enum");
    }
    const json_t *k = json_object_get(schema, "const");
    if (k && !same_value(k, v))
        return fail(c, err, "not the constant the schema requires");
    if (json_is_object(v) && check_object(c, schema, v, err))
        return -1;
    if (json_is_array(v) && check_array(c, schema, v, err))
        return -1;
    if (json_is_string(v) && check_string(c, schema, v, err))
        return -1;
    if (json_is_number(v) && check_number(c, schema, v, err))
        return -1;
    static const char *const combos[] = {"allOf", "anyOf", "oneOf"};
    for (int i = 0; i < 3; i++) {
        const json_t *b = json_object_get(schema, combos[i]);
        if (b && check_combination(c, combos[i], b, v, err))
            return -1;
    }
    return check_conditional(c, schema, v, err);
}

int json_schema_validate(const json_t *schema, const json_t *instance, strbuf *err)
{
    vctx c = {.root = schema};
    int rc = validate(&c, schema, instance, err);
    sb_free(&c.path);
    return rc;
}
