/* tests/unit/test_jsonw.c: the one JSON writer: strings escaped and made
 * UTF-8, non-finite numbers as null, every document parseable. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonw.h"

/* v printed by jsonw_print (indent), parsed back; the parsed value. */
static json_t *round_trip(json_t *v, int indent)
{
        char *buf = NULL;
        size_t n = 0;
        FILE *m = open_memstream(&buf, &n);
        cr_assert_eq(jsonw_print(m, v, indent), 0);
        fclose(m);
        cr_assert(n > 0 && buf[n - 1] == '\n', "no newline at the end: %s", buf);
        json_error_t e;
        json_t *back = json_loads(buf, 0, &e);
        cr_assert(back, "invalid JSON (%s): %s", e.text, buf);
        free(buf);
        return back;
}

Test(jsonw, non_finite_numbers_are_null)
{
        json_t *o = json_object();
        json_object_set_new(o, "inf", jsonw_real(INFINITY));
        json_object_set_new(o, "ninf", jsonw_fixed(-INFINITY, 2));
        json_object_set_new(o, "nan", jsonw_real(NAN));
        json_object_set_new(o, "big", jsonw_fixed(1e300, 2));
        json_object_set_new(o, "x", jsonw_fixed(12.3456, 2));
        json_t *back = round_trip(o, 0);
        cr_assert(json_is_null(json_object_get(back, "inf")));
        cr_assert(json_is_null(json_object_get(back, "ninf")));
        cr_assert(json_is_null(json_object_get(back, "nan")));
        cr_assert_float_eq(json_real_value(json_object_get(back, "big")), 1e300, 1e285);
        cr_assert_float_eq(json_real_value(json_object_get(back, "x")), 12.35, 1e-12);
        json_decref(back);
}

Test(jsonw, hostile_strings_survive)
{
        static const char *const s[] = { "a\"b\\c\nd\te\x01", "/tmp/o\"ut\\dir\nx",
                                         "\xff\xfe bad \xc3", "\xed\xa0\x80 surrogate",
                                         "caf\xc3\xa9 \xe2\x82\xac", "" };
        json_t *a = json_array();
        for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
                json_array_append_new(a, jsonw_string(s[i]));
        json_array_append_new(a, jsonw_string(NULL));
        json_t *back = round_trip(a, 2);
        cr_assert_eq(json_array_size(back), 7);
        cr_assert_str_eq(json_string_value(json_array_get(back, 0)), s[0]);
        cr_assert_str_eq(json_string_value(json_array_get(back, 1)), s[1]);
        cr_assert_str_eq(json_string_value(json_array_get(back, 2)),
                         "\xef\xbf\xbd\xef\xbf\xbd bad \xef\xbf\xbd");
        cr_assert_str_eq(json_string_value(json_array_get(back, 4)), s[4]);
        cr_assert(json_is_null(json_array_get(back, 6)));
        json_decref(back);
}

Test(jsonw, a_value_that_could_not_be_built_is_an_error)
{
        cr_assert_eq(jsonw_print(stdout, NULL, 0), -1);
}

/* What f writes into a string (freed by the caller). */
static char *printed(int (*f)(FILE *, void *), void *ctx)
{
        char *buf = NULL;
        size_t n = 0;
        FILE *m = open_memstream(&buf, &n);
        cr_assert_eq(f(m, ctx), 0);
        fclose(m);
        return buf;
}

/* The member the pieces write, as jansson values. */
static json_t *member(void)
{
        json_t *o = json_object(), *a = json_array(), *e = json_object();
        json_object_set_new(o, "n", json_integer(-9223372036854775807LL - 1));
        json_object_set_new(o, "z", json_integer(0));
        json_object_set_new(o, "esc", jsonw_string("a\"b\\c\b\f\n\r\t\x01\x1f/\xc3\xa9"));
        json_object_set_new(o, "bad", jsonw_string("x\xff" "y"));
        json_object_set_new(o, "null", json_null());
        json_object_set_new(o, "empty_o", json_object());
        json_object_set_new(o, "empty_a", json_array());
        json_array_append_new(a, json_integer(7));
        json_object_set_new(e, "k", json_string("v"));
        json_array_append_new(a, e);
        json_object_set_new(o, "a", a);
        return o;
}

static void put_member(struct jsonw_out *o, const void *ctx)
{
        (void)ctx;
        jsonw_out_open(o, NULL, '{');
        jsonw_out_int(o, "n", -9223372036854775807LL - 1);
        jsonw_out_int(o, "z", 0);
        jsonw_out_str(o, "esc", "a\"b\\c\b\f\n\r\t\x01\x1f/\xc3\xa9");
        jsonw_out_str(o, "bad", "x\xff" "y");
        jsonw_out_str(o, "null", NULL);
        jsonw_out_open(o, "empty_o", '{');
        jsonw_out_close(o, '}');
        jsonw_out_open(o, "empty_a", '[');
        jsonw_out_close(o, ']');
        jsonw_out_open(o, "a", '[');
        jsonw_out_int(o, NULL, 7);
        jsonw_out_open(o, NULL, '{');
        jsonw_out_str(o, "k", "v");
        jsonw_out_close(o, '}');
        jsonw_out_close(o, ']');
        jsonw_out_close(o, '}');
}

static json_t *doc(void)
{
        json_t *d = json_object();
        json_object_set_new(d, "first", json_integer(1));
        json_object_set_new(d, "s", json_string("t"));
        return d;
}

static int print_whole(FILE *f, void *ctx)
{
        (void)ctx;
        json_t *d = doc();
        json_object_set_new(d, "m", member());
        return jsonw_print(f, d, 2);
}

static int print_with(FILE *f, void *ctx)
{
        (void)ctx;
        return jsonw_print_with(f, doc(), 2, "m", put_member, NULL);
}

Test(jsonw, a_member_in_pieces_prints_as_jansson_values_do)
{
        char *whole = printed(print_whole, NULL), *pieces = printed(print_with, NULL);
        cr_assert_str_eq(pieces, whole);
        free(whole);
        free(pieces);
}

Test(jsonw, a_member_in_pieces_needs_an_indented_object)
{
        cr_assert_eq(jsonw_print_with(stdout, json_array(), 2, "m", put_member, NULL), -1);
        cr_assert_eq(jsonw_print_with(stdout, json_object(), 2, "m", put_member, NULL), -1);
        cr_assert_eq(jsonw_print_with(stdout, doc(), 0, "m", put_member, NULL), -1);
        cr_assert_eq(jsonw_print_with(stdout, NULL, 2, "m", put_member, NULL), -1);
}
