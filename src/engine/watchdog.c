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
static ev_watchdog_say *volatile watched_say; /* writes the message */
static void *volatile watched_arg;       /* ... with this */
static volatile sig_atomic_t line_open;  /* stderr ends in a progress line */

static void on_alarm(int sig)
{
        (void)sig;
        struct ev_loop *ev = watched;
        if (!ev)
                return;
        char msg[1024];
        size_t n = 0, cap = sizeof msg - 1;
        watched_say(msg, &n, cap, ev, ev->current, watched_arg);
        msg[n++] = '\n';
        if (line_open)
                sigsafe_write(STDERR_FILENO, "\r\033[K", 4);
        sigsafe_write(STDERR_FILENO, msg, n);
        _exit(1);
}

int ev_watchdog_arm(struct ev_loop *ev, double seconds, ev_watchdog_say *say, void *arg)
{
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGALRM, &sa, NULL) < 0)
                return -errno;
        watched_say = say;
        watched_arg = arg;
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
