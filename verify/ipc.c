/* ipc: framed JSON + raw payload messages over pipes, child process spawning. */
#include "verify/ipc.h"
#include "common/error.h"
#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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
    char *line = json_dumps(json, JSON_COMPACT);
    if (!line)
        return -1;
    strbuf sb = STRBUF_INIT;
    sb_adds(&sb, line);
    sb_addch(&sb, '\n');
    free(line);
    int rc = write_all(fd, sb.buf, sb.len);
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

static enum ipc_status read_line(int fd, strbuf *line, double deadline_ms)
{
    sb_reset(line);
    for (;;) {
        enum ipc_status st = wait_readable(fd, deadline_ms);
        if (st != IPC_OK)
            return st;
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return IPC_ERROR;
        if (n == 0)
            return line->len ? IPC_TRUNCATED : IPC_EOF;
        if (c == '\n')
            return IPC_OK;
        if (line->len >= IPC_MAX_LINE)
            return IPC_ERROR;
        sb_addch(line, c);
    }
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
    enum ipc_status st = read_line(fd, &line, deadline_ms);
    if (st != IPC_OK) {
        sb_free(&line);
        if (st == IPC_ERROR)
            kc_fail(err, "reading from a child process failed (or a message over %d bytes)",
                    IPC_MAX_LINE);
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

int ipc_spawn(char *const argv[], ipc_child *child, strbuf *err)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
        return kc_fail(err, "cannot create pipes: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        return kc_fail(err, "cannot fork: %s", strerror(errno));
    }
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        execv(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    signal(SIGPIPE, SIG_IGN);
    child->pid = pid;
    child->to_child = in[1];
    child->from_child = out[0];
    return 0;
}

static void close_pipes(ipc_child *child)
{
    if (child->to_child >= 0)
        close(child->to_child);
    if (child->from_child >= 0)
        close(child->from_child);
    child->to_child = child->from_child = -1;
}

void ipc_kill(ipc_child *child)
{
    if (child->pid > 0) {
        kill(child->pid, SIGKILL);
        waitpid(child->pid, NULL, 0);
    }
    close_pipes(child);
    child->pid = 0;
}

void ipc_close(ipc_child *child)
{
    close_pipes(child);
    if (child->pid > 0)
        waitpid(child->pid, NULL, 0);
    child->pid = 0;
}
