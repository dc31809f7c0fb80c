/* engine/watchdog.c: the wall-clock limit of a run: an ITIMER_REAL timer
 * and a SIGALRM handler that reports and exits. See watchdog.h.
 *
 * The handler runs at any point of the run, maybe in the middle of
 * malloc or stdio, so it uses only async-signal-safe calls (write,
 * _exit) and reads plain fields of the loop and its running process;
 * a field being changed as it reads costs at worst a stale location in
 * the message. */
#include "engine/watchdog.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "base/sigsafe.h"

static struct ev_loop *volatile watched;  /* the loop of the run, while armed */
static const char *volatile watched_what; /* names the run */
static volatile double watched_s;        /* the limit, seconds */
static volatile sig_atomic_t line_open;  /* stderr ends in a progress line */

/* The limit as typed: whole seconds, or with three decimals. */
static void put_seconds(char *buf, size_t *n, size_t cap, double s)
{
        unsigned long long ms = (unsigned long long)(s * 1000 + 0.5);
        sigsafe_put_u(buf, n, cap, ms / 1000);
        if (ms % 1000) {
                sigsafe_put(buf, n, cap, ".");
                char frac[4] = { (char)('0' + ms / 100 % 10), (char)('0' + ms / 10 % 10),
                                 (char)('0' + ms % 10), 0 };
                for (int i = 2; i > 0 && frac[i] == '0'; i--)
                        frac[i] = 0;
                sigsafe_put(buf, n, cap, frac);
        }
}

static void on_alarm(int sig)
{
        (void)sig;
        struct ev_loop *ev = watched;
        if (!ev)
                return;
        const struct ev_proc *p = ev->current;
        char msg[1024];
        size_t n = 0, cap = sizeof msg - 1;
        if (p && p->at_file) {
                sigsafe_put(msg, &n, cap, p->at_file);
                sigsafe_put(msg, &n, cap, ":");
                sigsafe_put_u(msg, &n, cap, (unsigned long long)p->at_line);
                sigsafe_put(msg, &n, cap, ": PE ");
                sigsafe_put(msg, &n, cap, p->name ? p->name : "?");
                sigsafe_put(msg, &n, cap, ": error: ");
        } else {
                sigsafe_put(msg, &n, cap, watched_what);
                sigsafe_put(msg, &n, cap, ": error: ");
        }
        sigsafe_put(msg, &n, cap, "wall-clock limit reached (--timeout-s ");
        put_seconds(msg, &n, cap, watched_s);
        sigsafe_put(msg, &n, cap, ") after ");
        sigsafe_put_u(msg, &n, cap, ev->n_events);
        sigsafe_put(msg, &n, cap, " events, ");
        sigsafe_put_u(msg, &n, cap, ev->now / SIM_PS_PER_NS);
        sigsafe_put(msg, &n, cap, " ns simulated; ");
        if (p && p->at_file) {
                sigsafe_put(msg, &n, cap, "the kernel was running, its last tl_* call here (");
                sigsafe_put(msg, &n, cap, p->at_what ? p->at_what : "?");
                sigsafe_put(msg, &n, cap, "): a loop without tl_* calls never ends (a run "
                                          "that is only long needs a larger --timeout-s)");
        } else if (p) {
                sigsafe_put(msg, &n, cap, "process '");
                sigsafe_put(msg, &n, cap, p->name ? p->name : "?");
                sigsafe_put(msg, &n, cap, "' was running, before any tl_* call");
        } else {
                sigsafe_put(msg, &n, cap, "a run this long needs a larger --timeout-s");
        }
        msg[n++] = '\n';
        if (line_open)
                sigsafe_write(STDERR_FILENO, "\r\033[K", 4);
        sigsafe_write(STDERR_FILENO, msg, n);
        _exit(1);
}

int ev_watchdog_arm(struct ev_loop *ev, double seconds, const char *what)
{
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGALRM, &sa, NULL) < 0)
                return -errno;
        watched_what = what;
        watched_s = seconds;
        watched = ev;
        struct itimerval it = { .it_value = { .tv_sec = (time_t)seconds,
                                              .tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6) } };
        if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
                it.it_value.tv_usec = 1;
        if (setitimer(ITIMER_REAL, &it, NULL) < 0) {
                watched = NULL;
                return -errno;
        }
        return 0;
}

void ev_watchdog_line_open(bool open)
{
        line_open = open;
}

void ev_watchdog_disarm(void)
{
        struct itimerval off;
        memset(&off, 0, sizeof off);
        setitimer(ITIMER_REAL, &off, NULL);
        watched = NULL;
}
