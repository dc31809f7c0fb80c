/* base/fsutil.c: see fsutil.h. */
#include "base/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fs_read_capped(const char *path, size_t max_bytes, char **out, size_t *len,
                   struct diag *d)
{
        *out = NULL;
        *len = 0;
        /* Non-blocking, so that opening a FIFO with no writer returns and
         * fstat can refuse it: a FIFO or a socket may never end. A device
         * is read like a file (up to the cap; /dev/null is empty). */
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
                int e = errno;
                if (fd >= 0)
                        close(fd);
                if (d)
                        diag_error_at(d, path, 0, 0, "cannot open: %s", strerror(e));
                return -e;
        }
        if (S_ISDIR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
                int e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
                close(fd);
                if (d && e == EISDIR)
                        diag_error_at(d, path, 0, 0, "cannot read: %s", strerror(e));
                else if (d)
                        diag_error_at(d, path, 0, 0, "not a regular file (a FIFO or a socket "
                                      "may never end); expected a file");
                return -e;
        }
        FILE *f = fcntl(fd, F_SETFL, O_RDONLY) == 0 ? fdopen(fd, "rb") : NULL;
        if (!f) {
                int e = errno;
                close(fd);
                if (d)
                        diag_error_at(d, path, 0, 0, "cannot open: %s", strerror(e));
                return -e;
        }
        int rc = fs_read_stream(f, path, max_bytes, out, len, d);
        fclose(f);
        return rc;
}

int fs_read_stream(FILE *f, const char *path, size_t max_bytes, char **out, size_t *len,
                   struct diag *d)
{
        *out = NULL;
        *len = 0;
        size_t cap = 64 << 10, n = 0;
        char *buf = malloc(cap + 1);
        int rc = 0;
        while (buf) {
                if (n > max_bytes)
                        break;
                if (n == cap) {
                        char *nb = realloc(buf, 2 * cap + 1);
                        if (!nb) {
                                free(buf);
                                buf = NULL;
                                break;
                        }
                        buf = nb;
                        cap *= 2;
                }
                size_t want = cap - n;
                if (want > max_bytes + 1 - n)
                        want = max_bytes + 1 - n;
                size_t got = fread(buf + n, 1, want, f);
                n += got;
                if (got == 0)
                        break;
        }
        if (!buf) {
                rc = -ENOMEM;
                if (d)
                        diag_error_at(d, path, 0, 0, "out of memory");
        } else if (ferror(f)) {
                rc = errno ? -errno : -EIO;
                if (d)
                        diag_error_at(d, path, 0, 0, "cannot read: %s", strerror(-rc));
        }
        if (rc < 0) {
                free(buf);
                return rc;
        }
        buf[n] = '\0';
        *out = buf;
        *len = n;
        return 0;
}

int fs_parse_file(const char *path, size_t max_bytes,
                  int (*parse)(const char *path, const char *text, size_t len, void *ctx,
                               struct diag *d),
                  void *ctx, struct diag *d)
{
        char *text;
        size_t len;
        if (fs_read_capped(path, max_bytes, &text, &len, d) < 0)
                return -EINVAL;
        int rc = parse(path, text, len, ctx, d);
        free(text);
        return rc;
}

static int fail(struct fs_atomic *a, const char *what)
{
        if (!a->err) {
                a->err = errno ? -errno : -EIO;
                a->failed = what;
        }
        return a->err;
}

int fs_atomic_begin(struct fs_atomic *a, const char *path)
{
        *a = (struct fs_atomic){ .path = path, .fd = -1 };
        const char *slash = strrchr(path, '/');
        size_t dir_len = slash ? (size_t)(slash - path + 1) : 0;
        size_t n = strlen(path) + sizeof "/..tmp.XXXXXX";
        a->tmp = malloc(n);
        if (!a->tmp) {
                errno = ENOMEM;
                return fail(a, "create");
        }
        snprintf(a->tmp, n, "%.*s.%s.tmp.XXXXXX", (int)dir_len, path, path + dir_len);
        a->fd = mkostemp(a->tmp, O_CLOEXEC);
        if (a->fd < 0) {
                free(a->tmp);
                a->tmp = NULL;
                return fail(a, "create");
        }
        mode_t mask = umask(0);
        umask(mask);
        if (fchmod(a->fd, 0666 & ~mask) < 0)
                return fail(a, "create");
        return 0;
}

int fs_atomic_write(struct fs_atomic *a, const void *data, size_t len)
{
        const char *p = data;
        while (len && !a->err) {
                ssize_t n = write(a->fd, p, len);
                if (n < 0) {
                        if (errno != EINTR)
                                fail(a, "write");
                        continue;
                }
                p += n;
                len -= (size_t)n;
        }
        return a->err;
}

int fs_atomic_end(struct fs_atomic *a, bool keep)
{
        if (a->fd >= 0) {
                if (close(a->fd) < 0)
                        fail(a, "close");
                a->fd = -1;
        }
        if (a->tmp) {
                if (keep && !a->err && rename(a->tmp, a->path) < 0)
                        fail(a, "rename");
                if (a->err || !keep)
                        unlink(a->tmp);
                free(a->tmp);
                a->tmp = NULL;
        }
        return a->err;
}

int fs_atomic_commit(struct fs_atomic *a)
{
        if (a->fd >= 0 && !a->err && fsync(a->fd) < 0)
                fail(a, "sync");
        return fs_atomic_end(a, true);
}

int fs_write_atomic(const char *path, const void *data, size_t len)
{
        struct fs_atomic a;
        fs_atomic_begin(&a, path);
        fs_atomic_write(&a, data, len);
        return fs_atomic_commit(&a);
}

int fs_mkdir_p(const char *dir)
{
        char buf[4096];
        snprintf(buf, sizeof buf, "%s", dir);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                return -errno;
        struct stat st;
        if (stat(buf, &st) < 0)
                return -errno;
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}
