/* engine/watchdog.h: a wall-clock limit on a run (`cubesim run
 * --timeout-s`, armed by tl_job_run). A kernel that spins without calling
 * tl_* never returns to the event loop, so nothing inside the loop can
 * stop it: a timer signal does. When the limit passes, the signal handler
 * writes one message, located like a kernel error at the running
 * process's last tl_* call (file:line, PE, op) when there is one, else
 * naming the run, then ends the process with status 1 (the simulated
 * program failed).
 * Files being written are left as they are. One watchdog per process. */
#ifndef CUBESIM_ENGINE_WATCHDOG_H
#define CUBESIM_ENGINE_WATCHDOG_H

#include "engine/ev.h"

/* After seconds (> 0) of wall time, report and _exit(1). what names the
 * run in a message with no kernel location (the kernel's name), borrowed;
 * ev is the loop whose running process the message names. 0 or -errno. */
int ev_watchdog_arm(struct ev_loop *ev, double seconds, const char *what);
/* Cancel it (the run ended in time). */
void ev_watchdog_disarm(void);
/* Whether stderr's last line is an unfinished progress line (a terminal's
 * line redrawn in place): the message clears it first. */
void ev_watchdog_line_open(bool open);

#endif
