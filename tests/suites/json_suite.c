/*
 * JSONTestSuite runner: parses every file of test_parsing/ (given as argv[1])
 * and checks the verdict the file name asks for: y_ accepted, n_ rejected,
 * i_ either (the choice is printed). Every accepted document is also
 * written back and re-parsed, and the second writing must equal the first.
 * Files are read as bytes; several contain NUL bytes or invalid UTF-8.
 */
#include "mcp/json.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *p = malloc(cap);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            p = realloc(p, cap);
        }
        size_t r = fread(p + n, 1, cap - n, f);
        if (r == 0)
            break;
        n += r;
    }
    fclose(f);
    *len = n;
    return p;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Writes the document, parses that, writes again: both writings must match. */
static int round_trip(const mcp_json_doc *doc)
{
    mcp_buf a, b;
    mcp_buf_init(&a, 0);
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &a);
    int ok = 0;
    if (mcp_jw_value(&w, mcp_json_doc_root(doc)) == MCP_OK && mcp_jw_finish(&w) == MCP_OK) {
        mcp_json_doc *d2;
        if (mcp_json_parse(&d2, a.data, a.len, NULL, NULL) == MCP_OK) {
            mcp_jw_init(&w, &b);
            if (mcp_jw_value(&w, mcp_json_doc_root(d2)) == MCP_OK && a.len == b.len &&
                memcmp(a.data, b.data, a.len) == 0)
                ok = 1;
            mcp_json_doc_free(d2);
        }
    }
    mcp_buf_cleanup(&a);
    mcp_buf_cleanup(&b);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: json_suite TEST_PARSING_DIR\n");
        return 2;
    }
    DIR *dir = opendir(argv[1]);
    if (!dir) {
        fprintf(stderr, "json_suite: cannot open %s\n", argv[1]);
        return 2;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        size_t l = strlen(de->d_name);
        if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0)
            continue;
        if (count == cap) {
            cap = cap ? cap * 2 : 512;
            names = realloc(names, cap * sizeof *names);
        }
        names[count++] = strdup(de->d_name);
    }
    closedir(dir);
    qsort(names, count, sizeof *names, cmp);

    int y_total = 0, y_ok = 0, n_total = 0, n_ok = 0, i_total = 0, i_acc = 0, rt_fail = 0;
    for (size_t k = 0; k < count; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], names[k]);
        size_t len;
        char *text = read_file(path, &len);
        if (!text) {
            printf("FAIL %s: cannot read\n", names[k]);
            continue;
        }
        mcp_json_doc *doc = NULL;
        mcp_error err;
        mcp_status st = mcp_json_parse(&doc, text, len, NULL, &err);
        int accepted = st == MCP_OK;
        if (accepted && !round_trip(doc)) {
            printf("FAIL %s: write/parse/write round trip differs\n", names[k]);
            rt_fail++;
        }
        switch (names[k][0]) {
        case 'y':
            y_total++;
            if (accepted)
                y_ok++;
            else
                printf("FAIL %s: rejected (%s)\n", names[k], err.message);
            break;
        case 'n':
            n_total++;
            if (!accepted)
                n_ok++;
            else
                printf("FAIL %s: accepted\n", names[k]);
            break;
        default:
            i_total++;
            i_acc += accepted;
            printf("i_ %-50s %s%s%s\n", names[k], accepted ? "accepted" : "rejected",
                   accepted ? "" : ": ", accepted ? "" : err.message);
        }
        mcp_json_doc_free(doc);
        free(text);
        free(names[k]);
    }
    free(names);
    printf("JSONTestSuite: y_ %d/%d accepted, n_ %d/%d rejected, %d i_ without crash "
           "(%d accepted, %d rejected), %d round-trip failures\n",
           y_ok, y_total, n_ok, n_total, i_total, i_acc, i_total - i_acc, rt_fail);
    int failed = (y_total - y_ok) + (n_total - n_ok) + rt_fail;
    printf("json_suite: %d passed, %d failed\n", y_ok + n_ok + i_total - rt_fail, failed);
    return failed ? 1 : 0;
}
