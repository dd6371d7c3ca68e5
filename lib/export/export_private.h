/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export_private.h — what the files of lib/export share:
 *
 *   export.c             the exporter threads: handoff, spool, backoff, stop
 *   export_rows.c        an interval's deltas: totals, subnets, hosts, alerts
 *   export_http.c        one HTTP POST with libcurl, and its error text
 *   export_clickhouse.c  ClickHouse: the INSERTs, tables made and checked first
 *   export_ch_*.c        ClickHouse: DDL and column check, JSONEachRow, RowBinary
 *   export_influx.c      InfluxDB: line protocol, 1.x and 2.x write APIs
 *
 * The encoders write into lib/common's xbuf. Private to lib/export:
 * nothing outside it includes this header. Every function here runs on
 * an exporter's own thread unless its comment says otherwise.
 */
#ifndef DPMON_EXPORT_PRIVATE_H
#define DPMON_EXPORT_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "alert.h"
#include "config.h"
#include "heartbeat.h"
#include "snapshot.h"
#include "xbuf.h"

/* ------------------------------------------------------------------------
 * export_rows.c — deltas.
 * --------------------------------------------------------------------- */

/** One direction's counts over an interval (current cumulative minus previous). */
struct export_delta {
	uint64_t packets, bytes;
	uint64_t proto_packets[DPMON_PROTO_MAX], proto_bytes[DPMON_PROTO_MAX];
	uint64_t fragments, tcp_syn;
};

/** The interval a batch is of: the same in each of its rows. */
struct export_interval {
	const char *instance;
	uint64_t seq;      /**< the snapshot's */
	double unix_s;     /**< its end, Unix seconds (the merge's wall clock) */
	double interval_s; /**< since the previous snapshot exported (or since start) */
};

enum export_table {
	EXPORT_TOTALS,
	EXPORT_SUBNETS,
	EXPORT_HOSTS,
	EXPORT_ALERTS,
	EXPORT_TABLES
};

/** Name of table (measurement) @p t: "totals", "subnets", "hosts", "alerts". */
const char *export_table_name(enum export_table t);

/** One row of totals, subnets or hosts. */
struct export_row {
	enum export_table table;
	const char *direction; /**< "ingress", "egress" (and for totals "internal", "external") */
	/** The same as a number: DPMON_DIR_* or, in totals, DPMON_TOTAL_* (equal for the first two). */
	uint8_t dir;
	const char *prefix;  /**< subnets: its prefix; hosts: the host's subnet's */
	const char *name;    /**< subnets, hosts: the subnet's name ("" = none) */
	const char *address; /**< hosts: the address, or its prefix in CIDR form */
	const struct export_delta *d;
	/** As of the snapshot: averages, flows (-1 = not measured), peers (-1 = not measured). */
	double avg_pps, avg_bps, flows, peers;
};

/** One counts column of a row: the columns every table of counts has. */
struct export_count {
	const char *name; /**< the column's (field's) name */
	bool real;        /**< @c f holds the value, else @c u */
	uint64_t u;
	double f; /**< negative for flows: not measured */
};

/** How many counts columns a row has (flows last). */
#define EXPORT_COUNTS 17

/**
 * The counts columns of row @p r over interval @p iv into @p out, in the
 * schema's order: packets, bytes, per protocol packets and bytes,
 * fragments, tcp_syn, pps, bps, avg_pps, avg_bps, flows (the rates over
 * the interval, an interval of 0 taken as 1 s). ClickHouse's JSON rows
 * and InfluxDB's points write these; RowBinary writes the same order by
 * hand (export_ch_rowbinary.c: its hot loop).
 * Thread-safety: the exporter's thread (no state).
 */
void export_counts(const struct export_interval *iv, const struct export_row *r,
		   struct export_count out[EXPORT_COUNTS]);

/**
 * Alert @p a's fingerprint as the API shows it: its compact JSON text,
 * to free() (the "fingerprint" column of the alerts rows).
 * @return the text; NULL when @p a has none, or on allocation failure
 *         (then @c a->fingerprint is not NULL).
 * Thread-safety: the exporter's thread (reads @p a only).
 */
char *export_alert_fingerprint(const struct dpmon_alert *a);

/** Where the walk puts the rows; both callbacks get @c ctx. */
struct export_encoder {
	void (*row)(void *ctx, const struct export_interval *iv, const struct export_row *r);
	/**
	 * An alert's start (@p end false) or end event, with @p counts: its
	 * target's row (the host's or the subnet's, in the alert's
	 * direction) of this interval; zero deltas when the target is gone.
	 */
	void (*alert)(void *ctx, const struct export_interval *iv, const struct dpmon_alert *a,
		      bool end, const struct export_row *counts);
	void *ctx;
};

/**
 * Every row of interval @p iv: snapshot @p cur against @p prev (the
 * previous snapshot exported; NULL: the first, whose deltas are the
 * counts since start). Totals: 4 rows; subnets: 2 each; hosts: one per
 * direction with a non-zero delta, all of them or the @p top_hosts with
 * the most bytes (0 = all); alerts started or ended since @p prev.
 * @return 0, or -ENOMEM.
 */
int export_rows_walk(const struct dpmon_snapshot *cur, const struct dpmon_snapshot *prev,
		     uint32_t top_hosts, const struct export_interval *iv,
		     const struct export_encoder *enc);

/* ------------------------------------------------------------------------
 * Batches and backends.
 * --------------------------------------------------------------------- */

/** One request's body of a batch: ClickHouse, one per table; InfluxDB, one in all. */
struct export_part {
	struct xbuf body;
	enum export_table table;
	uint32_t rows;
	bool sent;
	/** ClickHouse: the enum dpmon_ch_format of @c body (a reload may change the setting). */
	uint8_t format;
};

/** One interval's rows, encoded, waiting in the spool. */
struct export_batch {
	uint64_t seq;
	uint32_t n_parts;
	uint32_t rows; /**< in all parts */
	size_t bytes;  /**< of all bodies */
	struct export_part part[EXPORT_TABLES];
};

/**
 * Free @p b (a heap batch) with the bodies of its parts; NULL is ignored.
 * Thread-safety: the exporter's thread.
 */
void export_batch_free(struct export_batch *b);

struct export_sink;

/** What differs between ClickHouse and InfluxDB. */
struct export_backend {
	const char *name;
	/** Before the first batch (and after a reconfiguration): create what is missing. */
	int (*prepare)(struct export_sink *s, char *err, size_t len);
	/** Encode interval @p iv of @p cur (against @p prev) into @p b. @return 0 or -ENOMEM. */
	int (*encode)(struct export_sink *s, const struct dpmon_snapshot *cur,
		      const struct dpmon_snapshot *prev, const struct export_interval *iv,
		      struct export_batch *b);
	/**
	 * Send part @p p. @return 0; -ENOENT when the server lacks the
	 * database or the table (prepare runs again before the next
	 * attempt); or -1; with the reason in @p err.
	 */
	int (*send)(struct export_sink *s, const struct export_part *p, char *err, size_t len);
};

extern const struct export_backend export_clickhouse;
extern const struct export_backend export_influx;

/** The state of one exporter that its backend uses. */
struct export_sink {
	const struct export_backend *be;
	struct dpmon_export_conf conf;           /**< the settings in force (thread's copy) */
	const struct dpmon_export_sink_conf *sc; /**< conf.sink[its kind] */
	char secret[512]; /**< the password (ClickHouse, InfluxDB 1.x) or the token (2.x) */
	CURL *curl;
	/** Longest a request may take now, ms (timeout_ms, less near the stop's deadline). */
	uint32_t timeout_ms;
	uint64_t *progress_ns;      /**< beaten while a request runs (__atomic builtins) */
	struct dpmon_heartbeat *hb; /**< the health check's heartbeat, beaten with it */
	/** Non-zero: CLOCK_MONOTONIC ns past which a running request gives up (the stop's deadline). */
	uint64_t *abort_after_ns;
	/** The HTTP status of the last request's answer; 0 when none came (export_http.c). */
	long http_status;
};

/* ------------------------------------------------------------------------
 * export_http.c — requests.
 * --------------------------------------------------------------------- */

/**
 * POST @p body (@p len bytes) to @p url with @p headers (may be NULL) and
 * the sink's user and secret as basic authentication when @p basic_auth.
 * The answer's status is left in @c http_status.
 * @param empty  the answer must have no body: ClickHouse answers an INSERT
 *               or a statement without a result, and InfluxDB a write,
 *               with none; a 2xx with a body came from something else (a
 *               proxy's page, a wrong URL) and did not store the rows.
 * @return 0 on a 2xx answer (with no body when @p empty); -1 otherwise,
 *         with "HTTP 500: first line of the answer", "HTTP 200 with a
 *         body, which clickhouse never sends: its first line" or
 *         libcurl's reason in @p err.
 */
int export_http_post(struct export_sink *s, const char *url, const char *body, size_t len,
		     struct curl_slist *headers, bool basic_auth, bool empty, char *err,
		     size_t errlen);

/**
 * export_http_post with basic authentication and no extra headers, the
 * answer's body appended to @p answer; @p answer NULL: a statement
 * without a result, whose answer must have no body (@c empty).
 * @return as export_http_post (-1 with "out of memory" when the answer
 *         did not fit).
 */
int export_http_query(struct export_sink *s, const char *url, const char *body, size_t len,
		      struct xbuf *answer, char *err, size_t errlen);

/* ------------------------------------------------------------------------
 * export_ch_schema.c — the ClickHouse schema.
 * --------------------------------------------------------------------- */

/**
 * Append the ClickHouse schema (dpmon_export_print_schema's text) for
 * @p cluster (NULL: one server) to @p out.
 * @return 0, -EINVAL for a cluster name that is not an identifier, or
 *         -ENOMEM. Thread-safety: any thread (no state).
 */
int export_clickhouse_schema(const struct dpmon_export_sink_conf *sc, const char *cluster,
			     struct xbuf *out);

#endif /* DPMON_EXPORT_PRIVATE_H */
