/*
 * The lower bound for bench/stdio: a program that answers every request
 * line on stdin with a canned tools/call result, copying only the request's
 * id. It parses nothing else, validates nothing and allocates nothing per
 * line; its answers to one read() leave in one write(). Whatever a real
 * server adds over this is the cost of being a server.
 *
 * Lines without an "id" (notifications) get no answer, as JSON-RPC wants;
 * every other line, whatever its method, gets the same result.
 *
 * usage: canned    (bench/stdio/run.sh starts it through loadgen)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define IN_CAP (1u << 16)
#define OUT_CAP (1u << 18)

static const char g_head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
static const char g_tail[] =
    ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hello from the libmcp stdio bench\"}]}}\n";

static int write_all(const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(1, p, n);
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

/* Appends the answer to one line (when it has an id) at `out`; returns the new end. */
static char *answer(const char *line, size_t len, char *out)
{
    const char *id = memmem(line, len, "\"id\":", 5);
    if (!id)
        return out;
    const char *v = id + 5, *end = line + len;
    const char *e = v;
    if (e < end && *e == '"') { /* a string id, copied with its quotes */
        e++;
        while (e < end && *e != '"')
            e += *e == '\\' ? 2 : 1;
        e = e < end ? e + 1 : end;
    } else {
        while (e < end && *e != ',' && *e != '}')
            e++;
    }
    memcpy(out, g_head, sizeof g_head - 1);
    out += sizeof g_head - 1;
    memcpy(out, v, (size_t)(e - v));
    out += e - v;
    memcpy(out, g_tail, sizeof g_tail - 1);
    return out + sizeof g_tail - 1;
}

int main(void)
{
    static char in[IN_CAP], out[OUT_CAP];
    size_t have = 0; /* bytes of an unfinished line at the start of `in` */
    for (;;) {
        ssize_t n = read(0, in + have, IN_CAP - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0;
        have += (size_t)n;
        char *o = out, *p = in, *end = in + have;
        char *nl;
        while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
            /* Room for the longest answer: head + a line-long id + tail. */
            if ((size_t)(out + OUT_CAP - o) < (size_t)(nl - p) + sizeof g_head + sizeof g_tail) {
                if (write_all(out, (size_t)(o - out)))
                    return 1;
                o = out;
            }
            o = answer(p, (size_t)(nl - p), o);
            p = nl + 1;
        }
        if (o > out && write_all(out, (size_t)(o - out)))
            return 1;
        have = (size_t)(end - p);
        if (have == IN_CAP) /* a line longer than the buffer: not ours to answer */
            have = 0;
        memmove(in, p, have);
    }
}
