/*
 * Runs the official JSON-Schema-Test-Suite against libmcp's validator.
 *
 *     schema_suite TESTDATA_DIR [-v]
 *
 * TESTDATA_DIR is the folder holding JSON-Schema-Test-Suite/ (tests/data).
 * Every file under remotes/ is registered as
 * http://localhost:1234/<relative path>; then the required tests of
 * draft2020-12 and draft7 run (one line per file), followed by the
 * optional/ and optional/format/ files (format ones with format assertion
 * on), reported on their own lines. Each test is checked twice, with the
 * yes/no mcp_schema_check and with the full-report mcp_schema_validate, and
 * both must give the expected answer.
 *
 * Exit status is non-zero iff a required test fails. The last line is
 * "N passed, N failed" for the required tests.
 */
#include "mcp/json.h"
#include "mcp/schema.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * Cases skipped by name. `test` NULL skips the whole case. Only cases whose
 * data lies outside the suite (the official meta-schemas, which the suite
 * does not ship and which we never fetch) are skipped among the required.
 */
static const struct {
    const char *draft;  /* "draft2020-12" or "draft7" */
    const char *file;   /* file name relative to the draft directory */
    const char *cas;    /* case description */
    const char *test;   /* test description, or NULL for the whole case */
    const char *reason; /* why */
} skips[] = {
    {"draft2020-12", "ref.json", "remote ref, containing refs itself", NULL,
     "$ref to the 2020-12 meta-schema, which is not in the test data"},
    {"draft2020-12", "defs.json", "validate definition against metaschema", NULL,
     "$ref to the 2020-12 meta-schema, which is not in the test data"},
    {"draft7", "ref.json", "remote ref, containing refs itself", NULL,
     "$ref to the draft-07 meta-schema, which is not in the test data"},
    {"draft7", "definitions.json", "validate definition against metaschema", NULL,
     "$ref to the draft-07 meta-schema, which is not in the test data"},
};

typedef struct counts {
    long pass; /* tests with the expected answer */
    long fail; /* wrong answers, errors */
    long skip; /* skipped by name */
} counts;

static int verbose;

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    *len = n;
    return buf;
}

static mcp_json_doc *parse_file(const char *path)
{
    size_t len = 0;
    char *text = read_file(path, &len);
    if (!text) {
        fprintf(stderr, "cannot read %s\n", path);
        return NULL;
    }
    mcp_json_doc *doc = NULL;
    mcp_error err;
    mcp_json_parse_opts po;
    memset(&po, 0, sizeof(po));
    po.max_depth = 1000;
    if (mcp_json_parse(&doc, text, len, &po, &err) != MCP_OK)
        fprintf(stderr, "cannot parse %s: %s\n", path, err.message);
    free(text);
    return doc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists *.json files (sorted) of a directory; returns the count. */
static size_t list_json(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    size_t n = 0, cap = 0;
    char **v = NULL;
    *out = NULL;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            v = realloc(v, cap * sizeof(*v));
        }
        v[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(v, n, sizeof(*v), cmp_str);
    *out = v;
    return n;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Registers every .json file under dir (recursively) as base + relative path. */
static void register_tree(mcp_schema_registry *reg, const char *dir, const char *rel)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096], r[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        snprintf(r, sizeof(r), "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        if (is_dir(path)) {
            register_tree(reg, path, r);
            continue;
        }
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        mcp_json_doc *doc = parse_file(path);
        if (!doc)
            continue;
        char uri[4200];
        snprintf(uri, sizeof(uri), "http://localhost:1234/%s", r);
        mcp_error err;
        if (mcp_schema_registry_add(reg, uri, mcp_json_doc_root(doc), &err) != MCP_OK)
            fprintf(stderr, "cannot register %s: %s\n", uri, err.message);
        mcp_json_doc_free(doc);
    }
    closedir(d);
}

static const char *skip_reason(const char *draft, const char *file, const char *cas,
                               const char *test)
{
    for (size_t i = 0; i < sizeof(skips) / sizeof(skips[0]); i++) {
        if (strcmp(skips[i].draft, draft) || strcmp(skips[i].file, file) ||
            strcmp(skips[i].cas, cas))
            continue;
        if (!skips[i].test || strcmp(skips[i].test, test) == 0)
            return skips[i].reason;
    }
    return NULL;
}

/* Runs one test file; adds to `tot` and returns the file's own counts. */
static counts run_file(const mcp_schema_registry *reg, const char *path, const char *draft,
                       const char *name, unsigned flags, int show_failures)
{
    counts c = {0, 0, 0};
    mcp_json_doc *doc = parse_file(path);
    if (!doc) {
        c.fail++;
        return c;
    }
    const mcp_json *root = mcp_json_doc_root(doc);
    for (size_t i = 0; i < mcp_json_len(root); i++) {
        const mcp_json *cs = mcp_json_at(root, i);
        const char *cdesc = mcp_json_str(mcp_json_get(cs, "description"), NULL);
        const mcp_json *tests = mcp_json_get(cs, "tests");
        mcp_schema_opts o;
        memset(&o, 0, sizeof(o));
        o.registry = reg;
        o.flags = flags;
        o.default_dialect =
            strcmp(draft, "draft7") == 0 ? MCP_SCHEMA_DIALECT_DRAFT7 : MCP_SCHEMA_DIALECT_2020_12;
        mcp_schema *s = NULL;
        mcp_error cerr;
        mcp_error_clear(&cerr);
        mcp_status cst = MCP_ERR_INTERNAL;
        for (size_t j = 0; j < mcp_json_len(tests); j++) {
            const mcp_json *t = mcp_json_at(tests, j);
            const char *tdesc = mcp_json_str(mcp_json_get(t, "description"), NULL);
            const char *why = skip_reason(draft, name, cdesc, tdesc);
            if (why) {
                if (verbose)
                    printf("  skip %s: %s / %s (%s)\n", name, cdesc, tdesc, why);
                c.skip++;
                continue;
            }
            if (!s && cst == MCP_ERR_INTERNAL)
                cst = mcp_schema_new(&s, mcp_json_get(cs, "schema"), &o, &cerr);
            if (cst != MCP_OK) {
                c.fail++;
                if (show_failures)
                    printf("  FAIL %s: %s / %s: compile error %s: %s\n", name, cdesc, tdesc,
                           mcp_status_name(cst), cerr.message);
                continue;
            }
            int want = mcp_json_bool(mcp_json_get(t, "valid"));
            const mcp_json *data = mcp_json_get(t, "data");
            mcp_error e1, e2;
            mcp_status s1 = mcp_schema_check(s, data, &e1);
            mcp_schema_result *r = NULL;
            mcp_status s2 = mcp_schema_validate(s, data, 0, &r, &e2);
            int got1 = s1 == MCP_OK, got2 = s2 == MCP_OK;
            int okk = (s1 == MCP_OK || s1 == MCP_ERR_INVALID) &&
                      (s2 == MCP_OK || s2 == MCP_ERR_INVALID) && got1 == want && got2 == want &&
                      (s2 == MCP_OK) == (r == NULL);
            if (okk) {
                c.pass++;
            } else {
                c.fail++;
                if (show_failures) {
                    printf("  FAIL %s: %s / %s: want %s, check=%s, validate=%s", name, cdesc, tdesc,
                           want ? "valid" : "invalid", mcp_status_name(s1), mcp_status_name(s2));
                    if (s1 != MCP_OK)
                        printf(" (%s)", e1.message);
                    printf("\n");
                }
            }
            if (verbose && r) {
                for (size_t k = 0; k < r->count; k++)
                    printf("    [%s] [%s] %s\n", r->errors[k].instance_path,
                           r->errors[k].keyword_path, r->errors[k].message);
            }
            mcp_schema_result_free(r);
        }
        mcp_schema_free(s);
    }
    mcp_json_doc_free(doc);
    return c;
}

/* Runs every file of one directory; prints a line per file when per_file. */
static counts run_dir(const mcp_schema_registry *reg, const char *dir, const char *draft,
                      const char *label, unsigned flags, int per_file, int show_failures)
{
    counts tot = {0, 0, 0};
    char **files;
    size_t n = list_json(dir, &files);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        counts c = run_file(reg, path, draft, files[i], flags, show_failures);
        if (per_file) {
            printf("%s/%s: %ld passed, %ld failed", label, files[i], c.pass, c.fail);
            if (c.skip)
                printf(", %ld skipped", c.skip);
            printf("\n");
        }
        tot.pass += c.pass;
        tot.fail += c.fail;
        tot.skip += c.skip;
    }
    free_list(files, n);
    return tot;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s TESTDATA_DIR [-v]\n", argv[0]);
        return 2;
    }
    verbose = argc > 2 && strcmp(argv[2], "-v") == 0;
    char suite[4096];
    snprintf(suite, sizeof(suite), "%s/JSON-Schema-Test-Suite", argv[1]);
    if (!is_dir(suite))
        snprintf(suite, sizeof(suite), "%s", argv[1]);
    char path[4200];
    snprintf(path, sizeof(path), "%s/remotes", suite);
    if (!is_dir(path)) {
        fprintf(stderr, "%s: no remotes/ folder\n", suite);
        return 2;
    }
    mcp_schema_registry *reg = NULL;
    if (mcp_schema_registry_new(&reg) != MCP_OK)
        return 2;
    register_tree(reg, path, "");

    static const char *const drafts[] = {"draft2020-12", "draft7"};
    counts req = {0, 0, 0};
    for (size_t d = 0; d < 2; d++) {
        snprintf(path, sizeof(path), "%s/tests/%s", suite, drafts[d]);
        counts c = run_dir(reg, path, drafts[d], drafts[d], 0, 1, 1);
        printf("%s required: %ld passed, %ld failed, %ld skipped\n", drafts[d], c.pass, c.fail,
               c.skip);
        req.pass += c.pass;
        req.fail += c.fail;
        req.skip += c.skip;
    }
    for (size_t d = 0; d < 2; d++) {
        char label[64];
        snprintf(path, sizeof(path), "%s/tests/%s/optional", suite, drafts[d]);
        snprintf(label, sizeof(label), "%s/optional", drafts[d]);
        counts c = run_dir(reg, path, drafts[d], label, 0, verbose, verbose);
        printf("%s optional: %ld passed, %ld failed\n", drafts[d], c.pass, c.fail);
        snprintf(path, sizeof(path), "%s/tests/%s/optional/format", suite, drafts[d]);
        snprintf(label, sizeof(label), "%s/optional/format", drafts[d]);
        c = run_dir(reg, path, drafts[d], label, MCP_SCHEMA_FORMAT_ASSERT, verbose, verbose);
        printf("%s optional/format: %ld passed, %ld failed\n", drafts[d], c.pass, c.fail);
    }
    mcp_schema_registry_free(reg);
    printf("%ld passed, %ld failed\n", req.pass, req.fail);
    return req.fail ? 1 : 0;
}
