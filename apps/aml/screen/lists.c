/*
 * Screening lists in the store: import (FtM JSON lines, screening CSV),
 * versions, the index built from the store, dismissed false hits.
 */
#include "screen/lists.h"
#include "screen/ftm.h"

#include <stdlib.h>
#include <string.h>

int aml_list_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > AML_LIST_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '.'))
            return 0;
    }
    return 1;
}

static int file_digest(const char *path, char *out, aml_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return aml_errf(err, "%s: cannot open", path);
    aml_sha256 h;
    if (aml_sha256_init(&h)) {
        fclose(f);
        return aml_errf(err, "out of memory");
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        aml_sha256_update(&h, buf, n);
    int bad = ferror(f);
    fclose(f);
    aml_sha256_final(&h, out);
    return bad ? aml_errf(err, "%s: read error", path) : 0;
}

/* One entity row of the current version. */
typedef struct imp {
    aml_store *s;
    const char *list;
    int64_t version;
    aml_list_stats *st;
} imp;

static int put_entity(imp *im, const char *id, const char *schema, const char *caption, const char *props,
                      size_t nprops, aml_err *err)
{
    aml_st *q = aml_stmt(im->s, "SELECT 1 FROM screening_entities WHERE list_name = ? AND entity_id = ?");
    if (!q)
        return aml_errf(err, "%s", aml_errmsg(im->s));
    aml_bind_text(q, 1, im->list);
    aml_bind_text(q, 2, id);
    if (aml_step(q) == AML_ROW) {
        im->st->skipped++; /* a duplicate id: the first wins */
        return 0;
    }
    aml_st *st = aml_stmt(im->s, "INSERT INTO screening_entities(list_name, entity_id, schema, caption, "
                                       "properties, version_id) VALUES (?, ?, ?, ?, ?, ?)");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(im->s));
    aml_bind_text(st, 1, im->list);
    aml_bind_text(st, 2, id);
    aml_bind_text(st, 3, schema);
    aml_bind_text(st, 4, caption);
    aml_bind_textn(st, 5, props, nprops);
    aml_bind_int(st, 6, im->version);
    if (aml_step_done(im->s, st, err))
        return -1;
    im->st->entities++;
    return 0;
}

static int import_ftm_line(imp *im, const char *line, size_t n, uint64_t lineno, aml_err *err)
{
    mcp_json_doc *doc = NULL;
    mcp_error jerr;
    if (mcp_json_parse(&doc, line, n, NULL, &jerr) != MCP_OK)
        return aml_errf(err, "line %llu: not JSON: %s", (unsigned long long)lineno, jerr.message);
    const mcp_json *o = mcp_json_doc_root(doc);
    const char *schema = mcp_json_str(mcp_json_get(o, "schema"), NULL);
    const char *id = mcp_json_str(mcp_json_get(o, "id"), NULL);
    const mcp_json *props = mcp_json_get(o, "properties");
    int rc = 0;
    if (!schema || !id || !*id || strlen(id) > 256 || mcp_json_typeof(props) != MCP_JSON_OBJECT) {
        rc = aml_errf(err, "line %llu: an FtM entity needs id (up to 256 bytes), schema and properties",
                      (unsigned long long)lineno);
    } else if (aml_sc_schema_parse(schema) <= 0) {
        im->st->other++;
    } else {
        aml_sc_entity e = {0};
        aml_sc_hold h;
        if (aml_sc_entity_from_ftm(props, &e, &h)) {
            im->st->skipped++;
        } else {
            const char *caption = mcp_json_str(mcp_json_get(o, "caption"), NULL);
            mcp_buf b;
            mcp_jw w;
            mcp_buf_init(&b, 0);
            mcp_jw_init(&w, &b);
            mcp_jw_value(&w, props);
            if (mcp_jw_finish(&w) != MCP_OK)
                rc = aml_errf(err, "out of memory");
            else
                rc = put_entity(im, id, schema, caption && *caption ? caption : h.names[0], b.data, b.len, err);
            mcp_buf_cleanup(&b);
        }
    }
    mcp_json_doc_free(doc);
    return rc;
}

static int import_ftm(imp *im, FILE *f, aml_err *err)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t lineno = 0;
    int rc = 0;
    while (!rc && (n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if ((size_t)n > AML_LIST_LINE_MAX)
            rc = aml_errf(err, "line %llu: longer than %u bytes", (unsigned long long)lineno, AML_LIST_LINE_MAX);
        else if (n > 0 && !(n == 1 && line[0] == '\n'))
            rc = import_ftm_line(im, line, (size_t)n, lineno, err);
    }
    free(line);
    return rc;
}

static int import_csv(imp *im, FILE *f, aml_err *err)
{
    aml_csv c;
    if (aml_csv_open(&c, f))
        return aml_errf(err, "out of memory");
    int cols[AML_SC_CSV_NCOLS];
    int rc = aml_csv_next(&c, err);
    if (rc != 1 || aml_sc_csv_columns(&c, cols)) {
        aml_csv_close(&c);
        return rc < 0 ? -1 : aml_errf(err, "the CSV header needs a full_name column");
    }
    uint64_t row = 0;
    rc = 0;
    int r;
    while (!rc && (r = aml_csv_next(&c, err)) == 1) {
        row++;
        const aml_csv_field *fn = aml_sc_csv_field(&c, cols, AML_SC_CSV_FULL);
        const aml_csv_field *fid = aml_sc_csv_field(&c, cols, AML_SC_CSV_ID);
        const aml_csv_field *fs = aml_sc_csv_field(&c, cols, AML_SC_CSV_SCHEMA);
        if (!fn || !fn->n || fn->n > AML_SC_MAX_NAME) {
            im->st->skipped++;
            continue;
        }
        char id[300], schema[32], caption[AML_SC_MAX_NAME + 1];
        if (fid && fid->n && fid->n < 256)
            snprintf(id, sizeof id, "%.*s", (int)fid->n, fid->p);
        else
            snprintf(id, sizeof id, "row-%llu", (unsigned long long)row);
        snprintf(schema, sizeof schema, "%.*s", fs && fs->n < 20 ? (int)fs->n : 0, fs ? fs->p : "");
        if (aml_sc_schema_parse(schema) <= 0)
            snprintf(schema, sizeof schema, "Person");
        snprintf(caption, sizeof caption, "%.*s", (int)fn->n, fn->p);
        mcp_buf b;
        mcp_jw w;
        mcp_buf_init(&b, 0);
        mcp_jw_init(&w, &b);
        aml_sc_csv_props(&c, cols, &w);
        if (mcp_jw_finish(&w) != MCP_OK)
            rc = aml_errf(err, "out of memory");
        else
            rc = put_entity(im, id, schema, caption, b.data, b.len, err);
        mcp_buf_cleanup(&b);
    }
    if (!rc && r < 0)
        rc = -1;
    aml_csv_close(&c);
    return rc;
}

static int begin_version(imp *im, const char *format, const char *path, aml_err *err)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char at[32];
    aml_fmt_time(aml_now(), at);
    aml_st *st = aml_stmt(im->s, "INSERT INTO screening_list_versions(list_name, format, source_name, "
                                       "file_sha256, loaded_at, entities, skipped) VALUES (?, ?, ?, ?, ?, 0, 0) "
                                       "RETURNING version_id");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(im->s));
    aml_bind_text(st, 1, im->list);
    aml_bind_text(st, 2, format);
    aml_bind_text(st, 3, base);
    aml_bind_text(st, 4, im->st->sha256);
    aml_bind_text(st, 5, at);
    if (aml_step_id(im->s, st, &im->version, err))
        return -1;
    im->st->version_id = im->version;
    st = aml_stmt(im->s, "DELETE FROM screening_entities WHERE list_name = ?");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(im->s));
    aml_bind_text(st, 1, im->list);
    return aml_step_done(im->s, st, err);
}

int aml_lists_import(aml_store *s, const char *list, const char *format, const char *path, aml_list_stats *st,
                     aml_err *err)
{
    memset(st, 0, sizeof *st);
    if (!aml_list_name_ok(list))
        return aml_errf(err, "a list name is 1 to %d letters, digits, '_', '-' or '.'", AML_LIST_NAME_MAX);
    int ftm = !strcmp(format, "ftm");
    if (!ftm && strcmp(format, "csv"))
        return aml_errf(err, "list format is ftm or csv, not %s", format);
    if (file_digest(path, st->sha256, err))
        return -1;
    FILE *f = fopen(path, "rb");
    if (!f)
        return aml_errf(err, "%s: cannot open", path);
    imp im = {s, list, 0, st};
    if (aml_begin(s, err)) {
        fclose(f);
        return -1;
    }
    int rc = begin_version(&im, format, path, err);
    if (!rc)
        rc = ftm ? import_ftm(&im, f, err) : import_csv(&im, f, err);
    fclose(f);
    if (!rc) {
        aml_st *u = aml_stmt(s, "UPDATE screening_list_versions SET entities = ?, skipped = ? WHERE version_id = ?");
        if (!u)
            rc = aml_errf(err, "%s", aml_errmsg(s));
        else {
            aml_bind_int(u, 1, (int64_t)st->entities);
            aml_bind_int(u, 2, (int64_t)st->skipped);
            aml_bind_int(u, 3, im.version);
            rc = aml_step_done(s, u, err);
        }
    }
    if (rc) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err ? err->msg : "");
        aml_rollback(s);
        return aml_errf(err, "%s: %s (nothing imported)", path, why);
    }
    return aml_commit(s, err);
}

/* ---- show ------------------------------------------------------------- */

int aml_lists_show(aml_store *s, mcp_jw *w, aml_err *err)
{
    aml_st *l = aml_stmt(s, "SELECT v.list_name, (SELECT count(*) FROM screening_entities e WHERE "
                                  "e.list_name = v.list_name) FROM screening_list_versions v GROUP BY v.list_name "
                                  "ORDER BY v.list_name");
    if (!l)
        return aml_errf(err, "%s", aml_errmsg(s));
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "lists");
    mcp_jw_array_begin(w);
    char names[AML_LIST_MAX_LISTS][AML_LIST_NAME_MAX + 1];
    int64_t counts[AML_LIST_MAX_LISTS];
    size_t n = 0;
    while (n < AML_LIST_MAX_LISTS && aml_step(l) == AML_ROW) {
        snprintf(names[n], sizeof names[n], "%s", aml_col_text(l, 0));
        counts[n++] = aml_col_int(l, 1);
    }
    for (size_t i = 0; i < n; i++) {
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "name");
        mcp_jw_string(w, names[i]);
        mcp_jw_key(w, "entities");
        mcp_jw_int(w, counts[i]);
        mcp_jw_key(w, "versions");
        mcp_jw_array_begin(w);
        aml_st *v = aml_stmt(s, "SELECT version_id, loaded_at, format, source_name, file_sha256, entities, "
                                      "skipped FROM screening_list_versions WHERE list_name = ? ORDER BY version_id");
        if (!v)
            return aml_errf(err, "%s", aml_errmsg(s));
        aml_bind_text(v, 1, names[i]);
        while (aml_step(v) == AML_ROW) {
            static const char *const keys[] = {"version", "loadedAt", "format", "file", "sha256", "entities",
                                               "skipped"};
            mcp_jw_object_begin(w);
            for (int k = 0; k < 7; k++) {
                mcp_jw_key(w, keys[k]);
                if (k == 0 || k >= 5)
                    aml_jw_col_int(w, v, k);
                else
                    aml_jw_col_text(w, v, k);
            }
            mcp_jw_object_end(w);
        }
        mcp_jw_array_end(w);
        mcp_jw_object_end(w);
    }
    mcp_jw_array_end(w);
    mcp_jw_object_end(w);
    return 0;
}

int64_t aml_lists_version(aml_store *s)
{
    aml_st *st = aml_stmt(s, "SELECT coalesce(max(version_id), 0) FROM screening_list_versions");
    int64_t v = st && aml_step(st) == AML_ROW ? aml_col_int(st, 0) : -1;
    if (st)
        aml_reset(st);
    return v;
}

/* ---- the index -------------------------------------------------------- */

int aml_screening_list_no(const aml_screening *sc, const char *name)
{
    for (size_t i = 0; i < sc->nlists; i++)
        if (!strcmp(sc->lists[i], name))
            return (int)i;
    return -1;
}

static int list_no(aml_screening *sc, const char *name)
{
    int k = aml_screening_list_no(sc, name);
    if (k >= 0 || sc->nlists >= AML_LIST_MAX_LISTS)
        return k;
    snprintf(sc->lists[sc->nlists], sizeof sc->lists[0], "%s", name);
    return (int)sc->nlists++;
}

int aml_screening_load(aml_store *s, aml_screening *out, aml_err *err)
{
    memset(out, 0, sizeof *out);
    out->version = aml_lists_version(s);
    out->ix = aml_sc_index_new();
    out->lists = calloc(AML_LIST_MAX_LISTS, sizeof *out->lists);
    aml_st *st = aml_stmt(s, "SELECT entity_no, list_name, entity_id, schema, caption, properties "
                                   "FROM screening_entities ORDER BY entity_no");
    if (!out->ix || !out->lists || !st) {
        aml_screening_free(out);
        return aml_errf(err, "%s", st ? "out of memory" : aml_errmsg(s));
    }
    int rc = 0, r;
    while (!rc && (r = aml_step(st)) == AML_ROW) {
        const char *props = aml_col_text(st, 5);
        mcp_json_doc *doc = NULL;
        if (mcp_json_parse(&doc, props, strlen(props), NULL, NULL) != MCP_OK)
            continue;
        aml_sc_entity e = {0};
        aml_sc_hold h;
        int no = list_no(out, aml_col_text(st, 1));
        if (no >= 0 && aml_sc_entity_from_ftm(mcp_json_doc_root(doc), &e, &h) == 0) {
            e.id = aml_col_text(st, 2);
            e.schema = aml_sc_schema_parse(aml_col_text(st, 3));
            e.caption = aml_col_text(st, 4);
            e.list = (uint16_t)no;
            e.user = aml_col_int(st, 0);
            if (aml_sc_index_add(out->ix, &e))
                rc = aml_errf(err, "out of memory building the screening index");
        }
        mcp_json_doc_free(doc);
    }
    aml_reset(st);
    if (!rc && aml_sc_index_build(out->ix))
        rc = aml_errf(err, "out of memory building the screening index");
    if (rc)
        aml_screening_free(out);
    return rc;
}

void aml_screening_free(aml_screening *sc)
{
    aml_sc_index_free(sc->ix);
    free(sc->lists);
    memset(sc, 0, sizeof *sc);
}

void aml_lists_write_properties(aml_store *s, int64_t entity_no, mcp_jw *w)
{
    aml_st *st = aml_stmt(s, "SELECT properties FROM screening_entities WHERE entity_no = ?");
    if (st) {
        aml_bind_int(st, 1, entity_no);
        if (aml_step(st) == AML_ROW) {
            const char *p = aml_col_text(st, 0);
            mcp_jw_raw(w, p, strlen(p));
            aml_reset(st);
            return;
        }
        aml_reset(st);
    }
    mcp_jw_object_begin(w);
    mcp_jw_object_end(w);
}

/* ---- dismissals ------------------------------------------------------- */

int aml_lists_dismiss(aml_store *s, const char *subject, const char *list, const char *entity_id,
                      const char *actor, const char *reason, aml_err *err)
{
    char at[32];
    aml_fmt_time(aml_now(), at);
    aml_st *st = aml_stmt(s, "INSERT INTO screening_dismissals(subject, list_name, entity_id, actor, reason, "
                                   "created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(subject, list_name, entity_id) "
                                   "DO UPDATE SET actor = excluded.actor, reason = excluded.reason, "
                                   "created_at = excluded.created_at");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(st, 1, subject);
    aml_bind_text(st, 2, list);
    aml_bind_text(st, 3, entity_id);
    aml_bind_text(st, 4, actor);
    aml_bind_text(st, 5, reason);
    aml_bind_text(st, 6, at);
    return aml_step_done(s, st, err);
}

int aml_lists_dismissed(aml_store *s, const char *subject, const char *list, const char *entity_id)
{
    aml_st *st = aml_stmt(s, "SELECT 1 FROM screening_dismissals WHERE subject = ? AND list_name = ? AND "
                                   "entity_id = ?");
    if (!st)
        return 0;
    aml_bind_text(st, 1, subject);
    aml_bind_text(st, 2, list);
    aml_bind_text(st, 3, entity_id);
    int found = aml_step(st) == AML_ROW;
    aml_reset(st); /* a statement left on its row would keep the connection's read snapshot open */
    return found;
}
