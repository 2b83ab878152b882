/* fsutil: file and directory helpers shared by all tools. */
#include "common/fsutil.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int read_file(const char *path, strbuf *out, strbuf *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return kc_fail(err, "cannot open '%s': %s", path, strerror(errno));
    sb_reset(out);
    for (;;) {
        sb_grow(out, 65536);
        ssize_t n = read(fd, out->buf + out->len, out->cap - out->len - 1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            return kc_fail(err, "cannot read '%s': %s", path, strerror(e));
        }
        if (n == 0)
            break;
        out->len += (size_t)n;
        out->buf[out->len] = '\0';
    }
    close(fd);
    return 0;
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int write_file_atomic(const char *path, const void *data, size_t len, strbuf *err)
{
    /* one temporary file per call, so two threads writing the same path never share one */
    static _Atomic unsigned long calls;
    strbuf tmp = STRBUF_INIT;
    sb_addf(&tmp, "%s.tmp.%ld.%lu", path, (long)getpid(), calls++);
    int fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        kc_fail(err, "cannot create '%s': %s", tmp.buf, strerror(errno));
        sb_free(&tmp);
        return -1;
    }
    int rc = write_all(fd, data, len);
    if (rc == 0)
        rc = fsync(fd);
    int e = errno;
    close(fd);
    if (rc == 0 && rename(tmp.buf, path) != 0) {
        rc = -1;
        e = errno;
    }
    if (rc != 0) {
        unlink(tmp.buf);
        kc_fail(err, "cannot write '%s': %s", path, strerror(e));
    }
    sb_free(&tmp);
    return rc;
}

int mkdir_p(const char *path, strbuf *err)
{
    strbuf p = STRBUF_INIT;
    sb_adds(&p, path);
    for (size_t i = 1; i <= p.len; i++) {
        if (p.buf[i] != '/' && p.buf[i] != '\0')
            continue;
        char c = p.buf[i];
        p.buf[i] = '\0';
        if (mkdir(p.buf, 0755) != 0 && errno != EEXIST) {
            kc_fail(err, "cannot create directory '%s': %s", p.buf, strerror(errno));
            sb_free(&p);
            return -1;
        }
        p.buf[i] = c;
    }
    sb_free(&p);
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

int remove_tree(const char *path)
{
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void path_dirname(const char *path, strbuf *out)
{
    sb_reset(out);
    const char *slash = strrchr(path, '/');
    if (!slash)
        sb_adds(out, ".");
    else if (slash == path)
        sb_adds(out, "/");
    else
        sb_add(out, path, (size_t)(slash - path));
}

void path_join(strbuf *out, const char *a, const char *b)
{
    sb_reset(out);
    sb_adds(out, a);
    if (out->len && out->buf[out->len - 1] != '/')
        sb_addch(out, '/');
    sb_adds(out, b);
}

int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int self_exe_dir(strbuf *out, strbuf *err)
{
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n < 0)
        return kc_fail(err, "cannot read /proc/self/exe: %s", strerror(errno));
    buf[n] = '\0';
    path_dirname(buf, out);
    return 0;
}

void sibling_exe_path(const char *env_var, const char *name, strbuf *out)
{
    const char *env = getenv(env_var);
    sb_reset(out);
    if (env && *env) {
        sb_adds(out, env);
        return;
    }
    strbuf dir = STRBUF_INIT;
    if (self_exe_dir(&dir, NULL) == 0)
        path_join(out, dir.buf, name);
    else
        sb_adds(out, name);
    sb_free(&dir);
}

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double wall_time_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void iso8601_now(strbuf *out)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char buf[32];
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    sb_adds(out, buf);
}
