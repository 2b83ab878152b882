/* bundled: starting and stopping the bundled fake LLM server (see bundled.h).
 * The child runs in a session of its own, as the compile servers do (verify/service/ipc.c): a
 * terminal's Ctrl-C reaches kcollect alone, which finishes its requests in flight and then stops
 * the server; a script's SIGINT to its background jobs does not take the server from a kcollect
 * that ignores it. The child dies with kcollect (PR_SET_PDEATHSIG), even after a kill -9. */
#include "collect/bundled.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/problem.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ARGS 32

static int split_args(char *copy, char **argv, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, " ", &save); t && n < max; t = strtok_r(NULL, " ", &save))
        argv[n++] = t;
    return n;
}

static void exec_child(const char *exe, const char *args, int out_fd, pid_t parent)
{
    setsid(); /* out of the terminal's process group: kcollect stops it (bundled_stop) */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(1);
    dup2(out_fd, STDOUT_FILENO);
    char *copy = xstrdup(args ? args : "");
    char *argv[MAX_ARGS + 4] = {(char *)exe, "--port", "0"};
    int n = 3 + split_args(copy, argv + 3, MAX_ARGS);
    argv[n] = NULL;
    execv(exe, argv);
    fprintf(stderr, "kcollect: cannot run %s: %s\n", exe, strerror(errno));
    _exit(127);
}

/* Reads the "listening on 127.0.0.1:PORT" line. */
static int read_port(int fd, int *port)
{
    char buf[256];
    size_t len = 0;
    while (len < sizeof buf - 1) {
        ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
        if (n <= 0)
            return -1;
        len += (size_t)n;
        buf[len] = 0;
        char *nl = strchr(buf, '\n');
        if (nl) {
            const char *colon = strrchr(buf, ':');
            *port = colon ? atoi(colon + 1) : 0;
            return *port > 0 ? 0 : -1;
        }
    }
    return -1;
}

int bundled_start(const char *args, bundled_server *s, strbuf *err)
{
    memset(s, 0, sizeof *s);
    strbuf dir = STRBUF_INIT, exe = STRBUF_INIT, root = STRBUF_INIT;
    if (self_exe_dir(&dir, err) < 0) {
        sb_free(&dir);
        return -1;
    }
    path_join(&exe, dir.buf, "fake_llm");
    sb_free(&dir);
    if (!file_exists(exe.buf)) {
        kc_fail(err, "no endpoint configured and the bundled test server %s is missing "
                     "(build it with make unit-tests, or give --endpoint URL)", exe.buf);
        sb_free(&exe);
        return -1;
    }
    /* The server finds references where kcollect finds problems. */
    problems_root(&root);
    setenv("KC_PROBLEMS", root.buf, 0);
    sb_free(&root);
    int fds[2];
    if (pipe(fds) < 0) {
        sb_free(&exe);
        return kc_fail(err, "pipe: %s", strerror(errno));
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        sb_free(&exe);
        return kc_fail(err, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        exec_child(exe.buf, args, fds[1], parent);
    }
    close(fds[1]);
    s->pid = pid;
    int rc = read_port(fds[0], &s->port);
    close(fds[0]);
    if (rc < 0) {
        bundled_stop(s);
        kc_fail(err, "the bundled test server %s did not start", exe.buf);
    } else {
        snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d/v1", s->port);
    }
    sb_free(&exe);
    return rc;
}

void bundled_stop(bundled_server *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
}
