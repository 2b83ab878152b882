/* verdicts: the table of verdicts and verdict classes (see verdicts.h). */
#include "common/verdicts.h"

#include <string.h>

const kc_verdict_info kc_verdicts[KC_N_VERDICTS] = {
    {"correct", "correct", 0, 1, "every check passed on the GPU, outputs within tolerance"},
    {"compiled", "compiled", 0, 0, "compiled; not run (compile-only verification)"},
    {"mismatch", "incorrect", 1, 1, "ran, but an output differs from the reference"},
    {"unsafe", "runtime_fail", 1, 1,
     "guard or input corruption, an access around a buffer, or a compute-sanitizer error"},
    {"runtime_error", "runtime_fail", 3, 1, "a CUDA error while running"},
    {"launch_error", "runtime_fail", 3, 1, "a launch line could not be launched"},
    {"timeout", "runtime_fail", 3, 1, "ran past its time limit"},
    {"compile_error", "compile_fail", 2, 0, "NVRTC refused the source"},
    {"policy_violation", "format_fail", 2, 0, "the source breaks the include or source policy"},
    {"extract_error", "format_fail", 2, 1, "no kernel or launch lines could be read from the answer"},
};

const kc_class_info kc_verdict_classes[KC_N_CLASSES] = {
    {"correct", 6, 8, "correct"},
    {"incorrect", 5, 6, "mismatch"},
    {"runtime_fail", 4, 5, "launch_error, runtime_error, timeout or unsafe"},
    {"compile_fail", 2, 4, "compile_error"},
    {"format_fail", 1, 3, "extract_error or policy_violation"},
    {"compiled", 3, 7, "compiled, not run"},
    {"unverified", 0, 2, "no verdict"},
};

const kc_verdict_info *kc_verdict_find(const char *name)
{
    for (int i = 0; name && i < KC_N_VERDICTS; i++)
        if (!strcmp(name, kc_verdicts[i].name))
            return &kc_verdicts[i];
    return NULL;
}

const kc_class_info *kc_class_find(const char *name)
{
    for (int i = 0; name && i < KC_N_CLASSES; i++)
        if (!strcmp(name, kc_verdict_classes[i].name))
            return &kc_verdict_classes[i];
    return NULL;
}

const char *kc_verdict_class_of(const char *verdict)
{
    const kc_verdict_info *v = kc_verdict_find(verdict);
    return v ? v->verdict_class : "unverified";
}

int kc_verdict_exit_code(const char *verdict)
{
    const kc_verdict_info *v = kc_verdict_find(verdict);
    return v ? v->exit_code : 2;
}
