/* allowed_headers: the toolkit headers a candidate may include (kc-cuda v1), in one place:
 * the include policy (verify/service/policy.c) checks against it, the compile sandbox
 * (verify/service/sandbox_headers.c) holds only these and the files they include, and the system
 * prompt (common/prompt_text.c) lists them. Each one compiles under NVRTC in the sandbox
 * (tests/unit/test_verify_headers.c). On CUDA 13 the cuda/ headers and what
 * cooperative_groups.h needs live under include/cccl. */
#ifndef KC_ALLOWED_HEADERS_H
#define KC_ALLOWED_HEADERS_H

/* X(name) for each allowed header, in the order the prompt shows them. */
#define KC_ALLOWED_HEADERS(X)                                                                    \
    X("cuda_fp16.h")                                                                             \
    X("cuda_bf16.h")                                                                             \
    X("cuda_fp8.h")                                                                              \
    X("mma.h")                                                                                   \
    X("cooperative_groups.h")                                                                    \
    X("cooperative_groups/reduce.h")                                                             \
    X("cooperative_groups/scan.h")                                                               \
    X("cooperative_groups/memcpy_async.h")                                                       \
    X("cuda_pipeline.h")                                                                         \
    X("cuda_pipeline_primitives.h")                                                              \
    X("cuda_awbarrier.h")                                                                        \
    X("cuda/barrier")                                                                            \
    X("cuda/pipeline")                                                                           \
    X("cuda/atomic")                                                                             \
    X("cuda/cmath")                                                                              \
    X("cuda/ptx")                                                                                \
    X("cuda/std/cstdint")                                                                        \
    X("cuda/std/cstddef")                                                                        \
    X("cuda/std/climits")                                                                        \
    X("cuda/std/limits")                                                                         \
    X("cuda/std/type_traits")                                                                    \
    X("cuda/std/utility")                                                                        \
    X("cuda/std/array")                                                                          \
    X("cuda/std/cmath")                                                                          \
    X("cuda/std/bit")                                                                            \
    X("cuda/std/tuple")                                                                          \
    X("cuda/std/functional")                                                                     \
    X("cuda/std/span")                                                                           \
    X("cuda/std/complex")                                                                        \
    X("cuda/std/atomic")

#endif
