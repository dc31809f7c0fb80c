// hold_systemc.cpp -- SystemC 2.3 version of the "hold" engine benchmark.
//
// N SC_THREAD processes (created with sc_spawn); process p, in iteration
// i (0..K-1), waits 1 + (7*i + p) % 5 ns.  Counts wake-ups and reports the
// simulated end time.  Time resolution is 1 ps, as in cubesim.
//
// Build: g++ -O2 -std=c++17 hold_systemc.cpp -lsystemc -o hold_systemc
// Usage: hold_systemc [N [K [STACK_BYTES]]]   (defaults 100 200000 65536)
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace sc_core;

static unsigned long long g_events = 0;
static unsigned long long g_max_end_ps = 0;

static void hold_proc(int p, long k)
{
    for (long i = 0; i < k; ++i) {
        int d = 1 + (int)((7 * i + p) % 5);
        wait(sc_time((double)d, SC_NS));
        ++g_events;
    }
    unsigned long long now = sc_time_stamp().value(); /* in ps */
    if (now > g_max_end_ps)
        g_max_end_ps = now;
}

static long parse_arg(const char *s, const char *what)
{
    char *end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (!end || *end || v <= 0) {
        std::fprintf(stderr, "hold_systemc: bad %s '%s'\n", what, s);
        std::exit(2);
    }
    return v;
}

int sc_main(int argc, char **argv)
{
    long n = argc > 1 ? parse_arg(argv[1], "N") : 100;
    long k = argc > 2 ? parse_arg(argv[2], "K") : 200000;
    long stack = argc > 3 ? parse_arg(argv[3], "stack size") : 64 * 1024;

    sc_report_handler::set_actions(SC_INFO, SC_DO_NOTHING);
    sc_set_time_resolution(1, SC_PS);

    sc_spawn_options opt;
    opt.set_stack_size((int)stack);
    for (long p = 0; p < n; ++p) {
        std::string name = "h" + std::to_string(p);
        sc_spawn(sc_bind(&hold_proc, (int)p, k), name.c_str(), &opt);
    }

    /* Finish elaboration, create the thread coroutines and run every
       process up to its first wait() (all at time 0, no wake-ups counted)
       outside the timed region; then time the simulation proper. */
    sc_start(SC_ZERO_TIME);
    auto t0 = std::chrono::steady_clock::now();
    sc_start();
    auto t1 = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(t1 - t0).count();

    unsigned long long end_ps = g_max_end_ps;
    std::printf("events: %llu\n", g_events);
    std::printf("sim_end_ns: %llu\n", end_ps / 1000ULL);
    std::printf("wall_s: %.6f\n", wall);
    std::printf("events_per_s: %.0f\n", wall > 0 ? (double)g_events / wall : 0.0);
    if (end_ps % 1000ULL)
        std::fprintf(stderr, "hold_systemc: end time %llu ps is not whole ns\n", end_ps);
    return 0;
}
