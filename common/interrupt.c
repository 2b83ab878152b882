/* interrupt: the SIGINT/SIGTERM handler of the long-running tools and the resume command
 * (see interrupt.h). */
#include "common/interrupt.h"
#include "common/error.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;
static volatile sig_atomic_t have_remove_path;
static char remove_path[4096];
static int saved_argc;
static char **saved_argv;

static const char first_notice[] =
    "\ninterrupted: finishing the work in flight, starting nothing new (press Ctrl-C again to "
    "quit at once)\n";

static void on_signal(int sig)
{
    (void)sig;
    if (interrupted) {
        if (have_remove_path)
            unlink(remove_path);
        _exit(KC_EXIT_INTERRUPTED);
    }
    interrupted = 1;
    ssize_t n = write(STDERR_FILENO, first_notice, sizeof first_notice - 1);
    (void)n;
}

void kc_interrupt_install(int argc, char **argv)
{
    /* a copy: the option parser (cli.h) moves the operands of argv in place */
    free(saved_argv);
    saved_argv = xcalloc((size_t)argc + 1, sizeof *saved_argv);
    if (argv && argc > 0)
        memcpy(saved_argv, argv, (size_t)argc * sizeof *argv);
    saved_argc = argc;
    /* SA_RESTART: reads and writes go on; the loops poll the flag, poll() itself returns EINTR */
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        /* ignored when we started (a background job of a script, nohup): it stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

int kc_interrupted(void) { return interrupted != 0; }

volatile sig_atomic_t *kc_interrupt_flag(void) { return &interrupted; }

int kc_interrupt_remove_on_exit(const char *path)
{
    have_remove_path = 0;
    atomic_signal_fence(memory_order_seq_cst); /* the handler never sees a half-written path */
    if (!path)
        return 0;
    if (strlen(path) >= sizeof remove_path)
        return -1;
    memcpy(remove_path, path, strlen(path) + 1);
    atomic_signal_fence(memory_order_seq_cst);
    have_remove_path = 1;
    return 0;
}

/* A word the shell reads back unchanged without quotes. */
static int shell_safe(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./,:=@%+", *s))
            return 0;
    return 1;
}

void kc_resume_command(strbuf *out)
{
    for (int i = 0; i < saved_argc; i++) {
        const char *a = saved_argv[i];
        if (i)
            sb_addch(out, ' ');
        if (shell_safe(a)) {
            sb_adds(out, a);
            continue;
        }
        sb_addch(out, '\'');
        for (; *a; a++) {
            if (*a == '\'')
                sb_adds(out, "'\\''"); /* close, an escaped quote, reopen */
            else
                sb_addch(out, *a);
        }
        sb_addch(out, '\'');
    }
}

void kc_interrupt_print_resume(FILE *out)
{
    strbuf cmd = STRBUF_INIT;
    kc_resume_command(&cmd);
    fprintf(out, "%s: interrupted: resume with: %s\n", kc_progname(), sb_str(&cmd));
    sb_free(&cmd);
}
