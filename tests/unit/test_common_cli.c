/* test_common_cli: the one option parser (common/cli.c). Every value form (--opt value,
 * --opt=value, -o value, -ovalue), flags, operands moved to the front in order, "--" ending the
 * options, a value that starts with '-' where it is not an option (--temperature -1), and the
 * number parsers' range and words. Usage errors exit: each is run in a child, which must print
 * one line naming the option and the command's help, with the tool's usage status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/cli.h"
#include "common/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const kc_command cmd = {"kctool", "sub", "usage: kctool sub [options]\n", KC_ANY_OPERANDS};
static const kc_command no_operands = {"kctool", "sub", "usage: kctool sub\n", 0};

struct parsed {
    const char *db, *out;
    int json, limit, gzip;
    double temperature;
    int64_t seed;
    int calls;
};

static int count_call(const kc_option *opt, const char *value, strbuf *err)
{
    struct parsed *p = opt->dest;
    if (value && !strcmp(value, "bad"))
        return kc_option_fail(opt, err, "takes anything but 'bad'");
    p->calls++;
    return 0;
}

/* Parses the words (NULL-terminated, after the command's name) into p; returns the operands. */
static int parse(const kc_command *c, struct parsed *p, char **words, int n)
{
    const kc_option opts[] = {
        KC_OPT_STR("db", 0, &p->db),
        KC_OPT_STR("out", 'o', &p->out),
        KC_OPT_FLAG("json", 'j', &p->json),
        KC_OPT_UNSET("no-gzip", 0, &p->gzip),
        KC_OPT_INTEGER("limit", 0, &p->limit, 1, 100),
        KC_OPT_NUM("temperature", 0, &p->temperature, -1, 10),
        KC_OPT_INTEGER64("seed", 0, &p->seed, 0, (double)INT64_MAX),
        KC_OPT_FN("call", 0, count_call, p, NULL),
        KC_OPT_FN_FLAG("tick", 0, count_call, p, NULL),
        KC_OPT_END_OF_TABLE};
    return kc_parse_options(c, opts, n, words);
}

static void value_forms(void **state)
{
    (void)state;
    struct parsed p = {.gzip = 1};
    char *w[] = {"sub", "--db", "a.db", "--out=dir", "-j", "--limit=7", "--temperature", "-1",
                 "--seed", "9223372036854775807", "--no-gzip", "--call", "x", "--tick", NULL};
    assert_int_equal(parse(&cmd, &p, w, 14), 0);
    assert_string_equal(p.db, "a.db");
    assert_string_equal(p.out, "dir");
    assert_int_equal(p.json, 1);
    assert_int_equal(p.limit, 7);
    assert_true(p.temperature == -1);
    assert_true(p.seed == INT64_MAX);
    assert_int_equal(p.gzip, 0);
    assert_int_equal(p.calls, 2);
    struct parsed q = {0};
    char *w2[] = {"sub", "-o", "x", NULL};
    parse(&cmd, &q, w2, 3);
    assert_string_equal(q.out, "x");
    char *w3[] = {"sub", "-oy", "--db=", NULL};
    parse(&cmd, &q, w3, 3);
    assert_string_equal(q.out, "y");
    assert_string_equal(q.db, "");
}

static void operands_in_order(void **state)
{
    (void)state;
    struct parsed p = {0};
    char *w[] = {"sub", "a", "--db", "x.db", "b", "-", "--", "--json", "c", NULL};
    assert_int_equal(parse(&cmd, &p, w, 9), 5);
    assert_string_equal(w[1], "a");
    assert_string_equal(w[2], "b");
    assert_string_equal(w[3], "-");
    assert_string_equal(w[4], "--json");
    assert_string_equal(w[5], "c");
    assert_int_equal(p.json, 0);
    assert_string_equal(p.db, "x.db");
}

static void numbers(void **state)
{
    (void)state;
    strbuf err = STRBUF_INIT;
    long long n;
    double d;
    assert_int_equal(kc_parse_int("--n", "42", 0, 100, &n, &err), 0);
    assert_int_equal(n, 42);
    const char *bad_ints[] = {"", "x", "4x", "101", "-1", "1.5", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad_ints / sizeof *bad_ints; i++) {
        assert_int_equal(kc_parse_int("--n", bad_ints[i], 0, 100, &n, &err), -1);
        assert_non_null(strstr(err.buf, "--n takes a whole number from 0 to 100, not '"));
    }
    assert_int_equal(kc_parse_number("--f", "1e-3", 0, 1, &d, &err), 0);
    assert_true(d == 1e-3);
    const char *bad_numbers[] = {"", "nan", "inf", "0x1p-2", "2", "-0.5", "1,5"};
    for (size_t i = 0; i < sizeof bad_numbers / sizeof *bad_numbers; i++) {
        assert_int_equal(kc_parse_number("--f", bad_numbers[i], 0, 1, &d, &err), -1);
        assert_non_null(strstr(err.buf, "--f takes a number from 0 to 1, not '"));
    }
    sb_free(&err);
}

/* Runs parse on words in a child; its exit status and stderr's first line. */
static int child_parse(const kc_command *c, char **words, int n, char *line, size_t size)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        kc_cli_usage_status(4);
        struct parsed p = {0};
        parse(c, &p, words, n);
        _exit(0);
    }
    close(fds[1]);
    ssize_t got = read(fds[0], line, size - 1);
    line[got > 0 ? got : 0] = 0;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void usage_errors(void **state)
{
    (void)state;
    struct {
        char *words[4];
        int n;
        const kc_command *c;
        const char *message;
    } cases[] = {
        {{"sub", "--wat"}, 2, &cmd, "unknown option '--wat'"},
        {{"sub", "--wat=1"}, 2, &cmd, "unknown option '--wat'"},
        {{"sub", "-x"}, 2, &cmd, "unknown option '-x'"},
        {{"sub", "--db"}, 2, &cmd, "--db needs a value"},
        {{"sub", "--db", "--json"}, 3, &cmd, "--db needs a value, not the option '--json'"},
        {{"sub", "--limit", "-o"}, 3, &cmd, "--limit needs a value, not the option '-o'"},
        {{"sub", "--json=yes"}, 2, &cmd, "--json takes no value"},
        {{"sub", "--limit", "abc"}, 3, &cmd, "--limit takes a whole number from 1 to 100, not 'abc'"},
        {{"sub", "--temperature", "11"}, 3, &cmd, "--temperature takes a number from -1 to 10"},
        {{"sub", "--call", "bad"}, 3, &cmd, "--call takes anything but 'bad'"},
        {{"sub", "extra"}, 2, &no_operands, "unexpected argument 'extra'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char line[512], want[512];
        int status = child_parse(cases[i].c, cases[i].words, cases[i].n, line, sizeof line);
        assert_int_equal(status, 4);
        snprintf(want, sizeof want, "kctool sub: error: %s", cases[i].message);
        assert_non_null(strstr(line, want));
        assert_non_null(strstr(line, "; see 'kctool sub --help'\n"));
        int lines = 0;
        for (const char *c = line; *c; c++)
            lines += *c == '\n';
        assert_int_equal(lines, 1);
    }
}

int main(void)
{
    kc_set_progname("kctool");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(value_forms),
        cmocka_unit_test(operands_in_order),
        cmocka_unit_test(numbers),
        cmocka_unit_test(usage_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
