/* llm: the LLM client. Speaks OpenAI-compatible chat completions and Anthropic
 * messages, streaming (SSE) or not, over libcurl's multi interface, with
 * retries (exponential backoff, full jitter, Retry-After), several endpoints
 * with failover, a total deadline, an idle-stream timeout that keep-alive
 * comments do not reset, and RPM/TPM/concurrency limits (ratelimit.h).
 *
 * llm_wire.c builds request bodies and parses replies (pure functions);
 * llm_client.c moves the bytes. API keys live only in llm_endpoint.key and in
 * the request headers: never in bodies, replies, errors or logs. */
#ifndef KC_LLM_H
#define KC_LLM_H
#include "collect/ratelimit.h"
#include "common/strbuf.h"
#include <pthread.h>
#include <signal.h>

enum llm_api { LLM_OPENAI, LLM_ANTHROPIC };
const char *llm_api_name(enum llm_api api);
int llm_api_parse(const char *s, enum llm_api *out);

struct llm_reply;
struct llm_endpoint;

typedef struct llm_message {
    const char *role; /* "user" | "assistant" */
    const char *content;
} llm_message;

/* What is asked, independent of the endpoint it is sent to. */
typedef struct llm_request {
    const char *model;
    const char *system;
    const llm_message *messages;
    int n_messages;
    int max_tokens;
    double temperature; /* < 0: not sent */
    long long seed;     /* < 0: not sent (OpenAI "seed"; Anthropic has none) */
    int stream;
    /* Called once per attempt the moment its answer has completely arrived with HTTP 200 (the
     * stream's end marker, else the end of the transfer), before the reply is checked or used:
     * kcollect commits the raw bytes there, so a kill after receipt never buys it again. Not
     * part of the request's identity (hash). May be NULL. */
    void (*on_received)(void *arg, const struct llm_endpoint *e, const struct llm_reply *r,
                        int stream);
    void *on_received_arg;
} llm_request;

/* The wire body for an API (compact JSON, fixed key order). */
void llm_request_body(const llm_request *q, enum llm_api api, strbuf *body);
/* The cache key: sha256 of the canonical request (model, system, messages,
 * max_tokens, temperature, seed), whatever endpoint or API it goes to and
 * whether it streams. out: 65 bytes. */
void llm_request_hash(const llm_request *q, char *out);

/* How a failed attempt is handled. */
enum llm_outcome {
    LLM_OK,
    LLM_RETRY,         /* 429, 5xx, 529, connection trouble, cut stream, bad JSON, timeouts */
    LLM_FATAL_REQUEST, /* this request can never succeed (400, 413, 422): no retry */
    LLM_FATAL_RUN,     /* auth, insufficient_quota, model not found: no request can succeed */
    LLM_DEADLINE,      /* the total deadline passed */
    LLM_CANCELLED
};
const char *llm_outcome_name(enum llm_outcome o);

typedef struct llm_reply {
    int http_status;
    strbuf raw;        /* body or SSE stream as received (of the answering attempt) */
    strbuf content;    /* the answer, reasoning removed */
    strbuf reasoning;  /* reasoning_content / reasoning / thinking / <think> sections */
    char finish_reason[32]; /* normalised: stop | length | tool_calls | content_filter | ... */
    int truncated;     /* finish_reason length (Anthropic max_tokens) */
    long prompt_tokens, completion_tokens, reasoning_tokens;
    double latency_ms; /* of the whole call, retries and waits included */
    int attempts;
    int endpoint;      /* index of the endpoint that answered */
    enum llm_outcome outcome;
    strbuf error;      /* why the last attempt failed */
    strbuf attempt_errors; /* "attempt 1: ...\n" for every failed attempt of the call */
    double retry_after_s; /* from a Retry-After header; < 0 when absent */
    int stream_done;   /* [DONE] / message_stop / a finish reason seen */
    int stream_end;    /* the end marker itself: [DONE] / message_stop */
    int choices_seen;  /* OpenAI: a reply (or chunk) carried choices[0] */
    long long answer_bytes; /* > 0: the answer passed max_answer_bytes; text bytes that arrived */
    int connect_failed; /* the last attempt reached no server (refused, unresolved) */
} llm_reply;

void llm_reply_init(llm_reply *r);
void llm_reply_reset(llm_reply *r);
void llm_reply_free(llm_reply *r);

/* Parses a complete non-streamed body (HTTP 200). Returns -1 with err on
 * malformed JSON or a body without an answer. */
int llm_parse_body(enum llm_api api, const char *body, llm_reply *r, strbuf *err);
/* Parses a complete answer as received (a body, or an SSE stream when stream): what kcollect
 * does with an answer committed raw by a process that died before using it. */
int llm_parse_raw(enum llm_api api, int stream, const char *raw, size_t len, llm_reply *r,
                  strbuf *err);

/* Streaming: feed SSE bytes; data events update r. progress counts data
 * events (not keep-alive comments or Anthropic pings). */
typedef struct llm_stream llm_stream;
llm_stream *llm_stream_new(enum llm_api api, llm_reply *r);
void llm_stream_free(llm_stream *s);
/* Returns -1 with err on a malformed chunk or an error event. */
int llm_stream_feed(llm_stream *s, const char *bytes, size_t len, strbuf *err);
int llm_stream_finish(llm_stream *s, strbuf *err);
long llm_stream_progress(const llm_stream *s);

/* Cuts an answer whose text (answer and reasoning) passes cap bytes (0: no cap): keeps the first
 * cap bytes on a UTF-8 boundary, the raw record's too, sets answer_bytes, truncated and
 * finish_reason "answer_cap". */
void llm_cap_answer(llm_reply *r, size_t cap);
/* Replaces every occurrence of secret (8 characters or more) in s with "[redacted]". */
void llm_redact(strbuf *s, const char *secret);

/* Moves <think>...</think> sections of content into reasoning; a closing tag
 * without an opening one means everything before it was reasoning. */
void llm_split_think(llm_reply *r);

/* Classifies an HTTP error reply; why gets a one-line reason. */
enum llm_outcome llm_classify_http(int status, const char *body, strbuf *why);

/* ---- the client ---- */

typedef struct llm_endpoint {
    char *url;      /* base URL as configured (http://host:port/v1) */
    enum llm_api api;
    char *key;      /* secret: only ever put in a header */
    int dead;       /* a run-fatal error was seen: not used again */
    int connect_failures; /* consecutive attempts that reached no server (refused, no such
                             host): at max_connect_failures the endpoint is dead */
} llm_endpoint;

typedef struct llm_client_options {
    int max_attempts;         /* per call, over all endpoints (default 6) */
    double backoff_base_ms;   /* first retry delay (default 1000) */
    double backoff_max_ms;    /* cap (default 60000) */
    double deadline_s;        /* total per call, retries included (default 900) */
    double idle_timeout_s;    /* streaming: longest gap between data events (default 120) */
    double attempt_timeout_s; /* a whole non-streamed reply, else retried (default 600);
                                 streams are bounded by the idle timeout instead */
    double connect_timeout_s; /* default 20 */
    size_t max_response_bytes;/* default 64 MiB: a larger reply fails the request */
    size_t max_answer_bytes;  /* default 1 MiB, 0 = none: an answer whose text (with reasoning)
                                 passes it is cut there (a stream stops there), truncated */
    const char *anthropic_version; /* default "2023-06-01" */
    int max_connect_failures; /* consecutive connection failures (over all calls) after which
                                 an endpoint is dead for the run (default 3) */
    int spread;               /* 1: each call starts at the next live endpoint in turn (round
                                 robin, from spread_start); 0: at the first (failover order) */
    unsigned spread_start;    /* the first call's endpoint under spread (kcollect: its shard) */
} llm_client_options;

void llm_client_options_default(llm_client_options *o);

/* Counts an attempt's outcome towards e's dead-endpoint detection: an attempt that reached no
 * server (r->connect_failed: refused, unresolved) adds one to e->connect_failures, any HTTP reply
 * (a success or an error status: the server is there) resets it, anything else leaves it. The
 * count runs over all calls, so failures of consecutive trajectories add up. Returns 1 when it
 * has reached max_connect_failures (> 0): the endpoint is dead for the run. */
int llm_endpoint_count_attempt(llm_endpoint *e, const llm_reply *r, int max_connect_failures);

typedef struct llm_client {
    llm_endpoint *endpoints;
    int n_endpoints;
    llm_client_options opt;
    ratelimit *limits; /* may be NULL */
    volatile sig_atomic_t *cancel; /* may be NULL; non-zero stops waits and transfers */
    pthread_mutex_t lock;
    unsigned calls; /* calls begun (spread: where the next one starts) */
} llm_client;

/* The client does not own endpoints or limits. */
void llm_client_init(llm_client *c, llm_endpoint *endpoints, int n, const llm_client_options *o,
                     ratelimit *limits, volatile sig_atomic_t *cancel);
void llm_client_destroy(llm_client *c);
/* One call with retries and failover. Returns 0 with r filled (r->outcome
 * LLM_OK), or -1 with r->outcome and err saying why. body_out gets the body
 * as sent to the endpoint that answered (or was tried last). */
int llm_call(llm_client *c, const llm_request *q, llm_reply *r, strbuf *body_out, strbuf *err);
/* The URL a request goes to for an endpoint (base + API path). */
void llm_endpoint_url(const llm_endpoint *e, strbuf *out);
/* Whether a server listens at the endpoint's host and port (a TCP connect, TLS included for
 * https, within timeout_s): 0 when it does or the answer is not a connection failure, -1 with
 * err when the connection is refused or the host does not resolve. */
int llm_endpoint_probe(const llm_endpoint *e, double timeout_s, strbuf *err);
/* The delay before retry number n (1-based): Retry-After when given, else
 * full-jitter exponential backoff. u is a uniform draw in [0,1). */
double llm_backoff_ms(const llm_client_options *o, int n, double retry_after_s, double u);

#endif
