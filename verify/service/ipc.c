/* ipc: framed JSON + raw payload messages over pipes, child process spawning. */
#include "verify/service/ipc.h"
#include "common/error.h"
#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define IPC_MAX_LINE (1 << 24)

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int ipc_send(int fd, json_t *json, const void *const *blobs, const size_t *lens, int n_blobs)
{
    json_t *arr = json_array();
    for (int i = 0; i < n_blobs; i++)
        json_array_append_new(arr, json_integer((json_int_t)lens[i]));
    json_object_set_new(json, "blobs", arr);
    char *text = json_dumps(json, JSON_COMPACT);
    if (!text)
        return -1;
    size_t len = strlen(text);
    strbuf sb = STRBUF_INIT;
    sb_addf(&sb, "%zu\n", len); /* the frame: the JSON's length, then the JSON */
    sb_adds(&sb, text);
    free(text);
    int rc = write_all(fd, sb.buf, sb.len); /* one over IPC_MAX_LINE is refused by the reader */
    sb_free(&sb);
    for (int i = 0; i < n_blobs && rc == 0; i++)
        rc = write_all(fd, blobs[i], lens[i]);
    return rc;
}

/* Waits until fd is readable or the deadline passes. */
static enum ipc_status wait_readable(int fd, double deadline_ms)
{
    for (;;) {
        int timeout = -1;
        if (deadline_ms >= 0) {
            double left = deadline_ms - now_ms();
            if (left <= 0)
                return IPC_TIMEOUT;
            timeout = left > 1e9 ? 1000000000 : (int)left + 1;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int n = poll(&pfd, 1, timeout);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return IPC_ERROR;
        if (n > 0)
            return IPC_OK;
    }
}

/* Memory follows the bytes that arrive, not the length announced: a child that announces
 * IPC_MAX_BLOB and sends nothing costs the parent nothing (found by tests/fuzz/fuzz_ipc). */
#define IPC_READ_STEP ((size_t)1 << 20)

static enum ipc_status read_exact(int fd, strbuf *out, size_t len, double deadline_ms)
{
    sb_grow(out, len < IPC_READ_STEP ? len : IPC_READ_STEP);
    while (len) {
        enum ipc_status st = wait_readable(fd, deadline_ms);
        if (st != IPC_OK)
            return st;
        size_t want = len < IPC_READ_STEP ? len : IPC_READ_STEP;
        sb_grow(out, want);
        ssize_t n = read(fd, out->buf + out->len, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return IPC_ERROR;
        if (n == 0)
            return IPC_TRUNCATED;
        out->len += (size_t)n;
        out->buf[out->len] = '\0';
        len -= (size_t)n;
    }
    return IPC_OK;
}

/* One byte; IPC_EOF at the end of the stream. */
static enum ipc_status read_byte(int fd, char *c, double deadline_ms)
{
    for (;;) {
        enum ipc_status st = wait_readable(fd, deadline_ms);
        if (st != IPC_OK)
            return st;
        ssize_t n = read(fd, c, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return IPC_ERROR;
        return n == 0 ? IPC_EOF : IPC_OK;
    }
}

/* The rest of an unframed message: a JSON line, a byte at a time (first: its first byte). */
static enum ipc_status read_rest_of_line(int fd, char first, strbuf *line, double deadline_ms)
{
    for (char c = first; c != '\n';) {
        if (line->len >= IPC_MAX_LINE)
            return IPC_ERROR;
        sb_addch(line, c);
        enum ipc_status st = read_byte(fd, &c, deadline_ms);
        if (st == IPC_EOF)
            return IPC_TRUNCATED;
        if (st != IPC_OK)
            return st;
    }
    return IPC_OK;
}

/* A framed message's JSON: the rest of its length line (first: its first digit; 1 to 8
 * digits, at most IPC_MAX_LINE), then that many bytes. */
static enum ipc_status read_framed(int fd, char first, strbuf *line, double deadline_ms)
{
    size_t len = 0;
    int digits = 0;
    for (char c = first; c != '\n'; digits++) {
        if (c < '0' || c > '9' || digits == 8)
            return IPC_ERROR;
        len = len * 10 + (size_t)(c - '0');
        enum ipc_status st = read_byte(fd, &c, deadline_ms);
        if (st == IPC_EOF)
            return IPC_TRUNCATED;
        if (st != IPC_OK)
            return st;
    }
    if (len == 0 || len > IPC_MAX_LINE)
        return IPC_ERROR;
    return read_exact(fd, line, len, deadline_ms);
}

/* One message's JSON text, framed or a line (see ipc.h). */
static enum ipc_status read_json_text(int fd, strbuf *line, double deadline_ms)
{
    sb_reset(line);
    char c;
    enum ipc_status st = read_byte(fd, &c, deadline_ms);
    if (st != IPC_OK)
        return st;
    return c >= '0' && c <= '9' ? read_framed(fd, c, line, deadline_ms)
                                : read_rest_of_line(fd, c, line, deadline_ms);
}

/* A message cut short by the end of the stream is malformed, not a clean end. */
static enum ipc_status truncated(enum ipc_status st, strbuf *err)
{
    if (st != IPC_TRUNCATED)
        return st;
    kc_fail(err, "a child process's message was cut short (truncated)");
    return IPC_ERROR;
}

/* A message is a JSON object; its "blobs" (if any) an array of at most IPC_MAX_BLOBS
 * integers in [0, IPC_MAX_BLOB]. Returns how many, or -1 with err set. */
static int blob_lengths(json_t *msg, size_t *lens, strbuf *err)
{
    if (!json_is_object(msg))
        return kc_fail(err, "malformed message from a child process: not a JSON object");
    json_t *blobs = json_object_get(msg, "blobs");
    if (!blobs)
        return 0;
    if (!json_is_array(blobs) || json_array_size(blobs) > IPC_MAX_BLOBS)
        return kc_fail(err, "malformed message from a child process: bad payload list");
    for (size_t i = 0; i < json_array_size(blobs); i++) {
        json_t *len = json_array_get(blobs, i);
        if (!json_is_integer(len) || json_integer_value(len) < 0 ||
            json_integer_value(len) > IPC_MAX_BLOB)
            return kc_fail(err, "malformed message from a child process: payload length out of "
                                "range");
        lens[i] = (size_t)json_integer_value(len);
    }
    return (int)json_array_size(blobs);
}

enum ipc_status ipc_recv(int fd, ipc_msg *msg, double deadline_ms, strbuf *err)
{
    memset(msg, 0, sizeof(*msg));
    strbuf line = STRBUF_INIT;
    enum ipc_status st = read_json_text(fd, &line, deadline_ms);
    if (st != IPC_OK) {
        sb_free(&line);
        if (st == IPC_ERROR)
            kc_fail(err, "reading from a child process failed (or a message over %d bytes, or a "
                         "bad frame length)", IPC_MAX_LINE);
        return truncated(st, err);
    }
    json_error_t je;
    msg->json = json_loadb(line.buf, line.len, 0, &je);
    sb_free(&line);
    if (!msg->json) {
        kc_fail(err, "malformed message from a child process: %s", je.text);
        return IPC_ERROR;
    }
    size_t lens[IPC_MAX_BLOBS];
    int n = blob_lengths(msg->json, lens, err);
    if (n < 0)
        return IPC_ERROR;
    for (int i = 0; i < n; i++) {
        st = read_exact(fd, &msg->blobs[i], lens[i], deadline_ms);
        msg->n_blobs = i + 1;
        if (st != IPC_OK)
            return truncated(st, err);
    }
    return IPC_OK;
}

void ipc_msg_free(ipc_msg *msg)
{
    json_decref(msg->json);
    for (int i = 0; i < IPC_MAX_BLOBS; i++)
        sb_free(&msg->blobs[i]);
    memset(msg, 0, sizeof(*msg));
}

/* ---- spawning ----
 * Children run in a session of their own (setsid), outside the terminal's process group: a
 * Ctrl-C reaches the tool, which decides what happens to the work in flight, never the compile
 * servers and GPU workers themselves. They still die with the tool: PR_SET_PDEATHSIG (SIGKILL)
 * fires when the thread that forked them ends, so every child is forked by one spawner thread
 * that lives as long as the process (a verifying thread that ends early must not take the
 * servers it happened to start with it); pipe EOF stops an idle child as before. */

struct spawn_request {
    char *const *argv;
    int in[2], out[2];
    pid_t pid;
    int fork_errno;
    int done;
};

static pthread_mutex_t spawn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t spawn_cond = PTHREAD_COND_INITIALIZER;
static struct spawn_request *spawn_next; /* the request the spawner takes next */
static pthread_once_t spawner_once = PTHREAD_ONCE_INIT;
static int spawner_running;

/* In the child, between fork and exec: async-signal-safe calls only. */
static _Noreturn void exec_child(const struct spawn_request *r, pid_t parent)
{
    setsid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* the parent died before the line above */
        _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    dup2(r->in[0], 0);
    dup2(r->out[1], 1);
    execv(r->argv[0], r->argv);
    _exit(127);
}

static void fork_child(struct spawn_request *r)
{
    pid_t parent = getpid();
    r->pid = fork();
    r->fork_errno = errno;
    if (r->pid == 0)
        exec_child(r, parent);
}

static void *spawner_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&spawn_lock);
    for (;;) {
        while (!spawn_next)
            pthread_cond_wait(&spawn_cond, &spawn_lock);
        struct spawn_request *r = spawn_next;
        spawn_next = NULL;
        fork_child(r);
        r->done = 1;
        pthread_cond_broadcast(&spawn_cond);
    }
    return NULL;
}

static void start_spawner(void)
{
    pthread_t tid;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* the spawner takes no signal: the tool's handler runs on its other threads */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    spawner_running = pthread_create(&tid, &attr, spawner_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

/* Forks and execs through the spawner thread; returns the pid or -1 (errno set). */
static pid_t spawn_via_spawner(struct spawn_request *r)
{
    pthread_once(&spawner_once, start_spawner);
    if (!spawner_running) {
        errno = EAGAIN;
        return -1;
    }
    pthread_mutex_lock(&spawn_lock);
    while (spawn_next)
        pthread_cond_wait(&spawn_cond, &spawn_lock);
    spawn_next = r;
    pthread_cond_broadcast(&spawn_cond);
    while (!r->done)
        pthread_cond_wait(&spawn_cond, &spawn_lock);
    pthread_mutex_unlock(&spawn_lock);
    errno = r->fork_errno;
    return r->pid;
}

int ipc_spawn(char *const argv[], ipc_child *child, strbuf *err)
{
    struct spawn_request r = {.argv = argv};
    if (pipe2(r.in, O_CLOEXEC))
        return kc_fail(err, "cannot create pipes: %s", strerror(errno));
    if (pipe2(r.out, O_CLOEXEC)) {
        close(r.in[0]), close(r.in[1]);
        return kc_fail(err, "cannot create pipes: %s", strerror(errno));
    }
    signal(SIGPIPE, SIG_IGN);
    if (spawn_via_spawner(&r) < 0) {
        int e = errno;
        close(r.in[0]), close(r.in[1]), close(r.out[0]), close(r.out[1]);
        return kc_fail(err, "cannot fork: %s", strerror(e));
    }
    close(r.in[0]);
    close(r.out[1]);
    child->pid = r.pid;
    child->to_child = r.in[1];
    child->from_child = r.out[0];
    return 0;
}

void ipc_arm_parent_death(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1);
}

static void close_pipes(ipc_child *child)
{
    if (child->to_child >= 0)
        close(child->to_child);
    if (child->from_child >= 0)
        close(child->from_child);
    child->to_child = child->from_child = -1;
}

static int reap(pid_t pid)
{
    int status = -1;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return status;
}

int ipc_kill(ipc_child *child)
{
    int status = -1;
    if (child->pid > 0) {
        kill(child->pid, SIGKILL);
        status = reap(child->pid);
    }
    close_pipes(child);
    child->pid = 0;
    return status;
}

int ipc_reap_lost(ipc_child *child, double grace_ms)
{
    double deadline = now_ms() + grace_ms;
    while (child->pid > 0) {
        int status = -1;
        pid_t got = waitpid(child->pid, &status, WNOHANG);
        if (got < 0 && errno == EINTR)
            continue;
        if (got != 0) { /* it exited (status says how), or is not ours to wait for */
            close_pipes(child);
            child->pid = 0;
            return got > 0 ? status : -1;
        }
        if (now_ms() >= deadline)
            break;
        usleep(2000);
    }
    return ipc_kill(child);
}

void ipc_describe_exit(int status, strbuf *out)
{
    if (status < 0)
        sb_adds(out, "its exit status is unknown");
    else if (WIFSIGNALED(status))
        sb_addf(out, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        sb_addf(out, "exited with status %d", WEXITSTATUS(status));
}

void ipc_hang_up(ipc_child *child) { close_pipes(child); }
