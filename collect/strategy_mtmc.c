/* strategy_mtmc: plans, steps, revisions and hardware facts of kcollect --strategy mtmc (see
 * strategy_mtmc.h). */
#include "collect/strategy_mtmc.h"
#include "common/error.h"
#include "common/gpu_peaks.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MTMC_MAX_ACTIONS 12

static const char *const vocabulary[][2] = {
    {"baseline", "a first, straightforward correct kernel"},
    {"tile", "tile the work per block or thread (argument: tile size, e.g. 32 or 64x64)"},
    {"smem", "stage an operand in shared memory (argument: which one)"},
    {"vectorize", "vectorised loads and stores (argument: width, e.g. 4)"},
    {"unroll", "unroll a loop (argument: factor)"},
    {"coalesce", "make global memory accesses coalesced"},
    {"reduce", "a reduction scheme (argument: warp, block, tree or atomic)"},
    {"fuse", "fuse operations or launches into one kernel"},
    {"registers", "register blocking, or fewer registers per thread"},
    {"launch", "change the launch configuration (argument: block size)"},
    {"warp", "warp-level primitives (shuffles, cooperative groups)"},
    {"tensorcore", "tensor cores (wmma or mma) where the dtype allows"},
    {"other", "anything else (say what in the free text)"},
};
#define N_VOCABULARY (sizeof vocabulary / sizeof vocabulary[0])

const char *mtmc_vocabulary(void)
{
    static char text[2048];
    if (!text[0]) {
        size_t n = 0;
        for (size_t i = 0; i < N_VOCABULARY; i++)
            n += (size_t)snprintf(text + n, sizeof text - n, "  %-11s %s\n", vocabulary[i][0],
                                  vocabulary[i][1]);
    }
    return text;
}

static int known_action(const char *word)
{
    for (size_t i = 0; i < N_VOCABULARY; i++)
        if (!strcmp(word, vocabulary[i][0]))
            return 1;
    return 0;
}

/* ---- plans ---- */

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

/* "3. ", "3) ", "- ", "* ": the list marker of a line, skipped; 0 when there is none. */
static size_t list_marker(const char *s)
{
    size_t i = 0;
    while (isdigit((unsigned char)s[i]))
        i++;
    if (i && (s[i] == '.' || s[i] == ')'))
        return i + 1;
    if (!i && (s[0] == '-' || s[0] == '*') && s[1] == ' ')
        return 1;
    return 0;
}

/* One action line into {"action","arg","text"}; NULL with why in err. */
static json_t *parse_action(char *line, int lineno, strbuf *err)
{
    char *text = strstr(line, "--");
    if (text) {
        *text = 0;
        text = trim(text + 2);
    }
    char *save = NULL, *word = strtok_r(line, " \t", &save);
    if (!word) {
        kc_fail(err, "line %d: no action", lineno);
        return NULL;
    }
    for (char *c = word; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    size_t wl = strlen(word);
    if (wl && word[wl - 1] == ':')
        word[wl - 1] = 0;
    if (!known_action(word)) {
        kc_fail(err, "line %d: unknown action '%s' (use one of the vocabulary)", lineno, word);
        return NULL;
    }
    char *arg = save ? trim(save) : "";
    return json_pack("{s:s, s:s, s:s}", "action", word, "arg", arg, "text", text ? text : "");
}

char *mtmc_parse_plan(const char *answer, strbuf *err)
{
    char *copy = xstrdup(answer ? answer : "");
    int has_plan_line = 0;
    for (char *l = copy; l && *l;) {
        char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        while (n && isspace((unsigned char)l[n - 1]))
            n--;
        const char *s = l;
        while (*s == ' ' || *s == '#' || *s == '*')
            s++;
        if (!strncmp(s, "PLAN", 4) && (size_t)(s - l) + 4 == n)
            has_plan_line = 1;
        l = nl ? nl + 1 : NULL;
    }
    json_t *plan = json_array();
    int inside = !has_plan_line, lineno = 0, failed = 0;
    char *save = NULL;
    for (char *l = strtok_r(copy, "\n", &save); l && !failed; l = strtok_r(NULL, "\n", &save)) {
        lineno++;
        char *s = trim(l);
        while (*s == '#' || *s == '*')
            s++;
        s = trim(s);
        if (!strcmp(s, "PLAN")) {
            inside = 1;
            continue;
        }
        if (!strcmp(s, "END") && inside) {
            if (has_plan_line)
                break;
            continue;
        }
        if (!inside || !*s || !strncmp(s, "```", 3))
            continue;
        size_t m = list_marker(s);
        if (!m && !has_plan_line)
            continue; /* prose around an unmarked list */
        json_t *a = parse_action(trim(s + m), lineno, err);
        if (!a)
            failed = 1;
        else
            json_array_append_new(plan, a);
    }
    free(copy);
    if (!failed && json_array_size(plan) == 0) {
        kc_fail(err, "no action lines (expected PLAN, then one action a line, then END)");
        failed = 1;
    }
    if (!failed && json_array_size(plan) > MTMC_MAX_ACTIONS) {
        kc_fail(err, "%zu actions: at most %d", json_array_size(plan), MTMC_MAX_ACTIONS);
        failed = 1;
    }
    char *out = failed ? NULL : json_dumps(plan, JSON_COMPACT);
    json_decref(plan);
    return out;
}

/* "tile 32 -- 32x32 output tiles" */
static void action_line(json_t *a, strbuf *out)
{
    const char *arg = json_string_value(json_object_get(a, "arg"));
    const char *text = json_string_value(json_object_get(a, "text"));
    sb_adds(out, json_string_value(json_object_get(a, "action")));
    if (arg && *arg)
        sb_addf(out, " %s", arg);
    if (text && *text)
        sb_addf(out, " -- %s", text);
}

/* ---- the state of a trajectory ---- */

typedef struct mtmc_state {
    json_t *plan;     /* actions in force (owned), NULL: none yet */
    int plan_turn;    /* the planning turn that gave it */
    int done_steps;   /* its steps done */
    int failures;     /* failed attempts at the next step (since the plan) */
    int last_good;    /* the last step turn that succeeded, -1: none */
    int last_turn;    /* the last turn, -1: none */
} mtmc_state;

static int succeeded(const collect_config *cfg, const turn_history *h)
{
    return h->verdict && (!strcmp(h->verdict, "correct") ||
                          (cfg->compile_only && !strcmp(h->verdict, "compiled")));
}

static int is_planning(const turn_history *h)
{
    return h->action && (!strcmp(h->action, "plan") || !strcmp(h->action, "revise"));
}

static void derive_state(const collect_config *cfg, const trajectory_state *t, mtmc_state *s)
{
    *s = (mtmc_state){NULL, -1, 0, 0, -1, t->n_turns - 1};
    for (int i = 0; i < t->n_turns; i++) {
        const turn_history *h = &t->turns[i];
        if (is_planning(h)) {
            json_t *plan = h->plan_json ? json_loads(h->plan_json, 0, NULL) : NULL;
            if (json_array_size(plan) > 0) {
                json_decref(s->plan);
                s->plan = plan;
                s->plan_turn = i, s->done_steps = 0, s->failures = 0;
            } else {
                json_decref(plan);
            }
        } else if (succeeded(cfg, h)) {
            s->last_good = i, s->failures = 0;
            if (h->step > s->done_steps)
                s->done_steps = h->step;
        } else {
            s->failures++;
        }
    }
}

/* ---- requests ---- */

static void plan_instructions(strbuf *out)
{
    sb_addf(out, "\n\n" MTMC_PLAN_MARKER " (plan first, then one action per turn)\n"
                 "Do not write code yet. Answer with an optimisation plan for this problem, in "
                 "this format:\n\nPLAN\n1. <action> [argument] -- <what and why, free text>\n"
                 "2. ...\nEND\n\nOne action a line, at most %d, in the order you will implement "
                 "them; each later turn asks you to implement the next action on top of the last "
                 "good kernel, with what the verifier and the hardware (registers, shared memory, "
                 "spills, occupancy, achieved bandwidth and FLOP/s) said about it. <action> is one "
                 "of:\n%s\nStart with baseline unless the problem is trivial.\n",
           MTMC_MAX_ACTIONS, mtmc_vocabulary());
}

static const char *good_word(const collect_config *cfg)
{
    return cfg->compile_only ? "last kernel that compiled (compile-only run: nothing runs on a GPU)"
                             : "last correct kernel";
}

/* The last good kernel and what was said about it, or that there is none. */
static void last_good_part(const collect_config *cfg, const trajectory_state *t, const mtmc_state *s,
                           strbuf *out)
{
    if (s->last_good < 0) {
        sb_adds(out, "There is no good kernel yet: write the complete kernel.\n");
        return;
    }
    const turn_history *g = &t->turns[s->last_good];
    sb_addf(out, "Start from the %s (turn %d) and change only what this needs:\n\n```cuda\n%s%s```\n\n"
                 "What the verifier and the hardware said about it:\n%s\n",
            good_word(cfg), s->last_good, g->source ? g->source : "",
            g->source && *g->source && g->source[strlen(g->source) - 1] == '\n' ? "" : "\n",
            g->feedback ? g->feedback : "");
}

static void step_request(const collect_config *cfg, const trajectory_state *t, const mtmc_state *s,
                         const mtmc_turn *turn, strbuf *out)
{
    sb_addf(out, MTMC_STEP_MARKER " %d/%d ATTEMPT %d: implement action %d of your plan:\n  %s\n\n",
            turn->step, turn->n_steps, s->failures + 1, turn->step, sb_str(&turn->action));
    last_good_part(cfg, t, s, out);
    if (s->failures > 0) {
        const turn_history *f = &t->turns[s->last_turn];
        sb_addf(out, "\nYour previous attempt at this step failed and was discarded (start again "
                     "from the kernel above):\n%s\n", f->feedback ? f->feedback : "");
    }
    sb_adds(out, "Answer with the complete kernel in one ```cuda block (kc-cuda v1).\n");
}

static void revise_request(const collect_config *cfg, const trajectory_state *t,
                           const mtmc_state *s, strbuf *out)
{
    strbuf line = STRBUF_INIT;
    int step = s->done_steps + 1;
    json_t *a = json_array_get(s->plan, (size_t)s->done_steps);
    if (a)
        action_line(a, &line);
    const turn_history *f = &t->turns[s->last_turn];
    sb_addf(out, MTMC_REVISE_MARKER ": action %d of your plan (%s) could not be made to work; "
                 "what the last attempt got:\n%s\n", step, sb_str(&line),
            f->feedback ? f->feedback : "");
    last_good_part(cfg, t, s, out);
    sb_adds(out, "\nRevise the plan for the remaining work: answer with a new plan in the same "
                 "format (PLAN, one action a line, END); its first step starts from the kernel "
                 "above. Do not write code yet.\n");
    sb_free(&line);
}

static void add_message(prompt_messages *pm, const char *role, const char *text)
{
    strbuf *sb = &pm->owned[pm->n_owned++];
    sb_adds(sb, text ? text : "");
    pm->messages[pm->n++] = (llm_message){role, sb->buf};
}

void mtmc_next(const collect_config *cfg, const char *spec, const trajectory_state *t,
               mtmc_turn *turn, prompt_messages *pm)
{
    memset(turn, 0, sizeof *turn);
    memset(pm, 0, sizeof *pm);
    mtmc_state s;
    derive_state(cfg, t, &s);
    size_t n_steps = json_array_size(s.plan);
    if (!s.plan)
        turn->kind = MTMC_PLAN;
    else if (s.failures >= cfg->plan_retries)
        turn->kind = MTMC_REVISE;
    else if ((size_t)s.done_steps >= n_steps)
        turn->kind = MTMC_DONE;
    else
        turn->kind = MTMC_STEP;
    turn->n_steps = (int)n_steps;
    if (turn->kind == MTMC_DONE) {
        json_decref(s.plan);
        return;
    }
    pm->messages = xcalloc(3, sizeof *pm->messages);
    pm->owned = xcalloc(3, sizeof *pm->owned);
    strbuf first = STRBUF_INIT, request = STRBUF_INIT;
    sb_adds(&first, spec);
    plan_instructions(&first);
    add_message(pm, "user", first.buf);
    if (turn->kind == MTMC_PLAN) {
        sb_adds(&turn->action, "plan");
        const turn_history *last = s.last_turn >= 0 ? &t->turns[s.last_turn] : NULL;
        if (last) { /* the last answer was no plan: its error, and the instructions again */
            add_message(pm, "assistant", last->answer);
            add_message(pm, "user", last->feedback);
        }
    } else {
        add_message(pm, "assistant", t->turns[s.plan_turn].answer);
        if (turn->kind == MTMC_REVISE) {
            sb_adds(&turn->action, "revise");
            revise_request(cfg, t, &s, &request);
        } else {
            turn->step = s.done_steps + 1;
            action_line(json_array_get(s.plan, (size_t)s.done_steps), &turn->action);
            step_request(cfg, t, &s, turn, &request);
        }
        add_message(pm, "user", request.buf);
    }
    sb_free(&first), sb_free(&request);
    json_decref(s.plan);
}

void mtmc_turn_free(mtmc_turn *turn) { sb_free(&turn->action); }

/* ---- hardware facts ---- */

/* Warps per SM the registers allow on sm_90 (64 K registers, 256-register allocation units per
 * warp, at most 64 warps). */
static int warps_by_registers(long long regs)
{
    if (regs <= 0)
        return 64;
    long long per_warp = ((regs * 32 + 255) / 256) * 256;
    long long w = 65536 / per_warp;
    return (int)(w > 64 ? 64 : w);
}

static void kernel_facts(const kv_result *r, strbuf *out)
{
    json_t *arr = json_loads(sb_str(&r->kernels_json), 0, NULL);
    size_t i;
    json_t *k;
    json_array_foreach(arr, i, k)
    {
        long long regs = json_integer_value(json_object_get(k, "registers"));
        long long smem = json_integer_value(json_object_get(k, "shared_bytes"));
        long long spills = json_integer_value(json_object_get(k, "spill_stores")) +
                           json_integer_value(json_object_get(k, "spill_loads"));
        int warps = warps_by_registers(regs);
        sb_addf(out, "- kernel %s: %lld registers per thread, %lld bytes static shared memory, "
                     "%lld bytes spilled; its registers allow %d of 64 warps per SM (occupancy at "
                     "most %.0f%%)", json_string_value(json_object_get(k, "name")) ?: "?", regs,
                smem, spills, warps, 100.0 * warps / 64);
        if (smem > 0)
            sb_addf(out, ", its shared memory at most %lld blocks per SM", 233472 / (smem + 1024));
        sb_adds(out, "\n");
    }
    json_decref(arr);
}

static void roofline_facts(const problem *p, const kv_result *r, strbuf *out)
{
    const kv_timing *t = &r->timing;
    const char *dtype = p->n_outputs > 0 ? dtype_name(p->outputs[0].dtype) : "f32";
    double bw = 0, fl = 0;
    int known = kc_gpu_peaks(r->gpu_name, dtype, &bw, &fl);
    sb_addf(out, "- achieved %.0f GB/s and %.3f TFLOP/s (median %.4f ms)", t->gbps, t->tflops,
            t->median_ms);
    if (!known) {
        sb_addf(out, "; the peaks of '%s' are unknown\n", r->gpu_name);
        return;
    }
    sb_addf(out, "; the %s peaks are %.0f GB/s and %.0f TFLOP/s (%s): %.0f%% of bandwidth, %.1f%% "
                 "of compute", r->gpu_name, bw, fl, kc_peak_name(dtype), 100.0 * t->gbps / bw,
            100.0 * t->tflops / fl);
    if (t->gbps > 0 && t->tflops > 0) {
        double intensity = t->tflops * 1e3 / t->gbps; /* FLOP per byte */
        double attainable = fmin(fl, intensity * bw / 1e3);
        sb_addf(out, "; arithmetic intensity %.2f FLOP/byte, %s-bound on the roofline, %.0f%% of "
                     "the attainable %.1f TFLOP/s", intensity,
                intensity * bw / 1e3 < fl ? "memory" : "compute", 100.0 * t->tflops / attainable,
                attainable);
    }
    sb_adds(out, "\n");
}

void mtmc_hardware_facts(const problem *p, const kv_result *r, strbuf *out)
{
    if (!r->compile_stage_ok)
        return;
    sb_adds(out, "\nHardware facts:\n");
    kernel_facts(r, out);
    if (r->timed)
        roofline_facts(p, r, out);
    else
        sb_adds(out, "- no GPU timing for this kernel (no bandwidth or FLOP/s measured)\n");
}

const char *mtmc_stop(const collect_config *cfg, const mtmc_turn *turn, const kv_result *r,
                      int success)
{
    if (turn->kind != MTMC_STEP || !success)
        return NULL;
    if (cfg->target_speedup > 0 && r->timed && r->timing.speedup_eager >= cfg->target_speedup)
        return "target_speedup";
    return turn->step >= turn->n_steps ? "plan_done" : NULL;
}
