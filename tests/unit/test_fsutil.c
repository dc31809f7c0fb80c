/* tests/unit/test_fsutil.c: capped reads and atomic writes (base/fsutil). */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsutil.h"

static char dir[] = "/tmp/test_fsutil.XXXXXX";

static void make_dir(void) { cr_assert_not_null(mkdtemp(dir)); }

static void write_text(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs(text, f);
        fclose(f);
}

Test(fsutil, read_capped_stops_one_byte_past_the_cap)
{
        make_dir();
        char path[256];
        snprintf(path, sizeof path, "%s/f", dir);
        write_text(path, "0123456789");
        char *buf;
        size_t len;
        cr_assert_eq(fs_read_capped(path, 100, &buf, &len, NULL), 0);
        cr_expect_eq(len, 10);
        cr_expect_str_eq(buf, "0123456789");
        free(buf);
        cr_assert_eq(fs_read_capped(path, 4, &buf, &len, NULL), 0);
        cr_expect_eq(len, 5, "a file over the cap reads as cap + 1 bytes");
        cr_expect_str_eq(buf, "01234");
        free(buf);
        unlink(path);
        rmdir(dir);
}

Test(fsutil, read_errors_are_located)
{
        struct diag d;
        diag_init(&d);
        char *buf;
        size_t len;
        /* A directory opens but cannot be read: ferror catches it. */
        cr_expect_eq(fs_read_capped("/tmp", 100, &buf, &len, &d), -EISDIR);
        cr_expect_eq(fs_read_capped("/nonexistent/f", 100, &buf, &len, &d), -ENOENT);
        cr_assert_eq(d.n_errors, 2);
        cr_expect_str_eq(d.head->text, "/tmp: error: cannot read: Is a directory");
        cr_expect_str_eq(d.head->next->text,
                         "/nonexistent/f: error: cannot open: No such file or directory");
        diag_fini(&d);
}

Test(fsutil, atomic_write_replaces_a_symlink_and_uses_the_umask)
{
        make_dir();
        char path[256], victim[256];
        snprintf(path, sizeof path, "%s/out", dir);
        snprintf(victim, sizeof victim, "%s/victim", dir);
        write_text(victim, "keep");
        cr_assert_eq(symlink(victim, path), 0);
        mode_t old = umask(022);
        int rc = fs_write_atomic(path, "new", 3);
        umask(old);
        cr_assert_eq(rc, 0);
        struct stat st;
        cr_assert_eq(lstat(path, &st), 0);
        cr_expect(S_ISREG(st.st_mode), "the symlink was written through");
        cr_expect_eq(st.st_mode & 0777, 0644);
        char *buf;
        size_t len;
        cr_assert_eq(fs_read_capped(victim, 100, &buf, &len, NULL), 0);
        cr_expect_str_eq(buf, "keep");
        free(buf);
        unlink(path);
        unlink(victim);
        cr_expect_eq(rmdir(dir), 0, "a temporary file was left");
}
