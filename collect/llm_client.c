/* llm_client: sends a request with libcurl's multi interface, one transfer
 * per attempt, polling so that the total deadline, the idle-stream timeout
 * and cancellation are enforced by us; retries with backoff; failover over
 * endpoints (see llm.h). */
#include "collect/llm.h"
#include "common/error.h"
#include "common/fsutil.h"

#include <curl/curl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_setup(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

void llm_client_options_default(llm_client_options *o)
{
    memset(o, 0, sizeof *o);
    o->max_attempts = 6;
    o->backoff_base_ms = 1000;
    o->backoff_max_ms = 60000;
    o->deadline_s = 900;
    o->idle_timeout_s = 120;
    o->attempt_timeout_s = 600;
    o->connect_timeout_s = 20;
    o->max_response_bytes = 64u << 20;
    o->max_answer_bytes = 1u << 20;
    o->anthropic_version = "2023-06-01";
    o->max_connect_failures = 3;
}

void llm_client_init(llm_client *c, llm_endpoint *endpoints, int n, const llm_client_options *o,
                     ratelimit *limits, volatile sig_atomic_t *cancel)
{
    pthread_once(&curl_once, curl_setup);
    memset(c, 0, sizeof *c);
    c->endpoints = endpoints;
    c->n_endpoints = n;
    c->opt = *o;
    c->limits = limits;
    c->cancel = cancel;
    c->calls = o->spread_start;
    pthread_mutex_init(&c->lock, NULL);
}

void llm_client_destroy(llm_client *c) { pthread_mutex_destroy(&c->lock); }

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

void llm_endpoint_url(const llm_endpoint *e, strbuf *out)
{
    sb_reset(out);
    sb_adds(out, e->url);
    while (out->len && out->buf[out->len - 1] == '/')
        sb_setlen(out, out->len - 1);
    const char *path = e->api == LLM_ANTHROPIC ? "/messages" : "/chat/completions";
    if (ends_with(sb_str(out), path))
        return;
    if (e->api == LLM_ANTHROPIC && !ends_with(sb_str(out), "/v1"))
        sb_adds(out, "/v1");
    sb_adds(out, path);
}

double llm_backoff_ms(const llm_client_options *o, int n, double retry_after_s, double u)
{
    if (retry_after_s >= 0)
        return fmin(retry_after_s, 3600.0) * 1000.0 + u * 250.0; /* the deadline still bounds it */
    double cap = fmin(o->backoff_max_ms, o->backoff_base_ms * pow(2.0, n - 1));
    return cap / 2 + u * cap / 2; /* "equal jitter": never zero, never above the cap */
}

/* An answer whose text (answer and reasoning) passes the cap keeps its first cap bytes (answer
 * first, cut on a UTF-8 boundary), and its raw record its first cap bytes too; answer_bytes says
 * how much text had arrived (for a stream, which stops at the cap: up to the cut). */
static void cut_utf8(strbuf *s, size_t max)
{
    if (s->len <= max)
        return;
    while (max > 0 && ((unsigned char)s->buf[max] & 0xC0) == 0x80)
        max--;
    sb_setlen(s, max);
}

void llm_cap_answer(llm_reply *r, size_t cap)
{
    if (!cap || r->content.len + r->reasoning.len <= cap)
        return;
    r->answer_bytes = (long long)(r->content.len + r->reasoning.len);
    cut_utf8(&r->content, cap);
    cut_utf8(&r->reasoning, cap - r->content.len);
    cut_utf8(&r->raw, cap);
    r->truncated = 1;
    snprintf(r->finish_reason, sizeof r->finish_reason, "answer_cap");
}

/* ---- one attempt ---- */

struct attempt {
    llm_client *client;
    const llm_request *q;
    const llm_endpoint *e;
    int received; /* q->on_received was called */
    llm_reply *r;
    llm_stream *stream; /* NULL when not streaming or not a 200 */
    enum llm_api api;
    int want_stream;
    CURL *easy;
    double last_progress_ms;
    long progress_seen;
    int too_big;
    int capped; /* the stream passed max_answer_bytes and was cut */
    int stream_failed;
    strbuf stream_err;
};

static size_t on_header(char *data, size_t size, size_t n, void *userp)
{
    struct attempt *a = userp;
    size_t len = size * n;
    if (len > 12 && strncasecmp(data, "retry-after:", 12) == 0) {
        char value[128];
        size_t k = len - 12 < sizeof value - 1 ? len - 12 : sizeof value - 1;
        memcpy(value, data + 12, k);
        value[k] = 0;
        char *end;
        double secs = strtod(value, &end);
        if (end != value && secs >= 0) {
            a->r->retry_after_s = secs;
        } else {
            time_t t = curl_getdate(value, NULL); /* an HTTP date */
            if (t > 0)
                a->r->retry_after_s = fmax(0, difftime(t, time(NULL)));
        }
    }
    return len;
}

/* The answer is complete: hand it to the caller before anything else happens to it. */
static void notify_received(struct attempt *a, int stream)
{
    if (a->received || !a->q->on_received)
        return;
    a->received = 1;
    llm_redact(&a->r->raw, a->e->key);
    a->q->on_received(a->q->on_received_arg, a->e, a->r, stream);
}

static size_t on_body(char *data, size_t size, size_t n, void *userp)
{
    struct attempt *a = userp;
    size_t len = size * n;
    if (a->r->raw.len + len > a->client->opt.max_response_bytes) {
        a->too_big = 1;
        return 0; /* aborts the transfer */
    }
    sb_add(&a->r->raw, data, len);
    if (!a->want_stream)
        return len;
    if (!a->stream && !a->stream_failed) {
        long status = 0;
        curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &status);
        const char *ctype = NULL;
        curl_easy_getinfo(a->easy, CURLINFO_CONTENT_TYPE, &ctype);
        if (status != 200) {
            a->stream_failed = 1; /* an error body: kept raw, classified later */
            return len;
        }
        if (ctype && strstr(ctype, "json")) {
            a->want_stream = 0; /* the server ignored "stream": a whole JSON reply */
            return len;
        }
        a->stream = llm_stream_new(a->api, a->r);
    }
    if (a->stream && !a->stream_failed) {
        if (llm_stream_feed(a->stream, data, len, &a->stream_err) < 0) {
            a->stream_failed = 2;
            return 0;
        }
        if (a->r->stream_end)
            notify_received(a, 1);
        size_t cap = a->client->opt.max_answer_bytes;
        if (cap && a->r->content.len + a->r->reasoning.len > cap) {
            a->capped = 1; /* a runaway answer: keep what came, stop paying for the rest */
            return 0;
        }
        long p = llm_stream_progress(a->stream);
        if (p != a->progress_seen) {
            a->progress_seen = p;
            a->last_progress_ms = now_ms();
        }
    }
    return len;
}

static struct curl_slist *request_headers(const llm_endpoint *e, const llm_client_options *o,
                                          int stream)
{
    struct curl_slist *h = NULL;
    strbuf line = STRBUF_INIT;
    h = curl_slist_append(h, "Content-Type: application/json");
    h = curl_slist_append(h, stream ? "Accept: text/event-stream" : "Accept: application/json");
    h = curl_slist_append(h, "Expect:");
    if (e->api == LLM_ANTHROPIC) {
        sb_addf(&line, "anthropic-version: %s", o->anthropic_version);
        h = curl_slist_append(h, line.buf);
        if (e->key && *e->key) {
            sb_reset(&line);
            sb_addf(&line, "x-api-key: %s", e->key);
            h = curl_slist_append(h, line.buf);
        }
    } else if (e->key && *e->key) {
        sb_addf(&line, "Authorization: Bearer %s", e->key);
        h = curl_slist_append(h, line.buf);
    }
    /* The header list holds the key: wipe our copy. */
    if (line.cap)
        memset(line.buf, 0, line.cap);
    sb_free(&line);
    return h;
}

/* No server was reached: nothing listens there, or the host name does not resolve. */
static int is_connect_failure(CURLcode rc)
{
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
           rc == CURLE_COULDNT_RESOLVE_PROXY;
}

int llm_endpoint_probe(const llm_endpoint *e, double timeout_s, strbuf *err)
{
    pthread_once(&curl_once, curl_setup);
    strbuf url = STRBUF_INIT;
    llm_endpoint_url(e, &url);
    CURL *easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, url.buf);
    curl_easy_setopt(easy, CURLOPT_CONNECT_ONLY, 1L);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeout_s * 1000));
    CURLcode rc = curl_easy_perform(easy);
    curl_easy_cleanup(easy);
    sb_free(&url);
    if (!is_connect_failure(rc))
        return 0;
    return kc_fail(err, "%s", curl_easy_strerror(rc));
}

/* Runs the transfer until it ends, the deadline passes, the stream idles, or
 * a cancel. Returns the outcome; r->error says why when not OK. */
static enum llm_outcome run_transfer(struct attempt *a, CURLM *multi, double deadline_ms)
{
    double attempt_end = now_ms() + a->client->opt.attempt_timeout_s * 1000.0;
    const llm_client_options *o = &a->client->opt;
    volatile sig_atomic_t *cancel = a->client->cancel;
    a->last_progress_ms = now_ms();
    for (;;) {
        int running = 0;
        CURLMcode mc = curl_multi_perform(multi, &running);
        if (mc != CURLM_OK) {
            kc_fail(&a->r->error, "curl: %s", curl_multi_strerror(mc));
            return LLM_RETRY;
        }
        int left;
        CURLMsg *msg;
        while ((msg = curl_multi_info_read(multi, &left)) != NULL) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            CURLcode rc = msg->data.result;
            if (rc == CURLE_OK)
                return LLM_OK;
            if (a->too_big) {
                kc_fail(&a->r->error, "reply larger than %zu bytes", o->max_response_bytes);
                return LLM_FATAL_REQUEST;
            }
            if (a->capped || (a->r->stream_end && a->stream_failed != 2))
                return LLM_OK; /* all we want has arrived; how the connection ended is moot */
            if (a->stream_failed == 2) {
                kc_fail(&a->r->error, "%s", sb_str(&a->stream_err));
                return LLM_RETRY;
            }
            kc_fail(&a->r->error, "transfer failed: %s", curl_easy_strerror(rc));
            a->r->connect_failed = is_connect_failure(rc);
            return LLM_RETRY;
        }
        if (!running)
            return LLM_OK;
        double now = now_ms();
        if (cancel && *cancel) {
            kc_fail(&a->r->error, "cancelled");
            return LLM_CANCELLED;
        }
        if (now >= deadline_ms) {
            kc_fail(&a->r->error, "total deadline of %.0f s passed", o->deadline_s);
            return LLM_DEADLINE;
        }
        if (!a->want_stream && now >= attempt_end) {
            kc_fail(&a->r->error, "no complete reply within %.1f s", o->attempt_timeout_s);
            return LLM_RETRY;
        }
        if (a->want_stream && now - a->last_progress_ms > o->idle_timeout_s * 1000.0) {
            kc_fail(&a->r->error, "stream idle for %.1f s (keep-alives do not count)",
                    o->idle_timeout_s);
            return LLM_RETRY;
        }
        curl_multi_poll(multi, NULL, 0, 50, NULL);
    }
}

/* One attempt against one endpoint. */
static enum llm_outcome attempt_once(llm_client *c, const llm_endpoint *e, const char *body,
                                     const llm_request *q, double deadline_ms, llm_reply *r)
{
    int stream = q->stream;
    llm_reply_reset(r);
    struct attempt a = {.client = c, .q = q, .e = e, .r = r, .api = e->api, .want_stream = stream};
    strbuf url = STRBUF_INIT;
    llm_endpoint_url(e, &url);
    CURL *easy = curl_easy_init();
    CURLM *multi = curl_multi_init();
    a.easy = easy;
    struct curl_slist *headers = request_headers(e, &c->opt, stream);
    curl_easy_setopt(easy, CURLOPT_URL, url.buf);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &a);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, &a);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->opt.connect_timeout_s * 1000));
    curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "kcollect/" KC_VERSION);
    curl_multi_add_handle(multi, easy);

    enum llm_outcome out = run_transfer(&a, multi, deadline_ms);
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    r->http_status = (int)status;
    if (out == LLM_OK && status == 200 && !a.capped)
        notify_received(&a, a.want_stream && a.stream);
    if (out == LLM_OK) {
        if (status != 200) {
            out = llm_classify_http((int)status, sb_str(&r->raw), &r->error);
        } else if (a.capped) {
            llm_split_think(r);
            llm_cap_answer(r, c->opt.max_answer_bytes);
        } else if (a.want_stream && a.stream) {
            if (llm_stream_finish(a.stream, &r->error) < 0)
                out = LLM_RETRY;
        } else if (a.want_stream) {
            kc_fail(&r->error, "empty stream");
            out = LLM_RETRY;
        } else if (llm_parse_body(e->api, sb_str(&r->raw), r, &r->error) < 0) {
            out = LLM_RETRY; /* malformed JSON from a 200: the next try may be whole */
        }
        if (out == LLM_OK && !a.capped)
            llm_cap_answer(r, c->opt.max_answer_bytes);
    }
    /* A server may echo the key (an error body, an answer): it never leaves the client. */
    strbuf *texts[] = {&r->raw, &r->content, &r->reasoning, &r->error};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        llm_redact(texts[i], e->key);
    llm_stream_free(a.stream);
    sb_free(&a.stream_err);
    curl_multi_remove_handle(multi, easy);
    curl_easy_cleanup(easy);
    curl_multi_cleanup(multi);
    curl_slist_free_all(headers);
    sb_free(&url);
    return out;
}

/* The first endpoint that is not dead after index `after` (wrapping round to
 * `after` itself last); after = -1 starts at the primary. */
static int next_endpoint(llm_client *c, int after)
{
    pthread_mutex_lock(&c->lock);
    int pick = -1;
    for (int k = 1; k <= c->n_endpoints; k++) {
        int i = ((after + k) % c->n_endpoints + c->n_endpoints) % c->n_endpoints;
        if (!c->endpoints[i].dead) {
            pick = i;
            break;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return pick;
}

/* Where a call starts looking for a live endpoint (next_endpoint's `after`): before the first,
 * or, spread, one endpoint further on with each call. */
static int first_after(llm_client *c)
{
    if (!c->opt.spread)
        return -1;
    unsigned k = __atomic_fetch_add(&c->calls, 1, __ATOMIC_RELAXED);
    return (int)(k % (unsigned)c->n_endpoints) - 1;
}

int llm_endpoint_count_attempt(llm_endpoint *e, const llm_reply *r, int max_connect_failures)
{
    if (r->connect_failed)
        e->connect_failures++;
    else if (r->http_status > 0)
        e->connect_failures = 0;
    return max_connect_failures > 0 && e->connect_failures >= max_connect_failures;
}

/* llm_endpoint_count_attempt for endpoint i, under the client's lock (calls run concurrently). */
static int count_connect_failure(llm_client *c, int i, const llm_reply *r)
{
    pthread_mutex_lock(&c->lock);
    int dead = llm_endpoint_count_attempt(&c->endpoints[i], r, c->opt.max_connect_failures);
    pthread_mutex_unlock(&c->lock);
    return dead;
}

static void mark_dead(llm_client *c, int i)
{
    pthread_mutex_lock(&c->lock);
    c->endpoints[i].dead = 1;
    pthread_mutex_unlock(&c->lock);
}

/* Sleeps ms or until cancel/deadline; returns -1 when cut short. */
static int nap(llm_client *c, double ms, double deadline_ms)
{
    double until = now_ms() + ms;
    if (until > deadline_ms)
        return -1;
    while (now_ms() < until) {
        if (c->cancel && *c->cancel)
            return -1;
        double left = until - now_ms();
        if (left > 50)
            left = 50;
        if (left > 0)
            usleep((useconds_t)(left * 1000));
    }
    return 0;
}

/* Long waits speak: one line on stderr per retry (attempt, HTTP status or error, wait), so a
 * slow or failing endpoint is never minutes of silence. */
static void retry_notice(const llm_client *c, int attempt, const llm_reply *r, const char *what,
                         double wait_ms)
{
    char status[32] = "no HTTP status";
    if (r->http_status > 0)
        snprintf(status, sizeof status, "HTTP %d", r->http_status);
    fprintf(stderr, "%s: retry: attempt %d of %d failed (%s): %.200s; waiting %.1f s%s\n",
            kc_progname(), attempt, c->opt.max_attempts, status, what, wait_ms / 1000.0,
            r->retry_after_s > 0 ? " (Retry-After)" : "");
}

static double uniform01(unsigned *state) { return (double)rand_r(state) / ((double)RAND_MAX + 1.0); }

static long estimate_tokens(const char *body, int max_tokens)
{
    return (long)(strlen(body) / 4) + (max_tokens > 0 ? max_tokens / 4 : 256);
}

int llm_call(llm_client *c, const llm_request *q, llm_reply *r, strbuf *body_out, strbuf *err)
{
    double start = now_ms();
    double deadline = start + c->opt.deadline_s * 1000.0;
    unsigned seed = (unsigned)(start * 1000) ^ (unsigned)(uintptr_t)r;
    if (c->n_endpoints < 1) {
        r->outcome = LLM_FATAL_RUN;
        return kc_fail(err, "no endpoint configured");
    }
    int ep = next_endpoint(c, first_after(c));
    int attempts = 0;
    enum llm_outcome out = LLM_RETRY;
    strbuf last = STRBUF_INIT;
    sb_reset(&r->attempt_errors);
    while (attempts < c->opt.max_attempts) {
        if (ep < 0) {
            out = LLM_FATAL_RUN;
            if (!last.len)
                sb_adds(&last, "no usable endpoint");
            break;
        }
        llm_endpoint *e = &c->endpoints[ep];
        llm_request_body(q, e->api, body_out);
        int slot = -1;
        if (c->limits) {
            slot = rl_acquire(c->limits, estimate_tokens(body_out->buf, q->max_tokens), deadline,
                              c->cancel);
            if (slot < 0) {
                out = c->cancel && *c->cancel ? LLM_CANCELLED : LLM_DEADLINE;
                sb_reset(&last);
                sb_adds(&last, out == LLM_CANCELLED ? "cancelled" : "deadline passed waiting for the rate limit");
                break;
            }
        }
        attempts++;
        out = attempt_once(c, e, body_out->buf, q, deadline, r);
        if (c->limits)
            rl_release(c->limits, slot, r->prompt_tokens + r->completion_tokens > 0
                                            ? r->prompt_tokens + r->completion_tokens
                                            : estimate_tokens(body_out->buf, q->max_tokens));
        r->endpoint = ep;
        int unreachable = count_connect_failure(c, ep, r);
        if (out == LLM_OK)
            break;
        sb_reset(&last);
        sb_addf(&last, "%s: %s", e->url, sb_str(&r->error));
        if (unreachable && out == LLM_RETRY) { /* nothing listens there: no use retrying */
            out = LLM_FATAL_RUN;
            sb_addf(&last, " (%d connection attempts in a row reached no server: the endpoint "
                           "is down or the URL is wrong)", c->opt.max_connect_failures);
        }
        sb_addf(&r->attempt_errors, "attempt %d: %s\n", attempts, last.buf);
        if (out == LLM_FATAL_RUN) {
            mark_dead(c, ep);
            ep = next_endpoint(c, ep); /* fail over; not a retry of the same endpoint */
            if (ep >= 0) {
                out = LLM_RETRY;
                continue;
            }
            break;
        }
        if (out != LLM_RETRY)
            break;
        if (attempts >= c->opt.max_attempts)
            break;
        double wait = llm_backoff_ms(&c->opt, attempts, r->retry_after_s, uniform01(&seed));
        retry_notice(c, attempts, r, last.buf, wait);
        if (nap(c, wait, deadline) < 0) {
            out = c->cancel && *c->cancel ? LLM_CANCELLED : LLM_DEADLINE;
            sb_addf(&last, "; %s before the next retry",
                    out == LLM_CANCELLED ? "cancelled" : "the deadline passes");
            break;
        }
        ep = next_endpoint(c, ep); /* retries alternate over the live endpoints */
    }
    r->attempts = attempts;
    r->latency_ms = now_ms() - start;
    r->outcome = out;
    int rc = 0;
    if (out != LLM_OK) {
        if (out == LLM_RETRY)
            sb_addf(&last, " (gave up after %d attempts)", attempts);
        rc = kc_fail(err, "%s", sb_str(&last));
    }
    sb_free(&last);
    return rc;
}
