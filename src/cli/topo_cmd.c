/* cli/topo_cmd.c: `cubesim topo check` and `cubesim topo show`: validate a
 * topology file, print a machine's component graph. Exit status 0, or 2
 * with every problem printed (located FILE:LINE:COL) on bad input. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/diag.h"
#include "cli/cli.h"
#include "topo/topo.h"

static const char usage[] =
        "usage: cubesim topo check [--set key=value ...] FILE...\n"
        "       cubesim topo show [FILE] [--format text|json|dot] [--set key=value ...]\n"
        "\n"
        "A topology is a YAML file stating the machine's counts, sizes, bandwidths,\n"
        "latencies, clocks and costs, with units in the key names (latency_ns,\n"
        "bw_gbps = 10^9 bytes/s, size_kib, clock_mhz). A file is applied over the\n"
        "built-in default machine (topologies/default.yaml) and states only what\n"
        "differs, unless it says 'base: none'; every file says 'version: 1'.\n"
        "\n"
        "  check FILE...    load and validate each file; print 'FILE: ok (...)' or\n"
        "                   every problem found, as FILE:LINE:COL: error: ...\n"
        "  show [FILE]      print the machine (the built-in default without FILE):\n"
        "                   text  the resolved machine as a complete YAML topology,\n"
        "                         then the graph's counts and the totals (default)\n"
        "                   json  {machine, nodes, edges, totals}: integers in ps,\n"
        "                         bytes, bytes/s, Hz; stable order\n"
        "                   dot   the component graph for graphviz (dot -Tsvg)\n"
        "\n"
        "Options:\n"
        "  --set key=value  override one parameter after loading; key is the YAML\n"
        "                   path joined by dots, e.g. --set pe.dma.bw_gbps=128\n"
        "  --format FORMAT  text, json or dot (show only)\n"
        "  -h, --help       show this help\n"
        "\n"
        "Exit status: 0 valid; 2 bad input (usage, topology, parameters).\n";

enum format { FMT_TEXT, FMT_JSON, FMT_DOT };

struct opts {
        const char *files[256];      /* positional arguments */
        size_t n_files;              /* entries of files */
        const char *sets[256];       /* --set arguments, in order */
        size_t n_sets;               /* entries of sets */
        enum format format;          /* show's output */
        bool help;                   /* --help given */
};

/* Parse argv[1..]; returns CLI_OK or CLI_BAD_INPUT (message printed). With
 * --help, prints the usage and sets o->help: the command is done. */
static int parse(const char *cmd, int argc, char **argv, bool is_show, struct opts *o)
{
        static const char *const show_opts[] = { "--set", "--format", "--help", NULL };
        static const char *const check_opts[] = { "--set", "--help", NULL };
        bool only_files = false;
        memset(o, 0, sizeof *o);
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
                        if (o->n_files == sizeof o->files / sizeof o->files[0])
                                return cli_error(cmd, "too many files");
                        o->files[o->n_files++] = a;
                } else if (strcmp(a, "--") == 0) {
                        only_files = true;
                } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
                        o->help = true;
                } else if (strcmp(a, "--set") == 0 || strncmp(a, "--set=", 6) == 0) {
                        const char *v = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
                        if (!v)
                                return cli_error(cmd, "--set needs key=value");
                        if (o->n_sets == sizeof o->sets / sizeof o->sets[0])
                                return cli_error(cmd, "too many --set");
                        o->sets[o->n_sets++] = v;
                } else if (is_show &&
                           (strcmp(a, "--format") == 0 || strncmp(a, "--format=", 9) == 0)) {
                        const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
                        if (v && strcmp(v, "text") == 0) {
                                o->format = FMT_TEXT;
                        } else if (v && strcmp(v, "json") == 0) {
                                o->format = FMT_JSON;
                        } else if (v && strcmp(v, "dot") == 0) {
                                o->format = FMT_DOT;
                        } else {
                                static const char *const formats[] = { "text", "json", "dot" };
                                const char *hint = v ? diag_suggest(v, formats, 3) : NULL;
                                fprintf(stderr,
                                        "cubesim %s: error: --format must be text, json or dot "
                                        "(got '%s')%s%s%s\n",
                                        cmd, v ? v : "", hint ? "; did you mean '" : "",
                                        hint ? hint : "", hint ? "'?" : "");
                                return CLI_BAD_INPUT;
                        }
                } else {
                        return cli_unknown_option(cmd, a, is_show ? show_opts : check_opts);
                }
        }
        if (o->help)
                fputs(usage, stdout);
        return CLI_OK;
}

/* Load file (NULL: the built-in default), then apply the --set overrides. */
static int load(const char *file, const struct opts *o, struct topo *t, struct diag *d)
{
        int rc = file ? topo_load_file(file, t, d) : topo_load_default(t, d);
        for (size_t i = 0; rc == 0 && i < o->n_sets; i++)
                rc = topo_set_kv(t, o->sets[i], d);
        return rc;
}

static int check(const struct opts *o)
{
        if (o->n_files == 0) {
                fputs("cubesim topo check: error: no FILE given\n"
                      "Try 'cubesim topo --help'.\n", stderr);
                return CLI_BAD_INPUT;
        }
        int status = CLI_OK;
        for (size_t i = 0; i < o->n_files; i++) {
                struct diag d;
                struct topo t;
                diag_init(&d);
                if (load(o->files[i], o, &t, &d) == 0) {
                        struct topo_totals tt;
                        uint64_t nodes, edges, bytes;
                        topo_totals(&t, &tt);
                        topo_graph_size(&t, &nodes, &edges, &bytes);
                        printf("%s: ok ('%s': %" PRIu64 " PE%s, %" PRIu64 " cube%s, %" PRIu64
                               " SIP%s; %" PRIu64 " nodes, %" PRIu64 " edges)\n",
                               o->files[i], t.name, tt.pes, tt.pes == 1 ? "" : "s", tt.cubes,
                               tt.cubes == 1 ? "" : "s", tt.sips, tt.sips == 1 ? "" : "s", nodes,
                               edges);
                } else {
                        status = CLI_BAD_INPUT;
                }
                cli_print_diag("topo check", &d);
                diag_fini(&d);
                topo_fini(&t);
        }
        return status;
}

static int show(const struct opts *o)
{
        if (o->n_files > 1)
                return cli_error("topo show", "one FILE at most (got %zu)", o->n_files);
        struct diag d;
        struct topo t;
        struct topo_graph g;
        diag_init(&d);
        int rc = load(o->n_files ? o->files[0] : NULL, o, &t, &d);
        if (rc == 0)
                rc = topo_build_graph(&t, &g, &d);
        if (rc) {
                cli_print_diag("topo show", &d);
                diag_fini(&d);
                return CLI_BAD_INPUT;
        }
        switch (o->format) {
        case FMT_TEXT: rc = topo_graph_write_text(&g, stdout); break;
        case FMT_JSON: rc = topo_graph_write_json(&g, stdout); break;
        case FMT_DOT: rc = topo_graph_write_dot(&g, stdout); break;
        }
        topo_graph_fini(&g);
        topo_fini(&t);
        cli_print_diag("topo show", &d);
        diag_fini(&d);
        if (rc && !ferror(stdout))   /* a write error: main reports it, flushed */
                fputs("cubesim topo show: error: cannot make the output (out of memory)\n",
                      stderr);
        return rc ? CLI_FAIL : CLI_OK;
}

int cli_topo(int argc, char **argv)
{
        if (argc < 2) {
                fputs(usage, stderr);
                return CLI_BAD_INPUT;
        }
        const char *sub = argv[1];
        bool is_show = strcmp(sub, "show") == 0;
        if (is_show || strcmp(sub, "check") == 0) {
                struct opts o;
                int rc = parse(is_show ? "topo show" : "topo check", argc - 1, argv + 1, is_show,
                               &o);
                if (rc != CLI_OK || o.help)
                        return rc;
                return is_show ? show(&o) : check(&o);
        }
        if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0 || strcmp(sub, "help") == 0) {
                fputs(usage, stdout);
                return CLI_OK;
        }
        static const char *const subs[] = { "check", "show" };
        const char *hint = diag_suggest(sub, subs, 2);
        if (hint)
                fprintf(stderr, "cubesim topo: error: unknown subcommand '%s'; did you mean '%s'?\n",
                        sub, hint);
        else
                fprintf(stderr, "cubesim topo: error: unknown subcommand '%s' (check, show)\n",
                        sub);
        fputs("Try 'cubesim topo --help'.\n", stderr);
        return CLI_BAD_INPUT;
}
