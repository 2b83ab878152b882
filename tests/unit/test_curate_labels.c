/* test_curate_labels: normalization, MinHash similarity, labels, rewards/returns and splits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "curate/labels.h"
#include "curate/minhash.h"
#include "curate/normalize.h"
#include "curate/split.h"

#include <stdio.h>
#include <string.h>

static void normalize_drops_comments_and_layout_keeps_directives(void **state)
{
    (void)state;
    strbuf a = STRBUF_INIT, b = STRBUF_INIT, c = STRBUF_INIT;
    const char *x = "// a\n__global__ void k(int n){ n+=1; }\n// @launch k<<<1, 32>>>(N);\n";
    const char *y = "/* b */ __global__  void k ( int n )\n{\n\tn += 1; // c\n}\n//   @launch k<<<1,32>>>(N);";
    const char *z = "__global__ void k(int n){ n+=1; }\n// @launch k<<<2, 32>>>(N);\n";
    curate_normalize(x, strlen(x), &a);
    curate_normalize(y, strlen(y), &b);
    curate_normalize(z, strlen(z), &c);
    assert_string_equal(a.buf, b.buf);
    assert_string_not_equal(a.buf, c.buf); /* launch lines are meaning, not comments */
    assert_non_null(strstr(a.buf, "n += 1"));
    /* so are loops: the same launch repeated 2 or 3 times is another kernel */
    const char *l2 = "// @for i in 0..2\n// @launch k<<<1, 32>>>(N);\n// @end\n";
    const char *l3 = "// @for i in 0..3\n// @launch k<<<1, 32>>>(N);\n//  @end\n";
    curate_normalize(l2, strlen(l2), &a);
    curate_normalize(l3, strlen(l3), &b);
    assert_string_not_equal(a.buf, b.buf);
    assert_non_null(strstr(b.buf, "@end"));
    curate_normalize("// @format\n// @endless x\n", 25, &c);
    assert_string_equal(c.buf, ""); /* other words stay comments */
    sb_free(&a), sb_free(&b), sb_free(&c);
}

static void minhash_separates_near_from_distinct(void **state)
{
    (void)state;
    curate_minhash_params p;
    curate_minhash_defaults(&p);
    strbuf base = STRBUF_INIT, near = STRBUF_INIT, other = STRBUF_INIT;
    for (int i = 0; i < 60; i++) {
        sb_addf(&base, "float v%d = x [ i ] * %d.5f + w%d ; ", i, i * 7, i * 3);
        sb_addf(&near, "float v%d = x [ i ] * %d.5f + w%d ; ", i, i == 30 ? 999 : i * 7, i * 3);
        sb_addf(&other, "float u%d = y [ j ] - %d.25f * q%d ; ", i * 11, i * 13, i);
    }
    uint32_t sa[128], sb[128], sc[128];
    curate_minhash_signature(&p, base.buf, base.len, sa);
    curate_minhash_signature(&p, near.buf, near.len, sb);
    curate_minhash_signature(&p, other.buf, other.len, sc);
    assert_true(curate_minhash_similarity(sa, sb, 128) >= 0.85);
    assert_true(curate_minhash_similarity(sa, sc, 128) <= 0.1);
    uint32_t sigs[3 * 128];
    memcpy(sigs, sa, sizeof sa), memcpy(sigs + 128, sc, sizeof sc), memcpy(sigs + 256, sb, sizeof sb);
    size_t cluster[3];
    curate_minhash_cluster(&p, sigs, 3, cluster);
    assert_int_equal(cluster[0], 0);
    assert_int_equal(cluster[1], 1);
    assert_int_equal(cluster[2], 0);
    sb_free(&base), sb_free(&near), sb_free(&other);
}

static void tiers_rewards_and_returns(void **state)
{
    (void)state;
    curate_params p;
    curate_params_defaults(&p);
    curate_item t[3] = {0};
    strcpy(t[0].verdict, "compile_error");
    strcpy(t[1].verdict, "correct");
    t[1].speedup_eager = 1.2;
    strcpy(t[2].verdict, "correct");
    t[2].speedup_eager = 25; /* suspicious; capped at 10 in the reward */
    curate_item *turns[3];
    for (int i = 0; i < 3; i++) {
        t[i].turn_index = i;
        curate_label_item(&p, &t[i]);
        turns[i] = &t[i];
    }
    assert_string_equal(t[0].verdict_class, "compile_fail");
    assert_null(t[0].tier_eager);
    assert_string_equal(t[1].tier_eager, "fast_1");
    assert_string_equal(t[2].tier_eager, "fast_2");
    assert_true(t[2].suspicious && !t[1].suspicious);
    curate_trajectory_labels tl;
    curate_label_trajectory(&p, turns, 3, &tl);
    assert_float_equal(t[2].reward, 10.3, 1e-9);
    assert_float_equal(t[1].discounted_return, 1.5 + 0.4 * 10.3, 1e-9);
    assert_float_equal(t[0].discounted_return, 0 + 0.4 * t[1].discounted_return, 1e-9);
    assert_int_equal(tl.first_correct_turn, 1);
    assert_true(tl.solved);
    assert_int_equal(t[1].improved, 1);
    assert_int_equal(t[2].improved, 1);
    assert_int_equal(t[0].improved, -1);
    /* A correct kernel whose timed runs did less work than its checks: no speed reward. */
    curate_item odd = {0};
    strcpy(odd.verdict, "correct");
    strcpy(odd.flags, "timing_inconsistent");
    odd.speedup_eager = 40;
    curate_label_item(&p, &odd);
    assert_true(odd.suspicious);
    assert_float_equal(odd.reward, 0.3, 1e-9);
    curate_params_free(&p);
}

static void splits_are_by_problem_stable_and_heldout_never_train(void **state)
{
    (void)state;
    curate_params p;
    curate_params_defaults(&p);
    p.valid_fraction = 0.2, p.test_fraction = 0.2;
    char id[64];
    int seen[3] = {0};
    const char *before[200];
    for (int i = 0; i < 200; i++) {
        snprintf(id, sizeof id, "level1/%03d_op", i);
        before[i] = curate_split_of(&p, id);
        seen[!strcmp(before[i], "valid") + 2 * !strcmp(before[i], "test")]++;
    }
    assert_true(seen[0] > 80 && seen[1] > 20 && seen[2] > 20);
    curate_params_add_heldout(&p, "level1/01*, level1/150_op");
    for (int i = 0; i < 200; i++) {
        snprintf(id, sizeof id, "level1/%03d_op", i);
        const char *s = curate_split_of(&p, id);
        int held = (i >= 10 && i < 20) || i == 150;
        if (held)
            assert_string_equal(s, "heldout");
        else
            assert_string_equal(s, before[i]); /* adding a held-out list moves nothing else */
    }
    curate_params_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(normalize_drops_comments_and_layout_keeps_directives),
        cmocka_unit_test(minhash_separates_near_from_distinct),
        cmocka_unit_test(tiers_rewards_and_returns),
        cmocka_unit_test(splits_are_by_problem_stable_and_heldout_never_train),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
