/*
 * schema.h: the version of campaign.db's layout (SQLite's PRAGMA user_version) and the
 * steps that migrate an older layout forward. A database of user_version 0 is either new
 * (no tables) or was made before the schema was versioned, by any earlier build: the
 * first step brings both to layout 1. Each later change of the layout is one more row in
 * schema.c's step table, never an edit of an earlier row: to add a table, append
 * {N, "what it adds", "CREATE TABLE ...;", NULL} to STEPS and raise XQC_SCHEMA_VERSION to N
 * (a compile-time check keeps the two together).
 */
#ifndef XQC_SCHEMA_H
#define XQC_SCHEMA_H

#include "support/error.h"

/* The layout this build writes (the last step of schema.c's table). */
#define XQC_SCHEMA_VERSION 7

struct sqlite3;

/* Migrates db (a campaign.db at path, for messages) to XQC_SCHEMA_VERSION in one
 * transaction: all steps or none. A database of a newer version is refused (XQ_EVERSION,
 * naming both versions). */
int xqc_schema_migrate(struct sqlite3 *db, const char *path, xq_errbuf_t *eb);

#endif
