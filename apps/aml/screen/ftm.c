/*
 * FollowTheMoney properties -> a screening entity, and the screening CSV
 * (full_name, first_name, middle_name, last_name, gender, date_of_birth,
 * place_of_birth, nationality) -> FtM properties, so every list is kept
 * and indexed in one shape.
 */
#include "screen/ftm.h"

#include <string.h>

/* FtM properties read for matching. */
static const char *const name_props[] = {"name", "alias", "previousName", NULL};
static const char *const date_props[] = {"birthDate", "incorporationDate", "buildDate", NULL};
static const char *const country_props[] = {"nationality", "citizenship", "country", "jurisdiction", "flag", NULL};
static const char *const id_props[] = {"idNumber", "passportNumber", "registrationNumber", "taxNumber", "innCode",
                                       "ogrnCode", "imoNumber", "mmsi", "swiftBic", "leiCode", "vatCode",
                                       "okpoCode", "kppCode", NULL};

static size_t collect(const mcp_json *props, const char *const *keys, const char **out, size_t max)
{
    size_t n = 0;
    for (const char *const *k = keys; *k; k++) {
        const mcp_json *arr = mcp_json_get(props, *k);
        for (size_t i = 0; i < mcp_json_len(arr) && n < max; i++) {
            const char *s = mcp_json_str(mcp_json_at(arr, i), NULL);
            if (s && *s)
                out[n++] = s;
        }
    }
    return n;
}

int aml_sc_entity_from_ftm(const mcp_json *props, aml_sc_entity *e, aml_sc_hold *h)
{
    e->nnames = collect(props, name_props, h->names, AML_SC_HOLD_NAMES);
    e->ndates = collect(props, date_props, h->dates, AML_SC_HOLD_SMALL);
    e->ncountries = collect(props, country_props, h->countries, AML_SC_HOLD_SMALL);
    e->nids = collect(props, id_props, h->ids, AML_SC_HOLD_SMALL);
    e->names = h->names;
    e->dates = h->dates;
    e->countries = h->countries;
    e->ids = h->ids;
    const char *g = mcp_json_str(mcp_json_at(mcp_json_get(props, "gender"), 0), NULL);
    e->gender = g && (g[0] == 'm' || g[0] == 'f') ? g[0] : 0;
    return e->nnames ? 0 : -1;
}

static void prop(mcp_jw *w, const char *key, const aml_csv_field *f)
{
    if (!f || !f->n)
        return;
    mcp_jw_key(w, key);
    mcp_jw_array_begin(w);
    mcp_jw_stringn(w, f->p, f->n);
    mcp_jw_array_end(w);
}

int aml_sc_csv_columns(const aml_csv *c, int cols[AML_SC_CSV_NCOLS])
{
    static const char *const names[AML_SC_CSV_NCOLS] = {
        "full_name", "first_name", "middle_name", "last_name", "gender", "date_of_birth", "place_of_birth",
        "nationality", "id", "schema",
    };
    for (int k = 0; k < AML_SC_CSV_NCOLS; k++) {
        cols[k] = -1;
        for (size_t i = 0; i < c->nfields; i++)
            if (aml_csv_eq(c, i, names[k]))
                cols[k] = (int)i;
    }
    return cols[AML_SC_CSV_FULL] < 0 ? -1 : 0;
}

static const aml_csv_field *col(const aml_csv *c, const int *cols, int k)
{
    return cols[k] >= 0 && (size_t)cols[k] < c->nfields ? &c->fields[cols[k]] : NULL;
}

void aml_sc_csv_props(const aml_csv *c, const int cols[AML_SC_CSV_NCOLS], mcp_jw *w)
{
    mcp_jw_object_begin(w);
    prop(w, "name", col(c, cols, AML_SC_CSV_FULL));
    prop(w, "firstName", col(c, cols, AML_SC_CSV_FIRST));
    prop(w, "middleName", col(c, cols, AML_SC_CSV_MIDDLE));
    prop(w, "lastName", col(c, cols, AML_SC_CSV_LAST));
    prop(w, "gender", col(c, cols, AML_SC_CSV_GENDER));
    prop(w, "birthDate", col(c, cols, AML_SC_CSV_DOB));
    prop(w, "birthPlace", col(c, cols, AML_SC_CSV_POB));
    prop(w, "nationality", col(c, cols, AML_SC_CSV_NAT));
    mcp_jw_object_end(w);
}

const aml_csv_field *aml_sc_csv_field(const aml_csv *c, const int cols[AML_SC_CSV_NCOLS], int k)
{
    return col(c, cols, k);
}
