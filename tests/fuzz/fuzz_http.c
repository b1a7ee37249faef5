/*
 * Fuzz target: what the HTTP transport parses from peer-controlled headers
 * (Accept, Host, SEP-2243 header values with their strict base64 form, the
 * header/argument comparison, Last-Event-ID) and the listen-address
 * parser; and the per-address quota bookkeeping, driven by a script of
 * requests that open and close sessions, streams and requests in flight
 * from a few addresses, checked against a model. The input is split at
 * NUL bytes into the fields; the script is the last one.
 */
#include "transport/http_internal.h"
#include <mcp/mcp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Next NUL-terminated field of the input (copied), or "" past the end. */
static char *field(const uint8_t **p, const uint8_t *end)
{
    const uint8_t *z = memchr(*p, 0, (size_t)(end - *p));
    size_t n = (size_t)((z ? z : end) - *p);
    char *s = malloc(n + 1);
    memcpy(s, *p, n);
    s[n] = '\0';
    *p = z ? z + 1 : end;
    return s;
}

/* A Last-Event-ID is accepted only in the form the server writes. */
static void event_id(const char *v)
{
    uint64_t a, b;
    if (!mcp__http_event_id(v, &a, &b))
        return;
    char back[48];
    snprintf(back, sizeof back, "%llu_%llu", (unsigned long long)a, (unsigned long long)b);
    if (strcmp(back, v) != 0)
        abort();
}

/*
 * The quota script: each byte is one step. Its low 2 bits pick the kind
 * (session, stream, request in flight, or a close of the kind in the next
 * bits), bits 2-3 the address (one of 4), bits 4-5 which kind a close
 * returns. Limits are small so refusals happen; the table must agree with
 * the model after every step and be empty once everything is returned.
 */
static void quota_script(const char *script, size_t n)
{
    static const unsigned limit[3] = {2, 3, 1};
    unsigned held[3][4] = {{0}};
    mcp__quota *q;
    if (mcp__quota_new(&q) != MCP_OK)
        return;
    char key[32];
    for (size_t i = 0; i < n; i++) {
        unsigned c = (unsigned char)script[i], op = c & 3u, addr = (c >> 2) & 3u;
        unsigned kind = op == 3 ? ((c >> 4) & 3u) % 3u : op;
        snprintf(key, sizeof key, "%c127.0.0.%u", "sra"[kind], addr + 2);
        if (op == 3) {
            mcp__quota_give(q, key);
            held[kind][addr] -= held[kind][addr] > 0;
        } else {
            int took = mcp__quota_take(q, key, limit[kind]);
            if (took != (held[kind][addr] < limit[kind]))
                abort();
            held[kind][addr] += (unsigned)took;
        }
        if (mcp__quota_count(q, key) != held[kind][addr])
            abort();
    }
    for (unsigned k = 0; k < 3; k++)
        for (unsigned a = 0; a < 4; a++)
            for (; held[k][a]; held[k][a]--) {
                snprintf(key, sizeof key, "%c127.0.0.%u", "sra"[k], a + 2);
                mcp__quota_give(q, key);
            }
    if (mcp__quota_entries(q) != 0)
        abort();
    mcp__quota_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    char *accept = field(&p, end);
    char *type = field(&p, end);
    char *host = field(&p, end);
    char *hv = field(&p, end);
    char *json = field(&p, end);
    char *last_id = field(&p, end);
    const char *script = (const char *)p; /* the rest, NULs included */
    size_t script_len = (size_t)(end - p);

    (void)mcp__http_accepts(accept, type[0] ? type : "application/json");
    (void)mcp__http_accepts(accept, "text/event-stream");

    char h[64];
    size_t hl = mcp__http_host_part(host, h, sizeof h);
    if (hl >= sizeof h || (hl && strlen(h) != hl))
        abort();

    char v[128];
    size_t vl = 0;
    if (mcp__http_header_value(hv, v, sizeof v, &vl)) {
        if (vl >= sizeof v)
            abort();
        mcp_json_doc *d;
        if (mcp_json_parse(&d, json, strlen(json), NULL, NULL) == MCP_OK) {
            (void)mcp__http_header_matches(v, vl, mcp_json_doc_root(d));
            mcp_json_doc_free(d);
        }
    }

    mcp_http_opts o;
    memset(&o, 0, sizeof o);
    char hb[32];
    if (mcp_http_parse_listen(host, &o, hb, sizeof hb) == MCP_OK && o.port > 65535)
        abort();

    event_id(last_id);
    quota_script(script, script_len);

    free(accept);
    free(type);
    free(host);
    free(hv);
    free(json);
    free(last_id);
    return 0;
}
