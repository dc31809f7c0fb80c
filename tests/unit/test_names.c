/* tests/unit/test_names.c: the rule for names that become file names
 * (base/names.h), and the messages that say which byte breaks it. */
#include <criterion/criterion.h>

#include <string.h>

#include "base/names.h"

Test(names, accepted)
{
        const char *ok[] = { "x", "q_scale", "out.v2", "k-cache", "_t", "0", "A9" };
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
                cr_assert(name_ok(ok[i], NULL, 0), "%s", ok[i]);
        char max[NAME_MAX_LEN + 1];
        memset(max, 'a', NAME_MAX_LEN);
        max[NAME_MAX_LEN] = '\0';
        cr_assert(name_ok(max, NULL, 0));
}

static void rejected(const char *s, const char *why)
{
        char buf[256] = "unset";
        cr_assert(!name_ok(s, buf, sizeof buf), "%s accepted", s ? s : "NULL");
        cr_assert_str_eq(buf, why);
}

Test(names, rejected_with_the_reason)
{
        rejected("../escaped", "'../escaped' starts with '.'");
        rejected(".", "'.' starts with '.'");
        rejected("..", "'..' starts with '.'");
        rejected("-o", "'-o' starts with '-'");
        rejected("a/b", "'a/b' has '/' at byte 2");
        rejected("two words", "'two words' has ' ' at byte 4");
        rejected("a\nb", "'a\\x0ab' has byte 0x0a at byte 2");
        rejected("\xc3\xa9", "'\\xc3\\xa9' has byte 0xc3 at byte 1");
        rejected("", "'' is empty");
        rejected(NULL, "(NULL) is empty");
        char long_name[NAME_MAX_LEN + 2];
        memset(long_name, 'a', NAME_MAX_LEN + 1);
        long_name[NAME_MAX_LEN + 1] = '\0';
        char buf[256];
        cr_assert(!name_ok(long_name, buf, sizeof buf));
        cr_assert(strstr(buf, "is 65 bytes long (at most 64)"), "%s", buf);
        cr_assert(!name_ok("a/b", NULL, 0)); /* no reason wanted */
}
