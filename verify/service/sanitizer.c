/* sanitizer: compute-sanitizer over one execution of a correct candidate (see sanitizer.h).
 * The watched process is `kverify-gpu sanitize` (worker_sanitize.c), fed its job over a pipe;
 * the tool writes its report to a log file in a private temporary directory, which is read
 * (bounded) and removed. */
#include "verify/service/sanitizer.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/race_needs.h"
#include "verify/service/harness_module.h"
#include "verify/service/ipc.h"
#include "verify/service/programs.h"

#include <pthread.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SANITIZER_FINDINGS_EXIT 86     /* --error-exitcode: the tool found errors */
#define SANITIZER_DEADLINE_MS 120000.0 /* tool start-up included */
#define SANITIZER_LOG_KEEP 4096        /* bytes of the report kept as evidence */

int sanitizer_mode_parse(const char *s, int *mode)
{
    static const char *const names[] = {"none", "memcheck", "all"};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *mode = i;
            return 0;
        }
    return -1;
}

int sanitizer_path(strbuf *out)
{
    const char *env = getenv("KC_COMPUTE_SANITIZER"), *cuda = getenv("CUDA_HOME");
    sb_reset(out);
    if (env && *env)
        sb_adds(out, env);
    else if (cuda && *cuda)
        sb_addf(out, "%s/bin/compute-sanitizer", cuda);
    if (out->len && access(out->buf, X_OK) == 0)
        return 0;
    sb_reset(out);
    sb_adds(out, "/usr/local/cuda/bin/compute-sanitizer");
    return access(out->buf, X_OK) == 0 ? 0 : -1;
}

/* What one tool run came to. */
struct tool_run {
    int exit_code;   /* the process's exit status; -1 when killed by a signal */
    int signal;      /* the signal that ended it, if any */
    int timed_out;   /* kverify killed it at the deadline */
    int answered;    /* the watched process said the job ran ({"ok": true}) */
    strbuf error;    /* the watched process's own error, if it said one */
    strbuf report;   /* the tool's log, bounded */
};

static void read_report(const char *path, strbuf *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char buf[SANITIZER_LOG_KEEP];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    for (size_t i = 0; i < n; i++) /* printable text only: it goes back to a model */
        sb_addch(out, (buf[i] >= 0x20 && buf[i] < 0x7f) || buf[i] == '\n' ? buf[i] : '?');
}

static json_t *sanitize_job(const problem *p, uint64_t seed)
{
    char s[32];
    snprintf(s, sizeof(s), "%llu", (unsigned long long)seed);
    return json_pack("{s:i,s:s,s:s,s:s}", "job", 0, "manifest", p->manifest_path, "dims", "small",
                     "seed", s);
}

/* The same job on a drawn dims set ({name: value}) instead of the small dims. */
static json_t *sanitize_job_drawn(const problem *p, uint64_t seed, json_t *set)
{
    json_t *job = sanitize_job(p, seed + 1);
    json_object_set_new(job, "dims", json_string("drawn"));
    json_object_set(job, "dims_set", set);
    return job;
}

/* The harness module (input fills) for the candidate's arch, once per process: built in, or
 * compiled (harness_module.c). */
static const strbuf *harness_cubin(const char *arch, strbuf *err)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static strbuf cubin = STRBUF_INIT;
    static char compiled_for[16];
    pthread_mutex_lock(&lock);
    if (strcmp(compiled_for, arch) != 0) {
        sb_reset(&cubin);
        compiled_for[0] = 0;
        if (harness_module_cubin(arch, &cubin, NULL, err) == 0)
            snprintf(compiled_for, sizeof(compiled_for), "%s", arch);
    }
    pthread_mutex_unlock(&lock);
    return compiled_for[0] ? &cubin : NULL;
}

/* A watched `kverify-gpu sanitize` process: the tool, its log, and whether it still runs.
 * memcheck's stays up between candidates of its GPU (one start-up for many: a finding aborts
 * the kernel, so the process ends on the job that found it and its report is then complete);
 * racecheck's serves one job (its hazards are reported, not fatal). */
struct tool_proc {
    ipc_child child;
    char dir[32], log[64];
    int alive, jobs;
};

#define SANITIZER_MAX_DEVICES 16
static struct tool_proc memcheck_procs[SANITIZER_MAX_DEVICES]; /* one per GPU; a GPU's jobs
                                                                 come one at a time */

static int start_tool(struct tool_proc *t, const char *tool_path, const char *tool, int device,
                      strbuf *err)
{
    memset(t, 0, sizeof(*t));
    snprintf(t->dir, sizeof(t->dir), "/tmp/kc-sanitize-XXXXXX");
    if (!mkdtemp(t->dir))
        return kc_fail(err, "cannot create a temporary directory: %s", strerror(errno));
    snprintf(t->log, sizeof(t->log), "%s/report.txt", t->dir);
    char dev[16];
    snprintf(dev, sizeof(dev), "%d", device);
    strbuf exe = STRBUF_INIT;
    kverify_gpu_exe_path(&exe);
    char *argv[] = {(char *)tool_path, "--tool", (char *)tool, "--error-exitcode", "86",
                    "--print-limit", "20", "--report-api-errors", "no", "--log-file", t->log,
                    exe.buf, "sanitize", "--device", dev, NULL};
    int rc = ipc_spawn(argv, &t->child, err);
    sb_free(&exe);
    if (rc) {
        rmdir(t->dir);
        return -1;
    }
    t->alive = 1;
    return 0;
}

/* Ends the process (closing its input ends a healthy one), keeps how it ended and its report,
 * and removes its files. */
static void finish_tool(struct tool_proc *t, struct tool_run *out, int kill_now)
{
    if (!kill_now && t->child.to_child >= 0) { /* end of input: a healthy process exits */
        close(t->child.to_child);
        t->child.to_child = -1;
    }
    int status = kill_now ? ipc_kill(&t->child) : ipc_reap_lost(&t->child, 20000);
    if (out) {
        out->exit_code = status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        out->signal = status >= 0 && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        read_report(t->log, &out->report);
    }
    unlink(t->log);
    rmdir(t->dir);
    t->alive = 0;
}

/* One job on a running tool process: the answer, or how the process ended. */
static void tool_job(struct tool_proc *t, json_t *job, const kv_result *r, const strbuf *harness,
                     struct tool_run *out)
{
    const void *blobs[3] = {r->source.buf, r->cubin.buf, harness->buf};
    size_t lens[3] = {r->source.len, r->cubin.len, harness->len};
    ipc_msg m = {0};
    strbuf err = STRBUF_INIT;
    enum ipc_status st = IPC_EOF;
    if (ipc_send(t->child.to_child, job, blobs, lens, 3) == 0)
        st = ipc_recv(t->child.from_child, &m, now_ms() + SANITIZER_DEADLINE_MS, &err);
    t->jobs++;
    int ok = st == IPC_OK && json_is_true(json_object_get(m.json, "ok"));
    out->answered = ok;
    if (st == IPC_OK && json_is_string(json_object_get(m.json, "error")))
        sb_adds(&out->error, json_string_value(json_object_get(m.json, "error")));
    ipc_msg_free(&m);
    sb_free(&err);
    out->timed_out = st == IPC_TIMEOUT;
    if (!ok)
        finish_tool(t, out, out->timed_out);
}

static int run_tool(const char *tool_path, const char *tool, int device, json_t *job,
                    const kv_result *r, struct tool_run *out, strbuf *err)
{
    const strbuf *harness = harness_cubin(r->arch[0] ? r->arch : "sm_90", err);
    if (!harness)
        return -1;
    int persistent = strcmp(tool, "memcheck") == 0 && device >= 0 && device < SANITIZER_MAX_DEVICES;
    struct tool_proc one, *t = persistent ? &memcheck_procs[device] : &one;
    if ((!persistent || !t->alive) && start_tool(t, tool_path, tool, device, err))
        return -1;
    tool_job(t, job, r, harness, out);
    if (!persistent && t->alive) /* racecheck: its report is written when the process ends */
        finish_tool(t, out, 0);
    return 0;
}

void sanitizer_warm(const kv_options *opt, int device)
{
    strbuf path = STRBUF_INIT, err = STRBUF_INIT;
    if (opt->sanitize && device >= 0 && device < SANITIZER_MAX_DEVICES && sanitizer_path(&path) == 0 &&
        harness_cubin(opt->arch ? opt->arch : "sm_90", &err) && !memcheck_procs[device].alive)
        start_tool(&memcheck_procs[device], path.buf, "memcheck", device, &err);
    sb_free(&path), sb_free(&err); /* a failure here recurs, and is reported, at the first check */
}

void sanitizer_prepare(const kv_options *opt)
{
    strbuf err = STRBUF_INIT;
    if (opt->sanitize)
        harness_cubin(opt->arch ? opt->arch : "sm_90", &err);
    sb_free(&err);
}

void sanitizer_shutdown(void)
{
    for (int i = 0; i < SANITIZER_MAX_DEVICES; i++)
        if (memcheck_procs[i].alive)
            finish_tool(&memcheck_procs[i], NULL, 0);
}

static void set_verdict(kv_result *r, const char *verdict, const char *tool, const char *dims,
                        const char *what)
{
    snprintf(r->verdict, sizeof(r->verdict), "%s", verdict);
    strbuf m = STRBUF_INIT;
    sb_addf(&m, "compute-sanitizer %s at the %s dims: %s", tool, dims, what);
    sb_reset(&r->message);
    sb_adds(&r->message, m.buf);
    sb_free(&m);
    r->timed = 0; /* a timing of a kernel that is not correct is not a result */
}

/* The first line of the report that names an error, for the message. */
static void first_finding(const strbuf *report, strbuf *out)
{
    const char *s = report->buf ? strstr(report->buf, "=========") : NULL;
    for (; s; s = strstr(s + 1, "=========")) {
        const char *line = s + 9, *end = strchr(line, '\n');
        while (*line == ' ')
            line++;
        if (strncmp(line, "COMPUTE-SANITIZER", 17) != 0 && end && end > line) {
            sb_add(out, line, (size_t)(end - line));
            return;
        }
    }
    sb_adds(out, "see the evidence");
}

/* Applies one tool's outcome; returns 1 when it settled the verdict (no more tools needed). */
static int apply_outcome(kv_result *r, const char *tool, const char *dims, const struct tool_run *t,
                         json_t *ev)
{
    json_t *o = json_pack("{s:s,s:s,s:i}", "tool", tool, "dims", dims, "exit", t->exit_code);
    if (t->report.len)
        json_object_set_new(o, "report", json_string(t->report.buf));
    if (t->error.len)
        json_object_set_new(o, "error", json_string(t->error.buf));
    json_array_append_new(ev, o);
    if (t->timed_out) {
        set_verdict(r, "timeout", tool, dims, "the run did not finish within 120 s");
        return 1;
    }
    if (t->exit_code == SANITIZER_FINDINGS_EXIT) {
        strbuf what = STRBUF_INIT;
        sb_adds(&what, "found errors (");
        first_finding(&t->report, &what);
        sb_adds(&what, ")");
        set_verdict(r, "unsafe", tool, dims, what.buf);
        sb_free(&what);
        return 1;
    }
    if (t->exit_code != 0 && t->error.len) {
        strbuf what = STRBUF_INIT;
        sb_addf(&what, "the candidate failed: %s", t->error.buf);
        set_verdict(r, "runtime_error", tool, dims, what.buf);
        sb_free(&what);
        return 1;
    }
    return 0;
}

/* Runs one tool on the candidate and applies its outcome to r, adding the run to summary's
 * "runs" (or "skipped" when the tool could not run); *settled when the outcome settled the
 * verdict, *clean (may be NULL) when the job ran and the tool exited 0. Returns -1 only when a
 * signal kverify did not send stopped the tool. */
static int check_with(const char *path, const char *tool, int device, json_t *job, kv_result *r,
                      json_t *summary, int *settled, int *clean, strbuf *err)
{
    json_t *runs = json_object_get(summary, "runs");
    struct tool_run t = {0};
    double t0 = now_ms();
    int rc = 0;
    if (run_tool(path, tool, device, job, r, &t, err)) {
        json_object_set_new(summary, "skipped", json_string(sb_str(err)));
        sb_reset(err);
    } else if (t.signal && !t.timed_out) {
        rc = kc_fail(err, "compute-sanitizer was stopped by signal %d; the candidate stays "
                          "pending", t.signal);
    } else {
        *settled = apply_outcome(r, tool, json_string_value(json_object_get(job, "dims")), &t, runs);
        json_object_set_new(json_array_get(runs, json_array_size(runs) - 1), "ms",
                            json_real(now_ms() - t0));
        if (clean)
            *clean = t.answered && t.exit_code == 0;
    }
    sb_free(&t.error), sb_free(&t.report);
    return rc;
}

int sanitizer_check(const kv_options *opt, int device, const problem *p, uint64_t seed,
                    json_t *drawn, kv_result *r, strbuf *err)
{
    static const char *const tools[] = {"memcheck", "racecheck"};
    strbuf path = STRBUF_INIT;
    json_t *job = sanitize_job(p, seed);
    json_t *summary = json_pack("{s:s,s:[]}", "dims", "small", "runs");
    int rc = 0;
    if (sanitizer_path(&path)) {
        json_object_set_new(summary, "skipped", json_string("compute-sanitizer not found (set "
                                                            "KC_COMPUTE_SANITIZER)"));
        goto out;
    }
    /* racecheck where there is something for it to look at (common/race_needs.h) */
    int n_tools = opt->sanitize >= 2 && race_check_needed(r->source.buf, r->kernels_json.buf,
                                                          NULL) ? 2 : 1;
    int settled = 0;
    for (int i = 0; i < n_tools && rc == 0; i++) {
        rc = check_with(path.buf, tools[i], device, job, r, summary, &settled, NULL, err);
        if (settled || json_object_get(summary, "skipped"))
            break;
    }
    /* memcheck once more on a drawn set: irregular sizes, buffers exact there too */
    if (rc == 0 && !settled && json_is_object(drawn) && !json_object_get(summary, "skipped")) {
        json_t *djob = sanitize_job_drawn(p, seed, drawn);
        json_object_set(summary, "drawn", drawn);
        rc = check_with(path.buf, "memcheck", device, djob, r, summary, &settled, NULL, err);
        json_decref(djob);
    }
out:
    if (rc == 0)
        kv_result_set_evidence(r, "sanitizer", json_incref(summary));
    json_decref(summary);
    json_decref(job);
    sb_free(&path);
    return rc;
}

int sanitizer_racecheck(int device, const problem *p, uint64_t seed, kv_result *r,
                        enum sanitizer_race *outcome, strbuf *err)
{
    strbuf path = STRBUF_INIT;
    json_t *job = sanitize_job(p, seed);
    json_t *summary = json_pack("{s:s,s:[]}", "dims", "small", "runs");
    int rc = 0, settled = 0, clean = 0;
    if (sanitizer_path(&path))
        json_object_set_new(summary, "skipped", json_string("compute-sanitizer not found (set "
                                                            "KC_COMPUTE_SANITIZER)"));
    else
        rc = check_with(path.buf, "racecheck", device, job, r, summary, &settled, &clean, err);
    if (json_object_get(summary, "skipped"))
        *outcome = SANITIZER_RACE_NOT_RUN;
    else if (settled)
        *outcome = strcmp(r->verdict, "unsafe") == 0 ? SANITIZER_RACE_HAZARD : SANITIZER_RACE_FAILED;
    else
        *outcome = clean ? SANITIZER_RACE_CLEAN : SANITIZER_RACE_NOT_RUN;
    if (rc == 0)
        kv_result_set_evidence(r, "racecheck", json_incref(summary));
    json_decref(summary);
    json_decref(job);
    sb_free(&path);
    return rc;
}
