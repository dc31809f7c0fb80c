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

/* A FIFO would hang a read until a writer came: it is refused at once. */
Test(fsutil, a_fifo_is_not_read)
{
        char fdir[] = "/tmp/cubesim-fsutil-XXXXXX", path[64];
        cr_assert_not_null(mkdtemp(fdir));
        snprintf(path, sizeof path, "%s/fifo", fdir);
        cr_assert_eq(mkfifo(path, 0600), 0);
        struct diag d;
        diag_init(&d);
        char *buf;
        size_t len;
        cr_expect_eq(fs_read_capped(path, 100, &buf, &len, &d), -EINVAL);
        cr_assert_eq(d.n_errors, 1);
        cr_expect(strstr(d.head->text, "fifo: error: not a regular file (a FIFO or a socket "
                                       "may never end); expected a file"),
                  "got: %s", d.head->text);
        diag_fini(&d);
        unlink(path);
        rmdir(fdir);
}

Test(fsutil, read_errors_are_located)
{
        struct diag d;
        diag_init(&d);
        char *buf;
        size_t len;
        /* A directory is refused before any read. */
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

/* The temporary names of old (NAME.tmp.PID for .npy outputs,
 * .NAME.tmp.PID for sweep files) were predictable: a symlink planted at
 * either redirected the write onto its target. mkstemp's names are not,
 * and O_EXCL never follows a link: the planted links and their target are
 * left alone. */
Test(fsutil, a_symlink_planted_at_the_old_temporary_name_is_not_followed)
{
        make_dir();
        char path[256], victim[256], old_npy[300], old_sweep[300];
        snprintf(path, sizeof path, "%s/out", dir);
        snprintf(victim, sizeof victim, "%s/victim", dir);
        snprintf(old_npy, sizeof old_npy, "%s/out.tmp.%ld", dir, (long)getpid());
        snprintf(old_sweep, sizeof old_sweep, "%s/.out.tmp.%ld", dir, (long)getpid());
        write_text(victim, "keep");
        cr_assert_eq(symlink(victim, old_npy), 0);
        cr_assert_eq(symlink(victim, old_sweep), 0);
        cr_assert_eq(fs_write_atomic(path, "new", 3), 0);
        char *buf;
        size_t len;
        cr_assert_eq(fs_read_capped(victim, 100, &buf, &len, NULL), 0);
        cr_expect_str_eq(buf, "keep", "the write went through a planted link");
        free(buf);
        cr_assert_eq(fs_read_capped(path, 100, &buf, &len, NULL), 0);
        cr_expect_str_eq(buf, "new");
        free(buf);
        struct stat st;
        cr_expect(lstat(old_npy, &st) == 0 && S_ISLNK(st.st_mode), "the planted link was replaced");
        cr_expect(lstat(old_sweep, &st) == 0 && S_ISLNK(st.st_mode), "the planted link was replaced");
        unlink(old_npy);
        unlink(old_sweep);
        unlink(path);
        unlink(victim);
        cr_expect_eq(rmdir(dir), 0, "a temporary file was left");
}
