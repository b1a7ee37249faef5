/*
 * Clocks and process-wide settings every layer needs: one monotonic clock
 * for deadlines and intervals, one wall clock for timestamps that leave the
 * process, SIGPIPE left alone only when the application set it, and
 * random bytes from the kernel.
 */
#include "util/util.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

uint64_t mcp__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t mcp__mono_ms(void)
{
    return mcp__mono_ns() / 1000000ull;
}

uint64_t mcp__wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void mcp__ignore_sigpipe(void)
{
    struct sigaction sa;
    if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_IGN;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGPIPE, &sa, NULL);
    }
}

int mcp__random(void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}
