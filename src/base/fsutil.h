/* base/fsutil.h: the two ways cubesim touches whole files: reading one
 * with a size cap (and parsing it), and replacing one atomically.
 *
 * An atomic write goes to a temporary file made with mkstemp beside the
 * target (DIR/.NAME.tmp.XXXXXX: same file system, so the rename is
 * atomic; created with O_EXCL, so a symlink planted at a temporary name is
 * never followed), is flushed with fsync, and is renamed over the target
 * (which replaces a symlink at the target rather than writing through it).
 * A reader sees the old file or the whole new one; after a failure the
 * old file is intact and no temporary file is left. The new file's mode
 * is 0666 less the umask, as for any created file. */
#ifndef CUBESIM_BASE_FSUTIL_H
#define CUBESIM_BASE_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/diag.h"

/* Read path into *out (malloc'd, NUL-terminated; *len bytes before the
 * NUL), but never more than max_bytes + 1 bytes: *len > max_bytes tells
 * the caller the file is too big, and its parser says so in its own
 * words. A FIFO or a socket is refused (-EINVAL): its read may never end
 * (a device is read up to the cap); a directory too (-EISDIR). Problems
 * go to d (if not NULL) located at path: "cannot open", "cannot read" (a
 * read error seen with ferror, or a directory), "not a regular file",
 * "out of memory". 0 or a negative errno. */
int fs_read_capped(const char *path, size_t max_bytes, char **out, size_t *len,
                   struct diag *d);

/* Read f to its end as fs_read_capped reads a file (path names it in
 * messages); f stays open. 0 or a negative errno. */
int fs_read_stream(FILE *f, const char *path, size_t max_bytes, char **out, size_t *len,
                   struct diag *d);

/* Read path as fs_read_capped does, then hand its text to parse (with
 * ctx, and path to locate messages) and free it: parse's result, or
 * -EINVAL if the file could not be read (the problem is in d). For the
 * loaders of whole files: a topology, a sweep spec. */
int fs_parse_file(const char *path, size_t max_bytes,
                  int (*parse)(const char *path, const char *text, size_t len, void *ctx,
                               struct diag *d),
                  void *ctx, struct diag *d);

/* An atomic write in progress. */
struct fs_atomic {
        const char *path;            /* the target (borrowed) */
        char *tmp;                   /* the temporary file's name (malloc'd), or NULL */
        int fd;                      /* the temporary file, or -1 */
        int err;                     /* first error as a negative errno; 0: none (sticky) */
        const char *failed;          /* what failed: "create", "write", "sync", "rename", ... */
};

/* Start replacing path. 0 or a negative errno (then a->failed says what). */
int fs_atomic_begin(struct fs_atomic *a, const char *path);
/* Append len bytes; after an error, does nothing and returns it again. */
int fs_atomic_write(struct fs_atomic *a, const void *data, size_t len);
/* Flush, close and rename over the target; on any error (this one or an
 * earlier one) remove the temporary file instead. Frees a's resources in
 * every case. 0 or a negative errno (a->failed says what). */
int fs_atomic_commit(struct fs_atomic *a);
/* Without the fsync: close the temporary file (unless its descriptor was
 * handed on, a->fd = -1) and rename it over the target if keep and no
 * error was seen, else remove it and leave the target as it was. For a
 * stream written through its own FILE (closed first by its owner), and
 * for a run rejected after its outputs were opened (keep false). 0 or a
 * negative errno. */
int fs_atomic_end(struct fs_atomic *a, bool keep);
/* Replace path with len bytes of data at once: begin, write, commit. */
int fs_write_atomic(const char *path, const void *data, size_t len);

/* Make directory dir and its missing parents (mode 0755 less the umask).
 * 0, or a negative errno (-ENOTDIR: dir is there but not a directory). */
int fs_mkdir_p(const char *dir);

#endif
