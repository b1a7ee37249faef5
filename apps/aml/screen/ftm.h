/*
 * Reading lists: FollowTheMoney entity properties into a screening
 * entity, and the screening CSV into FtM properties.
 */
#ifndef AML_SCREEN_FTM_H
#define AML_SCREEN_FTM_H

#include "screen/screen.h"

#define AML_SC_HOLD_NAMES 64
#define AML_SC_HOLD_SMALL 16

/* The arrays an aml_sc_entity points into (strings stay in the JSON). */
typedef struct aml_sc_hold {
    const char *names[AML_SC_HOLD_NAMES];
    const char *dates[AML_SC_HOLD_SMALL];
    const char *countries[AML_SC_HOLD_SMALL];
    const char *ids[AML_SC_HOLD_SMALL];
} aml_sc_hold;

/**
 * Fills names (name, alias, previousName), dates (birthDate,
 * incorporationDate, buildDate), countries (nationality, citizenship,
 * country, jurisdiction, flag), identifiers and gender of `e` from an
 * FtM "properties" object; id, caption, schema, list and user are the
 * caller's. @return 0, or -1 when the entity has no name.
 */
int aml_sc_entity_from_ftm(const mcp_json *props, aml_sc_entity *e, aml_sc_hold *h);

/* Columns of the screening CSV. */
enum {
    AML_SC_CSV_FULL, AML_SC_CSV_FIRST, AML_SC_CSV_MIDDLE, AML_SC_CSV_LAST, AML_SC_CSV_GENDER,
    AML_SC_CSV_DOB, AML_SC_CSV_POB, AML_SC_CSV_NAT, AML_SC_CSV_ID, AML_SC_CSV_SCHEMA,
    AML_SC_CSV_NCOLS
};
/** Finds the columns in a header record; -1 when full_name is missing. */
int aml_sc_csv_columns(const aml_csv *c, int cols[AML_SC_CSV_NCOLS]);
/** Writes a record as an FtM properties object. */
void aml_sc_csv_props(const aml_csv *c, const int cols[AML_SC_CSV_NCOLS], mcp_jw *w);
/** A column of the current record, or NULL when the file has none. */
const aml_csv_field *aml_sc_csv_field(const aml_csv *c, const int cols[AML_SC_CSV_NCOLS], int k);

#endif /* AML_SCREEN_FTM_H */
