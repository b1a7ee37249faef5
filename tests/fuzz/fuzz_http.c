/*
 * Fuzz target: what the HTTP transport parses from peer-controlled headers
 * (Accept, Host, SEP-2243 header values with their strict base64 form, the
 * header/argument comparison) and the listen-address parser. The input is
 * split at NUL bytes into the fields.
 */
#include "transport/http_internal.h"
#include <mcp/mcp.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    char *accept = field(&p, end);
    char *type = field(&p, end);
    char *host = field(&p, end);
    char *hv = field(&p, end);
    char *json = field(&p, end);

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

    free(accept);
    free(type);
    free(host);
    free(hv);
    free(json);
    return 0;
}
