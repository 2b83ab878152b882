/* ipc: framed messages over pipes between kverify and its child processes
 * (sandboxed compile servers, GPU workers). A message is a JSON object whose
 * "blobs" member lists the lengths of raw byte payloads that follow it. ipc_send
 * frames the JSON by its length (a line of 1-8 decimal digits, then that many bytes
 * of JSON), so a reader takes it in one read instead of a byte at a time (a result of
 * 30 KB cost 25 ms read bytewise); ipc_recv also reads the older unframed form, one
 * JSON line, which test fixtures still write. Reads take a deadline so a hung child is
 * noticed. */
#ifndef KC_IPC_H
#define KC_IPC_H
#include "common/strbuf.h"
#include <jansson.h>
#include <sys/types.h>

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

/* Starts argv[0] (a path) with stdin/stdout as the pipes; stderr inherited. The child runs in
 * a session of its own (a terminal's Ctrl-C does not reach it) and is killed (SIGKILL) when this
 * process dies, however it dies. */
int ipc_spawn(char *const argv[], ipc_child *child, strbuf *err);
/* For a child whose credentials change after exec (the sandboxed compile server), which clears
 * the parent-death signal: sets it again, and exits if parent (its parent at start) is gone. */
void ipc_arm_parent_death(pid_t parent);
/* Kills (SIGKILL) and reaps the child; closes the pipes. Returns its wait status. */
int ipc_kill(ipc_child *child);
/* For a child whose stream ended unasked: waits up to grace_ms for it to exit by itself (then
 * kills it), reaps it and closes the pipes. Returns its wait status: how it died. */
int ipc_reap_lost(ipc_child *child, double grace_ms);
/* "killed by signal 9 (Killed)", "exited with status 1". */
void ipc_describe_exit(int status, strbuf *out);
/* Closes the pipes and keeps the pid: a child ends at its input's end (reap it with
 * ipc_reap_lost; one that does not end within the grace is killed there). */
void ipc_hang_up(ipc_child *child);
/* How long a hung-up child may take to end by itself before it is killed. */
#define IPC_EXIT_GRACE_MS 3000.0

#endif
