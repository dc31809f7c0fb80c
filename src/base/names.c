/* base/names.c: the rule for names that become file names (names.h). */
#include "base/names.h"

#include <stdio.h>
#include <string.h>

static bool name_char(unsigned char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-' || c == '.';
}

/* s quoted into buf: printable ASCII as is, other bytes as \xHH, cut with
 * "..." past 80 bytes of s. */
static void quote(const char *s, char *buf, size_t len)
{
        size_t n = 0, i = 0;
        n += (size_t)snprintf(buf, len, "'");
        for (; s[i] && i < 80 && n < len; i++) {
                unsigned char c = (unsigned char)s[i];
                n += (size_t)snprintf(buf + n, len - n, c >= 0x20 && c < 0x7f ? "%c" : "\\x%02x",
                                      c);
        }
        if (n < len)
                snprintf(buf + n, len - n, "%s'", s[i] ? "..." : "");
}

bool name_ok(const char *s, char *why, size_t len)
{
        char problem[64] = "";
        size_t n = s ? strlen(s) : 0;
        if (!s || n == 0)
                snprintf(problem, sizeof problem, "is empty");
        else if (n > NAME_MAX_LEN)
                snprintf(problem, sizeof problem, "is %zu bytes long (at most %d)", n,
                         NAME_MAX_LEN);
        else if (s[0] == '.' || s[0] == '-')
                snprintf(problem, sizeof problem, "starts with '%c'", s[0]);
        else
                for (size_t i = 0; i < n && !problem[0]; i++) {
                        unsigned char c = (unsigned char)s[i];
                        if (name_char(c))
                                continue;
                        if (c >= 0x20 && c < 0x7f)
                                snprintf(problem, sizeof problem, "has '%c' at byte %zu", c, i + 1);
                        else
                                snprintf(problem, sizeof problem, "has byte 0x%02x at byte %zu",
                                         c, i + 1);
                }
        if (!problem[0])
                return true;
        if (why && len) {
                char q[4 * 80 + 8];
                if (s)
                        quote(s, q, sizeof q);
                else
                        snprintf(q, sizeof q, "(NULL)");
                snprintf(why, len, "%s %s", q, problem);
        }
        return false;
}
