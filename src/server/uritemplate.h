/*
 * RFC 6570 URI template matching (see uritemplate.c). Internal.
 */
#ifndef MCP_URITEMPLATE_H
#define MCP_URITEMPLATE_H

#include "mcp/base.h"

#define MCP__URITEMPLATE_MAX_PARTS 32
#define MCP__URITEMPLATE_MAX_VARS 32

/* A literal run or one {expression}; pointers into the template text. */
typedef struct mcp__uripart {
    int literal;       /* 1: literal text, 0: expression */
    int op;            /* expression operator */
    const char *text;  /* literal text, or the expression's variable list */
    size_t len;        /* its length */
} mcp__uripart;

/* A parsed template; it borrows the template string, which must outlive it. */
typedef struct mcp__uritemplate {
    mcp__uripart parts[MCP__URITEMPLATE_MAX_PARTS]; /* in order */
    size_t nparts;     /* how many */
    size_t nvars;      /* expressions */
} mcp__uritemplate;

/* Variables captured by a match; pointers into the template and the URI. */
typedef struct mcp__urivars {
    struct {
        const char *name;  /* variable name */
        size_t name_len;   /* its length */
        const char *value; /* raw (still percent-encoded) value */
        size_t value_len;  /* its length */
    } v[MCP__URITEMPLATE_MAX_VARS];
    size_t n;          /* how many */
} mcp__urivars;

/* MCP_OK, MCP_ERR_INVALID_ARG (malformed), MCP_ERR_LIMIT (too many parts). */
mcp_status mcp__uritemplate_parse(const char *tpl, mcp__uritemplate *out);

/* 1 when `uri` matches, with the variables in `vars`. */
int mcp__uritemplate_match(const mcp__uritemplate *t, const char *uri, size_t len, mcp__urivars *vars);

#endif /* MCP_URITEMPLATE_H */
