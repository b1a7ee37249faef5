/*
 * Load generator for bench/stdio: starts an MCP server as a child process
 * with pipes on its stdin and stdout, opens a session (initialize with
 * protocol 2025-11-25, then notifications/initialized), warms it up, and
 * then, for each window size K, runs N tools/call requests with at most K
 * in flight. A reader thread matches the answers to their requests by id.
 *
 * Per phase it measures
 *   - calls per second (first request written -> last answer read),
 *   - p50 and p99 latency of one call (request written -> answer read),
 *   - the server's CPU time per call: user + system time of the whole child
 *     process (every thread) over the phase, read from its CPU-time clock
 *     (clock_getcpuclockid; /proc/PID/stat as a fallback), divided by calls,
 * and for the process its peak RSS (VmHWM from /proc/PID/status just before
 * its input is closed; wait4()'s ru_maxrss when /proc cannot tell).
 *
 * The main thread writes the first window; from then on the reader thread,
 * after matching a chunk of answers, refills the freed slots itself with one
 * write(), so no hand-off between threads sits on the critical path. Answers
 * are read in 64 KiB chunks, requests are formatted from a template, and
 * latency is taken with one clock read per chunk: the driver stays cheap,
 * so the server, not the driver, is measured. (A window of K requests must
 * fit in a pipe buffer, 64 KiB, so that writing never blocks: K <= 256.)
 *
 * Every answer is checked: it must be a result (no "error", no
 * "isError":true) and carry the echoed text; anything else counts as an
 * error. The echoed text contains no quote, so the first "id": in an
 * answer is its JSON-RPC id whatever the order of the members.
 *
 * Output, one line per window (for bench/stdio/run.sh), after the child ends:
 *   row LABEL K CALLS SECONDS CALLS_PER_S P50_US P99_US CPU_US_PER_CALL RSS_MB ERRORS
 * and comment lines starting with '#'.
 *
 * usage: loadgen [--label NAME] [--calls N] [--warmup N] [--windows K[:N],...]
 *                [--time-cap SECONDS] [--tool NAME] -- COMMAND [ARG...]
 *   --calls N      measured calls per window (default 20000)
 *   --windows      window sizes in order (default 1,64); K:N gives that
 *                  window its own number of calls
 *   --warmup N     calls at the last window before measuring (default 2000)
 *   --time-cap S   a phase issues no new call after S seconds (default 15)
 *   --tool NAME    the tool to call (default echo); its answer must echo TEXT
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TEXT "hello from the libmcp stdio bench"
#define MAX_WINDOWS 8
#define MAX_K 256
#define READ_CAP (1u << 16)
#define DRAIN_TIMEOUT_S 30 /* an answer that takes longer than this ends the run */

/* ---- options and results ------------------------------------------------ */

typedef struct opts {
    const char *label;          /* row label */
    long calls;                 /* measured calls per window */
    long warmup;                /* calls before the first measured phase */
    int windows[MAX_WINDOWS];   /* window sizes, in order */
    long wcalls[MAX_WINDOWS];   /* calls per window; 0 = `calls` */
    int nwindows;               /* how many */
    double time_cap;            /* a phase stops issuing calls after this many seconds */
    const char *tool;           /* tool to call */
    char **cmd;                 /* server command line */
} opts;

typedef struct phase_result {
    int k;           /* window */
    long calls;      /* answered calls */
    double secs;     /* wall time of the phase */
    double p50_us;   /* median latency */
    double p99_us;   /* 99th percentile latency */
    double cpu_us;   /* server CPU time per call */
    long errors;     /* error answers, unknown ids, missing text */
} phase_result;

/* ---- shared state between the main thread and the reader ---------------- */

typedef struct state {
    pthread_mutex_t mu;   /* guards everything below but the read buffer */
    pthread_cond_t cv;    /* signalled when a phase completes or the server's output ends */
    int eof;              /* the server's output ended */

    /* The phase being run (set up by the main thread). */
    int k;                /* window */
    long n;               /* calls to issue */
    long base_id;         /* id of the phase's first request */
    uint64_t t0;          /* phase start */
    uint64_t cap_ns;      /* no new calls after t0 + cap_ns */
    long sent;            /* requests written */
    long in_flight;       /* written and not answered */
    int stopped;          /* the time cap ended issuing */
    int done;             /* every request written was answered */
    uint64_t *sent_ns;    /* send time per id - base_id */
    uint64_t *lat_ns;     /* latency per id - base_id; 0 = not answered */
    long answered;        /* answers to ids of the phase */
    long errors;          /* error answers and strays */
    uint64_t last_ns;     /* when the last answer was read */

    int in_fd;            /* the child's stdin */
    char *wbuf;           /* request batch buffer */
    int out_fd;           /* the child's stdout */
    char *rbuf;           /* read buffer (reader only) */
    size_t rhave;         /* bytes of an unfinished line at the start of rbuf */
} state;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "loadgen: %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(1);
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The id of an answer line, or -1 when it has none (or not an integer). */
static long line_id(const char *line, size_t len)
{
    const char *p = memmem(line, len, "\"id\":", 5);
    if (!p)
        return -1;
    p += 5;
    const char *end = line + len;
    if (p >= end || *p < '0' || *p > '9')
        return -1;
    long v = 0;
    while (p < end && *p >= '0' && *p <= '9')
        v = v * 10 + (*p++ - '0');
    return v;
}

static int line_ok(const char *line, size_t len)
{
    return memmem(line, len, "\"result\":", 9) && !memmem(line, len, "\"error\":", 8) &&
           !memmem(line, len, "\"isError\":true", 14) && memmem(line, len, TEXT, sizeof TEXT - 1);
}

/*
 * Reads one chunk from the server. Returns the number of bytes read (0 at
 * EOF, -1 on error); the complete lines then go to each_line().
 */
static ssize_t read_chunk(state *s)
{
    ssize_t n;
    do
        n = read(s->out_fd, s->rbuf + s->rhave, READ_CAP - s->rhave);
    while (n < 0 && errno == EINTR);
    if (n > 0)
        s->rhave += (size_t)n;
    return n;
}

static void each_line(state *s, void (*fn)(state *s, const char *line, size_t len, uint64_t t), uint64_t t)
{
    char *p = s->rbuf, *end = s->rbuf + s->rhave;
    char *nl;
    while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
        fn(s, p, (size_t)(nl - p), t);
        p = nl + 1;
    }
    s->rhave = (size_t)(end - p);
    if (s->rhave == READ_CAP) {
        fprintf(stderr, "loadgen: an answer longer than %u bytes\n", READ_CAP);
        exit(1);
    }
    memmove(s->rbuf, p, s->rhave);
}

/* ---- requests --------------------------------------------------------------- */

static const char *g_req_tail; /* after the id: method, params, newline */
static size_t g_req_tail_len;

static char *put_long(char *o, long v)
{
    char tmp[24];
    int n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    while (n)
        *o++ = tmp[--n];
    return o;
}

static char *put_request(char *o, long id)
{
    static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
    memcpy(o, head, sizeof head - 1);
    o = put_long(o + sizeof head - 1, id);
    memcpy(o, g_req_tail, g_req_tail_len);
    return o + g_req_tail_len;
}

/*
 * Fills the free slots of the window with one write(), unless the phase has
 * issued all its calls or ran out of time. Called with s->mu held.
 */
static void issue_locked(state *s)
{
    if (s->stopped || s->sent >= s->n)
        return;
    uint64_t t = now_ns();
    if (t - s->t0 > s->cap_ns) {
        s->stopped = 1;
        return;
    }
    long m = s->k - s->in_flight;
    if (m > s->n - s->sent)
        m = s->n - s->sent;
    if (m <= 0)
        return;
    char *o = s->wbuf;
    for (long i = 0; i < m; i++) {
        o = put_request(o, s->base_id + s->sent + i);
        s->sent_ns[s->sent + i] = t;
    }
    s->sent += m;
    s->in_flight += m;
    if (write_all(s->in_fd, s->wbuf, (size_t)(o - s->wbuf)))
        die("writing requests");
}

/* ---- the reader thread ---------------------------------------------------- */

static void on_answer(state *s, const char *line, size_t len, uint64_t t)
{
    long id = line_id(line, len);
    long i = id - s->base_id;
    if (id < 0 || i < 0 || i >= s->sent || s->lat_ns[i] != 0) {
        s->errors++; /* a stray: notification, unknown or repeated id */
        fprintf(stderr, "loadgen: unexpected line: %.*s\n", (int)(len > 200 ? 200 : len), line);
        return;
    }
    if (!line_ok(line, len)) {
        s->errors++;
        if (s->errors <= 3)
            fprintf(stderr, "loadgen: error answer: %.*s\n", (int)(len > 300 ? 300 : len), line);
    }
    uint64_t d = t - s->sent_ns[i];
    s->lat_ns[i] = d ? d : 1;
    s->answered++;
    s->in_flight--;
}

static void *reader(void *arg)
{
    state *s = arg;
    for (;;) {
        ssize_t n = read_chunk(s);
        uint64_t t = now_ns(); /* one timestamp per chunk: its answers arrived together */
        pthread_mutex_lock(&s->mu);
        if (n <= 0) {
            s->eof = 1;
            pthread_cond_signal(&s->cv);
            pthread_mutex_unlock(&s->mu);
            return NULL;
        }
        long before = s->answered;
        each_line(s, on_answer, t);
        if (s->answered != before) {
            s->last_ns = t;
            issue_locked(s); /* refill the window right here */
            if (s->in_flight == 0 && (s->stopped || s->sent >= s->n)) {
                s->done = 1;
                pthread_cond_signal(&s->cv);
            }
        }
        pthread_mutex_unlock(&s->mu);
    }
}

/* ---- the child -------------------------------------------------------------- */

typedef struct child {
    pid_t pid;       /* the server */
    int in_fd;       /* its stdin (we write) */
    int out_fd;      /* its stdout (we read) */
    clockid_t clk;   /* its CPU-time clock */
    int have_clk;    /* clk is usable */
} child;

static void spawn(child *c, char **cmd)
{
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
        die("pipe");
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        if (dup2(to[0], 0) < 0 || dup2(from[1], 1) < 0)
            _exit(127);
        execvp(cmd[0], cmd);
        fprintf(stderr, "loadgen: cannot run %s: %s\n", cmd[0], strerror(errno));
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    c->pid = pid;
    c->in_fd = to[1];
    c->out_fd = from[0];
    c->have_clk = clock_getcpuclockid(pid, &c->clk) == 0;
}

/* CPU time (user + system, every thread) the child has used, in ns. */
static uint64_t child_cpu_ns(child *c)
{
    struct timespec ts;
    if (c->have_clk && clock_gettime(c->clk, &ts) == 0)
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    /* Fallback: utime and stime (fields 14 and 15) in clock ticks. */
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)c->pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return 0;
    return (uint64_t)(ut + st) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* VmHWM of the child in KiB, or 0. */
static long child_hwm_kb(child *c)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)c->pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* ---- the handshake ------------------------------------------------------ */

static int g_init_ok = -1; /* -1 waiting; 0 error answer; 1 result */

static void on_init_answer(state *s, const char *line, size_t len, uint64_t t)
{
    (void)s;
    (void)t;
    if (line_id(line, len) == 0)
        g_init_ok = memmem(line, len, "\"result\":", 9) && !memmem(line, len, "\"error\":", 8);
    /* Anything else before it (a log notification) is ignored. */
}

/* Runs before the reader thread starts: the main thread reads the answer itself. */
static void handshake(child *c, state *s)
{
    static const char init[] =
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
        "\"capabilities\":{},\"clientInfo\":{\"name\":\"libmcp-loadgen\",\"version\":\"1.0.0\"}}}\n";
    static const char initialized[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    if (write_all(c->in_fd, init, sizeof init - 1))
        die("writing initialize");
    while (g_init_ok < 0) {
        if (read_chunk(s) <= 0) {
            fprintf(stderr, "loadgen: the server ended before answering initialize\n");
            exit(1);
        }
        each_line(s, on_init_answer, 0);
    }
    if (!g_init_ok) {
        fprintf(stderr, "loadgen: initialize failed\n");
        exit(1);
    }
    if (write_all(c->in_fd, initialized, sizeof initialized - 1))
        die("writing notifications/initialized");
}

/* ---- one phase ---------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static long g_next_id = 1;

static void run_phase(child *c, state *s, int k, long n, double cap_s, phase_result *r)
{
    /* Nothing is in flight between phases, so the reader is idle. */
    pthread_mutex_lock(&s->mu);
    s->k = k;
    s->n = n;
    s->base_id = g_next_id;
    s->sent = s->in_flight = s->answered = s->errors = 0;
    s->stopped = s->done = 0;
    memset(s->lat_ns, 0, (size_t)n * sizeof *s->lat_ns);
    s->cap_ns = (uint64_t)(cap_s * 1e9);
    uint64_t cpu0 = child_cpu_ns(c);
    s->t0 = now_ns();
    issue_locked(s); /* the first window; the reader refills it */
    long progress = -1;
    while (!s->done && !s->eof) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += DRAIN_TIMEOUT_S;
        if (pthread_cond_timedwait(&s->cv, &s->mu, &until) == ETIMEDOUT) {
            if (s->answered == progress) {
                fprintf(stderr, "loadgen: no answer for %d s (%ld in flight)\n", DRAIN_TIMEOUT_S, s->in_flight);
                exit(1);
            }
            progress = s->answered;
        }
    }
    if (!s->done) {
        fprintf(stderr, "loadgen: the server (pid %d) ended during the run\n", (int)c->pid);
        exit(1);
    }
    uint64_t t1 = s->last_ns;
    long sent = s->sent, answered = s->answered, errors = s->errors;
    pthread_mutex_unlock(&s->mu);
    uint64_t cpu1 = child_cpu_ns(c);
    g_next_id += sent;

    r->k = k;
    r->calls = answered;
    r->secs = t1 > s->t0 ? (double)(t1 - s->t0) * 1e-9 : 0;
    r->errors = errors + (sent - answered);
    r->cpu_us = answered ? (double)(cpu1 - cpu0) * 1e-3 / (double)answered : 0;
    uint64_t *lat = malloc((size_t)(answered ? answered : 1) * sizeof *lat);
    if (!lat)
        die("malloc");
    long m = 0;
    for (long i = 0; i < sent; i++)
        if (s->lat_ns[i])
            lat[m++] = s->lat_ns[i];
    qsort(lat, (size_t)m, sizeof *lat, cmp_u64);
    r->p50_us = m ? (double)lat[(m - 1) * 50 / 100] * 1e-3 : 0;
    r->p99_us = m ? (double)lat[(m - 1) * 99 / 100] * 1e-3 : 0;
    free(lat);
}

/* ---- main ------------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr, "usage: loadgen [--label NAME] [--calls N] [--warmup N] [--windows K[:N],...]\n"
                    "               [--time-cap SECONDS] [--tool NAME] -- COMMAND [ARG...]\n");
    exit(2);
}

static void parse_opts(opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->label = "server";
    o->calls = 20000;
    o->warmup = 2000;
    o->windows[0] = 1;
    o->windows[1] = 64;
    o->nwindows = 2;
    o->time_cap = 15;
    o->tool = "echo";
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        if (strcmp(a, "--label") == 0) {
            o->label = v;
        } else if (strcmp(a, "--calls") == 0) {
            o->calls = atol(v);
        } else if (strcmp(a, "--warmup") == 0) {
            o->warmup = atol(v);
        } else if (strcmp(a, "--time-cap") == 0) {
            o->time_cap = atof(v);
        } else if (strcmp(a, "--tool") == 0) {
            o->tool = v;
        } else if (strcmp(a, "--windows") == 0) {
            o->nwindows = 0;
            for (const char *p = v; *p && o->nwindows < MAX_WINDOWS;) {
                char *e;
                long k = strtol(p, &e, 10);
                if (e == p || k < 1 || k > MAX_K)
                    usage();
                long n = 0;
                if (*e == ':') {
                    const char *q = e + 1;
                    n = strtol(q, &e, 10);
                    if (e == q || n < 1)
                        usage();
                }
                o->wcalls[o->nwindows] = n;
                o->windows[o->nwindows++] = (int)k;
                if (*e && *e != ',')
                    usage();
                p = *e == ',' ? e + 1 : e;
            }
        } else {
            usage();
        }
    }
    if (i >= argc || o->calls < 1 || o->warmup < 0 || o->nwindows == 0 || o->time_cap <= 0)
        usage();
    for (int w = 0; w < o->nwindows; w++)
        if (!o->wcalls[w])
            o->wcalls[w] = o->calls;
    o->cmd = argv + i;
}

int main(int argc, char **argv)
{
    opts o;
    parse_opts(&o, argc, argv);
    signal(SIGPIPE, SIG_IGN);

    /* The request after its id: the same for every call. */
    char *tail = malloc(strlen(o.tool) + 256);
    if (!tail)
        die("malloc");
    g_req_tail_len = (size_t)sprintf(tail,
                                     ",\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                                     "\"arguments\":{\"text\":\"" TEXT "\"}}}\n",
                                     o.tool);
    g_req_tail = tail;

    child c;
    spawn(&c, o.cmd);
    state s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    s.in_fd = c.in_fd;
    s.out_fd = c.out_fd;
    s.wbuf = malloc((size_t)MAX_K * (64 + g_req_tail_len));
    s.rbuf = malloc(READ_CAP + 1);
    long cap = o.warmup;
    for (int i = 0; i < o.nwindows; i++)
        if (o.wcalls[i] > cap)
            cap = o.wcalls[i];
    s.sent_ns = malloc((size_t)cap * sizeof *s.sent_ns);
    s.lat_ns = malloc((size_t)cap * sizeof *s.lat_ns);
    if (!s.wbuf || !s.rbuf || !s.sent_ns || !s.lat_ns)
        die("malloc");

    handshake(&c, &s);
    pthread_t rt;
    if (pthread_create(&rt, NULL, reader, &s))
        die("pthread_create");

    phase_result res[MAX_WINDOWS];
    if (o.warmup) {
        phase_result w;
        int wk = o.windows[o.nwindows - 1];
        run_phase(&c, &s, wk, o.warmup, o.time_cap, &w);
        if (w.errors)
            fprintf(stderr, "loadgen: %s: %ld errors during warm-up\n", o.label, w.errors);
    }
    for (int i = 0; i < o.nwindows; i++)
        run_phase(&c, &s, o.windows[i], o.wcalls[i], o.time_cap, &res[i]);

    long hwm_kb = child_hwm_kb(&c);
    close(c.in_fd); /* end of input: the server exits */
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    for (int waited = 0;; waited++) {
        pid_t p = wait4(c.pid, &status, WNOHANG, &ru);
        if (p == c.pid)
            break;
        if (p < 0 && errno != EINTR)
            die("wait4");
        if (waited == 500) { /* 5 s */
            fprintf(stderr, "loadgen: %s did not exit at end of input; killing it\n", o.label);
            kill(c.pid, SIGKILL);
        }
        usleep(10000);
    }
    pthread_join(rt, NULL);
    if (!hwm_kb)
        hwm_kb = ru.ru_maxrss;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(stderr, "loadgen: %s exited with status %d\n", o.label,
                WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));

    printf("# %s: %s%s; cpu from %s; peak RSS VmHWM %ld KiB, ru_maxrss %ld KiB\n", o.label, o.cmd[0],
           o.cmd[1] ? " ..." : "", c.have_clk ? "clock_getcpuclockid" : "/proc/PID/stat", hwm_kb, ru.ru_maxrss);
    for (int i = 0; i < o.nwindows; i++) {
        phase_result *r = &res[i];
        printf("row %s %d %ld %.3f %.0f %.1f %.1f %.2f %.1f %ld\n", o.label, r->k, r->calls, r->secs,
               r->secs > 0 ? (double)r->calls / r->secs : 0, r->p50_us, r->p99_us, r->cpu_us,
               (double)hwm_kb / 1024.0, r->errors);
    }
    free(tail);
    free(s.wbuf);
    free(s.rbuf);
    free(s.sent_ns);
    free(s.lat_ns);
    return 0;
}
