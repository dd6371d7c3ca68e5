/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export_ch.h — what the ClickHouse backend (export_clickhouse.c) and its
 * leaves share: the schema's text (export_ch_schema.c) and the row
 * encoders, JSONEachRow (export_ch_json.c) and RowBinary
 * (export_ch_rowbinary.c). The leaves write into buffers and never call
 * the backend. Private to lib/export.
 */
#ifndef DPMON_EXPORT_CH_H
#define DPMON_EXPORT_CH_H

#include <stdbool.h>
#include <stddef.h>

#include "export_private.h"

/* What the rows of one batch are written with (the encoders' ctx). */
struct ch_ctx {
	struct export_batch *bt;
	struct xbuf head; /* ch_json_head's text, or ch_rb_head's bytes */
};

/* ------------------------------------------------------------------------
 * The schema (export_ch_schema.c).
 * --------------------------------------------------------------------- */

/**
 * Append to @p b the statement creating table @p table on one server
 * (CREATE TABLE IF NOT EXISTS, MergeTree), without a ';'.
 * Thread-safety: any thread (no state).
 */
void ch_put_table(struct xbuf *b, const struct dpmon_export_sink_conf *sc, enum export_table table);

/**
 * Append to @p b the names of table @p table's columns in the schema's
 * order, ", "-separated: the column list of an INSERT in RowBinary.
 * Thread-safety: any thread (no state).
 */
void ch_put_column_names(struct xbuf *b, enum export_table table);

/**
 * Append to @p b the query of table @p table's columns (name and type, in
 * TSV) from system.columns. Thread-safety: any thread (no state).
 */
void ch_put_columns_query(struct xbuf *b, const struct dpmon_export_sink_conf *sc,
			  enum export_table table);

/**
 * Check table @p table against the schema, from the answer @p have of
 * ch_put_columns_query's query: a column dpmon writes whose type differs is
 * an error (RowBinary would store its bytes as the wrong type: a UInt64
 * read as a Float64, an Enum8 by number). With @p add, @p alter is set to
 * the ALTER TABLE statement adding the columns the table lacks (a table an
 * older dpmon created); it is left empty when none is missing or
 * without @p add (the INSERT then refuses).
 * @return 0, or -1 with @p err (@p errlen bytes) naming the column and
 *         both types, or saying "out of memory".
 * Thread-safety: any thread (no state).
 */
int ch_check_columns(const struct dpmon_export_sink_conf *sc, enum export_table table,
		     const struct xbuf *have, bool add, struct xbuf *alter, char *err,
		     size_t errlen);

/* ------------------------------------------------------------------------
 * The row encoders (export_ch_json.c, export_ch_rowbinary.c): an
 * export_encoder's row and alert with a struct ch_ctx as ctx, each row
 * appended to its table's part of the batch after the batch's head.
 * --------------------------------------------------------------------- */

/**
 * Write the head of every JSONEachRow row of a batch into @p b:
 * {"instance":...,"time":...,"seq":...,"interval_s":... (no closing brace).
 * Thread-safety: the exporter's thread.
 */
void ch_json_head(struct xbuf *b, const struct export_interval *iv);

/** One row of counts as a JSON object line. Thread-safety: the exporter's thread. */
void ch_json_row(void *ctx, const struct export_interval *iv, const struct export_row *r);

/**
 * An alert event as a JSON object line of the alerts table.
 * Thread-safety: the exporter's thread.
 */
void ch_json_alert(void *ctx, const struct export_interval *iv, const struct dpmon_alert *a,
		   bool end, const struct export_row *counts);

/**
 * Write the head of every RowBinary row of a batch into @p b: instance,
 * time, seq and interval_s, the same bytes in every row.
 * Thread-safety: the exporter's thread.
 */
void ch_rb_head(struct xbuf *b, const struct export_interval *iv);

/** One row of counts in RowBinary. Thread-safety: the exporter's thread. */
void ch_rb_row(void *ctx, const struct export_interval *iv, const struct export_row *r);

/** An alert event in RowBinary (the alerts table). Thread-safety: the exporter's thread. */
void ch_rb_alert(void *ctx, const struct export_interval *iv, const struct dpmon_alert *a, bool end,
		 const struct export_row *counts);

#endif /* DPMON_EXPORT_CH_H */
