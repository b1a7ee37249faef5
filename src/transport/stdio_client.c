/*
 * The client's stdio transport: the server is a child process; frames go
 * to its stdin and come from its stdout, one JSON-RPC message per line.
 *
 * A reader thread polls the child's stdout (and, in capture mode, its
 * stderr) together with a wake pipe, so closing never depends on the child
 * (or a grandchild holding the pipe) closing its end. Sends are written
 * under one mutex, whole lines at a time. When stdout ends the child is
 * reaped if it exits promptly, and every pending call fails with the exit
 * status and the tail of its stderr.
 */
#include "client/client_internal.h"
#include "util/abi.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_GRACE_MS 2000u
#define TAIL 4096u /* stderr kept for error messages */

typedef struct stdio_t {
    mcp__ctransport base;       /* first: the core's view */
    pid_t pid;                  /* the child */
    int in_fd;                  /* its stdin (write end); -1 once closed */
    int out_fd;                 /* its stdout (read end) */
    int err_fd;                 /* its stderr (read end) in capture mode, else -1 */
    int wake[2];                /* wakes the reader to stop */
    unsigned grace_ms;          /* see mcp_stdio_client_opts.kill_grace_ms */
    pthread_mutex_t send_mu;    /* one writer at a time; guards in_fd */
    pthread_mutex_t mu;         /* reaping and the stderr tail */
    int reaped;                 /* waitpid succeeded */
    int status;                 /* its wait status */
    char tail[TAIL];            /* last bytes of stderr (ring) */
    size_t tail_len, tail_pos;
    pthread_t reader;
    int reader_started;
    char *line;                 /* current stdout line */
    size_t line_len, line_cap;
    char errline[1024];         /* current stderr line (capture mode) */
    size_t errline_len;
} stdio_t;

/* Waits up to `ms` for the child to exit (t->mu held). */
static void reap_locked(stdio_t *t, unsigned ms)
{
    for (unsigned waited = 0; !t->reaped; waited += 5) {
        pid_t r = waitpid(t->pid, &t->status, WNOHANG);
        if (r == t->pid || (r < 0 && errno == ECHILD)) {
            t->reaped = 1;
            break;
        }
        if (waited >= ms)
            break;
        struct timespec d = {0, 5000000};
        nanosleep(&d, NULL);
    }
}

/* The stderr tail as text, oldest first (t->mu held). */
static void tail_copy_locked(const stdio_t *t, char *out, size_t cap)
{
    size_t n = t->tail_len < cap - 1 ? t->tail_len : cap - 1;
    size_t start = (t->tail_pos + TAIL - n) % TAIL;
    for (size_t i = 0; i < n; i++) {
        char ch = t->tail[(start + i) % TAIL];
        out[i] = (ch == '\n' || ch == '\r' || ch == '\t') ? ' ' : ch;
    }
    out[n] = '\0';
}

/* Why the server went away, for every pending call's error. */
static void describe_exit(stdio_t *t, char *msg, size_t cap)
{
    pthread_mutex_lock(&t->mu);
    reap_locked(t, 500);
    char tail[200];
    tail_copy_locked(t, tail, sizeof tail);
    if (!t->reaped)
        snprintf(msg, cap, "the server closed its stdout");
    else if (WIFEXITED(t->status))
        snprintf(msg, cap, "the server exited with status %d", WEXITSTATUS(t->status));
    else if (WIFSIGNALED(t->status))
        snprintf(msg, cap, "the server was killed by signal %d (%s)", WTERMSIG(t->status),
                 strsignal(WTERMSIG(t->status)));
    else
        snprintf(msg, cap, "the server went away");
    pthread_mutex_unlock(&t->mu);
    if (tail[0]) {
        size_t n = strlen(msg);
        snprintf(msg + n, cap - n, "; its stderr ends: %s", tail);
    }
}

static void stderr_bytes(stdio_t *t, const char *p, size_t n)
{
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < n; i++) {
        t->tail[t->tail_pos] = p[i];
        t->tail_pos = (t->tail_pos + 1) % TAIL;
        if (t->tail_len < TAIL)
            t->tail_len++;
    }
    pthread_mutex_unlock(&t->mu);
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n' || t->errline_len == sizeof t->errline - 1) {
            t->errline[t->errline_len] = '\0';
            mcp__client_log(t->base.client, MCP_LOG_INFO, "server stderr: %s", t->errline);
            t->errline_len = 0;
            if (p[i] == '\n')
                continue;
        }
        t->errline[t->errline_len++] = p[i];
    }
}

/* Splits stdout into lines and hands each to the core. 0 when the connection must end. */
static int stdout_bytes(stdio_t *t, const char *p, size_t n)
{
    mcp_client *c = t->base.client;
    size_t max = mcp__client_max_message(c);
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        {
            if (t->line_len + take > max) {
                char msg[128];
                snprintf(msg, sizeof msg, "the server sent a message over the %zu-byte limit", max);
                mcp__client_on_closed(c, MCP_ERR_INVALID_MSG, msg);
                return 0;
            }
            if (t->line_len + take + 1 > t->line_cap) {
                size_t cap = t->line_cap ? t->line_cap : 4096;
                while (cap < t->line_len + take + 1)
                    cap *= 2;
                char *nb = mcp_realloc(t->line, cap);
                if (!nb) {
                    mcp__client_on_closed(c, MCP_ERR_NOMEM, "out of memory reading from the server");
                    return 0;
                }
                t->line = nb;
                t->line_cap = cap;
            }
            memcpy(t->line + t->line_len, p, take);
            t->line_len += take;
        }
        if (!nl)
            return 1;
        size_t len = t->line_len;
        if (len && t->line[len - 1] == '\r')
            len--;
        if (len)
            mcp__client_on_frame(c, t->line, len);
        t->line_len = 0;
        p = nl + 1;
        n -= take + 1;
    }
    return 1;
}

static void *reader_main(void *arg)
{
    stdio_t *t = arg;
    char buf[65536];
    int out_open = 1, err_open = t->err_fd >= 0;
    while (out_open) {
        struct pollfd fds[3] = {{t->wake[0], POLLIN, 0}, {t->out_fd, POLLIN, 0}, {err_open ? t->err_fd : -1, POLLIN, 0}};
        if (poll(fds, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[0].revents)
            return NULL; /* closing: the core is told by the closer */
        if (fds[2].revents) {
            ssize_t r = read(t->err_fd, buf, sizeof buf);
            if (r > 0)
                stderr_bytes(t, buf, (size_t)r);
            else if (r == 0 || (errno != EINTR && errno != EAGAIN))
                err_open = 0;
        }
        if (fds[1].revents) {
            ssize_t r = read(t->out_fd, buf, sizeof buf);
            if (r > 0) {
                if (!stdout_bytes(t, buf, (size_t)r))
                    return NULL;
            } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
                out_open = 0;
            }
        }
    }
    /* stdout ended: let stderr drain a moment so the reason can be quoted. */
    for (int i = 0; err_open && i < 20; i++) {
        struct pollfd f = {t->err_fd, POLLIN, 0};
        if (poll(&f, 1, 10) <= 0)
            continue;
        ssize_t r = read(t->err_fd, buf, sizeof buf);
        if (r <= 0)
            break;
        stderr_bytes(t, buf, (size_t)r);
    }
    char msg[MCP_ERROR_MESSAGE_MAX];
    describe_exit(t, msg, sizeof msg);
    mcp__client_on_closed(t->base.client, MCP_ERR_CLOSED, msg);
    return NULL;
}

/* ---- ops ---- */

static mcp_status t_send(mcp__ctransport *base, const mcp__out *o)
{
    stdio_t *t = (stdio_t *)base;
    struct iovec_like {
        const char *p;
        size_t n;
    } parts[2] = {{o->frame, o->len}, {"\n", 1}};
    mcp_status st = MCP_OK;
    pthread_mutex_lock(&t->send_mu);
    if (t->in_fd < 0)
        st = MCP_ERR_CLOSED;
    for (int i = 0; i < 2 && st == MCP_OK; i++) {
        const char *p = parts[i].p;
        size_t n = parts[i].n;
        while (n) {
            ssize_t w = write(t->in_fd, p, n);
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                st = MCP_ERR_CLOSED; /* EPIPE: the server is gone */
                break;
            }
            p += w;
            n -= (size_t)w;
        }
    }
    pthread_mutex_unlock(&t->send_mu);
    return st;
}

static int t_cancel(mcp__ctransport *base, uint64_t id, int modern)
{
    (void)base;
    (void)id;
    (void)modern;
    return 0; /* stdio has no per-request stream: notifications/cancelled */
}

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static void t_close(mcp__ctransport *base)
{
    stdio_t *t = (stdio_t *)base;
    /* Closing stdin is the polite way to ask a stdio server to exit. */
    pthread_mutex_lock(&t->send_mu);
    close_fd(&t->in_fd);
    pthread_mutex_unlock(&t->send_mu);
    if (t->pid > 0) {
        pthread_mutex_lock(&t->mu);
        reap_locked(t, t->grace_ms);
        if (!t->reaped) {
            kill(t->pid, SIGTERM);
            reap_locked(t, t->grace_ms);
        }
        if (!t->reaped) {
            kill(t->pid, SIGKILL);
            reap_locked(t, 5000);
        }
        pthread_mutex_unlock(&t->mu);
    }
    if (t->reader_started) {
        ssize_t w = write(t->wake[1], "x", 1);
        (void)w;
        pthread_join(t->reader, NULL);
    }
    close_fd(&t->out_fd);
    close_fd(&t->err_fd);
    close_fd(&t->wake[0]);
    close_fd(&t->wake[1]);
    pthread_mutex_destroy(&t->send_mu);
    pthread_mutex_destroy(&t->mu);
    mcp_free(t->line);
    mcp_free(t);
}

static const mcp__ctransport_ops g_ops = {t_send, t_cancel, NULL, t_close};

/* ---- starting the child ---- */

/*
 * Whether `cmd` names an executable file, looked up in PATH when it has no
 * slash, as posix_spawnp() will. Checked first so a missing command is a
 * clear MCP_ERR_IO on every platform (some spawn implementations report
 * it only as the child's exit status 127).
 */
static int command_found(const char *cmd, const char *const *envp)
{
    if (strchr(cmd, '/'))
        return access(cmd, X_OK) == 0;
    const char *path = NULL;
    for (const char *const *e = envp ? envp : (const char *const *)environ; e && *e; e++)
        if (!strncmp(*e, "PATH=", 5))
            path = *e + 5;
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char full[4096];
    while (*path) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        int len = snprintf(full, sizeof full, "%.*s%s%s", (int)n, path, n ? "/" : "", cmd);
        if (len > 0 && (size_t)len < sizeof full && access(full, X_OK) == 0)
            return 1;
        path += n + (end ? 1 : 0);
    }
    return 0;
}

static mcp_status spawn_child(stdio_t *t, const mcp_stdio_client_opts *so, mcp_error *err)
{
    if (!command_found(so->argv[0], so->envp))
        return mcp__fail(err, MCP_ERR_IO, 0, 0, "cannot start %.120s: %s", so->argv[0],
                         strchr(so->argv[0], '/') ? strerror(errno) : "not found in PATH");
    int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1};
    mcp_status st = MCP_OK;
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) ||
        (so->stderr_mode == MCP_STDERR_CAPTURE && pipe2(errp, O_CLOEXEC)) || pipe2(t->wake, O_CLOEXEC)) {
        st = mcp__fail(err, MCP_ERR_IO, 0, 0, "cannot create pipes: %s", strerror(errno));
        goto done;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    if (so->stderr_mode == MCP_STDERR_CAPTURE)
        posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    else if (so->stderr_mode == MCP_STDERR_DISCARD)
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (so->cwd)
        posix_spawn_file_actions_addchdir_np(&fa, so->cwd);
    /* The child starts with default signal handling whatever this process set. */
    posix_spawnattr_t sa;
    posix_spawnattr_init(&sa);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&sa, &none);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    posix_spawnattr_setsigdefault(&sa, &all);
    posix_spawnattr_setflags(&sa, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int rc = posix_spawnp(&t->pid, so->argv[0], &fa, &sa, (char *const *)so->argv,
                          (char *const *)(so->envp ? so->envp : (const char *const *)environ));
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&sa);
    if (rc != 0) {
        t->pid = 0;
        st = mcp__fail(err, MCP_ERR_IO, 0, 0, "cannot start %.120s: %s", so->argv[0], strerror(rc));
        goto done;
    }
    t->in_fd = in[1];
    in[1] = -1;
    t->out_fd = out[0];
    out[0] = -1;
    if (so->stderr_mode == MCP_STDERR_CAPTURE) {
        t->err_fd = errp[0];
        errp[0] = -1;
    }
done:
    for (int i = 0; i < 2; i++) {
        close_fd(&in[i]);
        close_fd(&out[i]);
        close_fd(&errp[i]);
    }
    return st;
}

mcp_status mcp_client_connect_stdio_sized(mcp_client **out, const mcp_client_opts *opts, size_t opts_size,
                                          const mcp_stdio_client_opts *so, size_t stdio_size, mcp_error *err)
{
    mcp_client_opts opts_copy;
    mcp_stdio_client_opts so_copy;
    mcp_status ost = MCP__OPTS_IN(mcp_client_opts, &opts_copy, opts, opts_size, err);
    if (!ost)
        ost = MCP__OPTS_IN(mcp_stdio_client_opts, &so_copy, so, stdio_size, err);
    if (ost)
        return ost;
    if (opts)
        opts = &opts_copy;
    if (so)
        so = &so_copy;
    if (!out || !so || !so->argv || !so->argv[0] || !so->argv[0][0])
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "out and a server command (argv) are required");
    if (so->stderr_mode > MCP_STDERR_DISCARD)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "unknown stderr_mode");
    stdio_t *t = mcp__calloc(1, sizeof *t);
    if (!t)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    t->base.ops = &g_ops;
    t->in_fd = t->out_fd = t->err_fd = t->wake[0] = t->wake[1] = -1;
    t->grace_ms = so->kill_grace_ms ? so->kill_grace_ms : DEFAULT_GRACE_MS;
    pthread_mutex_init(&t->send_mu, NULL);
    pthread_mutex_init(&t->mu, NULL);
    mcp__ignore_sigpipe();
    mcp_client *c;
    mcp_status st = mcp__client_new(&c, opts, err);
    if (st != MCP_OK) {
        t_close(&t->base);
        return st;
    }
    mcp__client_attach(c, &t->base);
    st = spawn_child(t, so, err);
    if (st == MCP_OK) {
        if (pthread_create(&t->reader, NULL, reader_main, t) != 0)
            st = mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "cannot start the reader thread");
        else
            t->reader_started = 1;
    }
    if (st == MCP_OK)
        st = mcp__client_handshake(c, err);
    if (st != MCP_OK) {
        mcp_client_close(c); /* closes the transport: the child is ended and reaped */
        return st;
    }
    *out = c;
    return MCP_OK;
}
