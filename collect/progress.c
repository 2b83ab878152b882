/* progress: the terminal status line and the plain log (see progress.h). */
#include "collect/progress.h"
#include "common/error.h"
#include "common/fsutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct progress {
    const collect_summary *sum;
    pthread_mutex_t *sum_lock;
    pthread_mutex_t out_lock;
    pthread_t thread;
    int tty, running, compile_only, verbose;
    int verifying;
    kv_service *const *verifier; /* the collector's service, started lazily (may stay NULL) */
    pthread_mutex_t watch_lock;  /* guards verifier against the service being stopped */
    double start_ms;
    int line_shown;
};

static void status_text(progress *p, strbuf *out)
{
    pthread_mutex_lock(p->sum_lock);
    collect_summary s = *p->sum;
    pthread_mutex_unlock(p->sum_lock);
    double secs = (now_ms() - p->start_ms) / 1000.0;
    sb_addf(out, "trajectories %d/%d · problems %s %d/%d · turns %ld (%ld cached) · %ld tok, "
            "%.0f tok/s · $%.4f", s.trajectories_done, s.trajectories,
            p->compile_only ? "compiled" : "correct", s.problems_solved, s.problems, s.turns,
            s.turns_cached, s.tokens_in + s.tokens_out, secs > 0 ? s.tokens_out / secs : 0.0,
            s.cost_usd);
    int left = s.trajectories - s.trajectories_done;
    if (s.trajectories_done > 0 && left > 0) { /* at the pace so far */
        double eta = secs / s.trajectories_done * left;
        sb_addf(out, " · ETA %dm%02ds", (int)(eta / 60), (int)eta % 60);
    }
    if (s.best_speedup > 0)
        sb_addf(out, " · best %.2fx", s.best_speedup);
    sb_addf(out, " · verifying %d", __atomic_load_n(&p->verifying, __ATOMIC_RELAXED));
    pthread_mutex_lock(&p->watch_lock);
    kv_service *svc = p->verifier ? __atomic_load_n(p->verifier, __ATOMIC_ACQUIRE) : NULL;
    int workers = kv_service_gpu_workers(svc);
    if (workers > 0) {
        int waiting = 0, busy = kv_service_gpu_busy(svc, &waiting);
        sb_addf(out, " · GPU %d/%d busy, %d queued", busy, workers, waiting);
    }
    pthread_mutex_unlock(&p->watch_lock);
}

/* Caller holds out_lock. */
static void clear_line(progress *p)
{
    if (p->tty && p->line_shown) {
        fputs("\r\033[K", stderr);
        p->line_shown = 0;
    }
}

static void draw(progress *p)
{
    strbuf sb = STRBUF_INIT;
    status_text(p, &sb);
    pthread_mutex_lock(&p->out_lock);
    fprintf(stderr, "\r\033[K%s", sb.buf);
    fflush(stderr);
    p->line_shown = 1;
    pthread_mutex_unlock(&p->out_lock);
    sb_free(&sb);
}

static void *redraw(void *arg)
{
    progress *p = arg;
    while (__atomic_load_n(&p->running, __ATOMIC_ACQUIRE)) {
        draw(p);
        for (int i = 0; i < 5 && __atomic_load_n(&p->running, __ATOMIC_ACQUIRE); i++)
            usleep(100000);
    }
    return NULL;
}

progress *progress_start(const collect_summary *sum, pthread_mutex_t *lock, int compile_only,
                         int verbose)
{
    progress *p = xcalloc(1, sizeof *p);
    p->sum = sum;
    p->sum_lock = lock;
    p->compile_only = compile_only;
    p->verbose = verbose;
    p->start_ms = now_ms();
    p->tty = isatty(STDERR_FILENO) && getenv("KC_PLAIN_LOG") == NULL;
    pthread_mutex_init(&p->out_lock, NULL);
    pthread_mutex_init(&p->watch_lock, NULL);
    if (p->tty) {
        p->running = 1;
        if (pthread_create(&p->thread, NULL, redraw, p) != 0)
            p->running = 0, p->tty = 0;
    }
    return p;
}

void progress_stop(progress *p)
{
    if (!p)
        return;
    if (p->running) {
        __atomic_store_n(&p->running, 0, __ATOMIC_RELEASE);
        pthread_join(p->thread, NULL);
        pthread_mutex_lock(&p->out_lock);
        clear_line(p);
        pthread_mutex_unlock(&p->out_lock);
    }
    pthread_mutex_destroy(&p->out_lock);
    pthread_mutex_destroy(&p->watch_lock);
    free(p);
}

static void line(progress *p, const char *text)
{
    if (!p) {
        fprintf(stderr, "%s\n", text);
        return;
    }
    pthread_mutex_lock(&p->out_lock);
    clear_line(p);
    fprintf(stderr, "%s\n", text);
    fflush(stderr);
    pthread_mutex_unlock(&p->out_lock);
}

void progress_note(progress *p, const char *fmt, ...)
{
    strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    sb_addf(&sb, "%s: ", kc_progname());
    sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    line(p, sb.buf);
    sb_free(&sb);
}

void progress_error(progress *p, const char *label, const char *message)
{
    strbuf sb = STRBUF_INIT;
    sb_addf(&sb, "%s: error: %s: %s", kc_progname(), label, message);
    line(p, sb.buf);
    sb_free(&sb);
}

void progress_turn(progress *p, const char *label, int turn, const char *verdict,
                   const char *message, int cached, int truncated, const char *stop)
{
    if (p && p->tty && !p->verbose) /* the status line says it; -v: every turn too */
        return;
    strbuf sb = STRBUF_INIT;
    sb_addf(&sb, "%s turn %d: %s%s%s", label, turn, verdict, cached ? " (cached)" : "",
            truncated ? " (answer truncated)" : "");
    if (message && *message && strcmp(verdict, "correct") && strcmp(verdict, "compiled"))
        sb_addf(&sb, " - %.160s", message);
    if (stop)
        sb_addf(&sb, "; done (%s)", stop);
    line(p, sb.buf);
    sb_free(&sb);
}

void progress_watch_verifier(progress *p, kv_service *const *verifier)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->watch_lock);
    p->verifier = verifier;
    pthread_mutex_unlock(&p->watch_lock);
}

void progress_verifying(progress *p, int delta)
{
    if (p)
        __atomic_add_fetch(&p->verifying, delta, __ATOMIC_RELAXED);
}

void progress_update(progress *p) { (void)p; }
