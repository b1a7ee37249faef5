/*
 * What the program test suites (tests/suites/: the HTTP and stdio suites,
 * metrics) share: the CHECK macro and its counters, clocks, sleeping, a
 * program on pipes (the stdio suites' server) and its output read line by line, resident memory, and (TESTLIB_SMALL_QUARANTINE defined before the
 * include) a small ASan quarantine for suites that measure memory. Header
 * only, included once per test program.
 */
#ifndef HTTP_TESTLIB_H
#define HTTP_TESTLIB_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Checks passed and failed; CHECK counts from any thread. */
static int g_passed, g_failed;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (cond) {                                                          \
            __atomic_fetch_add(&g_passed, 1, __ATOMIC_RELAXED);              \
        } else {                                                             \
            __atomic_fetch_add(&g_failed, 1, __ATOMIC_RELAXED);              \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                      \
            printf(__VA_ARGS__);                                             \
            printf("\n");                                                    \
        }                                                                    \
    } while (0)

/* Prints the closing "NAME: N passed, N failed" line; the exit status. */
static inline int check_summary(const char *name)
{
    int p = __atomic_load_n(&g_passed, __ATOMIC_RELAXED), f = __atomic_load_n(&g_failed, __ATOMIC_RELAXED);
    printf("%s: %d passed, %d failed\n", name, p, f);
    return f ? 1 : 0;
}

static inline uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline uint64_t now_ms(void)
{
    return now_us() / 1000u;
}

static inline double now_s(void)
{
    return (double)now_us() / 1e6;
}

/* Writes all n bytes to fd (retrying short writes and EINTR); gives up on another error. */
static inline void write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        s += w;
        n -= (size_t)w;
    }
}

/* A program on pipes: the test writes its stdin and reads its stdout (its stderr is the test's). */
typedef struct piped {
    pid_t pid; /* the program */
    int in;    /* we write its stdin */
    int out;   /* we read its stdout */
} piped;

/*
 * The command line of the stdio suites' server, into args (cap entries,
 * NULL last): the wrapper words the suite was given after the server
 * (argv[2..]: valgrind under that preset) first, then the server (argv[1])
 * and the words of `extra` (NULL-terminated; NULL for none).
 */
static inline void server_args(char **args, int cap, int argc, char **argv, char *const *extra)
{
    int n = 0;
    for (int i = 2; i < argc && n < cap - 2; i++)
        args[n++] = argv[i];
    args[n++] = argv[1];
    for (int i = 0; extra && extra[i] && n < cap - 1; i++)
        args[n++] = extra[i];
    args[n] = NULL;
}

/* Starts argv (NULL-terminated; argv[0] looked up on PATH) on pipes. 0, or -1 when pipe or fork failed. */
static inline int piped_start(piped *c, char **argv)
{
    int to[2], from[2];
    if (pipe(to))
        return -1;
    if (pipe(from)) {
        close(to[0]);
        close(to[1]);
        return -1;
    }
    c->pid = fork();
    if (c->pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[0]);
        close(to[1]);
        close(from[0]);
        close(from[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    if (c->pid < 0) {
        close(to[1]);
        close(from[0]);
        return -1;
    }
    c->in = to[1];
    c->out = from[0];
    return 0;
}

/*
 * Reads fd until EOF (or an error), calling line(s, n, t, ud) for every
 * '\n'-terminated line, without its '\n' (s is not NUL-terminated); t is
 * now_s() when the read that completed it returned. An unterminated tail
 * is dropped. Stops early, dropping the rest, when memory runs out.
 */
static inline void read_lines(int fd, void (*line)(const char *s, size_t n, double t, void *ud), void *ud)
{
    char chunk[4096], *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        double t = now_s();
        const char *p = chunk, *end = chunk + got;
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t k = (size_t)((nl ? nl : end) - p);
            if (len + k > cap) {
                size_t nc = cap ? cap : 4096;
                while (nc < len + k)
                    nc *= 2;
                char *nb = realloc(buf, nc);
                if (!nb) {
                    free(buf);
                    return;
                }
                buf = nb;
                cap = nc;
            }
            memcpy(buf + len, p, k);
            len += k;
            if (!nl)
                break;
            line(buf, len, t, ud);
            len = 0;
            p = nl + 1;
        }
    }
    free(buf);
}

static inline void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Resident memory of this process, in KiB (0 when unknown). */
static inline long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib;
}

#ifdef TESTLIB_SMALL_QUARANTINE
#if defined(__SANITIZE_ADDRESS__)
#define TESTLIB_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESTLIB_UNDER_ASAN 1
#endif
#endif
#ifdef TESTLIB_UNDER_ASAN
/* Freed memory sits in ASan's quarantine (256 MB by default) and would count
 * as resident: keep it small so the memory checks measure what is held. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "quarantine_size_mb=4";
}
#endif
#endif

#endif /* HTTP_TESTLIB_H */
