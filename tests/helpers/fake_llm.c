/* fake_llm: the test LLM server (as curl tests run against their own servers).
 * A small HTTP/1.1 server on loopback (plain sockets, poll on the listening
 * socket, a thread per connection) that speaks OpenAI chat completions
 * (POST .../chat/completions) and Anthropic messages (POST .../messages),
 * streamed (SSE with keep-alive comments and a usage chunk) or not.
 *
 * Answers: reference-echo mode (default) answers with the reference kernel of
 * the problem named on the first user message's "Problem <id>:" line, loaded
 * from $KC_PROBLEMS; --bug compile|runtime makes turn 0 wrong (a compile error,
 * or an extra launch flipping a high bit of the first output element) and the
 * next turn right. kcollect --strategy mtmc requests (plan, revise, step) are answered by
 * mtmc_answer (--bug stuck-step: every vectorize step fails to compile). Script mode (--script FILE) answers turn k (the number of
 * assistant messages in the request) with answers[k] of the file, the last one
 * repeating: {"answers": [{"content", "reasoning", "finish_reason"}]}, where
 * "{{reference}}" in a content stands for the echo answer and "{{seed}}" in a content or a
 * reasoning for the request's seed ("none" without one), so that samples differ.
 * Reasoning goes out as OpenAI's reasoning_content field (--reasoning-field NAME: another name,
 * "reasoning" as OpenRouter and newer vLLM send it), as Anthropic thinking blocks, or inline in
 * the content with --think tags (<think>...</think> before the answer) or tags-no-open (only the
 * closing tag, as servers that put the opening one in the prompt send it).
 *
 * Faults (--faults LIST, or POST /faults with LIST as body) are consumed one per
 * request in arrival order: ok 429[:secs] 500 503 quota auth model bad hang idle
 * reset cut malformed huge nostream nochoices, each optionally *N to repeat (nochoices: a
 * 200 reply with an empty choices list, streamed or not). --echo-key puts the request's
 * Authorization or x-api-key value into error bodies (auth, 500, 503), an X-Echo-Key header
 * and every answer: a careless server, for the redaction tests.
 * GET /stats reports requests counted by body sha256 (all, and those answered
 * in full), so tests can assert that nothing was sent twice; --stats-file PATH
 * keeps the same JSON in a file, rewritten after every request.
 *
 * Usage: fake_llm [--port N] [--script FILE] [--bug none|compile|runtime|stuck-step]
 *   [--think none|field|tags|tags-no-open] [--reasoning-field NAME] [--faults LIST]
 *   [--delay-ms N] [--chunk N] [--stats-file PATH] [--echo-key] [--verbose]
 * Prints "fake_llm listening on 127.0.0.1:PORT" on stdout once ready. */
#include "common/error.h"
#include "common/fsutil.h"
#include "common/hash.h"
#include "common/problem.h"
#include "common/strbuf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

enum bug_kind { BUG_NONE, BUG_COMPILE, BUG_RUNTIME, BUG_STUCK_STEP };
enum think_kind { THINK_NONE, THINK_FIELD, THINK_TAGS, THINK_TAGS_NO_OPEN };

static struct {
    int port;
    enum bug_kind bug;
    enum think_kind think;
    json_t *script;
    int delay_ms;
    int chunk;
    int verbose;
    int echo_key;
    const char *stats_file;
    const char *reasoning_field; /* the OpenAI message field reasoning goes out in */
} opt = {.chunk = 48, .reasoning_field = "reasoning_content"};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread const char *echo_key; /* --echo-key: this connection's key, else NULL */
static volatile sig_atomic_t stopping;
static atomic_int serving; /* threads answering a connection */

/* ---- fault queue ---- */

#define MAX_FAULTS 256
static char faults[MAX_FAULTS][32];
static int n_faults, next_fault;

static void set_faults(const char *list)
{
    pthread_mutex_lock(&lock);
    n_faults = next_fault = 0;
    char *copy = xstrdup(list), *save = NULL;
    for (char *tok = strtok_r(copy, ", \n", &save); tok; tok = strtok_r(NULL, ", \n", &save)) {
        int times = 1;
        char *star = strchr(tok, '*');
        if (star) {
            *star = 0;
            times = atoi(star + 1);
        }
        for (int i = 0; i < times && n_faults < MAX_FAULTS; i++)
            snprintf(faults[n_faults++], sizeof faults[0], "%s", tok);
    }
    free(copy);
    pthread_mutex_unlock(&lock);
}

static void take_fault(char *out, size_t n)
{
    pthread_mutex_lock(&lock);
    snprintf(out, n, "%s", next_fault < n_faults ? faults[next_fault++] : "ok");
    pthread_mutex_unlock(&lock);
}

/* ---- request counting ---- */

struct count {
    char sha[SHA256_HEX_LEN + 1];
    int seen, answered;
};
static struct count *counts;
static int n_counts, cap_counts;
static long total_requests, total_answered;

static struct count *count_for(const char *sha)
{
    for (int i = 0; i < n_counts; i++)
        if (!strcmp(counts[i].sha, sha))
            return &counts[i];
    if (n_counts == cap_counts) {
        cap_counts = cap_counts ? 2 * cap_counts : 64;
        counts = xrealloc(counts, (size_t)cap_counts * sizeof *counts);
    }
    struct count *c = &counts[n_counts++];
    memset(c, 0, sizeof *c);
    memcpy(c->sha, sha, sizeof c->sha);
    return c;
}

static char *stats_json(void);

static void write_stats_file(void)
{
    if (!opt.stats_file)
        return;
    char *s = stats_json();
    write_file_atomic(opt.stats_file, s, strlen(s), NULL);
    free(s);
}

static void count_request(const char *sha, int answered)
{
    pthread_mutex_lock(&lock);
    struct count *c = count_for(sha);
    if (answered) {
        c->answered++;
        total_answered++;
    } else {
        c->seen++;
        total_requests++;
    }
    pthread_mutex_unlock(&lock);
    static pthread_mutex_t file_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&file_lock);
    write_stats_file();
    pthread_mutex_unlock(&file_lock);
}

static char *stats_json(void)
{
    pthread_mutex_lock(&lock);
    json_t *seen = json_object(), *answered = json_object();
    for (int i = 0; i < n_counts; i++) {
        json_object_set_new(seen, counts[i].sha, json_integer(counts[i].seen));
        json_object_set_new(answered, counts[i].sha, json_integer(counts[i].answered));
    }
    json_t *o = json_pack("{s:I, s:I, s:i, s:o, s:o}", "requests", (json_int_t)total_requests,
                          "answered", (json_int_t)total_answered, "faults_left",
                          n_faults - next_fault, "bodies", seen, "answered_bodies", answered);
    pthread_mutex_unlock(&lock);
    char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    return s;
}

/* ---- socket I/O ---- */

static int send_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static int send_str(int fd, const char *s) { return send_all(fd, s, strlen(s)); }

static void send_simple(int fd, int status, const char *reason, const char *extra_headers,
                        const char *ctype, const char *body)
{
    strbuf sb = STRBUF_INIT;
    sb_addf(&sb, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
            status, reason, ctype, strlen(body), extra_headers ? extra_headers : "");
    sb_adds(&sb, body);
    send_all(fd, sb.buf, sb.len);
    sb_free(&sb);
}

struct http_request {
    char method[16];
    char path[512];
    char key[512]; /* Authorization (after "Bearer ") or x-api-key, for --echo-key */
    strbuf body;
};

/* The value of a header line h ("Name: value\r\n...") into out. */
static void header_value(const char *h, size_t name_len, char *out, size_t n)
{
    const char *v = h + name_len;
    while (*v == ' ')
        v++;
    if (!strncasecmp(v, "Bearer ", 7))
        v += 7;
    size_t k = strcspn(v, "\r\n");
    if (k >= n)
        k = n - 1;
    memcpy(out, v, k);
    out[k] = 0;
}

/* Reads one request (headers and a Content-Length body). */
static int read_request(int fd, struct http_request *rq)
{
    strbuf in = STRBUF_INIT;
    char buf[65536];
    char *end = NULL;
    while (!(end = strstr(sb_str(&in), "\r\n\r\n"))) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0 || in.len > (1u << 20)) {
            sb_free(&in);
            return -1;
        }
        sb_add(&in, buf, (size_t)n);
    }
    size_t header_len = (size_t)(end - in.buf) + 4;
    if (sscanf(in.buf, "%15s %511s", rq->method, rq->path) != 2) {
        sb_free(&in);
        return -1;
    }
    long content_length = 0;
    for (const char *h = strstr(in.buf, "\r\n"); h && h < end; h = strstr(h + 2, "\r\n"))
        if (strncasecmp(h + 2, "content-length:", 15) == 0)
            content_length = atol(h + 17);
        else if (strncasecmp(h + 2, "authorization:", 14) == 0)
            header_value(h + 2, 14, rq->key, sizeof rq->key);
        else if (strncasecmp(h + 2, "x-api-key:", 10) == 0)
            header_value(h + 2, 10, rq->key, sizeof rq->key);
    while ((long)(in.len - header_len) < content_length) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
            sb_free(&in);
            return -1;
        }
        sb_add(&in, buf, (size_t)n);
    }
    sb_add(&rq->body, in.buf + header_len, (size_t)content_length);
    sb_free(&in);
    return 0;
}

/* ---- answers ---- */

struct answer {
    strbuf content, reasoning;
    char finish[32];
};

static const char *first_user_text(json_t *messages)
{
    size_t i;
    json_t *m;
    json_array_foreach(messages, i, m) {
        const char *role = json_string_value(json_object_get(m, "role"));
        if (role && !strcmp(role, "user"))
            return json_string_value(json_object_get(m, "content"));
    }
    return NULL;
}

static int count_assistant(json_t *messages)
{
    int n = 0;
    size_t i;
    json_t *m;
    json_array_foreach(messages, i, m) {
        const char *role = json_string_value(json_object_get(m, "role"));
        n += role && !strcmp(role, "assistant");
    }
    return n;
}

/* The problem id from "Problem <id>:" in the spec. */
static int problem_id_of(const char *spec, char *id, size_t n)
{
    const char *p = spec ? strstr(spec, "Problem ") : NULL;
    if (!p)
        return -1;
    p += strlen("Problem ");
    size_t k = strcspn(p, ": \n");
    if (!k || k >= n)
        return -1;
    memcpy(id, p, k);
    id[k] = 0;
    return 0;
}

static void inject_bug(const problem *p, enum bug_kind bug, strbuf *src)
{
    if (bug == BUG_NONE)
        return;
    if (bug == BUG_COMPILE || bug == BUG_STUCK_STEP) {
        sb_adds(src, "\n// (turn 0 of a bug-then-fix script: this helper does not compile)\n"
                     "__device__ int kc_injected_bug() { return undeclared_identifier_kc; }\n");
    } else if (p->n_outputs > 0) {
        sb_addf(src, "\n// (turn 0 of a bug-then-fix script: flips a high bit of the first output)\n"
                     "extern \"C\" __global__ void kc_injected_bug(unsigned int *out) { out[0] ^= 0x40000000u; }\n"
                     "// @launch kc_injected_bug<<<1, 1>>>(%s);\n",
                p->outputs[0].name);
    }
}

/* The echo answer: the problem's reference kernel as a fenced block, made wrong by bug. */
static void echo_answer(const char *spec, enum bug_kind bug, strbuf *out)
{
    char id[256];
    strbuf root = STRBUF_INIT, path = STRBUF_INIT, err = STRBUF_INIT;
    problem p;
    memset(&p, 0, sizeof p);
    problems_root(&root);
    if (problem_id_of(spec, id, sizeof id) < 0) {
        sb_adds(out, "I could not find a \"Problem <id>:\" line in your message.");
    } else if (problem_manifest_path(root.buf, id, &path, &err) < 0 ||
               problem_load(path.buf, &p, &err) < 0) {
        sb_addf(out, "I do not know problem %s (%s).", id, sb_str(&err));
    } else {
        strbuf src = STRBUF_INIT;
        sb_add(&src, p.reference_source.buf, p.reference_source.len);
        inject_bug(&p, bug, &src);
        sb_addf(out, "Here is a kernel for %s.\n\n```cuda\n%s%s```\n", id, src.buf,
                src.len && src.buf[src.len - 1] == '\n' ? "" : "\n");
        sb_free(&src);
        problem_free(&p);
    }
    sb_free(&root);
    sb_free(&path);
    sb_free(&err);
}

static void replace_all(strbuf *s, const char *what, const char *with)
{
    strbuf out = STRBUF_INIT;
    const char *p = sb_str(s), *q;
    while ((q = strstr(p, what))) {
        sb_add(&out, p, (size_t)(q - p));
        sb_adds(&out, with);
        p = q + strlen(what);
    }
    sb_adds(&out, p);
    sb_reset(s);
    sb_add(s, sb_str(&out), out.len);
    sb_free(&out);
}

static const char *last_user_text(json_t *messages)
{
    const char *last = NULL;
    size_t i;
    json_t *m;
    json_array_foreach(messages, i, m) {
        const char *role = json_string_value(json_object_get(m, "role"));
        if (role && !strcmp(role, "user"))
            last = json_string_value(json_object_get(m, "content"));
    }
    return last;
}

/* kcollect --strategy mtmc (collect/strategy_mtmc.h): a plan request gets a three-step plan, a
 * revise request a one-step plan without vectorize; a step request ("KC-MTMC STEP k/n ATTEMPT
 * a: ... \n  <action line>") the echo kernel, wrong on attempt 1 of step 1 under --bug
 * compile|runtime, and wrong at every vectorize step under --bug stuck-step. 0 when the
 * request is none of these. */
static int mtmc_answer(const char *spec, const char *last, strbuf *out)
{
    const char *step = last ? strstr(last, "KC-MTMC STEP ") : NULL;
    if (step) {
        int k = 0, n = 0, attempt = 0;
        sscanf(step, "KC-MTMC STEP %d/%d ATTEMPT %d", &k, &n, &attempt);
        const char *line = strstr(step, "\n  ");
        enum bug_kind bug = BUG_NONE;
        if (opt.bug == BUG_STUCK_STEP && line && !strncmp(line + 3, "vectorize", 9))
            bug = BUG_STUCK_STEP;
        else if ((opt.bug == BUG_COMPILE || opt.bug == BUG_RUNTIME) && k == 1 && attempt == 1)
            bug = opt.bug;
        echo_answer(spec, bug, out);
        return 1;
    }
    if (last && strstr(last, "KC-MTMC REVISE REQUEST")) {
        sb_adds(out, "A revised plan, without the step that failed:\n\nPLAN\n"
                     "1. unroll 4 -- unroll the per-thread loop instead\nEND\n");
        return 1;
    }
    if (last && strstr(last, "KC-MTMC PLAN REQUEST")) {
        sb_adds(out, "Here is my plan.\n\nPLAN\n"
                     "1. baseline -- one thread per output element, as the reference does\n"
                     "2. vectorize 4 -- float4 loads and stores where the size allows\n"
                     "3. unroll 4 -- unroll the per-thread loop\nEND\n");
        return 1;
    }
    return 0;
}

static void make_answer(json_t *req, const char *fault, struct answer *a)
{
    json_t *messages = json_object_get(req, "messages");
    const char *spec = first_user_text(messages);
    int turn = count_assistant(messages);
    strbuf echo = STRBUF_INIT;
    if (!mtmc_answer(spec, last_user_text(messages), &echo))
        echo_answer(spec, turn == 0 && opt.bug != BUG_STUCK_STEP ? opt.bug : BUG_NONE, &echo);
    snprintf(a->finish, sizeof a->finish, "stop");
    if (opt.script) {
        json_t *list = json_object_get(opt.script, "answers");
        size_t n = json_array_size(list);
        json_t *item = n ? json_array_get(list, (size_t)turn < n ? (size_t)turn : n - 1) : NULL;
        sb_adds(&a->content, json_string_value(json_object_get(item, "content")) ?: "");
        replace_all(&a->content, "{{reference}}", sb_str(&echo));
        sb_adds(&a->reasoning, json_string_value(json_object_get(item, "reasoning")) ?: "");
        char seed[32] = "none";
        if (json_is_integer(json_object_get(req, "seed")))
            snprintf(seed, sizeof seed, "%lld", (long long)json_integer_value(json_object_get(req, "seed")));
        replace_all(&a->content, "{{seed}}", seed);
        replace_all(&a->reasoning, "{{seed}}", seed);
        const char *fr = json_string_value(json_object_get(item, "finish_reason"));
        if (fr)
            snprintf(a->finish, sizeof a->finish, "%s", fr);
    } else {
        sb_add(&a->content, sb_str(&echo), echo.len);
        if (opt.think != THINK_NONE)
            sb_addf(&a->reasoning, "Turn %d: the reference approach, one thread per element.", turn);
    }
    sb_free(&echo);
    if (echo_key)
        sb_addf(&a->content, "\nYou called me with the key %s.\n", echo_key);
    if (!strcmp(fault, "huge")) { /* a 20 MB answer: prose padding before the code */
        strbuf big = STRBUF_INIT, block = STRBUF_INIT;
        const char *line = "This line pads a very long answer so that clients must cope with it.\n";
        while (block.len < 65536)
            sb_adds(&block, line);
        sb_grow(&big, (20u << 20) + block.len + a->content.len);
        while (big.len < 20u << 20)
            sb_add(&big, block.buf, block.len);
        sb_free(&block);
        sb_add(&big, sb_str(&a->content), a->content.len);
        sb_reset(&a->content);
        sb_add(&a->content, big.buf, big.len);
        sb_free(&big);
    }
    if (a->reasoning.len && (opt.think == THINK_TAGS || opt.think == THINK_TAGS_NO_OPEN)) {
        strbuf c = STRBUF_INIT;
        sb_addf(&c, "%s%s</think>\n\n%s", opt.think == THINK_TAGS ? "<think>" : "",
                a->reasoning.buf, sb_str(&a->content));
        sb_reset(&a->content);
        sb_add(&a->content, c.buf, c.len);
        sb_reset(&a->reasoning);
        sb_free(&c);
    }
}

static void answer_free(struct answer *a)
{
    sb_free(&a->content);
    sb_free(&a->reasoning);
}

/* ---- replies ---- */

static long approx_tokens(size_t chars) { return (long)(chars / 4) + 1; }

static char *dump(json_t *o)
{
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static char *openai_body(const char *model, const struct answer *a, long in)
{
    json_t *msg = json_pack("{s:s, s:s}", "role", "assistant", "content", sb_str(&a->content));
    if (a->reasoning.len)
        json_object_set_new(msg, opt.reasoning_field, json_string(a->reasoning.buf));
    long out = approx_tokens(a->content.len + a->reasoning.len);
    return dump(json_pack("{s:s, s:s, s:s, s:[{s:i, s:o, s:s}], s:{s:i, s:i, s:i, s:{s:i}}}",
                          "id", "chatcmpl-fake", "object", "chat.completion", "model", model,
                          "choices", "index", 0, "message", msg, "finish_reason", a->finish,
                          "usage", "prompt_tokens", in, "completion_tokens", out, "total_tokens",
                          in + out, "completion_tokens_details", "reasoning_tokens",
                          a->reasoning.len ? approx_tokens(a->reasoning.len) : 0));
}

static const char *anthropic_stop(const char *finish)
{
    return !strcmp(finish, "length") ? "max_tokens" : "end_turn";
}

static char *anthropic_body(const char *model, const struct answer *a, long in)
{
    json_t *content = json_array();
    if (a->reasoning.len)
        json_array_append_new(content, json_pack("{s:s, s:s, s:s}", "type", "thinking", "thinking",
                                                 a->reasoning.buf, "signature", "fake"));
    json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text", sb_str(&a->content)));
    return dump(json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:{s:i, s:i}}", "id", "msg_fake", "type",
                          "message", "role", "assistant", "model", model, "content", content,
                          "stop_reason", anthropic_stop(a->finish), "usage", "input_tokens", in,
                          "output_tokens", approx_tokens(a->content.len + a->reasoning.len)));
}

/* SSE events of an answer, sent as they are made (a 20 MB answer starts
 * flowing at once); a cut stream stops after `limit` events. */
struct events {
    int fd;
    int sent, limit; /* limit < 0: no limit */
    int ok;
};

static void ev_add(struct events *e, const char *name, json_t *data)
{
    char *d = data ? dump(data) : xstrdup("[DONE]");
    if (e->ok && (e->limit < 0 || e->sent < e->limit)) {
        strbuf sb = STRBUF_INIT;
        if (e->sent < 3)
            sb_adds(&sb, ": keep-alive\n\n");
        if (name)
            sb_addf(&sb, "event: %s\n", name);
        sb_addf(&sb, "data: %s\n\n", d);
        e->ok = send_all(e->fd, sb.buf, sb.len) == 0;
        e->sent++;
        sb_free(&sb);
    }
    free(d);
}

static size_t chunk_size(size_t total)
{
    size_t c = (size_t)opt.chunk;
    return total / 256 > c ? total / 256 : c;
}

/* The length of the piece of s from i: step bytes, or the rest, or a little more so that it
 * ends between two UTF-8 characters (a JSON string holds whole characters only). */
static size_t utf8_piece(const strbuf *s, size_t i, size_t step)
{
    size_t n = s->len - i < step ? s->len - i : step;
    while (i + n < s->len && ((unsigned char)s->buf[i + n] & 0xC0) == 0x80)
        n++;
    return n;
}

static void openai_events(const char *model, const struct answer *a, long in, int usage,
                          struct events *e)
{
    ev_add(e, NULL, json_pack("{s:s, s:s, s:[{s:i, s:{s:s, s:s}, s:n}]}", "id", "chatcmpl-fake",
                              "model", model, "choices", "index", 0, "delta", "role", "assistant",
                              "content", "", "finish_reason"));
    const strbuf *parts[2] = {&a->reasoning, &a->content};
    const char *field[2] = {opt.reasoning_field, "content"};
    for (int k = 0; k < 2; k++) {
        size_t step = chunk_size(parts[k]->len);
        for (size_t i = 0, n; i < parts[k]->len; i += n) {
            n = utf8_piece(parts[k], i, step);
            json_t *delta = json_object();
            json_object_set_new(delta, field[k], json_stringn(parts[k]->buf + i, n));
            ev_add(e, NULL, json_pack("{s:s, s:[{s:i, s:o, s:n}]}", "id", "chatcmpl-fake",
                                      "choices", "index", 0, "delta", delta, "finish_reason"));
        }
    }
    ev_add(e, NULL, json_pack("{s:s, s:[{s:i, s:{}, s:s}]}", "id", "chatcmpl-fake", "choices",
                              "index", 0, "delta", "finish_reason", a->finish));
    if (usage) {
        long out = approx_tokens(a->content.len + a->reasoning.len);
        ev_add(e, NULL, json_pack("{s:s, s:[], s:{s:i, s:i, s:i, s:{s:i}}}", "id", "chatcmpl-fake",
                                  "choices", "usage", "prompt_tokens", in, "completion_tokens", out,
                                  "total_tokens", in + out, "completion_tokens_details",
                                  "reasoning_tokens",
                                  a->reasoning.len ? approx_tokens(a->reasoning.len) : 0));
    }
    ev_add(e, NULL, NULL);
}

static void anthropic_events(const char *model, const struct answer *a, long in, struct events *e)
{
    ev_add(e, "message_start",
           json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:[], s:n, s:{s:i, s:i}}}", "type",
                     "message_start", "message", "id", "msg_fake", "type", "message", "role",
                     "assistant", "model", model, "content", "stop_reason", "usage",
                     "input_tokens", in, "output_tokens", 1));
    ev_add(e, "ping", json_pack("{s:s}", "type", "ping"));
    int index = 0;
    const strbuf *parts[2] = {&a->reasoning, &a->content};
    const char *btype[2] = {"thinking", "text"}, *dtype[2] = {"thinking_delta", "text_delta"};
    for (int k = 0; k < 2; k++) {
        if (k == 0 && !a->reasoning.len)
            continue;
        ev_add(e, "content_block_start",
               json_pack("{s:s, s:i, s:{s:s, s:s}}", "type", "content_block_start", "index", index,
                         "content_block", "type", btype[k], btype[k], ""));
        size_t step = chunk_size(parts[k]->len);
        for (size_t i = 0, n; i < parts[k]->len; i += n) {
            n = utf8_piece(parts[k], i, step);
            json_t *delta = json_pack("{s:s}", "type", dtype[k]);
            json_object_set_new(delta, btype[k], json_stringn(parts[k]->buf + i, n));
            ev_add(e, "content_block_delta", json_pack("{s:s, s:i, s:o}", "type",
                                                       "content_block_delta", "index", index,
                                                       "delta", delta));
        }
        ev_add(e, "content_block_stop",
               json_pack("{s:s, s:i}", "type", "content_block_stop", "index", index));
        index++;
    }
    ev_add(e, "message_delta",
           json_pack("{s:s, s:{s:s}, s:{s:i}}", "type", "message_delta", "delta", "stop_reason",
                     anthropic_stop(a->finish), "usage", "output_tokens",
                     approx_tokens(a->content.len + a->reasoning.len)));
    ev_add(e, "message_stop", json_pack("{s:s}", "type", "message_stop"));
}

static void error_reply(int fd, int anthropic, int status, const char *type, const char *code,
                        const char *message, const char *headers)
{
    strbuf msg = STRBUF_INIT, hdr = STRBUF_INIT;
    sb_adds(&msg, message);
    sb_adds(&hdr, headers ? headers : "");
    if (echo_key) {
        sb_addf(&msg, " (the key you sent: %s)", echo_key);
        sb_addf(&hdr, "X-Echo-Key: %s\r\n", echo_key);
    }
    json_t *o = anthropic ? json_pack("{s:s, s:{s:s, s:s}}", "type", "error", "error", "type",
                                      type, "message", msg.buf)
                          : json_pack("{s:{s:s, s:s, s:s}}", "error", "message", msg.buf, "type",
                                      type, "code", code);
    char *body = dump(o);
    send_simple(fd, status, "Error", hdr.buf, "application/json", body);
    free(body);
    sb_free(&msg);
    sb_free(&hdr);
}

static void hold_open(int fd, int keepalives)
{
    if (keepalives)
        send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
    char buf[256];
    while (!stopping) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 200) > 0 && recv(fd, buf, sizeof buf, MSG_DONTWAIT) == 0)
            return; /* the client gave up */
        if (keepalives && send_str(fd, ": keep-alive\n\n") < 0)
            return;
    }
}

static void reset_connection(int fd)
{
    struct linger l = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

/* Handles a fault that replaces the answer; returns 1 when one was sent. */
static int send_fault(int fd, int anthropic, const char *fault, int stream, const char *sha)
{
    if (!strncmp(fault, "429", 3)) {
        char headers[64];
        snprintf(headers, sizeof headers, "Retry-After: %s\r\n", fault[3] == ':' ? fault + 4 : "1");
        error_reply(fd, anthropic, 429, anthropic ? "rate_limit_error" : "requests",
                    "rate_limit_exceeded", "Rate limit reached; try again later.", headers);
    } else if (!strcmp(fault, "500") || !strcmp(fault, "503")) {
        error_reply(fd, anthropic, atoi(fault), anthropic ? "api_error" : "server_error",
                    "server_error", "The server had an error while processing your request.", NULL);
    } else if (!strcmp(fault, "quota")) {
        error_reply(fd, anthropic, 429, anthropic ? "billing_error" : "insufficient_quota",
                    "insufficient_quota", "You exceeded your current quota.", NULL);
    } else if (!strcmp(fault, "auth")) {
        error_reply(fd, anthropic, 401, anthropic ? "authentication_error" : "invalid_request_error",
                    "invalid_api_key", "Incorrect API key provided.", NULL);
    } else if (!strcmp(fault, "model")) {
        error_reply(fd, anthropic, 404, anthropic ? "not_found_error" : "invalid_request_error",
                    "model_not_found", "The model does not exist.", NULL);
    } else if (!strcmp(fault, "bad")) {
        error_reply(fd, anthropic, 400, "invalid_request_error", "context_length_exceeded",
                    "This request is too long.", NULL);
    } else if (!strcmp(fault, "hang")) {
        hold_open(fd, 0);
    } else if (!strcmp(fault, "idle")) {
        hold_open(fd, stream);
    } else if (!strcmp(fault, "reset")) {
        reset_connection(fd);
    } else if (!strcmp(fault, "nochoices")) {
        send_simple(fd, 200, "OK", NULL, stream ? "text/event-stream" : "application/json",
                    stream ? "data: {\"id\":\"chatcmpl-fake\",\"choices\":[]}\n\n"
                             "data: {\"id\":\"chatcmpl-fake\",\"choices\":[],\"usage\":"
                             "{\"prompt_tokens\":10,\"completion_tokens\":0}}\n\ndata: [DONE]\n\n"
                           : "{\"id\":\"chatcmpl-fake\",\"choices\":[],\"usage\":"
                             "{\"prompt_tokens\":10,\"completion_tokens\":0}}");
        count_request(sha, 1);
    } else if (!strcmp(fault, "malformed")) {
        send_simple(fd, 200, "OK", NULL, stream ? "text/event-stream" : "application/json",
                    stream ? "data: {\"choices\": [{\"delta\": {\"content\": \"half\n\n"
                           : "{\"choices\": [{\"message\": {\"content\": \"unterminated");
    } else {
        return 0;
    }
    return 1;
}

static void send_answer(int fd, json_t *req, int anthropic, const char *fault, const char *sha)
{
    const char *model = json_string_value(json_object_get(req, "model")) ?: "fake";
    /* "nostream": a server that ignores "stream" and sends one JSON reply */
    int stream = json_is_true(json_object_get(req, "stream")) && strcmp(fault, "nostream") != 0;
    int usage = json_is_true(json_object_get(json_object_get(req, "stream_options"), "include_usage"));
    struct answer a = {0};
    make_answer(req, fault, &a);
    char *text = json_dumps(json_object_get(req, "messages"), JSON_COMPACT);
    long in = approx_tokens(strlen(text ? text : ""));
    free(text);
    int cut = !strcmp(fault, "cut"), ok = 0;
    if (!stream) {
        char *body = anthropic ? anthropic_body(model, &a, in) : openai_body(model, &a, in);
        size_t len = strlen(body);
        strbuf head = STRBUF_INIT;
        sb_addf(&head, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", len);
        ok = send_all(fd, head.buf, head.len) == 0 && send_all(fd, body, cut ? len / 2 : len) == 0;
        sb_free(&head);
        free(body);
    } else {
        ok = send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n") == 0;
        struct events e = {.fd = fd, .limit = cut ? 3 : -1, .ok = ok};
        if (anthropic)
            anthropic_events(model, &a, in, &e);
        else
            openai_events(model, &a, in, usage, &e);
        ok = e.ok;
    }
    if (ok && !cut)
        count_request(sha, 1);
    answer_free(&a);
}

static void handle_api(int fd, struct http_request *rq, int anthropic)
{
    char sha[SHA256_HEX_LEN + 1], fault[32];
    sha256_hex(rq->body.buf ? rq->body.buf : "", rq->body.len, sha);
    count_request(sha, 0);
    take_fault(fault, sizeof fault);
    if (opt.verbose)
        fprintf(stderr, "fake_llm: %s %s body %.12s fault %s\n", rq->method, rq->path, sha, fault);
    json_t *req = json_loadb(sb_str(&rq->body), rq->body.len, 0, NULL);
    if (!json_is_object(req)) {
        error_reply(fd, anthropic, 400, "invalid_request_error", "bad_json", "Body is not JSON.", NULL);
        json_decref(req);
        return;
    }
    if (opt.delay_ms)
        usleep((useconds_t)opt.delay_ms * 1000);
    int stream = json_is_true(json_object_get(req, "stream"));
    echo_key = opt.echo_key && rq->key[0] ? rq->key : NULL;
    if (!send_fault(fd, anthropic, fault, stream, sha))
        send_answer(fd, req, anthropic, fault, sha);
    json_decref(req);
}

static int path_ends(const char *path, const char *suffix)
{
    size_t n = strlen(path), k = strlen(suffix);
    return n >= k && !strcmp(path + n - k, suffix);
}

static void *serve(void *arg)
{
    int fd = (int)(intptr_t)arg;
    struct http_request rq = {0};
    if (read_request(fd, &rq) == 0) {
        if (!strcmp(rq.method, "GET") && !strcmp(rq.path, "/stats")) {
            char *s = stats_json();
            send_simple(fd, 200, "OK", NULL, "application/json", s);
            free(s);
        } else if (!strcmp(rq.method, "GET") && !strcmp(rq.path, "/health")) {
            send_simple(fd, 200, "OK", NULL, "text/plain", "ok\n");
        } else if (!strcmp(rq.method, "POST") && !strcmp(rq.path, "/faults")) {
            set_faults(sb_str(&rq.body));
            send_simple(fd, 200, "OK", NULL, "text/plain", "ok\n");
        } else if (!strcmp(rq.method, "POST") && path_ends(rq.path, "/chat/completions")) {
            handle_api(fd, &rq, 0);
        } else if (!strcmp(rq.method, "POST") && path_ends(rq.path, "/messages")) {
            handle_api(fd, &rq, 1);
        } else {
            send_simple(fd, 404, "Not Found", NULL, "text/plain", "no such path\n");
        }
    }
    sb_free(&rq.body);
    close(fd);
    atomic_fetch_sub(&serving, 1);
    return NULL;
}

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

static void usage(void)
{
    fputs("usage: fake_llm [--port N] [--script FILE] [--bug none|compile|runtime|stuck-step]\n"
          "                [--think none|field|tags|tags-no-open] [--reasoning-field NAME]\n"
          "                [--faults LIST] [--delay-ms N] [--chunk N] [--stats-file PATH]\n"
          "                [--echo-key] [--verbose]\n", stderr);
    exit(2);
}

static void parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--verbose")) {
            opt.verbose = 1;
            continue;
        }
        if (!strcmp(a, "--echo-key")) {
            opt.echo_key = 1;
            continue;
        }
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "--port"))
            opt.port = atoi(v);
        else if (!strcmp(a, "--delay-ms"))
            opt.delay_ms = atoi(v);
        else if (!strcmp(a, "--chunk"))
            opt.chunk = atoi(v) > 0 ? atoi(v) : 48;
        else if (!strcmp(a, "--stats-file"))
            opt.stats_file = v;
        else if (!strcmp(a, "--reasoning-field"))
            opt.reasoning_field = v;
        else if (!strcmp(a, "--faults"))
            set_faults(v);
        else if (!strcmp(a, "--bug"))
            opt.bug = !strcmp(v, "compile")      ? BUG_COMPILE
                      : !strcmp(v, "runtime")    ? BUG_RUNTIME
                      : !strcmp(v, "stuck-step") ? BUG_STUCK_STEP
                                                 : BUG_NONE;
        else if (!strcmp(a, "--think"))
            opt.think = !strcmp(v, "field") ? THINK_FIELD : !strcmp(v, "tags") ? THINK_TAGS
                      : !strcmp(v, "tags-no-open") ? THINK_TAGS_NO_OPEN : THINK_NONE;
        else if (!strcmp(a, "--script")) {
            json_error_t je;
            opt.script = json_load_file(v, 0, &je);
            if (!opt.script)
                die("%s: %s (line %d)", v, je.text, je.line);
        } else
            usage();
    }
}

int main(int argc, char **argv)
{
    kc_set_progname("fake_llm");
    parse_args(argc, argv);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opt.port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(ls, 128) < 0)
        die("cannot listen on 127.0.0.1:%d: %s", opt.port, strerror(errno));
    socklen_t alen = sizeof addr;
    getsockname(ls, (struct sockaddr *)&addr, &alen);
    write_stats_file();
    printf("fake_llm listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
    fflush(stdout);
    while (!stopping) {
        struct pollfd p = {.fd = ls, .events = POLLIN};
        if (poll(&p, 1, 200) <= 0)
            continue;
        int fd = accept(ls, NULL, NULL);
        if (fd < 0)
            continue;
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        atomic_fetch_add(&serving, 1);
        if (pthread_create(&t, &attr, serve, (void *)(intptr_t)fd) != 0) {
            atomic_fetch_sub(&serving, 1);
            close(fd);
        }
        pthread_attr_destroy(&attr);
    }
    close(ls);
    /* The process ends only once no thread is answering (they see `stopping` and finish within
     * a delay step): the exit handlers free what a serving thread still uses (OpenSSL's digest
     * tables, read by sha256 in handle_api), and ASan's report of that use after free deadlocked
     * against the leak check at exit, hanging test_fail_fast. The script and the counts stay
     * until the end for the same reason. */
    for (int i = 0; i < 500 && atomic_load(&serving) > 0; i++)
        poll(NULL, 0, 10);
    return 0;
}
