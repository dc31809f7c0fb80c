/* tests/unit/test_fuzz_replay.c: the kernel harness's inputs, replayed in
 * every build (and under ASan+UBSan in CI) without libFuzzer: each seed of
 * fuzz/corpus/kernel/ runs to a consistent outcome, and each program kept
 * in tests/bad/kernels/NAME.bin (a finding of scripts/fuzz.sh is
 * fuzz-HASH.bin) gives the first message its sidecar NAME.expect states
 * (`# expect: TEXT` lines; a FIXME placeholder fails until the bug is
 * fixed and the message written in). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../fuzz/fuzz_kernel.c"

/* The whole file at path (at most cap bytes) into buf; its length, or -1. */
static long slurp(const char *path, uint8_t *buf, size_t cap)
{
        FILE *f = fopen(path, "rb");
        if (!f)
                return -1;
        size_t n = fread(buf, 1, cap, f);
        fclose(f);
        return (long)n;
}

/* Call fn(dir/name) for each name of dir ending in ext; how many. */
static int each_file(const char *dir, const char *prefix, const char *ext,
                     void (*fn)(const char *path))
{
        DIR *dp = opendir(dir);
        cr_assert_not_null(dp, "cannot open %s", dir);
        int n = 0;
        for (struct dirent *e; (e = readdir(dp));) {
                size_t len = strlen(e->d_name), el = strlen(ext);
                if (len < el || strcmp(e->d_name + len - el, ext) != 0 ||
                    strncmp(e->d_name, prefix, strlen(prefix)) != 0)
                        continue;
                char path[4096];
                cr_assert_lt((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name),
                             sizeof path, "path too long under %s", dir);
                fn(path);
                n++;
        }
        closedir(dp);
        return n;
}

static uint8_t input[1 << 16];

static void replay_seed(const char *path)
{
        long n = slurp(path, input, sizeof input);
        cr_assert_geq(n, 0, "cannot read %s", path);
        char first[512];
        run_program(input, (size_t)n, first, sizeof first);   /* aborts if inconsistent */
}

Test(fuzz_replay, kernel_corpus_runs_to_consistent_outcomes)
{
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/fuzz/corpus/kernel", CUBESIM_SOURCE_DIR);
        cr_assert_gt(each_file(dir, "", "", replay_seed), 0, "no seeds in %s", dir);
}

static void replay_finding(const char *path)
{
        long n = slurp(path, input, sizeof input);
        cr_assert_geq(n, 0, "cannot read %s", path);
        char side[4096], text[1024];
        snprintf(side, sizeof side, "%.*s.expect", (int)(strlen(path) - 4), path);
        long m = slurp(side, (uint8_t *)text, sizeof text - 1);
        cr_assert_geq(m, 0, "%s has no sidecar %s", path, side);
        text[m] = '\0';
        char first[512];
        run_program(input, (size_t)n, first, sizeof first);
        int checked = 0;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                if (strncmp(line, "# expect: ", 10) != 0)
                        continue;
                cr_expect(strstr(first, line + 10), "%s: the first message lacks '%s' (got '%s')",
                          path, line + 10, first);
                checked++;
        }
        cr_expect_gt(checked, 0, "%s states no '# expect:' line", side);
}

Test(fuzz_replay, kernel_findings_give_their_messages)
{
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/tests/bad/kernels", CUBESIM_SOURCE_DIR);
        cr_assert_gt(each_file(dir, "", ".bin", replay_finding), 0, "no programs in %s", dir);
}
