/*
 * Command-line words -> JSON argument objects.
 *
 * `call NAME n=5 name=Ada flag=true` sends {"n":5,"name":"Ada","flag":true}:
 * a value that is valid JSON on its own is that JSON value, anything else
 * is the literal string. So `caseId=C-1` is a string, `ids=["C-1"]` an
 * array, and a number that must stay a string is written as JSON text,
 * `code='"007"'`. Prompt and completion arguments are strings by the
 * protocol, so there every value is taken as typed.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* Whether the key of words[i] (up to its '=') already appeared before it. */
static int key_seen_before(char *const *words, int i, size_t klen)
{
    for (int j = 0; j < i; j++) {
        const char *eq = strchr(words[j], '=');
        if (eq && (size_t)(eq - words[j]) == klen && memcmp(words[j], words[i], klen) == 0)
            return 1;
    }
    return 0;
}

/* One whole JSON object given as a single word: checked, then re-written compactly. */
static mcp_status whole_object(mcp_buf *out, const char *word, char *msg, size_t cap)
{
    mcp_json_doc *doc;
    mcp_error e;
    mcp_status st = mcp_json_parse(&doc, word, strlen(word), NULL, &e);
    if (st == MCP_ERR_NOMEM)
        return st;
    if (st != MCP_OK) {
        snprintf(msg, cap, "the arguments are not valid JSON (%s at byte %zu)", e.message, e.offset);
        return MCP_ERR_INVALID_ARG;
    }
    if (mcp_json_typeof(mcp_json_doc_root(doc)) != MCP_JSON_OBJECT) {
        mcp_json_doc_free(doc);
        snprintf(msg, cap, "the arguments must be a JSON object");
        return MCP_ERR_INVALID_ARG;
    }
    mcp_jw w;
    mcp_jw_init(&w, out);
    mcp_jw_value(&w, mcp_json_doc_root(doc));
    st = mcp_jw_finish(&w);
    mcp_json_doc_free(doc);
    return st;
}

/* Writes one value: JSON when `typed` and it parses, else the string itself. */
static mcp_status write_value(mcp_jw *w, const char *value, int typed)
{
    if (typed && value[0]) {
        mcp_json_doc *doc;
        mcp_status st = mcp_json_parse(&doc, value, strlen(value), NULL, NULL);
        if (st == MCP_ERR_NOMEM)
            return st;
        if (st == MCP_OK) {
            st = mcp_jw_value(w, mcp_json_doc_root(doc));
            mcp_json_doc_free(doc);
            return st;
        }
    }
    return mcp_jw_string(w, value);
}

/* Checks that every word is key=value with a new, non-empty key. */
static mcp_status check_pairs(char *const *words, int n, char *msg, size_t cap)
{
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(words[i], '=');
        if (!eq) {
            if (words[i][0] == '{')
                snprintf(msg, cap, "a JSON object argument must be the only argument: %.80s", words[i]);
            else
                snprintf(msg, cap, "expected key=value, got \"%.80s\"", words[i]);
            return MCP_ERR_INVALID_ARG;
        }
        size_t klen = (size_t)(eq - words[i]);
        if (klen == 0) {
            snprintf(msg, cap, "empty key in \"%.80s\"", words[i]);
            return MCP_ERR_INVALID_ARG;
        }
        if (key_seen_before(words, i, klen)) {
            snprintf(msg, cap, "argument \"%.*s\" is given twice", (int)(klen > 80 ? 80 : klen), words[i]);
            return MCP_ERR_INVALID_ARG;
        }
    }
    return MCP_OK;
}

static mcp_status write_pairs(mcp_buf *out, char *const *words, int n, int typed, char *msg, size_t cap)
{
    mcp_jw w;
    mcp_jw_init(&w, out);
    mcp_status st = mcp_jw_object_begin(&w);
    for (int i = 0; st == MCP_OK && i < n; i++) {
        const char *eq = strchr(words[i], '=');
        st = mcp_jw_keyn(&w, words[i], (size_t)(eq - words[i]));
        if (st == MCP_OK)
            st = write_value(&w, eq + 1, typed);
    }
    if (st == MCP_OK)
        st = mcp_jw_object_end(&w);
    if (st == MCP_OK)
        st = mcp_jw_finish(&w);
    if (st == MCP_ERR_INVALID_ARG)
        snprintf(msg, cap, "an argument is not valid UTF-8");
    return st;
}

mcp_status cli_build_object(mcp_buf *out, char *const *words, int n, cli_arg_mode mode, char *msg, size_t cap)
{
    msg[0] = '\0';
    size_t mark = out->len;
    mcp_status st;
    if (mode == CLI_ARGS_TYPED && n == 1 && words[0][0] == '{') {
        st = whole_object(out, words[0], msg, cap);
    } else {
        st = check_pairs(words, n, msg, cap);
        if (st == MCP_OK)
            st = write_pairs(out, words, n, mode == CLI_ARGS_TYPED, msg, cap);
    }
    /* A failed call leaves `out` as it was. */
    if (st != MCP_OK) {
        out->len = mark;
        if (out->data)
            out->data[mark] = '\0';
    }
    return st;
}
