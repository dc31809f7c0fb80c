/* engine/watchdog.h: a wall-clock limit on a run. A process that spins
 * without waiting never returns to the event loop, so nothing inside the
 * loop can stop it: a timer signal does. When the limit passes, the signal
 * handler writes one line, the message that the caller's say function
 * builds (the engine knows no option or call names: the kernel runtime,
 * tl_job_run, says where the kernel was and what to change), then ends the
 * process with status 1 (the simulated program failed).
 * Files being written are left as they are. One watchdog per process. */
#ifndef CUBESIM_ENGINE_WATCHDOG_H
#define CUBESIM_ENGINE_WATCHDOG_H

#include "engine/ev.h"

/* Writes the message into buf from *n up to cap (with base/sigsafe.h: it
 * runs in a signal handler, so no stdio, no allocation): p is ev's
 * running process, or NULL; arg is ev_watchdog_arm's. */
typedef void ev_watchdog_say(char *buf, size_t *n, size_t cap, const struct ev_loop *ev,
                             const struct ev_proc *p, void *arg);
/* After seconds (> 0) of wall time, write say's message and _exit(1); ev
 * is the loop whose running process the message names, arg is borrowed
 * until ev_watchdog_disarm. 0 or -errno. */
int ev_watchdog_arm(struct ev_loop *ev, double seconds, ev_watchdog_say *say, void *arg);
/* Cancel it (the run ended in time). */
void ev_watchdog_disarm(void);
/* Whether stderr's last line is an unfinished progress line (a terminal's
 * line redrawn in place): the message clears it first. */
void ev_watchdog_line_open(bool open);

#endif
