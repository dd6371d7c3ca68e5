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

#include "prefix.h"

#define DPMON_MAX_PORTS 32
#define DPMON_MAX_SUBNETS 65536
#define DPMON_DEVICE_LEN 128
#define DPMON_NAME_LEN 64
/** Most entries of http.cors_origins. */
#define DPMON_MAX_CORS_ORIGINS 16
/** Longest origin text, NUL included ("https://host:port"). */
#define DPMON_ORIGIN_LEN 256
/** Range and default of metrics.top_hosts. */
#define DPMON_TOP_HOSTS_MAX 1000
#define DPMON_TOP_HOSTS_DEFAULT 20
/** ports[].rx_queues absent: one RX queue per worker lcore (capped by the device). */
#define DPMON_RXQ_AUTO 0
/** ports[].mbufs absent: sized at start-up (see dpmon_port_conf.mbufs). */
#define DPMON_MBUFS_AUTO 0
/** Smallest and largest explicit ports[].mbufs. */
#define DPMON_MBUFS_MIN 1024
#define DPMON_MBUFS_MAX 16777216

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

/** One monitored subnet. */
struct dpmon_subnet_conf {
	struct dpmon_prefix prefix;
	char name[DPMON_NAME_LEN]; /**< optional; "" when absent */
};

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
	/** Hosts exported per-host on /metrics (top by bytes); default 20, 0..1000. */
	uint32_t metrics_top_hosts;
	uint32_t host_table_capacity;        /**< hosts per worker lcore, default 65536 */
	uint32_t merge_interval_ms;          /**< default 1000, range 100..60000 */
	/** Time constant of the averages avg_pps/avg_bps (rates.h); default 5000, 100..3600000. */
	uint32_t average_time_constant_ms;
	/** Seconds of rates kept for GET /api/v1/history; default 300, 0..86400. */
	uint32_t history_s;
	uint32_t burst_size;                 /**< rx burst, packets; default 32, 1..512 */
	uint32_t mbufs_per_queue;            /**< mbuf pool share per RX queue; default 4096 */
	/**
	 * "software_rss": true: the first worker lcore distributes every RX
	 * queue's packets to the other worker lcores by a symmetric address
	 * hash (distributor.h); default false.
	 */
	bool software_rss;
};

/** Fill @p cfg with every default (no ports, no subnets). Never fails. */
void dpmon_config_defaults(struct dpmon_config *cfg);

/**
 * Read and validate the JSON file @p path into @p cfg (defaults first).
 * Checks: JSON syntax (line and column), unknown keys, wrong types, numbers
 * out of range, bad CIDR, host bits set, duplicate subnets, at least one
 * port and one subnet, duplicate devices.
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
 * As dpmon_config_load, from a JSON text in memory; @p origin names it in
 * messages (e.g. the file name).
 */
int dpmon_config_parse(const char *json_text, const char *origin,
		       struct dpmon_config *cfg, FILE *err);

/** Release what dpmon_config_load allocated. Safe on a defaulted config. */
void dpmon_config_free(struct dpmon_config *cfg);

#endif /* DPMON_CONFIG_H */
