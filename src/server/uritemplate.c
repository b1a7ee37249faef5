/*
 * RFC 6570 URI templates, for matching: a requested URI against a
 * resource template, capturing the variables. Supports the expressions
 * MCP servers use (levels 1-3): {var}, {+var}, {#var}, {.var}, {/var},
 * {;var}, {?a,b}, {&a,b}. Matching is the inverse of expansion and is
 * ambiguous in general; the rules here are the usual ones: a simple
 * variable never spans '/', '?', '#' or the next literal, a reserved one
 * ({+var}) may span '/', and query expressions read name=value pairs.
 */
#include "server/uritemplate.h"
#include "util/util.h"

#include <string.h>

/* Operators. */
enum { OP_SIMPLE, OP_RESERVED, OP_FRAGMENT, OP_LABEL, OP_PATH, OP_PARAM, OP_QUERY, OP_QUERY_CONT };

static int var_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '%';
}

mcp_status mcp__uritemplate_parse(const char *tpl, mcp__uritemplate *out)
{
    memset(out, 0, sizeof *out);
    size_t n = strlen(tpl);
    const char *p = tpl, *end = tpl + n;
    while (p < end) {
        if (out->nparts >= MCP__URITEMPLATE_MAX_PARTS)
            return MCP_ERR_LIMIT;
        mcp__uripart *part = &out->parts[out->nparts];
        if (*p != '{') {
            const char *q = memchr(p, '{', (size_t)(end - p));
            if (!q)
                q = end;
            if (memchr(p, '}', (size_t)(q - p)))
                return MCP_ERR_INVALID_ARG;
            part->literal = 1;
            part->text = p;
            part->len = (size_t)(q - p);
            out->nparts++;
            p = q;
            continue;
        }
        const char *close = memchr(p, '}', (size_t)(end - p));
        if (!close)
            return MCP_ERR_INVALID_ARG;
        const char *e = p + 1;
        int op = OP_SIMPLE;
        switch (*e) {
        case '+': op = OP_RESERVED; e++; break;
        case '#': op = OP_FRAGMENT; e++; break;
        case '.': op = OP_LABEL; e++; break;
        case '/': op = OP_PATH; e++; break;
        case ';': op = OP_PARAM; e++; break;
        case '?': op = OP_QUERY; e++; break;
        case '&': op = OP_QUERY_CONT; e++; break;
        default: break;
        }
        if (e == close)
            return MCP_ERR_INVALID_ARG;
        part->literal = 0;
        part->op = op;
        part->text = e;
        part->len = (size_t)(close - e);
        /* Variable names: varchar and dots, comma-separated; no modifiers. */
        for (const char *v = e; v < close; v++)
            if (!var_char(*v) && *v != ',')
                return MCP_ERR_INVALID_ARG;
        if (e[0] == ',' || close[-1] == ',')
            return MCP_ERR_INVALID_ARG;
        out->nparts++;
        out->nvars++;
        p = close + 1;
    }
    return MCP_OK;
}

/* Stops for a value of a simple (non-reserved) expression. */
static int stops_simple(char c)
{
    return c == '/' || c == '?' || c == '#' || c == '&' || c == ',';
}

/*
 * Matches parts[i..] against uri[pos..]; on success appends captured
 * variables to `vars` (name/value pointer pairs into tpl and uri).
 */
static int match_from(const mcp__uritemplate *t, size_t i, const char *uri, size_t pos, size_t len,
                      mcp__urivars *vars)
{
    if (i == t->nparts)
        return pos == len;
    const mcp__uripart *part = &t->parts[i];
    if (part->literal) {
        if (len - pos < part->len || memcmp(uri + pos, part->text, part->len) != 0)
            return 0;
        return match_from(t, i + 1, uri, pos + part->len, len, vars);
    }
    size_t saved = vars->n;
    if (part->op == OP_QUERY || part->op == OP_QUERY_CONT) {
        /* ?a=1&b=2: read pairs; variables absent from the URI are simply missing. */
        char lead = part->op == OP_QUERY ? '?' : '&';
        size_t q = pos;
        if (q < len && uri[q] == lead) {
            q++;
            while (q <= len) {
                size_t name_end = q;
                while (name_end < len && uri[name_end] != '=' && uri[name_end] != '&' && uri[name_end] != '#')
                    name_end++;
                size_t val = name_end < len && uri[name_end] == '=' ? name_end + 1 : name_end;
                size_t val_end = val;
                while (val_end < len && uri[val_end] != '&' && uri[val_end] != '#')
                    val_end++;
                /* Keep it only when the template names it. */
                const char *names = part->text, *names_end = part->text + part->len;
                while (names < names_end) {
                    const char *comma = memchr(names, ',', (size_t)(names_end - names));
                    if (!comma)
                        comma = names_end;
                    if ((size_t)(comma - names) == name_end - q && memcmp(names, uri + q, name_end - q) == 0 &&
                        vars->n < MCP__URITEMPLATE_MAX_VARS) {
                        vars->v[vars->n].name = names;
                        vars->v[vars->n].name_len = (size_t)(comma - names);
                        vars->v[vars->n].value = uri + val;
                        vars->v[vars->n].value_len = val_end - val;
                        vars->n++;
                    }
                    names = comma + 1;
                }
                q = val_end;
                if (q < len && uri[q] == '&') {
                    q++;
                    continue;
                }
                break;
            }
        }
        if (match_from(t, i + 1, uri, q, len, vars))
            return 1;
        vars->n = saved;
        return 0;
    }
    /* One variable per expression here (lists of names only in queries). */
    if (memchr(part->text, ',', part->len))
        return 0;
    size_t start = pos;
    char prefix = 0;
    switch (part->op) {
    case OP_FRAGMENT: prefix = '#'; break;
    case OP_LABEL: prefix = '.'; break;
    case OP_PATH: prefix = '/'; break;
    case OP_PARAM: prefix = ';'; break;
    default: break;
    }
    if (prefix) {
        if (start >= len || uri[start] != prefix)
            return match_from(t, i + 1, uri, pos, len, vars); /* an undefined variable expands to nothing */
        start++;
        if (part->op == OP_PARAM) {
            if (len - start < part->len || memcmp(uri + start, part->text, part->len) != 0)
                return 0;
            start += part->len;
            if (start < len && uri[start] == '=')
                start++;
        }
    }
    int reserved = part->op == OP_RESERVED || part->op == OP_FRAGMENT;
    /* Try the longest value first, then shorter ones: the rest must match. */
    size_t stop = start;
    while (stop < len && (reserved ? uri[stop] != '?' || part->op == OP_FRAGMENT : !stops_simple(uri[stop])) &&
           !(part->op == OP_LABEL && uri[stop] == '.'))
        stop++;
    for (size_t e = stop;; e--) {
        if (e > start || part->op != OP_SIMPLE) {
            if (vars->n < MCP__URITEMPLATE_MAX_VARS) {
                vars->v[vars->n].name = part->text;
                vars->v[vars->n].name_len = part->len;
                vars->v[vars->n].value = uri + start;
                vars->v[vars->n].value_len = e - start;
                vars->n++;
                if (match_from(t, i + 1, uri, e, len, vars))
                    return 1;
                vars->n = saved;
            }
        }
        if (e == start)
            break;
    }
    return 0;
}

int mcp__uritemplate_match(const mcp__uritemplate *t, const char *uri, size_t len, mcp__urivars *vars)
{
    vars->n = 0;
    return match_from(t, 0, uri, 0, len, vars);
}
