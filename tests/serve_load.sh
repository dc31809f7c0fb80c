#!/usr/bin/env bash
# cubesim serve under load: saturation, preemption, the step grid against
# exact simulation, --out and --find-capacity; the second half of
# tests/serve.sh (see there), run as a test of its own so that CTest runs
# the two halves side by side.
SERVE_PART=load exec bash "$(dirname "$0")/serve.sh"
