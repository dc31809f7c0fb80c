/* report/oplog.c: the op_log writer (format in oplog.h, rationale in
 * docs/adr/0004). A record goes byte by byte straight into a 1 MiB stdio
 * buffer with putc_unlocked: no printf format parsing, no allocation, one
 * write(2) per MiB. Integers are formatted here (decimal, two digits per
 * step); strings are escaped as they are copied.
 *
 * Write errors are sticky: the first errno is kept, later records are
 * dropped (the file is already incomplete), close returns it as -errno. */
#include "report/oplog.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/jsonw.h"
#include "base/util.h"

enum { OUT_BUF_BYTES = 1 << 20 };   /* stdio buffer of a file we open */

static const char digit_pairs[201] =
        "00010203040506070809101112131415161718192021222324252627282930313233"
        "34353637383940414243444546474849505152535455565758596061626364656667"
        "6869707172737475767778798081828384858687888990919293949596979899";

/* Write v in decimal ending just before end; returns the first digit. */
static char *format_u64(char *end, uint64_t v)
{
        char *p = end;
        while (v >= 100) {
                unsigned d = (unsigned)(v % 100) * 2;
                v /= 100;
                *--p = digit_pairs[d + 1];
                *--p = digit_pairs[d];
        }
        if (v >= 10) {
                unsigned d = (unsigned)v * 2;
                *--p = digit_pairs[d + 1];
                *--p = digit_pairs[d];
        } else {
                *--p = (char)('0' + v);
        }
        return p;
}

void rep__put_u64(FILE *f, uint64_t v)
{
        char b[20];
        char *p = format_u64(b + sizeof b, v);
        rep__put_bytes(f, p, (size_t)(b + sizeof b - p));
}

void rep__put_i64(FILE *f, int64_t v)
{
        char b[21];
        /* Negate in unsigned arithmetic: INT64_MIN has no positive twin. */
        uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        char *p = format_u64(b + sizeof b, mag);
        if (v < 0)
                *--p = '-';
        rep__put_bytes(f, p, (size_t)(b + sizeof b - p));
}

void rep__put_params(FILE *f, const struct rep_param *p, unsigned n, bool after_member)
{
        for (unsigned i = 0; i < n; i++) {
                if (i > 0 || after_member)
                        putc_unlocked(',', f);
                jsonw_put_string(f, p[i].name);
                putc_unlocked(':', f);
                if (p[i].kind == REP_STR)
                        jsonw_put_string(f, p[i].s);
                else
                        rep__put_i64(f, p[i].i);
        }
}

void rep__note_error(FILE *f, int *err)
{
        if (unlikely(ferror_unlocked(f)) && *err == 0)
                *err = errno ? errno : EIO;
}

/* A ".gz" output: a stdio stream whose bytes zlib compresses on their
 * way to the file (gzip format), so the writers stay byte-at-a-time into
 * a stdio buffer and the file is streamed, never held. */
static ssize_t gz_write(void *cookie, const char *b, size_t n)
{
        if (n == 0)
                return 0;
        int w = gzwrite(cookie, b, (unsigned)(n > (1u << 30) ? 1u << 30 : n));
        if (w <= 0) {
                int zerr;
                gzerror(cookie, &zerr);
                if (zerr != Z_ERRNO || errno == 0)
                        errno = EIO;
                return -1;
        }
        return w;
}

static int gz_close(void *cookie)
{
        errno = 0;
        int rc = gzclose(cookie);
        if (rc == Z_OK)
                return 0;
        if (rc != Z_ERRNO || errno == 0)
                errno = EIO;
        return EOF;
}

/* A stream on fd (which it owns from here: closed on failure too), gzip
 * if gz. NULL with errno on failure. */
static FILE *fd_stream(int fd, bool gz)
{
        if (!gz) {
                FILE *fp = fdopen(fd, "w");
                if (!fp)
                        close(fd);
                return fp;
        }
        gzFile z = gzdopen(fd, "wb1");
        if (!z) {
                close(fd);
                errno = ENOMEM;
                return NULL;
        }
        gzbuffer(z, 1 << 17);
        FILE *fp = fopencookie(z, "w", (cookie_io_functions_t){ .write = gz_write,
                                                                .close = gz_close });
        if (!fp) {
                int e = errno;
                gzclose(z);
                errno = e ? e : ENOMEM;
        }
        return fp;
}

/* A regular file (or a new one) is written as a temporary file beside it
 * and renamed over it at close (fs_atomic_*): a run rejected after its
 * outputs were opened, or one whose writes failed, leaves the old file as
 * it was. A device or a FIFO already there (/dev/null, a pipe) is written
 * in place: there is nothing to replace. */
static FILE *open_target(const char *path, bool gz, struct fs_atomic *at)
{
        struct stat st;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
                return fd < 0 ? NULL : fd_stream(fd, gz);
        }
        if (fs_atomic_begin(at, path) < 0) {
                errno = -at->err;
                fs_atomic_end(at, false);
                return NULL;
        }
        int fd = at->fd;
        at->fd = -1;          /* the stream owns it from here */
        FILE *fp = fd_stream(fd, gz);
        if (!fp) {
                int e = errno;
                fs_atomic_end(at, false);
                errno = e;
        }
        return fp;
}

int rep__out_open(const char *path, FILE **f, bool *owned, char **buf, struct fs_atomic *at)
{
        *f = NULL;
        *owned = false;
        *buf = NULL;
        *at = (struct fs_atomic){ .fd = -1 };
        if (strcmp(path, "-") == 0) {
                /* stdout keeps the buffering its owner chose: setvbuf is
                 * only valid before its first use, and a buffer we free at
                 * close must not outlive us inside stdout. */
                *f = stdout;
                return 0;
        }
        size_t len = strlen(path);
        FILE *fp = open_target(path, len > 3 && strcmp(path + len - 3, ".gz") == 0, at);
        if (!fp)
                return -errno;
        /* Without a buffer of ours glibc ignores the size and uses
         * st_blksize (4 KiB); failing to get one only costs speed. */
        char *b = malloc(OUT_BUF_BYTES);
        if (b && setvbuf(fp, b, _IOFBF, OUT_BUF_BYTES) != 0) {
                free(b);
                b = NULL;
        }
        *f = fp;
        *owned = true;
        *buf = b;
        return 0;
}

int rep__out_close(FILE *f, bool owned, char *buf, int err, struct fs_atomic *at, bool keep)
{
        if (!f)
                return -err;
        errno = 0;
        if (fflush(f) != 0 && err == 0)
                err = errno ? errno : EIO;
        rep__note_error(f, &err);
        if (owned) {
                errno = 0;
                if (fclose(f) != 0 && err == 0)
                        err = errno ? errno : EIO;
        }
        free(buf);
        if (at->tmp) {
                if (err)
                        at->err = -err;
                /* Renaming over an existing file makes ext4 (auto_da_alloc)
                 * write the new one out before rename returns: seconds for a
                 * trace of gigabytes. Removing the old one first costs a
                 * moment in which neither is there; a failed or rejected run
                 * still leaves the old file as it was. */
                if (keep && !err)
                        unlink(at->path);
                int e = fs_atomic_end(at, keep);
                if (e < 0 && err == 0)
                        err = -e;
        }
        return -err;
}

int rep_oplog_open(struct rep_oplog *o, const char *path)
{
        memset(o, 0, sizeof *o);
        return rep__out_open(path, &o->f, &o->owned, &o->buf, &o->at);
}

void rep_oplog_write(struct rep_oplog *o, const struct rep_op *op)
{
        FILE *f = o->f;
        if (unlikely(o->err != 0))
                return;
        REP__PUT_KEY_STR(f, "{\"pe\":", op->pe);
        REP__PUT_KEY_STR(f, ",\"component\":", op->component);
        REP__PUT_KEY_STR(f, ",\"op\":", op->op);
        REP__PUT_KEY_U64(f, ",\"start_ps\":", op->start_ps);
        REP__PUT_KEY_U64(f, ",\"end_ps\":", op->end_ps);
        REP__PUT_KEY_U64(f, ",\"bytes\":", op->bytes);
        REP__PUT_KEY_U64(f, ",\"flops\":", op->flops);
        REP__PUT_LIT(f, ",\"params\":{");
        rep__put_params(f, op->params, op->n_params, false);
        REP__PUT_LIT(f, "}}\n");
        o->n_records++;
        rep__note_error(f, &o->err);
}

int rep_oplog_close(struct rep_oplog *o)
{
        int rc = rep__out_close(o->f, o->owned, o->buf, o->err, &o->at, !o->discard);
        o->f = NULL;
        o->owned = false;
        o->buf = NULL;
        o->err = -rc;
        return rc;
}
