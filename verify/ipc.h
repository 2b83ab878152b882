/* ipc: framed messages over pipes between kverify and its child processes
 * (sandboxed compile servers, GPU workers). A message is one JSON line whose
 * "blobs" member lists the lengths of raw byte payloads that follow it. Reads
 * take a deadline so a hung child is noticed. */
#ifndef KC_IPC_H
#define KC_IPC_H
#include "common/strbuf.h"
#include <jansson.h>

#define IPC_MAX_BLOBS 4
#define IPC_MAX_BLOB (64 << 20) /* bytes in one payload (sources, cubins, logs) */

typedef struct ipc_msg {
    json_t *json; /* owned */
    int n_blobs;
    strbuf blobs[IPC_MAX_BLOBS];
} ipc_msg;

/* IPC_EOF: the stream ended between messages. A message cut short, or malformed (not a JSON
 * object, payload lengths missing, negative or over IPC_MAX_BLOB), is IPC_ERROR with err set. */
enum ipc_status { IPC_OK = 0, IPC_EOF = -1, IPC_TIMEOUT = -2, IPC_ERROR = -3, IPC_TRUNCATED = -4 };

/* Sends json (not consumed) and the given blobs. Returns 0 or -1 (broken pipe). */
int ipc_send(int fd, json_t *json, const void *const *blobs, const size_t *lens, int n_blobs);
/* Reads one message; deadline_ms < 0 waits forever. */
enum ipc_status ipc_recv(int fd, ipc_msg *msg, double deadline_ms, strbuf *err);
void ipc_msg_free(ipc_msg *msg);

/* A child process joined by two pipes. */
typedef struct ipc_child {
    int pid;
    int to_child, from_child;
} ipc_child;

/* Starts argv[0] (a path) with stdin/stdout as the pipes; stderr inherited. */
int ipc_spawn(char *const argv[], ipc_child *child, strbuf *err);
/* Kills (SIGKILL) and reaps the child; closes the pipes. */
void ipc_kill(ipc_child *child);
/* Closes the pipes and waits for a normal exit. */
void ipc_close(ipc_child *child);

#endif
