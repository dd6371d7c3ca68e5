/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.h — dpmon's JSON configuration: the ports to poll, the monitored
 * subnets, the HTTP listener and table sizes.
 *
 * The file is read with jansson and validated completely before anything
 * starts: every error is reported with the file name, the JSON path of the
 * offending key ("$.subnets[2].prefix") and why, so an operator can fix them
 * all in one pass. `dpmon --check-config FILE` and start-up run the same
 * checks (dpmon_config_load). No DPDK dependency: the check runs without EAL.
 *
 * Reference: docs/configuration.md documents every key.
 */
#ifndef DPMON_CONFIG_H
#define DPMON_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "flowspec_terms.h"
#include "prefix.h"
#include "stats.h"
#include "token_file.h"

#define DPMON_MAX_PORTS         32
#define DPMON_MAX_SUBNETS       65536
#define DPMON_DEVICE_LEN        128
#define DPMON_NAME_LEN          64
/** Most entries of http.cors_origins. */
#define DPMON_MAX_CORS_ORIGINS  16
/** Longest origin text, NUL included ("https://host:port"). */
#define DPMON_ORIGIN_LEN        256
/** Most entries of http.allowed_hosts. */
#define DPMON_MAX_ALLOWED_HOSTS 16
/** Bytes of a host name in http.allowed_hosts, NUL included (RFC 1035 2.3.4). */
#define DPMON_HOST_NAME_LEN     256
/** Range and default of metrics.top_hosts. */
#define DPMON_TOP_HOSTS_MAX     1000
#define DPMON_TOP_HOSTS_DEFAULT 20
/** ports[].rx_queues absent: one RX queue per worker lcore (capped by the device). */
#define DPMON_RXQ_AUTO          0
/** ports[].mbufs absent: sized at start-up (see dpmon_port_conf.mbufs). */
#define DPMON_MBUFS_AUTO        0
/** Smallest and largest explicit ports[].mbufs. */
#define DPMON_MBUFS_MIN         1024
#define DPMON_MBUFS_MAX         16777216

/** Default of metrics.top_subnets (its range: 0..DPMON_MAX_SUBNETS). */
#define DPMON_TOP_SUBNETS_DEFAULT 1000

/** One port to poll. */
struct dpmon_port_conf {
	/** DPDK device name ("net_pcap0", "0000:01:00.0") or a port id ("0"). */
	char device[DPMON_DEVICE_LEN];
	/**
	 * RX queues to configure, 1..1024; each is polled by one worker lcore.
	 * DPMON_RXQ_AUTO (key absent): one per worker lcore, at most what the
	 * device supports (resolved at start-up).
	 */
	uint16_t rx_queues;
	/** RX descriptors per queue; 0 = the PMD's preferred size. */
	uint16_t rx_descriptors;
	/**
	 * Mbufs in the port's pool (all its queues), DPMON_MBUFS_AUTO..16777216.
	 * DPMON_MBUFS_AUTO (key absent): rx_queues x mbufs_per_queue, and for a
	 * net_pcap port with infinite_rx=1 at least the capture's packets plus
	 * each queue's working set (the PMD keeps the whole file in mbufs).
	 */
	uint32_t mbufs;
	/**
	 * Tunnel kinds to decapsulate (enum dpmon_tunnel bits, stats.h): from
	 * "decap": true (all), false (none, the default) or a list of names.
	 */
	uint32_t decap;
};

/** Longest file path in the configuration, NUL included. */
#define DPMON_PATH_LEN           256
/** Most hostgroups, and most prefixes in one hostgroup or in the whitelist. */
#define DPMON_MAX_HOSTGROUPS     4096
#define DPMON_MAX_GROUP_PREFIXES 65536

/**
 * Metrics a threshold can watch, each on the averaged rates of one
 * direction of one host (docs/detection.md). Key names in the
 * configuration and the API: dpmon_metric_name().
 */
enum dpmon_metric {
	DPMON_METRIC_PPS,           /**< "pps": avg packets/s, all protocols */
	DPMON_METRIC_BPS,           /**< "bps": avg bits/s, all protocols */
	DPMON_METRIC_FLOWS,         /**< "flows": distinct 5-tuples per interval */
	DPMON_METRIC_TCP_PPS,       /**< "tcp_pps" */
	DPMON_METRIC_TCP_BPS,       /**< "tcp_bps" */
	DPMON_METRIC_UDP_PPS,       /**< "udp_pps" */
	DPMON_METRIC_UDP_BPS,       /**< "udp_bps" */
	DPMON_METRIC_ICMP_PPS,      /**< "icmp_pps" */
	DPMON_METRIC_ICMP_BPS,      /**< "icmp_bps" */
	DPMON_METRIC_TCP_SYN_PPS,   /**< "tcp_syn_pps": SYN set, ACK clear */
	DPMON_METRIC_FRAGMENTS_PPS, /**< "fragments_pps" */
	DPMON_METRIC_MAX
};

/** Limits per direction and metric; 0 = not watched. Units as the metric. */
struct dpmon_thresholds {
	double limit[DPMON_DIR_MAX][DPMON_METRIC_MAX];
};

/** One monitored subnet. */
struct dpmon_subnet_conf {
	struct dpmon_prefix prefix;
	char name[DPMON_NAME_LEN]; /**< optional; "" when absent */
	/**
	 * Limits on the subnet's averaged rates (carpet bombing): its own
	 * "thresholds" (@c thresholds_set), else a copy of
	 * detection.subnet_thresholds.
	 */
	struct dpmon_thresholds thresholds;
	bool thresholds_set; /**< "thresholds" given for this subnet */
	bool detection;      /**< "detection": false = the subnet never alerts; default true */
	/**
	 * Hosts of the subnet are counted per prefix of this length, in bits
	 * of its family: max(1, prefix.depth)..32 (IPv4) or ..128 (IPv6);
	 * 0 (key absent) = the whole address. Read it with
	 * dpmon_subnet_host_len.
	 */
	uint8_t host_prefix_len;
};

/**
 * The length, in bits of its family, of the prefixes subnet @p s counts
 * its hosts by: host_prefix_len, or the whole address (32 or 128) when 0.
 * Any thread.
 */
static inline unsigned
dpmon_subnet_host_len(const struct dpmon_subnet_conf *s)
{
	return s->host_prefix_len != 0 ? s->host_prefix_len : dpmon_family_bits(s->prefix.family);
}

/** One hostgroup: prefixes matched by longest-prefix match on the host address. */
struct dpmon_hostgroup_conf {
	char name[DPMON_NAME_LEN];
	struct dpmon_prefix *prefixes; /**< malloc'd, n_prefixes entries */
	uint32_t n_prefixes;
	bool enabled; /**< false: its hosts never alert */
	bool ban;     /**< announce a blackhole when one of its hosts alerts; default detect.ban */
	/** Replace the global ones entirely; a copy of them when the key is absent. */
	struct dpmon_thresholds thresholds;
	/** What an alert with @c ban gets; default detect.mitigation. */
	enum dpmon_mitigation mitigation;
	bool flowspec_action_set;               /**< "flowspec_action" given */
	struct dpmon_fs_action flowspec_action; /**< else actions.flowspec.action applies */
};

/** Detection: "detection" in the file (docs/detection.md). */
struct dpmon_detect_conf {
	bool enabled; /**< default true when any threshold (host or subnet) is set */
	bool ban;     /**< global default of hostgroup.ban; default false */
	/** Global default of hostgroup.mitigation; default DPMON_MITIGATION_BLACKHOLE. */
	enum dpmon_mitigation mitigation;
	struct dpmon_thresholds thresholds; /**< global defaults */
	/** "subnet_thresholds": the defaults of every subnet's limits (dpmon_subnet_conf). */
	struct dpmon_thresholds subnet_thresholds;
	/**
	 * The subnets whose thresholds apply: a view of dpmon_config.subnets
	 * (not owned; set by dpmon_config_load, NULL when there are none).
	 */
	const struct dpmon_subnet_conf *subnets;
	uint32_t n_subnets;
	struct dpmon_hostgroup_conf *hostgroups; /**< malloc'd */
	uint32_t n_hostgroups;
	struct dpmon_prefix *whitelist; /**< malloc'd; never alert */
	uint32_t n_whitelist;
	/**
	 * "ignore_sources": remote prefixes whose packets are counted
	 * everywhere but left out of what the thresholds compare and of the
	 * fingerprints (malloc'd; none inside a monitored subnet).
	 */
	struct dpmon_prefix *ignore_sources;
	uint32_t n_ignore_sources;
	uint32_t start_intervals; /**< consecutive intervals above to start; default 1 */
	uint32_t hold_s;          /**< seconds all below to end; default 60 */
	uint32_t recent_alerts;   /**< ended alerts kept for the API; default 1000 */
};

/** Most FlowSpec rules for one alert ("max_rules_per_alert"). */
#define DPMON_FLOWSPEC_MAX_PER_ALERT 8
/** Most packets of an alert's fingerprint ("sample_packets"). */
#define DPMON_FLOWSPEC_MAX_SAMPLE    100000

/** "actions.flowspec" (docs/detection.md, "FlowSpec"). */
struct dpmon_flowspec_conf {
	bool announce;                 /**< false: a dry run (computed, listed, logged; not sent) */
	bool keep_on_stop;             /**< rules stay announced when dpmon stops; default false */
	struct dpmon_fs_action action; /**< the rules' action; default discard */
	double min_coverage;           /**< share of the attack's packets to match; default 0.95 */
	uint32_t sample_packets;       /**< packets of an alert's fingerprint; default 500 */
	uint32_t sample_timeout_s;     /**< the longest wait for them, seconds; default 10 */
	uint32_t max_rules;            /**< rules at once over every alert; default 100 */
	uint32_t max_rules_per_alert;  /**< default 3, at most DPMON_FLOWSPEC_MAX_PER_ALERT */
	uint32_t hold_s;               /**< seconds a rule outlives its alert; default 0 */
	uint32_t components;           /**< enum dpmon_fs_component bits allowed; default all */
};

/** Actions: "actions" in the file (docs/detection.md). "" = not configured. */
struct dpmon_actions_conf {
	char notify_script[DPMON_PATH_LEN]; /**< called at alert start/end */
	uint32_t notify_timeout_ms;         /**< then SIGKILL; default 10000 */
	char exabgp_pipe[DPMON_PATH_LEN];   /**< ExaBGP's command FIFO */
	char exabgp_next_hop
		[DPMON_ADDR_STRLEN]; /**< of IPv4 routes; default "192.0.2.1" (RFC 5737) */
	/** Next hop of IPv6 routes, an IPv6 address; default "100::1" (RFC 6666 discard-only). */
	char exabgp_next_hop6[DPMON_ADDR_STRLEN];
	char exabgp_community[32];     /**< e.g. "65535:666" (RFC 7999 BLACKHOLE); default "" */
	char pcap_dir[DPMON_PATH_LEN]; /**< sample packets of each alert go to DIR/ALERT_ID.pcap */
	uint32_t pcap_packets;         /**< packets per alert capture; default 100 */
	uint32_t
		pcap_max_files; /**< capture files in pcap_dir at most; default 1000, 0 = no bound */
	uint32_t pcap_max_mb;   /**< their MiB at most; default 1024, 0 = no bound */
	char state_file[DPMON_PATH_LEN];     /**< blackholes survive restarts here */
	struct dpmon_flowspec_conf flowspec; /**< "flowspec" */
};

/** Longest export URL, NUL included. */
#define DPMON_URL_LEN 256

/** The export backends: one exporter thread each (lib/export). */
enum dpmon_export_kind {
	DPMON_EXPORT_CLICKHOUSE, /**< "clickhouse": HTTP interface, INSERT ... FORMAT JSONEachRow */
	DPMON_EXPORT_INFLUXDB,   /**< "influxdb": line protocol, 1.x /write or 2.x /api/v2/write */
	DPMON_EXPORT_MAX
};

/** How rows go to ClickHouse: "format" of "export.clickhouse". */
enum dpmon_ch_format {
	DPMON_CH_FORMAT_ROWBINARY,   /**< "RowBinary", the default: binary columns, no text */
	DPMON_CH_FORMAT_JSONEACHROW, /**< "JSONEachRow": one JSON object per row */
};

/** One backend of "export" (docs/export.md); "" = not set. */
struct dpmon_export_sink_conf {
	bool enabled;            /**< the backend's object is in the file */
	char url[DPMON_URL_LEN]; /**< "http[s]://host[:port][/path]", no query */
	char database
		[DPMON_NAME_LEN]; /**< ClickHouse database, InfluxDB 1.x database; default "dpmon" */
	char user[DPMON_NAME_LEN];          /**< HTTP basic authentication user; "" = none */
	char password_file[DPMON_PATH_LEN]; /**< its password's file (token_file.h); needs user */
	/** The password read from password_file when the file was loaded; "" = none. */
	char password[DPMON_SECRET_MAX + 1];
	uint32_t timeout_ms; /**< one request, connect included; default 10000, 100..600000 */
	uint32_t
		top_hosts; /**< "hosts": 0 = "all" active hosts (the default), else the top N by bytes */
	uint32_t ttl_days;        /**< ClickHouse TTL of the rows, days; 0 = none (the default) */
	bool create_tables;       /**< ClickHouse: create the database and tables; default true */
	uint8_t format;           /**< ClickHouse: enum dpmon_ch_format; default RowBinary */
	uint8_t api;              /**< InfluxDB: 1 (/write, the default) or 2 (/api/v2/write) */
	char org[DPMON_NAME_LEN]; /**< InfluxDB 2.x organisation */
	char bucket[DPMON_NAME_LEN];     /**< InfluxDB 2.x bucket; set = api 2 */
	char token_file[DPMON_PATH_LEN]; /**< InfluxDB 2.x API token's file (token_file.h) */
	/** The token read from token_file when the file was loaded; "" = none. */
	char token[DPMON_SECRET_MAX + 1];
};

/** "export" in the file (docs/export.md). */
struct dpmon_export_conf {
	/** Name of this appliance in every row; default the host name. [A-Za-z0-9._:-]. */
	char instance[DPMON_NAME_LEN];
	uint32_t spool_intervals; /**< batches kept while a server is away; default 300, 1..86400 */
	uint32_t spool_mb;        /**< and at most this many MiB of them; default 1024, 1..65536 */
	uint32_t retry_max_ms; /**< longest wait between two attempts; default 30000, 100..600000 */
	uint32_t
		flush_timeout_ms; /**< at stop, time to send what is spooled; default 5000, 0..600000 */
	struct dpmon_export_sink_conf sink[DPMON_EXPORT_MAX];
};

/** Name of backend @p k in the configuration ("clickhouse"), or NULL out of range. Any thread. */
const char *dpmon_export_kind_name(int k);

/** The whole configuration, with defaults filled in. */
struct dpmon_config {
	struct dpmon_port_conf ports[DPMON_MAX_PORTS];
	uint32_t n_ports;
	struct dpmon_subnet_conf *subnets; /**< malloc'd, n_subnets entries */
	uint32_t n_subnets;
	char http_listen[DPMON_ADDR_STRLEN]; /**< default "127.0.0.1" */
	uint16_t http_port;                  /**< default 8080; 0 = any free port */
	/**
	 * Origins allowed to read the API from a browser (CORS), each "*" or
	 * "http[s]://host[:port]" in lower case; none by default.
	 */
	char http_cors_origins[DPMON_MAX_CORS_ORIGINS][DPMON_ORIGIN_LEN];
	uint32_t n_cors_origins;
	/**
	 * Host names and IP literals allowed in the Host header, lower case,
	 * no port; none = the listen address, "localhost" and gethostname().
	 */
	char http_allowed_hosts[DPMON_MAX_ALLOWED_HOSTS][DPMON_HOST_NAME_LEN];
	uint32_t n_allowed_hosts;
	/** Bearer token file that requests changing state must present; "" = none. */
	char http_write_token_file[DPMON_PATH_LEN];
	/** Bearer token file that reads (all but /health) must present; "" = none. */
	char http_read_token_file[DPMON_PATH_LEN];
	/** PEM certificate chain of the HTTPS listener (tls_file.h); "" = plain HTTP. */
	char http_tls_cert_file[DPMON_PATH_LEN];
	/** PEM private key of that certificate, a private file; set with the certificate. */
	char http_tls_key_file[DPMON_PATH_LEN];
	/** Listening on an address other than loopback without a write token is allowed. */
	bool http_allow_unauthenticated_writes;
	/** Hosts exported per-host on /metrics (top by bytes); default 20, 0..1000. */
	uint32_t metrics_top_hosts;
	/**
	 * Subnets with per-subnet series on /metrics: all when there are at
	 * most this many, else the top by bytes; default 1000, 0..65536.
	 */
	uint32_t metrics_top_subnets;
	uint32_t host_table_capacity; /**< hosts per worker lcore, default 65536 */
	/**
	 * Seconds without a packet after which a host leaves its worker's
	 * table and the snapshots; default 300, 0 = never, at most 31536000.
	 */
	uint32_t host_idle_timeout_s;
	uint32_t merge_interval_ms; /**< default 1000, range 100..60000 */
	/** Time constant of the averages avg_pps/avg_bps (rates.h); default 5000, 100..3600000. */
	uint32_t average_time_constant_ms;
	/** Seconds of rates kept for GET /api/v1/history; default 300, 0..86400. */
	uint32_t history_s;
	uint32_t burst_size;      /**< rx burst, packets; default 32, 1..512 */
	uint32_t mbufs_per_queue; /**< mbuf pool share per RX queue; default 4096 */
	/**
	 * Microseconds a worker (or distributor) lcore sleeps per round of
	 * polls once its RX queues have been empty for a while (idle.h);
	 * default 0 = busy polling, 0..100000.
	 */
	uint32_t idle_sleep_us;
	/**
	 * "software_rss": true: the first worker lcore distributes every RX
	 * queue's packets to the other worker lcores by a symmetric address
	 * hash (distributor.h); default false.
	 */
	bool software_rss;
	/**
	 * "flow_sketches": distinct flows and peers (HyperLogLog sketches and
	 * per-host bitmaps, hll.h) of hosts, subnets and totals; default true.
	 * false: the workers skip them (their cost per packet is in
	 * docs/performance.md) and every "flows" and "peers" is null. No
	 * "flows" threshold may be set then. Restart only.
	 */
	bool flow_sketches;
	struct dpmon_detect_conf detect;
	struct dpmon_actions_conf actions;
	struct dpmon_export_conf export; /**< "export" (docs/export.md) */
};

/** Fill @p cfg with every default (no ports, no subnets). Never fails. Any thread. */
void dpmon_config_defaults(struct dpmon_config *cfg);

/**
 * Read and validate the JSON file @p path into @p cfg (defaults first).
 * Checks: JSON syntax (line and column), unknown keys, wrong types, numbers
 * out of range, bad CIDR, host bits set, duplicate subnets, at least one
 * port and one subnet, duplicate devices; in "detection", unknown metrics,
 * duplicate hostgroup names and a prefix in two hostgroups (or twice in
 * one, or twice in the whitelist).
 *
 * @param err  every error is printed there, one per line, as
 *             "PATH: $.json.path: why"; may be NULL to stay silent.
 * @return 0 when valid; otherwise the (positive) number of errors found,
 *         or -errno when the file cannot be read (also printed).
 *         On any non-zero return @p cfg holds no allocation.
 * Thread-safety: any thread; touches no global state.
 */
int dpmon_config_load(const char *path, struct dpmon_config *cfg, FILE *err);

/**
 * As dpmon_config_load, from a JSON text in memory.
 * @param json_text  the document, NUL-terminated.
 * @param origin     names it in messages (e.g. the file name); NULL is
 *                   "(config)".
 * @return 0 when valid, the (positive) number of errors found, or -EINVAL
 *         when @p json_text is NULL; @p cfg as after dpmon_config_load.
 * Thread-safety: any thread.
 */
int dpmon_config_parse(const char *json_text, const char *origin, struct dpmon_config *cfg,
		       FILE *err);

/**
 * Name of metric @p m as in the configuration and the API ("tcp_syn_pps"),
 * or NULL out of range. Any thread.
 */
const char *dpmon_metric_name(int m);

/**
 * Release what dpmon_config_load allocated (subnets, hostgroups, the
 * whitelist). Safe on a defaulted config. Any thread.
 */
void dpmon_config_free(struct dpmon_config *cfg);

#endif /* DPMON_CONFIG_H */
