#!/usr/bin/python3
"""hold_simpy.py -- SimPy 2.3 version of the "hold" engine benchmark.

N Process objects; process p, in iteration i (0..K-1), holds
1 + (7*i + p) % 5 time units (= ns).  Counts wake-ups and reports the
simulated end time.  Uses the classic SimPy 2 API, so run it with Debian's
interpreter (python3-simpy): /usr/bin/python3 hold_simpy.py [N [K]]
"""
import sys
import time

from SimPy.Simulation import Process, hold, initialize, activate, simulate, now

events = 0
max_end = 0


class Holder(Process):
    def run(self, p, k):
        global events, max_end
        for i in range(k):
            yield hold, self, 1 + (7 * i + p) % 5
            events += 1
        t = now()
        if t > max_end:
            max_end = t


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 100
    k = int(argv[2]) if len(argv) > 2 else 20000
    if n <= 0 or k <= 0:
        sys.exit("hold_simpy: N and K must be positive")
    initialize()
    for p in range(n):
        h = Holder(name="h%d" % p)
        activate(h, h.run(p, k), at=0)
    t0 = time.perf_counter()
    simulate(until=10 ** 18)
    wall = time.perf_counter() - t0
    print("events: %d" % events)
    print("sim_end_ns: %d" % max_end)
    print("wall_s: %.6f" % wall)
    print("events_per_s: %.0f" % (events / wall if wall > 0 else 0.0))


if __name__ == "__main__":
    main(sys.argv)
