/* programs: where the programs the verification service starts are: kverify itself (the compile
 * servers, `kverify compile-server`) and kverify-gpu (the GPU workers, and the process
 * compute-sanitizer watches). Each is the one beside the running executable unless its
 * environment variable names another. */
#ifndef KC_PROGRAMS_H
#define KC_PROGRAMS_H
#include "common/strbuf.h"

/* $KC_KVERIFY, else kverify beside the running executable. */
void kverify_exe_path(strbuf *out);
/* $KC_KVERIFY_GPU, else kverify-gpu beside the running executable. */
void kverify_gpu_exe_path(strbuf *out);

#endif
