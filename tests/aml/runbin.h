/*
 * Running programs from a test: a child whose stdout and stderr go to
 * files of a work directory (DIR/NAME.out and DIR/NAME.err), its exit
 * status, and a whole file read back. Plain POSIX; the tests that run
 * mcp-server-aml or mcp-cli share it (clirun.h, aml_tasks.c,
 * aml_scan_jobs.c).
 */
#ifndef AML_RUNBIN_H
#define AML_RUNBIN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A whole file as a NUL-terminated string (malloc, the caller frees); "" (also malloc) when it cannot be read. */
static inline char *rb_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)(n > 0 ? n : 0) + 1);
    size_t got = b && n > 0 ? fread(b, 1, (size_t)n, f) : 0;
    if (b)
        b[got] = '\0';
    fclose(f);
    return b;
}

/* rb_slurp of DIR/NAME.EXT (ext "out" or "err" for what rb_spawn wrote). */
static inline char *rb_slurp_in(const char *dir, const char *name, const char *ext)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s.%s", dir, name, ext);
    return rb_slurp(p);
}

/*
 * Starts argv (NULL-terminated, argv[0] the program's path) with stdin from
 * /dev/null and stdout, stderr into DIR/NAME.out, DIR/NAME.err (truncated).
 * Returns its pid, or -1 when fork failed; a program that cannot be run
 * exits 127.
 */
static inline pid_t rb_spawn(const char *dir, const char *name, const char *const *argv)
{
    char out[1024], err[1024];
    snprintf(out, sizeof out, "%s/%s.out", dir, name);
    snprintf(err, sizeof err, "%s/%s.err", dir, name);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr) || !freopen("/dev/null", "r", stdin))
            _exit(127);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Waits for pid: its exit status, 128 + the signal that ended it, or -1 (no such child). */
static inline int rb_wait(pid_t pid)
{
    int st = 0;
    if (pid <= 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* rb_wait within `secs` seconds; past them the process is killed (said on stderr) and -1 returned. */
static inline int rb_wait_within(pid_t pid, int secs)
{
    for (int i = 0; i < secs * 10; i++) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0)
            return -1;
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "  pid %d still running after %d s: killed\n", (int)pid, secs);
    kill(pid, SIGKILL);
    rb_wait(pid);
    return -1;
}

/* rb_spawn, then rb_wait: the exit status. */
static inline int rb_run(const char *dir, const char *name, const char *const *argv)
{
    return rb_wait(rb_spawn(dir, name, argv));
}

#endif /* AML_RUNBIN_H */
