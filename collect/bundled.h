/* bundled: the bundled test LLM server. When no endpoint is configured at all,
 * kcollect starts fake_llm (found beside it in the same bin/ directory) on a
 * free loopback port in reference-echo mode, and names it 'bundled-fake-llm'
 * on screen and in the runs table. */
#ifndef KC_BUNDLED_H
#define KC_BUNDLED_H
#include "common/strbuf.h"
#include <sys/types.h>

typedef struct bundled_server {
    pid_t pid;
    int port;
    char url[64]; /* http://127.0.0.1:PORT/v1 */
} bundled_server;

/* args: extra fake_llm arguments separated by spaces (may be NULL). */
int bundled_start(const char *args, bundled_server *s, strbuf *err);
void bundled_stop(bundled_server *s);

#endif
