/* tests/unit/test_report.c: the op_log and Chrome trace writers
 * (report/oplog.h, report/trace.h).
 *
 * The op_log is checked byte for byte against hand-written text (it is the
 * canonical form golden digests are taken of). The trace is checked both
 * as bytes (one small file) and as JSON through jansson; its ts and dur are
 * read back from the file's text, not from jansson's doubles, so an off-by
 * one picosecond shows. Write errors are provoked on /dev/full.
 *
 * The throughput benchmark runs only with CUBESIM_REPORT_BENCH=1, prints
 * records per CPU second (10 million each to /dev/null) and never fails on
 * timing:
 *     CUBESIM_REPORT_BENCH=1 build/test_report --filter report/bench_throughput */
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report/profile.h"

#include "base/fsutil.h"
#include "report/oplog.h"
#include "report/trace.h"

/* A fresh temporary file name (the file exists, empty). */
static char *tmp_path(void)
{
        const char *dir = getenv("TMPDIR");
        char *path = NULL;
        cr_assert(asprintf(&path, "%s/cubesim_report_XXXXXX", dir && *dir ? dir : "/tmp") > 0);
        int fd = mkstemp(path);
        cr_assert(fd >= 0, "mkstemp %s: %s", path, strerror(errno));
        close(fd);
        return path;
}

static char *read_all(const char *path)
{
        char *buf;
        size_t n;
        cr_assert_eq(fs_read_capped(path, 1u << 30, &buf, &n, NULL), 0, "cannot read %s", path);
        return buf;
}

static const struct rep_param load_params[] = {
        { .name = "tile", .kind = REP_INT, .i = 3 },
        { .name = "scope", .kind = REP_STR, .s = "k_tile" },
};

static const struct rep_op load_op = {
        .pe = "sip0.cube0.pe1", .pe_index = 1, .component = "pe_dma", .op = "load",
        .start_ps = 120000, .end_ps = 131000, .bytes = 4096, .flops = 0,
        .params = load_params, .n_params = 2,
};

/* Write ops to a fresh op_log and return its bytes. */
static char *oplog_of(const struct rep_op *ops, unsigned n)
{
        char *path = tmp_path();
        struct rep_oplog o;
        cr_assert_eq(rep_oplog_open(&o, path), 0);
        cr_assert(o.owned);
        for (unsigned i = 0; i < n; i++)
                rep_oplog_write(&o, &ops[i]);
        cr_assert_eq(o.n_records, n);
        cr_assert_eq(rep_oplog_close(&o), 0);
        char *text = read_all(path);
        unlink(path);
        free(path);
        return text;
}

/* The op_log of the n ops is the text want. */
static void expect_oplog(const struct rep_op *ops, unsigned n, const char *want)
{
        char *text = oplog_of(ops, n);
        cr_assert_str_eq(text, want);
        free(text);
}

Test(oplog, canonical_bytes)
{
        struct rep_op ops[3] = { load_op, load_op, load_op };
        ops[1].component = "pe_gemm";
        ops[1].op = "dot";
        ops[1].start_ps = 131000;
        ops[1].end_ps = 262072;
        ops[1].bytes = 0;
        ops[1].flops = 2097152;
        ops[1].params = NULL;
        ops[1].n_params = 0;
        ops[2].n_params = 1;
        expect_oplog(ops, 3,
                "{\"pe\":\"sip0.cube0.pe1\",\"component\":\"pe_dma\",\"op\":\"load\","
                "\"start_ps\":120000,\"end_ps\":131000,\"bytes\":4096,\"flops\":0,"
                "\"params\":{\"tile\":3,\"scope\":\"k_tile\"}}\n"
                "{\"pe\":\"sip0.cube0.pe1\",\"component\":\"pe_gemm\",\"op\":\"dot\","
                "\"start_ps\":131000,\"end_ps\":262072,\"bytes\":0,\"flops\":2097152,"
                "\"params\":{}}\n"
                "{\"pe\":\"sip0.cube0.pe1\",\"component\":\"pe_dma\",\"op\":\"load\","
                "\"start_ps\":120000,\"end_ps\":131000,\"bytes\":4096,\"flops\":0,"
                "\"params\":{\"tile\":3}}\n");
}

Test(oplog, escaping)
{
        const struct rep_param p[] = {
                { .name = "q\"k", .kind = REP_STR, .s = "a\"b\\c/d" },
                { .name = "ctl", .kind = REP_STR, .s = "\x01\t\n\r\x1f|\x7f" },
                { .name = "utf8", .kind = REP_STR, .s = "\xc3\xa9\xe2\x82\xac\xff" },
                { .name = "empty", .kind = REP_STR, .s = "" },
        };
        struct rep_op op = load_op;
        op.pe = "pe\\1";
        op.op = "\"quoted\"";
        op.params = p;
        op.n_params = 4;
        expect_oplog(&op, 1,
                "{\"pe\":\"pe\\\\1\",\"component\":\"pe_dma\",\"op\":\"\\\"quoted\\\"\","
                "\"start_ps\":120000,\"end_ps\":131000,\"bytes\":4096,\"flops\":0,"
                "\"params\":{\"q\\\"k\":\"a\\\"b\\\\c/d\","
                "\"ctl\":\"\\u0001\\u0009\\u000a\\u000d\\u001f|\x7f\","
                "\"utf8\":\"\xc3\xa9\xe2\x82\xac\xef\xbf\xbd\",\"empty\":\"\"}}\n");
}

Test(oplog, escaping_round_trips_through_jansson)
{
        char all[256];  /* bytes >= 0x80 that are not UTF-8 become U+FFFD: still JSON */
        for (int i = 1; i < 256; i++)
                all[i - 1] = (char)i;
        all[255] = '\0';
        char *buf = NULL;
        size_t n = 0;
        FILE *m = open_memstream(&buf, &n);
        jsonw_put_string(m, all);
        fclose(m);
        json_error_t e;
        json_t *v = json_loads(buf, JSON_DECODE_ANY, &e);
        cr_assert(v, "%s: %s", buf, e.text);
        cr_assert_eq(strncmp(json_string_value(v), all, 127), 0);
        cr_assert_eq(strncmp(json_string_value(v) + 127, "\xef\xbf\xbd", 3), 0);
        json_decref(v);
        free(buf);
}

Test(oplog, integer_extremes)
{
        const struct rep_param p[] = {
                { .name = "neg", .kind = REP_INT, .i = -1 },
                { .name = "min", .kind = REP_INT, .i = INT64_MIN },
                { .name = "max", .kind = REP_INT, .i = INT64_MAX },
                { .name = "zero", .kind = REP_INT, .i = 0 },
                { .name = "ten", .kind = REP_INT, .i = -10 },
        };
        struct rep_op op = load_op;
        op.start_ps = 0;
        op.end_ps = UINT64_MAX;
        op.bytes = 10000000000000000000ull;
        op.flops = 9;
        op.params = p;
        op.n_params = 5;
        expect_oplog(&op, 1,
                "{\"pe\":\"sip0.cube0.pe1\",\"component\":\"pe_dma\",\"op\":\"load\","
                "\"start_ps\":0,\"end_ps\":18446744073709551615,"
                "\"bytes\":10000000000000000000,\"flops\":9,"
                "\"params\":{\"neg\":-1,\"min\":-9223372036854775808,"
                "\"max\":9223372036854775807,\"zero\":0,\"ten\":-10}}\n");
}

Test(oplog, every_digit_count)
{
        /* 10^k - 1 and 10^k for each k: the two-digit formatter's edges. */
        uint64_t v = 1;
        for (int k = 0; k < 20; k++) {
                struct rep_op op = load_op;
                op.start_ps = v - 1;
                op.end_ps = v;
                op.n_params = 0;
                char want[256];
                snprintf(want, sizeof want,
                         "{\"pe\":\"sip0.cube0.pe1\",\"component\":\"pe_dma\",\"op\":\"load\","
                         "\"start_ps\":%" PRIu64 ",\"end_ps\":%" PRIu64
                         ",\"bytes\":4096,\"flops\":0,\"params\":{}}\n", v - 1, v);
                expect_oplog(&op, 1, want);
                if (k < 19)
                        v *= 10;
        }
}

Test(oplog, stdout_is_not_owned, .init = cr_redirect_stdout)
{
        struct rep_oplog o;
        cr_assert_eq(rep_oplog_open(&o, "-"), 0);
        cr_assert_eq(o.f, stdout);
        cr_assert(!o.owned);
        rep_oplog_write(&o, &load_op);
        cr_assert_eq(rep_oplog_close(&o), 0);
        /* stdout still open and usable after close. */
        cr_assert_geq(fputs("after\n", stdout), 0);
        fflush(stdout);
        cr_assert_stdout_eq_str(
                "{\"pe\":\"sip0.cube0.pe1\",\"component\":\"pe_dma\",\"op\":\"load\","
                "\"start_ps\":120000,\"end_ps\":131000,\"bytes\":4096,\"flops\":0,"
                "\"params\":{\"tile\":3,\"scope\":\"k_tile\"}}\n"
                "after\n");
}

Test(oplog, open_error)
{
        struct rep_oplog o;
        cr_assert_eq(rep_oplog_open(&o, "/nonexistent-dir/x.jsonl"), -ENOENT);
}

Test(oplog, full_device_at_close)
{
        struct rep_oplog o;
        cr_assert_eq(rep_oplog_open(&o, "/dev/full"), 0);
        rep_oplog_write(&o, &load_op);     /* stays in the buffer */
        cr_assert_eq(o.err, 0);
        cr_assert_eq(rep_oplog_close(&o), -ENOSPC);
}

Test(oplog, full_device_while_writing)
{
        struct rep_oplog o;
        cr_assert_eq(rep_oplog_open(&o, "/dev/full"), 0);
        /* ~170 bytes a record: 20000 records overflow the 1 MiB buffer. */
        for (int i = 0; i < 20000; i++)
                rep_oplog_write(&o, &load_op);
        cr_assert_eq(o.err, ENOSPC);
        cr_assert_lt(o.n_records, 20000u, "records after the error are dropped");
        cr_assert_eq(rep_oplog_close(&o), -ENOSPC);
}

/* ---- trace ---------------------------------------------------------- */

/* Parse "I.FFFFFF" (exactly 6 decimals) at s into picoseconds. */
static uint64_t us_text_to_ps(const char *s)
{
        char *end;
        uint64_t whole = strtoull(s, &end, 10);
        cr_assert_eq(*end, '.', "no decimal point in %.30s", s);
        for (int i = 1; i <= 6; i++)
                cr_assert(end[i] >= '0' && end[i] <= '9', "not 6 decimals: %.30s", s);
        cr_assert(end[7] == ',' || end[7] == '}', "more than 6 decimals: %.30s", s);
        return whole * 1000000 + strtoull(end + 1, NULL, 10);
}

/* The value text after "key": in line. */
static const char *field(const char *line, const char *key)
{
        char pat[32];
        snprintf(pat, sizeof pat, "\"%s\":", key);
        const char *p = strstr(line, pat);
        cr_assert(p, "no %s in %.80s", key, line);
        return p + strlen(pat);
}

Test(trace, small_file_bytes)
{
        char *path = tmp_path();
        struct rep_trace t;
        cr_assert_eq(rep_trace_open(&t, path, 2), 0);
        struct rep_op op = load_op;
        op.start_ps = 120000001;
        op.end_ps = 121000000;
        op.n_params = 1;
        rep_trace_op(&t, &op);
        cr_assert_eq(rep_trace_close(&t), 0);
        char *text = read_all(path);
        unlink(path);
        free(path);
        cr_assert_str_eq(text,
                "{\"traceEvents\":[\n"
                "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"sip0.cube0.pe1\"}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":1}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"thread_name\",\"args\":{\"name\":\"pe_cpu\"}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":0}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"pe_dma ch0\"}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":64}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"tid\":2,\"name\":\"thread_name\",\"args\":{\"name\":\"pe_gemm\"}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"tid\":2,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":128}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"tid\":3,\"name\":\"thread_name\",\"args\":{\"name\":\"pe_math\"}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"tid\":3,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":192}},\n"
                "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"load\",\"ts\":120.000001,\"dur\":0.999999,"
                "\"args\":{\"bytes\":4096,\"flops\":0,\"tile\":3}}\n"
                "],\"displayTimeUnit\":\"ns\"}\n");
        free(text);
}

Test(trace, empty_trace_is_valid_json)
{
        char *path = tmp_path();
        struct rep_trace t;
        cr_assert_eq(rep_trace_open(&t, path, 0), 0);
        cr_assert_eq(rep_trace_close(&t), 0);
        char *text = read_all(path);
        unlink(path);
        free(path);
        cr_assert_str_eq(text, "{\"traceEvents\":[],\"displayTimeUnit\":\"ns\"}\n");
        free(text);
}

enum { N_TRACE_OPS = 7 };

Test(trace, events_metadata_and_flows)
{
        /* PEs 0 and 5 of 8, every component, one unknown component; PE 5
         * appears more than once. */
        static const struct { uint32_t pe; const char *comp; const char *op;
                              sim_ps start, end; unsigned tid; } spec[N_TRACE_OPS] = {
                { 5, "pe_dma", "load", 120000001, 131000000, 1 },
                { 5, "pe_gemm", "dot", 131000000, 131000001, 2 },
                { 0, "pe_cpu", "send", 0, 999999, 0 },
                { 5, "pe_math", "exp", 18446744073709551000ull, 18446744073709551615ull, 3 },
                { 5, "pe_cpu", "recv", 2000000, 2000000, 0 },
                { 0, "pe_xyz", "odd", 1, 2, 4 },
                { 0, "pe_xyz", "odd", 3, 1000004, 4 },
        };
        const char *pe_names[8] = { [0] = "sip0.cube0.pe0", [5] = "sip0.cube1.pe\"5\"" };
        const struct rep_param params[] = {
                { .name = "tile", .kind = REP_INT, .i = -7 },
                { .name = "scope", .kind = REP_STR, .s = "k\ttile" },
        };
        struct rep_op ops[N_TRACE_OPS];
        struct rep_trace_ref ref[N_TRACE_OPS];
        char *path = tmp_path();
        struct rep_trace t;
        cr_assert_eq(rep_trace_open(&t, path, 8), 0);
        for (int i = 0; i < N_TRACE_OPS; i++) {
                ops[i] = (struct rep_op){
                        .pe = pe_names[spec[i].pe], .pe_index = spec[i].pe,
                        .component = spec[i].comp, .op = spec[i].op,
                        .start_ps = spec[i].start, .end_ps = spec[i].end,
                        .bytes = 64u * (unsigned)i, .flops = 1000u + (unsigned)i,
                        .params = params, .n_params = 2,
                };
                ref[i] = rep_trace_op(&t, &ops[i]);
                cr_assert(ref[i].ok);
        }
        rep_trace_flow(&t, 42, "ipcq", &ref[2], &ref[4]);
        cr_assert_eq(rep_trace_close(&t), 0);

        json_error_t e;
        json_t *root = json_load_file(path, 0, &e);
        cr_assert(root, "%s:%d: %s", path, e.line, e.text);
        cr_assert_str_eq(json_string_value(json_object_get(root, "displayTimeUnit")), "ns");
        json_t *evs = json_object_get(root, "traceEvents");
        cr_assert(json_is_array(evs));

        int process_name[8] = { 0 }, sort_index[8] = { 0 }, thread_name[8][5] = { { 0 } };
        int n_x = 0, n_s = 0, n_f = 0;
        size_t i;
        json_t *ev;
        json_array_foreach(evs, i, ev) {
                const char *ph = json_string_value(json_object_get(ev, "ph"));
                const char *name = json_string_value(json_object_get(ev, "name"));
                json_int_t pid = json_integer_value(json_object_get(ev, "pid"));
                json_int_t tid = json_integer_value(json_object_get(ev, "tid"));
                json_t *args = json_object_get(ev, "args");
                cr_assert(ph && name);
                cr_assert(pid >= 0 && pid < 8 && tid >= 0 && tid <= 4);
                if (strcmp(ph, "M") == 0) {
                        if (strcmp(name, "process_name") == 0) {
                                process_name[pid]++;
                                cr_assert_str_eq(json_string_value(json_object_get(args, "name")),
                                                 pe_names[pid]);
                        } else if (strcmp(name, "process_sort_index") == 0) {
                                sort_index[pid]++;
                                cr_assert_eq(json_integer_value(json_object_get(args, "sort_index")), pid);
                        } else if (strcmp(name, "thread_name") == 0) {
                                static const char *const want[] = { "pe_cpu", "pe_dma ch0", "pe_gemm",
                                                                    "pe_math", "other" };
                                thread_name[pid][tid]++;
                                cr_assert_str_eq(json_string_value(json_object_get(args, "name")),
                                                 want[tid]);
                        }
                } else if (strcmp(ph, "X") == 0) {
                        cr_assert_lt(n_x, N_TRACE_OPS);
                        const struct rep_op *op = &ops[n_x];
                        cr_assert_eq(pid, op->pe_index);
                        cr_assert_eq(tid, spec[n_x].tid);
                        cr_assert_str_eq(name, op->op);
                        cr_assert_eq(json_integer_value(json_object_get(args, "bytes")), (json_int_t)op->bytes);
                        cr_assert_eq(json_integer_value(json_object_get(args, "flops")), (json_int_t)op->flops);
                        cr_assert_eq(json_integer_value(json_object_get(args, "tile")), -7);
                        cr_assert_str_eq(json_string_value(json_object_get(args, "scope")), "k\ttile");
                        cr_assert(json_is_real(json_object_get(ev, "ts")));
                        cr_assert(json_is_real(json_object_get(ev, "dur")));
                        n_x++;
                } else if (strcmp(ph, "s") == 0 || strcmp(ph, "f") == 0) {
                        const struct rep_op *at = ph[0] == 's' ? &ops[2] : &ops[4];
                        cr_assert_eq(pid, at->pe_index);
                        cr_assert_eq(tid, 0);
                        cr_assert_eq(json_integer_value(json_object_get(ev, "id")), 42);
                        cr_assert_str_eq(json_string_value(json_object_get(ev, "cat")), "ipcq");
                        cr_assert_str_eq(name, "send");
                        if (ph[0] == 'f') {
                                cr_assert_str_eq(json_string_value(json_object_get(ev, "bp")), "e");
                                n_f++;
                        } else {
                                cr_assert_null(json_object_get(ev, "bp"));
                                n_s++;
                        }
                } else {
                        cr_assert_fail("unexpected phase %s", ph);
                }
        }
        cr_assert_eq(n_x, N_TRACE_OPS);
        cr_assert_eq(n_s, 1);
        cr_assert_eq(n_f, 1);
        for (int pe = 0; pe < 8; pe++) {
                int used = pe == 0 || pe == 5;
                cr_assert_eq(process_name[pe], used, "PE %d named %d times", pe, process_name[pe]);
                cr_assert_eq(sort_index[pe], used);
                for (int tid = 0; tid < 4; tid++)
                        cr_assert_eq(thread_name[pe][tid], used, "PE %d tid %d", pe, tid);
                cr_assert_eq(thread_name[pe][4], pe == 0, "PE %d other track", pe);
        }
        json_decref(root);

        /* ts and dur exactly, from the text: one event per line. */
        char *text = read_all(path);
        int k = 0, flows = 0;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                if (strncmp(line, "{\"ph\":\"X\"", 9) == 0) {
                        cr_assert_eq(us_text_to_ps(field(line, "ts")), ops[k].start_ps, "op %d", k);
                        cr_assert_eq(us_text_to_ps(field(line, "dur")),
                                     ops[k].end_ps - ops[k].start_ps, "op %d", k);
                        k++;
                } else if (strncmp(line, "{\"ph\":\"s\"", 9) == 0) {
                        cr_assert_eq(us_text_to_ps(field(line, "ts")), ops[2].start_ps);
                        flows++;
                } else if (strncmp(line, "{\"ph\":\"f\"", 9) == 0) {
                        cr_assert_eq(us_text_to_ps(field(line, "ts")), ops[4].start_ps);
                        flows++;
                }
        }
        cr_assert_eq(k, N_TRACE_OPS);
        cr_assert_eq(flows, 2);
        free(text);
        /* The spellings themselves, at both ends of the range. */
        text = read_all(path);
        cr_assert(strstr(text, "\"ts\":120.000001,\"dur\":10.999999,"));
        cr_assert(strstr(text, "\"ts\":18446744073709.551000,\"dur\":0.000615,"));
        free(text);
        unlink(path);
        free(path);
}

Test(trace, full_device)
{
        struct rep_trace t;
        cr_assert_eq(rep_trace_open(&t, "/dev/full", 4), 0);
        rep_trace_op(&t, &load_op);
        cr_assert_eq(rep_trace_close(&t), -ENOSPC);

        cr_assert_eq(rep_trace_open(&t, "/dev/full", 4), 0);
        for (int i = 0; i < 20000; i++) {
                struct rep_op op = load_op;
                op.start_ps = (sim_ps)i * 1000;
                op.end_ps = op.start_ps + 500;
                rep_trace_op(&t, &op);
        }
        cr_assert_eq(t.err, ENOSPC);
        cr_assert_eq(rep_trace_close(&t), -ENOSPC);
}

Test(trace, open_error)
{
        struct rep_trace t;
        cr_assert_eq(rep_trace_open(&t, "/nonexistent-dir/x.json", 4), -ENOENT);
        cr_assert_null(t.named);
}

/* ---- benchmark (CUBESIM_REPORT_BENCH=1) ----------------------------- */

/* CPU time of this process: the figure a loaded machine disturbs least. */
static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Record i of the throughput benchmark: 16 PE names, 4 components, n_pes
 * trace processes, varied times and sizes. */
static inline void bench_op(struct rep_op *op, struct rep_param *p, char names[16][32],
                            uint64_t i, uint32_t n_pes)
{
        static const char *const comps[] = { "pe_cpu", "pe_dma", "pe_gemm", "pe_math" };
        op->pe = names[i & 15];
        op->pe_index = (uint32_t)(i % n_pes);
        op->component = comps[i & 3];
        op->start_ps = i * 7919;
        op->end_ps = op->start_ps + 11000 + (i & 1023);
        op->bytes = 4096 + (i & 63);
        op->flops = i & 4095;
        p[0].i = (int64_t)(i & 255);
}

Test(report, bench_throughput, .timeout = 600)
{
        if (!getenv("CUBESIM_REPORT_BENCH"))
                cr_skip_test("benchmark: set CUBESIM_REPORT_BENCH=1 to run");
        enum { N = 10000000, N_PES = 1024 };
        char names[16][32];
        for (int i = 0; i < 16; i++)
                snprintf(names[i], sizeof names[i], "sip0.cube%d.pe%d", i / 4, i % 4);
        struct rep_param p[2] = {
                { .name = "tile", .kind = REP_INT },
                { .name = "scope", .kind = REP_STR, .s = "k_tile" },
        };
        struct rep_op op = load_op;
        op.params = p;

        struct rep_oplog o;
        cr_assert_eq(rep_oplog_open(&o, "/dev/null"), 0);
        double t0 = now_s();
        for (uint64_t i = 0; i < N; i++) {
                bench_op(&op, p, names, i, N_PES);
                rep_oplog_write(&o, &op);
        }
        cr_assert_eq(rep_oplog_close(&o), 0);
        double t_log = now_s() - t0;

        struct rep_trace t;
        cr_assert_eq(rep_trace_open(&t, "/dev/null", N_PES), 0);
        t0 = now_s();
        for (uint64_t i = 0; i < N; i++) {
                bench_op(&op, p, names, i, N_PES);
                rep_trace_op(&t, &op);
        }
        cr_assert_eq(rep_trace_close(&t), 0);
        double t_trace = now_s() - t0;

        fprintf(stderr, "op_log: %d records in %.3f s CPU = %.2f M records/s\n", N, t_log,
                N / t_log / 1e6);
        fprintf(stderr, "trace:  %d X events in %.3f s CPU = %.2f M events/s\n", N, t_trace,
                N / t_trace / 1e6);
}

/* Overlapping slices of one component go to lanes, so no track holds a
 * partial overlap; counter changes added out of time order come out in
 * time order, one sample per time. */
Test(trace, lanes_and_counters)
{
        char *path = tmp_path();
        struct rep_trace t;
        cr_assert_eq(rep_trace_open(&t, path, 2), 0);
        static const sim_ps span[4][2] = { { 0, 100 }, { 50, 150 }, { 100, 200 }, { 60, 70 } };
        static const uint32_t want_tid[4] = { 1, 9, 1, 17 };
        for (int i = 0; i < 4; i++) {
                struct rep_op op = load_op;
                op.start_ps = span[i][0];
                op.end_ps = span[i][1];
                struct rep_trace_ref ref = rep_trace_op(&t, &op);
                cr_assert(ref.ok);
                cr_assert_eq(ref.tid, want_tid[i], "slice %d on tid %u", i, ref.tid);
        }
        struct rep_counter c = { .pid = 1, .name = "depth" };
        cr_assert_eq(rep_counter_add(&c, 300, 5), 0);
        cr_assert_eq(rep_counter_add(&c, 100, 2), 0);
        cr_assert_eq(rep_counter_add(&c, 200, -1), 0);
        cr_assert_eq(rep_counter_add(&c, 100, 1), 0);
        rep_counter_flush(&t, &c, 250);
        cr_assert_eq(c.n, 1);
        cr_assert_eq(rep_counter_add(&c, 250, -4), 0);
        rep_counter_flush(&t, &c, SIM_PS_MAX);
        rep_counter_fini(&c);
        cr_assert_eq(rep_trace_close(&t), 0);
        char *text = read_all(path);
        unlink(path);
        free(path);
        const char *p = text;
        static const char *const samples[] = {
                "{\"ph\":\"C\",\"pid\":1,\"name\":\"depth\",\"ts\":0.000100,\"args\":{\"depth\":3}}",
                "{\"ph\":\"C\",\"pid\":1,\"name\":\"depth\",\"ts\":0.000200,\"args\":{\"depth\":2}}",
                "{\"ph\":\"C\",\"pid\":1,\"name\":\"depth\",\"ts\":0.000250,\"args\":{\"depth\":-2}}",
                "{\"ph\":\"C\",\"pid\":1,\"name\":\"depth\",\"ts\":0.000300,\"args\":{\"depth\":3}}",
        };
        for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
                const char *at = strstr(p, samples[i]);
                cr_assert(at, "sample %zu missing or out of order in:\n%s", i, text);
                p = at + strlen(samples[i]);
        }
        cr_assert(strstr(text, "\"name\":\"pe_dma ch1\""));
        cr_assert(strstr(text, "\"name\":\"pe_dma ch2\""));
        free(text);
}

Test(profile, engine_of_a_component_name)
{
        cr_assert_eq(rep_engine_of("pe_dma"), REP_ENG_DMA);
        cr_assert_eq(rep_engine_of("pe_gemm"), REP_ENG_GEMM);
        cr_assert_eq(rep_engine_of("pe_math"), REP_ENG_MATH);
        const char *cpu[] = { "pe_cpu", "pe_dmax", "pe_gem", "pe_mat", "pe_", "pe", "", "io_cpu",
                              "xe_dma", NULL };
        for (int i = 0; cpu[i]; i++)
                cr_assert_eq(rep_engine_of(cpu[i]), REP_ENG_CPU, "%s", cpu[i]);
        cr_assert_eq(rep_engine_of(NULL), REP_ENG_CPU);
}
