/* programs: the paths of kverify and kverify-gpu (see programs.h). */
#include "verify/service/programs.h"
#include "common/fsutil.h"

void kverify_exe_path(strbuf *out) { sibling_exe_path("KC_KVERIFY", "kverify", out); }

void kverify_gpu_exe_path(strbuf *out) { sibling_exe_path("KC_KVERIFY_GPU", "kverify-gpu", out); }
