/* interrupt: Ctrl-C (SIGINT) and SIGTERM for the long-running tools (kcollect, kverify run and
 * reverify). The first signal only sets a flag that the tools' loops read: they start no new
 * work, let what is in flight finish or leave it pending (never a label for work cut short),
 * print their summary and the command that resumes, and exit KC_EXIT_INTERRUPTED. A second
 * signal exits at once with the same status, removing the file registered with
 * kc_interrupt_remove_on_exit first (kcollect's run lock). The handler is async-signal-safe:
 * flags, write, unlink, _exit. */
#ifndef KC_INTERRUPT_H
#define KC_INTERRUPT_H
#include "common/strbuf.h"
#include <signal.h>
#include <stdio.h>

#define KC_EXIT_INTERRUPTED 130

/* Installs the handler for SIGINT and SIGTERM, except for one that was ignored when the process
 * started (as a shell ignores SIGINT for its background jobs): that one stays ignored. argv is
 * kept for the resume command. */
void kc_interrupt_install(int argc, char **argv);
/* Non-zero once a first SIGINT or SIGTERM arrived (0 in a process that installed nothing). */
int kc_interrupted(void);
/* The flag itself, for code that takes a cancel flag (kcollect's LLM client). */
volatile sig_atomic_t *kc_interrupt_flag(void);
/* A file the second signal removes before exiting (path copied; NULL forgets it). Returns -1
 * when the path is too long to keep. */
int kc_interrupt_remove_on_exit(const char *path);
/* The command line this process was started with, each word shell-quoted where needed. */
void kc_resume_command(strbuf *out);
/* "<tool>: interrupted: resume with: <command>" on out. */
void kc_interrupt_print_resume(FILE *out);

#endif
