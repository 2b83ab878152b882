/* problem_values: the value classes a manifest declares (docs/PROBLEMS.md, "Value classes"):
 * each param's "vary" (the values the checks that vary constants use instead of its value, or
 * [] with "vary_why") and the top-level "values" (a large-magnitude run, structured inputs with
 * secret spikes, special values), loaded with precise errors; and the list of what a problem
 * leaves undeclared, which `kverify problems --check` refuses. A manifest without them still
 * loads (older manifests, problems users write), with nothing varied and no value-class run. */
#include "common/problem.h"
#include "common/problem_internal.h"
#include "common/error.h"

#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KC_MAX_LARGE 1e6      /* a large-magnitude factor: N(0, 1) inputs stay far from overflow */
#define KC_MAX_SPIKE 1e6      /* a spike, in standard deviations */
#define KC_MAX_ATOL_SCALE 1e12 /* a value-class run's atol, as a multiple of the problem's */

static const char *special_names[] = {"nan", "inf", "-inf", "-0"};

const char *special_name(enum kc_special s)
{
    return (unsigned)s < sizeof(special_names) / sizeof(*special_names) ? special_names[s] : "?";
}

static int fieldf_fail(struct problem_ctx *c, const char *field, const char *sub, const char *what)
{
    strbuf f = STRBUF_INIT;
    sb_addf(&f, "%s.%s", field, sub);
    int rc = problem_field_fail(c, f.buf, what);
    sb_free(&f);
    return rc;
}

/* Fails on a key of obj outside keys (NULL-terminated), naming the expected ones. */
static int check_keys(struct problem_ctx *c, json_t *obj, const char *field, const char *const *keys)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        int known = 0;
        for (int i = 0; keys[i]; i++)
            known |= strcmp(key, keys[i]) == 0;
        if (known)
            continue;
        strbuf m = STRBUF_INIT;
        sb_addf(&m, "unknown key '%s' (expected", key);
        for (int i = 0; keys[i]; i++)
            sb_addf(&m, "%s %s", i ? "," : "", keys[i]);
        sb_adds(&m, ")");
        int rc = problem_field_fail(c, field, m.buf);
        sb_free(&m);
        return rc;
    }
    return 0;
}

/* obj[key], a non-empty string, into *out; absent is an error only when required. */
static int get_why(struct problem_ctx *c, json_t *obj, const char *field, const char *key,
                   int required, const char *what, char **out)
{
    json_t *v = json_object_get(obj, key);
    if (!v && !required)
        return 0;
    if (!json_is_string(v) || !*json_string_value(v)) {
        strbuf m = STRBUF_INIT;
        sb_addf(&m, "%s (%s)", v ? "expected a non-empty string" : "missing", what);
        int rc = fieldf_fail(c, field, key, m.buf);
        sb_free(&m);
        return rc;
    }
    *out = xstrdup(json_string_value(v));
    return 0;
}

/* obj[key], a number in [lo, hi], into *out; absent leaves *out unless required. */
static int get_ranged(struct problem_ctx *c, json_t *obj, const char *field, const char *key,
                      int required, double lo, double hi, const char *what, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v && !required)
        return 0;
    if (!json_is_number(v) || json_number_value(v) < lo || json_number_value(v) > hi) {
        strbuf m = STRBUF_INIT;
        sb_addf(&m, "%s (%s)", v ? "out of range or not a number" : "missing", what);
        int rc = fieldf_fail(c, field, key, m.buf);
        sb_free(&m);
        return rc;
    }
    *out = json_number_value(v);
    return 0;
}

/* ---- params[i].vary ---- */

/* Whether x can be passed as a param of dtype t (integers for i32/i64, within range). */
static const char *param_value_fault(enum kc_dtype t, double x)
{
    if (t == KC_I32 && (x != floor(x) || x < INT32_MIN || x > INT32_MAX))
        return "expected an integer within i32 (the param's dtype)";
    if (t == KC_I64 && (x != floor(x) || fabs(x) > 9007199254740992.0))
        return "expected an integer within +-2^53 (the param's dtype is i64)";
    if (t == KC_F32 && fabs(x) > FLT_MAX)
        return "expected a number within the f32 range (the param's dtype)";
    return NULL;
}

int problem_load_param_vary(struct problem_ctx *c, json_t *o, const char *field, param_spec *ps)
{
    json_t *vary = json_object_get(o, "vary");
    if (get_why(c, o, field, "vary_why", 0, "why the value stays fixed or what the values cover",
                &ps->vary_why))
        return -1;
    if (!vary)
        return ps->vary_why ? fieldf_fail(c, field, "vary",
                                          "missing beside vary_why (write \"vary\": [] for a "
                                          "value that stays fixed)")
                            : 0;
    if (!json_is_array(vary) || json_array_size(vary) > KC_MAX_PARAM_VARY)
        return fieldf_fail(c, field, "vary", "expected an array of up to 8 numbers");
    if (json_array_size(vary) == 0 && !ps->vary_why)
        return fieldf_fail(c, field, "vary_why",
                           "missing: an empty vary needs a why (why the value cannot change)");
    for (size_t i = 0; i < json_array_size(vary); i++) {
        json_t *v = json_array_get(vary, i);
        const char *fault = !json_is_number(v) ? "expected a number"
                                               : param_value_fault(ps->dtype, json_number_value(v));
        if (fault) {
            strbuf f = STRBUF_INIT;
            sb_addf(&f, "%s.vary[%zu]", field, i);
            int rc = problem_field_fail(c, f.buf, fault);
            sb_free(&f);
            return rc;
        }
        ps->vary[ps->n_vary++] = json_number_value(v);
    }
    return 0;
}

/* ---- values ---- */

/* Whether a float input takes a value class: dists normal (all classes) or uniform_fan_in
 * (structure and large; not spikes or special values). */
static int has_shaped_input(const problem *p, int normal_only)
{
    for (int i = 0; i < p->n_inputs; i++) {
        const tensor_spec *t = &p->inputs[i];
        if (dtype_is_float(t->dtype) &&
            (t->dist == KC_DIST_NORMAL || (!normal_only && t->dist == KC_DIST_UNIFORM_FAN_IN)))
            return 1;
        for (int k = 0; k < t->n_views; k++) /* a packed input's views: each drawn alone */
            if (t->views[k].dist == KC_DIST_NORMAL ||
                (!normal_only && t->views[k].dist == KC_DIST_UNIFORM_FAN_IN))
                return 1;
    }
    return 0;
}

/* "large": {"scale": 0 (off) or a factor in (1, 1e6], "atol": multiple >= 1, "why"} */
static int load_large(struct problem_ctx *c, json_t *obj, const problem *p, problem_values *v)
{
    static const char *const keys[] = {"scale", "atol", "why", NULL};
    const char *f = "values.large";
    if (!json_is_object(obj))
        return problem_field_fail(c, f, "expected {\"scale\", \"atol\", \"why\"}");
    v->large_atol = 1;
    if (check_keys(c, obj, f, keys) ||
        get_ranged(c, obj, f, "scale", 1, 0, KC_MAX_LARGE,
                   "0 for no large-magnitude run, else the factor, above 1 and at most 1e6",
                   &v->large) ||
        get_why(c, obj, f, "why", 1, "why this magnitude, or why none", &v->large_why))
        return -1;
    if (v->large > 0 && v->large <= 1)
        return fieldf_fail(c, f, "scale", "a factor must exceed 1 (0: no large-magnitude run)");
    if (get_ranged(c, obj, f, "atol", v->large > 0, 1, KC_MAX_ATOL_SCALE,
                   "the run's atol as a multiple of tolerance.atol, from 1 to 1e12",
                   &v->large_atol))
        return -1;
    if (v->large > 0 && !has_shaped_input(p, 0))
        return problem_field_fail(c, f, "no float input is drawn from normal or uniform_fan_in, "
                                        "the only inputs a large-magnitude run scales");
    return 0;
}

/* "structure": {"on": bool, "spike": std multiples (0: none), "atol": multiple >= 1, "why"} */
static int load_structure(struct problem_ctx *c, json_t *obj, const problem *p, problem_values *v)
{
    static const char *const keys[] = {"on", "spike", "atol", "why", NULL};
    const char *f = "values.structure";
    if (!json_is_object(obj))
        return problem_field_fail(c, f, "expected {\"on\", \"spike\", \"atol\", \"why\"}");
    if (check_keys(c, obj, f, keys))
        return -1;
    json_t *on = json_object_get(obj, "on");
    if (!json_is_boolean(on))
        return fieldf_fail(c, f, "on", on ? "expected true or false" : "missing (true or false)");
    v->structure = json_is_true(on);
    v->structure_atol = 1;
    if (get_ranged(c, obj, f, "spike", 0, 0, KC_MAX_SPIKE,
                   "0 for none, else the spikes' magnitude in standard deviations, at most 1e6",
                   &v->spike) ||
        get_ranged(c, obj, f, "atol", v->structure, 1, KC_MAX_ATOL_SCALE,
                   "the structured runs' atol as a multiple of tolerance.atol, from 1 to 1e12",
                   &v->structure_atol) ||
        get_why(c, obj, f, "why", 1, "why this structure and atol, or why none", &v->structure_why))
        return -1;
    if (v->spike > 0 && !v->structure)
        return fieldf_fail(c, f, "spike", "spikes come with structured runs: \"on\" is false");
    if (v->structure && !has_shaped_input(p, 0))
        return problem_field_fail(c, f, "no float input is drawn from normal or uniform_fan_in, "
                                        "the only inputs structured runs shape");
    if (v->spike > 0 && !has_shaped_input(p, 1))
        return fieldf_fail(c, f, "spike", "no float input is drawn from normal, the only inputs "
                                          "that take spikes");
    return 0;
}

static int parse_special(const char *s, enum kc_special *out)
{
    for (size_t i = 0; i < sizeof(special_names) / sizeof(*special_names); i++)
        if (strcmp(s, special_names[i]) == 0) {
            *out = (enum kc_special)i;
            return 0;
        }
    return -1;
}

/* "special": {"values": a subset of ["nan", "inf", "-inf", "-0"], "why"} */
static int load_special(struct problem_ctx *c, json_t *obj, const problem *p, problem_values *v)
{
    static const char *const keys[] = {"values", "why", NULL};
    const char *f = "values.special";
    if (!json_is_object(obj))
        return problem_field_fail(c, f, "expected {\"values\", \"why\"}");
    json_t *list = json_object_get(obj, "values");
    if (check_keys(c, obj, f, keys) ||
        get_why(c, obj, f, "why", 1, "why the operator defines these values, or why none",
                &v->special_why))
        return -1;
    if (!json_is_array(list) || json_array_size(list) > KC_MAX_SPECIAL)
        return fieldf_fail(c, f, "values",
                           "expected an array of up to 4 of \"nan\", \"inf\", \"-inf\", \"-0\"");
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *s = json_array_get(list, i);
        enum kc_special code;
        const char *fault = !json_is_string(s) || parse_special(json_string_value(s), &code)
                                ? "expected one of \"nan\", \"inf\", \"-inf\", \"-0\""
                                : NULL;
        for (int j = 0; !fault && j < v->n_special; j++)
            if (v->special[j] == code)
                fault = "listed twice";
        if (fault) {
            strbuf fi = STRBUF_INIT;
            sb_addf(&fi, "%s.values[%zu]", f, i);
            int rc = problem_field_fail(c, fi.buf, fault);
            sb_free(&fi);
            return rc;
        }
        v->special[v->n_special++] = code;
    }
    if (v->n_special && !has_shaped_input(p, 1))
        return fieldf_fail(c, f, "values", "no float input is drawn from normal, the only inputs "
                                           "that take special values");
    return 0;
}

int problem_load_values(struct problem_ctx *c, json_t *root, problem *p)
{
    static const char *const keys[] = {"large", "structure", "special", NULL};
    json_t *obj = json_object_get(root, "values");
    if (!obj)
        return 0;
    if (!json_is_object(obj))
        return problem_field_fail(c, "values",
                                  "expected {\"large\": ..., \"structure\": ..., \"special\": ...}");
    if (check_keys(c, obj, "values", keys))
        return -1;
    problem_values *v = &p->values;
    v->present = 1;
    json_t *large = json_object_get(obj, "large"), *structure = json_object_get(obj, "structure"),
           *special = json_object_get(obj, "special");
    return (large && load_large(c, large, p, v)) ||
           (structure && load_structure(c, structure, p, v)) ||
           (special && load_special(c, special, p, v));
}

void problem_values_free(problem_values *v)
{
    free(v->large_why), free(v->structure_why), free(v->special_why);
    memset(v, 0, sizeof(*v));
}

/* ---- what --check refuses ---- */

static void missing(strbuf *report, int *n, const char *fmt, const char *arg)
{
    if (report->len)
        sb_adds(report, "\n  ");
    sb_addf(report, fmt, arg);
    (*n)++;
}

int problem_values_missing(const problem *p, strbuf *report)
{
    int n = 0;
    const problem_values *v = &p->values;
    if (!v->present)
        missing(report, &n, "no \"values\" (declare %s: docs/PROBLEMS.md, \"Value classes\")",
                "large, structure and special");
    else {
        /* a member's why is required when it is present: NULL means the member is absent */
        const char *names[] = {"large", "structure", "special"};
        const char *whys[] = {v->large_why, v->structure_why, v->special_why};
        for (int i = 0; i < 3; i++)
            if (!whys[i])
                missing(report, &n, "values: no \"%s\" declaration (each class is declared, on or "
                                    "off, with its why)", names[i]);
    }
    for (int i = 0; i < p->n_params; i++)
        if (p->params[i].n_vary == 0 && !p->params[i].vary_why) {
            strbuf m = STRBUF_INIT;
            sb_addf(&m, "params[%d] '%s': no \"vary\" (the values the checks that vary constants "
                        "use, or [] with vary_why)", i, p->params[i].name);
            missing(report, &n, "%s", m.buf);
            sb_free(&m);
        }
    return n;
}
