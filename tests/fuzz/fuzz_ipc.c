/* fuzz_ipc: libFuzzer target for the messages kverify reads from its child
 * processes (ipc_recv, verify/service/ipc.c): a child runs candidate code, so what it
 * sends is untrusted. Input: the bytes the parent reads, served from a memfd
 * (always readable, EOF at the end); messages are read until one is not
 * IPC_OK. Properties: no crash, UB, leak, hang or huge allocation; an error
 * says why; an accepted message is a JSON value with at most IPC_MAX_BLOBS
 * payloads whose lengths are those it announced. */
#include "verify/service/ipc.h"
#include "fuzz_common.h"

#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("kcfuzz-ipc", MFD_CLOEXEC);
    if (fd < 0)
        abort();
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(fd, data + off, size - off);
        if (n <= 0)
            abort();
        off += (size_t)n;
    }
    lseek(fd, 0, SEEK_SET);
    strbuf err = STRBUF_INIT;
    for (int i = 0; i < 64; i++) {
        ipc_msg msg;
        sb_reset(&err);
        enum ipc_status st = ipc_recv(fd, &msg, -1, &err);
        FZ_CHECK(st == IPC_OK || st == IPC_EOF || st == IPC_ERROR);
        if (st == IPC_ERROR)
            FZ_CHECK(err.len > 0);
        if (st == IPC_OK) {
            FZ_CHECK(msg.json != NULL);
            FZ_CHECK(msg.n_blobs >= 0 && msg.n_blobs <= IPC_MAX_BLOBS);
            json_t *lens = json_object_get(msg.json, "blobs");
            for (int b = 0; b < msg.n_blobs; b++)
                FZ_CHECK((json_int_t)msg.blobs[b].len ==
                         json_integer_value(json_array_get(lens, (size_t)b)));
        }
        ipc_msg_free(&msg);
        if (st != IPC_OK)
            break;
    }
    sb_free(&err);
    close(fd);
    return 0;
}
