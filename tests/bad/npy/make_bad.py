#!/usr/bin/env python3
"""tests/bad/npy/make_bad.py: regenerate the bad .npy corpus. Standard
library only. Each case is NAME.npy plus NAME.npy.expect: one substring per
line that the reader's messages must contain (tests/unit/test_npy.c reads
every file through npy_read, npy_read_header and npy_parse). A .expect with
no .npy (missing.npy.expect) is a file that does not exist.

Columns count bytes of the header dict from 1; col() finds them from the
offending token so the case and its expectation cannot drift apart."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC = b"\x93NUMPY"
GOOD = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
DATA = bytes(24)                         # 2 x 3 float32 zeros


def header(text, version=1, hlen=None):
    """Preamble and a header padded with spaces to 64 bytes, '\\n' last."""
    h = text.encode("latin-1") if isinstance(text, str) else text
    pre = 10 if version == 1 else 12
    h += b" " * ((64 - (pre + len(h) + 1) % 64) % 64) + b"\n"
    n = len(h) if hlen is None else hlen
    size = struct.pack("<H" if version == 1 else "<I", n)
    return MAGIC + bytes([version, 0]) + size + h


def col(text, token, nth=1):
    i = -1
    for _ in range(nth):
        i = text.index(token, i + 1)
    return i + 1


CASES = []


def case(name, content, *expect):
    CASES.append((name, content, expect))


def hcase(name, text, message_fn, data=DATA):
    """A case whose header is text; message_fn(text) gives the expectations,
    to which the "NAME.npy: error: " prefix is added where they lack it."""
    prefix = name + ".npy: error: "
    case(name, header(text) + data,
         *[m if m.startswith(prefix) else prefix + m for m in message_fn(text)])


def at(token, what, nth=1):
    return lambda t: ["header column %d: %s" % (col(t, token, nth), what)]


def main():
    case("empty", b"", "empty.npy: error: empty file, not a .npy file")
    case("bad_magic", b"hello, this is not numpy\n",
         "bad_magic.npy: error: not a .npy file: it does not start with \"\\x93NUMPY\"")
    case("npz", b"PK\x03\x04" + bytes(60),
         "npz.npy: error: not a .npy file: this is a zip archive (an .npz?)")
    case("short_preamble", MAGIC + b"\x01",
         "short_preamble.npy: error: truncated: 7 bytes, shorter than the .npy preamble")
    case("short_v2_preamble", MAGIC + b"\x02\x00\x40\x00",
         "short_v2_preamble.npy: error: truncated: 10 bytes, shorter than the .npy preamble")
    case("version_4", MAGIC + b"\x04\x00" + bytes(60),
         "version_4.npy: error: unsupported .npy format version 4.0 (supported: 1.0, 2.0, 3.0)")
    case("version_1_1", MAGIC + b"\x01\x01" + bytes(60),
         "version_1_1.npy: error: unsupported .npy format version 1.1")
    case("header_too_long", MAGIC + b"\x02\x00" + struct.pack("<I", 0xFFFFFFF0) + bytes(64),
         "header_too_long.npy: error: header length 4294967280 exceeds the limit of 10000 bytes")
    case("header_truncated", header(GOOD)[:50],
         "header_truncated.npy: error: truncated header: 40 bytes, expected 118")
    case("empty_header", MAGIC + b"\x01\x00\x00\x00" + DATA,
         "empty_header.npy: error: header column 1: expected '{' opening the header dict, "
         "got the end of the header")

    hcase("not_a_dict", "[1, 2]", at("[", "expected '{' opening the header dict, got '['"))
    hcase("unknown_key", "{'descr': '<f4', 'fortran_order': False, 'shap': (2, 3), }",
          at("'shap'", "unknown key 'shap' (did you mean 'shape'?)"))
    hcase("extra_key",
          "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'order': 'C'}",
          at("'order'", "unknown key 'order' (the keys are 'descr', 'fortran_order' "
             "and 'shape')"))
    hcase("missing_shape", "{'descr': '<f4', 'fortran_order': False, }",
          lambda t: ["missing_shape.npy: error: the header lacks the key 'shape'"])
    hcase("duplicate_key", "{'descr': '<f4', 'fortran_order': False, 'descr': '<f4', }",
          at("'descr'", "duplicate key 'descr'", 2))
    hcase("fortran", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
          at("True", "Fortran order is not supported; save with np.ascontiguousarray"))
    hcase("fortran_not_bool", "{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }",
          at("0", "expected True or False for 'fortran_order', got '0'"))
    hcase("fortran_lowercase", "{'descr': '<f4', 'fortran_order': false, 'shape': (2, 3), }",
          at("false", "expected True or False for 'fortran_order', got 'f'"))
    hcase("dtype_int", "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
          at("'<i4'", "dtype '<i4' is not supported (supported: '<f4', '<f2', "
             "'<u2' (bfloat16 bits), 'bfloat16', '<f8')"))
    hcase("big_endian", "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }",
          at("'>f4'", "big-endian dtype '>f4' is not supported; save with arr.astype('<f4')"))
    hcase("big_endian_u2", "{'descr': '>u2', 'fortran_order': False, 'shape': (2, 3), }",
          at("'>u2'", "big-endian dtype '>u2' is not supported"), data=bytes(12))
    hcase("structured", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
          at("[", "structured dtypes (a list descr) are not supported"))
    hcase("subarray", "{'descr': ('<f4', (2,)), 'fortran_order': False, 'shape': (2,), }",
          at("(", "subarray dtypes (a tuple descr) are not supported"))
    hcase("shape_list", "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }",
          at("[", "the shape must be a tuple such as (2, 3), not a list"))
    hcase("shape_int", "{'descr': '<f4', 'fortran_order': False, 'shape': 6, }",
          at("6", "expected a tuple such as (2, 3) for 'shape', got '6'"))
    hcase("shape_no_comma", "{'descr': '<f4', 'fortran_order': False, 'shape': (6), }",
          at("(", "a shape of one extent is a tuple with a trailing comma, like (6,)"))
    hcase("shape_float", "{'descr': '<f4', 'fortran_order': False, 'shape': (2.0, 3), }",
          at(".", "expected ',' or ')' after an integer extent, got '.'"))
    hcase("shape_two_commas", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,, 3), }",
          at(", 3", "expected an integer extent, got ','"))
    hcase("extent_overflow",
          "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
          at("9999", "extent 99999999999999999999 overflows int64"))
    hcase("negative_extent", "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }",
          at("-1", "negative extent -1"))
    hcase("leading_zeros", "{'descr': '<f4', 'fortran_order': False, 'shape': (02, 3), }",
          at("02", "leading zeros in an integer"))
    hcase("product_overflow",
          "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }",
          lambda t: ["product_overflow.npy: error: the shape's element count overflows 64 bits"])
    hcase("too_big", "{'descr': '<f4', 'fortran_order': False, 'shape': (1073741825,), }",
          lambda t: ["too_big.npy: error: 1073741825 elements of float32 exceed the 4 GiB "
                     "limit on array data"])
    hcase("too_many_dims",
          "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1), }",
          at("(", "5 dimensions; at most 4 are supported"), data=bytes(4))
    hcase("truncated", GOOD, lambda t: ["truncated.npy: error: truncated: 8 bytes of data, "
                                        "expected 24"], data=bytes(8))
    hcase("truncated_f2", GOOD.replace("<f4", "<f2"),
          lambda t: ["truncated_f2.npy: error: truncated: 11 bytes of data, expected 12"],
          data=bytes(11))
    hcase("trailing", GOOD, lambda t: ["trailing.npy: error: trailing garbage: 28 bytes of "
                                       "data, expected 24"], data=bytes(28))
    hcase("unterminated_string", "{'descr': '<f4",
          at("'<f4", "unterminated string"))
    hcase("escape", "{'de\\x73cr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
          at("\\", "escape sequences are not supported in the header"))
    hcase("non_ascii", b"{'descr': '<f4\xe9', 'fortran_order': False, 'shape': (2, 3), }",
          lambda t: ["header column %d: byte 0xe9 in a string: the header must be "
                     "printable ASCII" % (t.index(b"\xe9") + 1)])
    hcase("nul_byte", b"{'descr': '<f4',\0'fortran_order': False, 'shape': (2, 3), }",
          lambda t: ["header column %d: expected a quoted key or '}', got byte 0x00"
                     % (t.index(b"\0") + 1)])
    hcase("after_dict", GOOD + " x", at("x", "unexpected 'x' after the closing '}'"))
    hcase("missing_colon", "{'descr' '<f4', 'fortran_order': False, 'shape': (2, 3), }",
          at("'<f4'", "expected ':' after the key, got \"'\""))
    hcase("key_not_string", "{descr: '<f4', 'fortran_order': False, 'shape': (2, 3), }",
          at("descr", "expected a quoted key or '}', got 'd'"))
    hcase("missing_close", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)",
          lambda t: ["header column %d: expected ',' or '}' after a value, got the end of "
                     "the header" % (len(header(t)) - 10 + 1)])
    hcase("descr_not_string", "{'descr': 4, 'fortran_order': False, 'shape': (2, 3), }",
          at("4", "expected a quoted string, got '4'"))
    hcase("shape_missing_comma", "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }",
          at("3)", "expected ',' or ')' in the shape, got '3'"))
    hcase("long_key", "{'" + "k" * 50 + "': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
          at("'k", "unknown key '" + "k" * 40 + "...' (the keys are"))
    hcase("dtype_with_quote", "{'descr': \"<f'4\", 'fortran_order': False, 'shape': (2, 3), }",
          at("\"", "dtype '<f\\x274' is not supported"))
    hcase("two_errors", "{'descr': '<i8', 'fortran_order': True, 'shape': (2, 3), }",
          lambda t: ["header column %d: dtype '<i8' is not supported" % col(t, "'<i8'"),
                     "header column %d: Fortran order is not supported" % col(t, "True")])

    for name, content, expect in CASES:
        with open(os.path.join(HERE, name + ".npy"), "wb") as f:
            f.write(content)
        with open(os.path.join(HERE, name + ".npy.expect"), "w") as f:
            f.write("".join(e + "\n" for e in expect))
    with open(os.path.join(HERE, "missing.npy.expect"), "w") as f:
        f.write("missing.npy: error: cannot open: No such file or directory\n")


if __name__ == "__main__":
    main()
