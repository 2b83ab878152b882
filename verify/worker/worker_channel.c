/* worker_channel: the GPU worker's two output paths, kept apart by construction.
 * Results and progress go to the host on a private descriptor, moved off stdout before
 * any candidate code runs; the candidate's device code cannot write to it. Stdout, where
 * the CUDA driver writes device printf output, becomes an append-only memory file that
 * is drained after every synchronisation into a bounded buffer: printed text is counted,
 * kept (the first WK_PRINTF_KEEP bytes, made printable) and reported as evidence, and it
 * can neither be parsed as a message nor block or delay the worker. */
#include "common/error.h"
#include "verify/service/ipc.h"
#include "verify/worker/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int result_fd = -1;
static json_int_t current_job = -1;

static struct {
    char kept[WK_PRINTF_KEEP];
    size_t kept_len;
    unsigned long long total; /* bytes printed since the last reset */
} printed;

int wk_channel_open(strbuf *err)
{
    result_fd = fcntl(1, F_DUPFD_CLOEXEC, 10);
    if (result_fd < 0)
        return kc_fail(err, "cannot move the result channel: %s", strerror(errno));
    int mem = memfd_create("kc-device-printf", MFD_CLOEXEC);
    if (mem < 0 || fcntl(mem, F_SETFL, O_APPEND) < 0 || dup2(mem, 1) < 0)
        return kc_fail(err, "cannot set up the printf capture: %s", strerror(errno));
    close(mem);
    return 0;
}

void wk_channel_set_job(json_int_t job) { current_job = job; }

/* Every message names the job it belongs to, so the host can reject a stale or stray one. */
int wk_channel_send(json_t *msg)
{
    json_object_set_new(msg, "job", json_integer(current_job));
    return ipc_send(result_fd, msg, NULL, NULL, 0);
}

/* Keeps printable ASCII, newlines and tabs; anything else becomes '?'. */
static void keep_printable(const unsigned char *buf, size_t n)
{
    for (size_t i = 0; i < n && printed.kept_len < WK_PRINTF_KEEP; i++) {
        unsigned char c = buf[i];
        printed.kept[printed.kept_len++] = (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' ? (char)c : '?';
    }
}

void wk_printf_drain(void)
{
    if (result_fd < 0)
        return; /* not serving jobs (kverify dump): stdout is the user's */
    fflush(stdout);
    struct stat st;
    if (fstat(1, &st) != 0 || st.st_size <= 0)
        return;
    size_t size = (size_t)st.st_size;
    printed.total += size;
    if (printed.kept_len < WK_PRINTF_KEEP) {
        unsigned char buf[WK_PRINTF_KEEP];
        size_t want = WK_PRINTF_KEEP - printed.kept_len;
        ssize_t n = pread(1, buf, want < size ? want : size, 0);
        if (n > 0)
            keep_printable(buf, (size_t)n);
    }
    if (ftruncate(1, 0) != 0)
        lseek(1, 0, SEEK_SET);
}

void wk_printf_reset(void)
{
    wk_printf_drain();
    printed.kept_len = 0;
    printed.total = 0;
}

json_t *wk_printf_evidence(void)
{
    wk_printf_drain();
    if (printed.total == 0)
        return NULL;
    return json_pack("{s:I,s:s%,s:b}", "bytes", (json_int_t)printed.total, "text", printed.kept,
                     printed.kept_len, "truncated", printed.total > printed.kept_len);
}
