/* base/sigsafe.h: building and writing a message inside a signal handler
 * (the coroutine overflow report, the run watchdog): async-signal-safe,
 * no stdio, no allocation. A message is a fixed buffer filled at *n up to
 * cap, then written whole. */
#ifndef CUBESIM_BASE_SIGSAFE_H
#define CUBESIM_BASE_SIGSAFE_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

/* Append s (NULL: nothing), truncating at cap. */
static inline void sigsafe_put(char *buf, size_t *n, size_t cap, const char *s)
{
        while (s && *s && *n < cap)
                buf[(*n)++] = *s++;
}

/* Append v in decimal. */
static inline void sigsafe_put_u(char *buf, size_t *n, size_t cap, unsigned long long v)
{
        char digits[24];
        size_t k = 0;
        do {
                digits[k++] = (char)('0' + v % 10);
                v /= 10;
        } while (v);
        while (k && *n < cap)
                buf[(*n)++] = digits[--k];
}

/* Write buf[0..n) to fd, through interruptions; gives up on an error. */
static inline void sigsafe_write(int fd, const char *buf, size_t n)
{
        for (size_t off = 0; off < n;) {
                ssize_t w = write(fd, buf + off, n - off);
                if (w <= 0 && errno != EINTR)
                        break;
                if (w > 0)
                        off += (size_t)w;
        }
}

#endif
