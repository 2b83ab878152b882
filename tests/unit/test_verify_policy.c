/* test_verify_policy: the include policy's lexer against an adversarial table (issue 10,
 * class 5). Each row is a source, whether the policy must refuse it (and on which line), and
 * what NVRTC itself does with it, checked here by compiling the row unsandboxed in this
 * process against a secret header: a row the policy accepts must never reach the secret,
 * and a refused row marked "reaches" proves that the form is a real include for NVRTC (so the
 * table tracks the compiler, not our idea of it). The table holds the bypasses of the old
 * policy: blanks \v \f \r around '#', raw strings hiding a comment opener, digit separators
 * opening a fake character literal, a multi-line comment before '#', and __has_include
 * formed by token pasting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/error.h"
#include "verify/service/nvrtc_compile.h"
#include "verify/service/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum reach { NO_CHECK, NOT_REACHED, REACHED };

struct policy_case {
    const char *name;
    const char *source; /* @S@: "secret path" (quoted); @P@: the same with a line splice
                           inside; @T@: the secret token */
    int refused_line;   /* 0: accepted */
    enum reach nvrtc;
};

static const struct policy_case cases[] = {
    /* refused: real includes for NVRTC */
    {"plain", "#include @S@\n", 1, REACHED},
    {"form feed before #", "\f#include @S@\n", 1, REACHED},
    {"vertical tab before #", "\v#include @S@\n", 1, REACHED},
    {"carriage return before #", "\r#include @S@\n", 1, REACHED},
    {"form feed after #", "#\finclude @S@\n", 1, REACHED},
    {"vertical tab after #", "#\vinclude @S@\n", 1, REACHED},
    {"tabs", "\t#\tinclude\t@S@\n", 1, REACHED},
    {"splice inside the name", "int a;\n#inc\\\nlude @S@\n", 2, REACHED},
    {"CRLF splice after #", "#\\\r\ninclude @S@\n", 1, REACHED},
    {"comment between # and name", "#/**/include @S@\n", 1, REACHED},
    {"multi-line comment between # and name", "#/*\n*/include @S@\n", 1, REACHED},
    {"multi-line comment before #", "/*\n*/ #include @S@\n", 2, REACHED},
    {"code, then multi-line comment before #", "int a; /*\n*/ #include @S@\n", 2, REACHED},
    {"raw string hides a comment opener", "const char *s = R\"(\" /*)\";\n#include @S@\n// */\n", 2,
     REACHED},
    {"raw string with delimiter", "const char *s = R\"xy(\")\" /*)xy\";\n#include @S@\n// */\n", 2,
     REACHED},
    {"u8R raw string", "const char *s = u8R\"(\" /*)\";\n#include @S@\n// */\n", 2, REACHED},
    {"LR raw string", "const wchar_t *s = LR\"(\" /*)\";\n#include @S@\n// */\n", 2, REACHED},
    {"digit separator", "int x = 1'0; const char *y = \"'/*\";\n#include @S@\n// */\n", 2, REACHED},
    {"digraph", "%:include @S@\n", 1, REACHED},
    {"include_next", "#include_next @S@\n", 1, REACHED},
    {"__has_include", "#if __has_include(@S@)\n#error @T@\n#endif\n", 1, REACHED},
    {"__has_include_next", "#if __has_include_next(@S@)\n#error @T@\n#endif\n", 1, REACHED},
    {"__has_include in #elif", "#if 0\n#elif __has_include(@S@)\n#error @T@\n#endif\n", 2, REACHED},
    {"__has_include by pasting", "#define P(a, b) a##b\n#if P(__has_, include)(@S@)\n#error @T@\n#endif\n",
     1, REACHED},
    {"__has_include by pasting in an object macro",
     "#define P(a, b) a ## b\n#define Q P(__has_, include)(@S@)\n#if Q\n#error @T@\n#endif\n", 1,
     REACHED},
    {"splice inside the header name", "#include @P@\n", 1, REACHED},
    {"macro include", "#define F @S@\n#include F\n", 2, REACHED},
    {"absolute path", "#include </proc/self/environ>\n", 1, NO_CHECK},
    {"off-list header", "  #  include <stdio.h>\n", 1, NO_CHECK},
    {"off-list toolkit header", "#include <cusparse.h>\n", 1, NO_CHECK},
    {"traversal from an allowed name", "#include <cuda_fp16.h/../../../../etc/passwd>\n", 1, NO_CHECK},
    /* refused as a second guard: NVRTC does not take these */
    {"import", "#import @S@\n", 1, NOT_REACHED},
    {"embed", "const char d[] = {\n#embed @S@\n};\n", 2, NOT_REACHED},
    {"trigraph #", "?\?=include @S@\n", 1, NOT_REACHED},
    {"trigraph splice", "#?\?/\ninclude @S@\n", 1, NOT_REACHED},
    {"unterminated raw string", "const char *s = R\"(\n#include @S@\n", 1, NOT_REACHED},
    {"splice in a raw string", "const char *s = R\"(\\\n)\";\n", 1, NO_CHECK},
    /* accepted: no include for NVRTC either */
    {"line comment", "// #include @S@\n", 0, NOT_REACHED},
    {"block comment", "/* #include @S@\n#include @S@ */\n", 0, NOT_REACHED},
    {"string", "const char *s = \"#include @S@\";\n", 0, NOT_REACHED},
    {"fake directive in a raw string", "const char *s = R\"(\n#include @S@\n)\";\n", 0, NOT_REACHED},
    {"raw string not ended by )\"", "const char *s = R\"x(\n)\"\n#include @S@\n)x\";\n", 0,
     NOT_REACHED},
    {"spliced line comment", "// note \\\n#include @S@\n", 0, NOT_REACHED},
    {"# after code", "int a; #include @S@\n", 0, NOT_REACHED},
    {"digit separators", "int big = 1'000'000; int h = 0x1'F; char c = '#';\n", 0, NO_CHECK},
    {"escapes", "char q = '\\''; const char *s = \"\\\"#include\\\\\"; char b = '\\\\';\n", 0,
     NO_CHECK},
    {"numbers", "float f = 1.5e+3f; double d = .5e-2; int x = 1'2'3;\n", 0, NO_CHECK},
    {"stringize", "#define STR(x) #x\nconst char *s = STR(include);\n", 0, NO_CHECK},
    {"pasting without #if", "#define CAT(a, b) a##b\nint CAT(x, 1);\n#ifdef X\n#endif\n", 0, NO_CHECK},
    {"digraph and trigraph in strings", "const char *s = \"%:include ?\?= ?\?/\";\n", 0, NO_CHECK},
    {"pragmas", "#pragma unroll\n_Pragma(\"unroll\")\n#pragma push_macro(\"X\")\n", 0, NO_CHECK},
    {"allowed headers",
     "#include <cuda_fp16.h>\n#  include\t<mma.h>\n#include \"cuda_bf16.h\"\n#include <cuda/std/limits>\n"
     "#include <cooperative_groups.h> // groups\n", 0, NO_CHECK},
    {"null directive", "#\n# // comment\n#/* c */\n", 0, NO_CHECK},
};

static char secret_path[64];
static char secret_token[64];

static int setup(void **state)
{
    (void)state;
    snprintf(secret_path, sizeof(secret_path), "/tmp/kc-policy-secret-%ld.h", (long)getpid());
    snprintf(secret_token, sizeof(secret_token), "KCSECRET_%ld", (long)getpid());
    FILE *f = fopen(secret_path, "w");
    if (!f)
        return -1;
    fprintf(f, "#error %s\n", secret_token);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(secret_path);
    return 0;
}

static void expand(const char *tmpl, strbuf *out)
{
    sb_reset(out);
    for (const char *p = tmpl; *p; p++) {
        if (strncmp(p, "@S@", 3) == 0)
            sb_addf(out, "\"%s\"", secret_path), p += 2;
        else if (strncmp(p, "@P@", 3) == 0)
            sb_addf(out, "\"%.8s\\\n%s\"", secret_path, secret_path + 8), p += 2;
        else if (strncmp(p, "@T@", 3) == 0)
            sb_adds(out, secret_token), p += 2;
        else
            sb_addch(out, *p);
    }
    sb_adds(out, "extern \"C\" __global__ void k(float *y) { y[0] = 1.0f; }\n");
}

static void test_policy_table(void **state)
{
    (void)state;
    strbuf src = STRBUF_INIT, err = STRBUF_INIT, want = STRBUF_INIT;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct policy_case *c = &cases[i];
        expand(c->source, &src);
        sb_reset(&err);
        int rc = policy_check(src.buf, &err);
        sb_reset(&want);
        sb_addf(&want, "line %d: ", c->refused_line);
        if (c->refused_line && (rc != -1 || strncmp(sb_str(&err), want.buf, want.len) != 0))
            fail_msg("'%s': expected a refusal at line %d, got rc %d: %s", c->name, c->refused_line,
                     rc, sb_str(&err));
        if (!c->refused_line && rc != 0)
            fail_msg("'%s': expected acceptance, got: %s", c->name, err.buf);
    }
    sb_free(&src), sb_free(&err), sb_free(&want);
}

/* The table's claims about NVRTC hold for the NVRTC linked here (no sandbox, no -I). */
static void test_table_matches_nvrtc(void **state)
{
    (void)state;
    strbuf src = STRBUF_INIT, err = STRBUF_INIT;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct policy_case *c = &cases[i];
        if (c->nvrtc == NO_CHECK)
            continue;
        expand(c->source, &src);
        compile_output out;
        compile_output_init(&out);
        assert_int_equal(nvrtc_compile(src.buf, "sm_90", NULL, &out, &err), 0);
        int reached = out.log.len && strstr(out.log.buf, secret_token) != NULL;
        if (reached != (c->nvrtc == REACHED))
            fail_msg("'%s': the table says NVRTC %s the secret, but it %s:\n%s", c->name,
                     c->nvrtc == REACHED ? "reaches" : "does not reach",
                     reached ? "did" : "did not", sb_str(&out.log));
        compile_output_free(&out);
    }
    sb_free(&src), sb_free(&err);
}

static void test_size_limit(void **state)
{
    (void)state;
    strbuf src = STRBUF_INIT, err = STRBUF_INIT;
    while (src.len <= KC_MAX_SOURCE_BYTES)
        sb_adds(&src, "// a long comment line a long comment line a long comment line\n");
    assert_int_equal(policy_check(src.buf, &err), -1);
    assert_non_null(strstr(err.buf, "longer than 262144 bytes"));
    sb_free(&src), sb_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_table),
        cmocka_unit_test(test_table_matches_nvrtc),
        cmocka_unit_test(test_size_limit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
