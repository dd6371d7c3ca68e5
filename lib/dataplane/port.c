/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port.c — ethdev configuration for monitoring (see port.h).
 *
 * Mbuf pools are sized from the configuration (ports[].mbufs). When that
 * key is absent the size is rx_queues x mbufs_per_queue, raised for a
 * net_pcap port with infinite_rx=1 to the number of packets in its
 * captures plus every queue's working set: that PMD copies the whole file
 * into mbufs at queue set-up and keeps them for the port's lifetime. A pool
 * that is still too small makes rte_eth_rx_queue_setup fail; the message
 * then names the option to raise and the size needed.
 */
#include "port.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "file.h"

#define RSS_KEY_MAX 64
#define POOL_CACHE  256

int
dpmon_port_resolve(const char *device, uint16_t *port_id, FILE *err)
{
	char *end;
	unsigned long id;

	if (rte_eth_dev_get_port_by_name(device, port_id) == 0)
		return 0;
	id = strtoul(device, &end, 10);
	if (*device >= '0' && *device <= '9' && *end == '\0' && id < RTE_MAX_ETHPORTS &&
	    rte_eth_dev_is_valid_port((uint16_t)id)) {
		*port_id = (uint16_t)id;
		return 0;
	}
	if (err)
		fprintf(err,
			"dpmon: port '%s': no such DPDK device (attach it with EAL "
			"options, e.g. --vdev or -a PCI_ADDRESS; if you did, its driver "
			"refused it: see the messages above)\n",
			device);
	return -ENODEV;
}

/* Symmetric RSS: with a key of repeated 0x6d5a, Toeplitz gives the same hash
 * for (src, dst) and (dst, src) (Woo and Park, "Scalable TCP Session
 * Monitoring with Symmetric Receive-side Scaling", 2012). */
static void
rss_setup(struct rte_eth_conf *conf, const struct rte_eth_dev_info *info, uint16_t nb_rxq,
	  uint8_t *key)
{
	uint64_t hf =
		(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) & info->flow_type_rss_offloads;
	uint8_t key_len = info->hash_key_size ? info->hash_key_size : 40;

	if (nb_rxq < 2 || hf == 0 || key_len > RSS_KEY_MAX)
		return;
	for (unsigned i = 0; i < key_len; i += 2) {
		key[i] = 0x6d;
		key[i + 1] = 0x5a;
	}
	conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	conf->rx_adv_conf.rss_conf.rss_key = key;
	conf->rx_adv_conf.rss_conf.rss_key_len = key_len;
	conf->rx_adv_conf.rss_conf.rss_hf = hf;
}

/*
 * Records in the pcap file @p path, or 0 when it cannot be read or is not
 * a regular file (file.h: a FIFO is not waited on; the pcap PMD opened it
 * already, its own way, when EAL probed the port).
 */
static uint64_t
pcap_records(const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	uint64_t n = 0;
	int fd = dpmon_file_open(path, 0, NULL, 0);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	pcap_t *p = f != NULL ? pcap_fopen_offline(f, errbuf) : NULL;

	if (p == NULL) {
		if (f != NULL)
			fclose(f);
		else if (fd >= 0)
			close(fd);
		return 0;
	}
	while (pcap_next_ex(p, &h, &d) == 1)
		n++;
	pcap_close(p);
	return n;
}

uint64_t
dpmon_port_pcap_resident(uint16_t port_id)
{
	struct rte_eth_dev_info info;
	const struct rte_devargs *da;
	char *args, *tok, *save = NULL;
	uint64_t n = 0;
	bool infinite = false;

	if (rte_eth_dev_info_get(port_id, &info) != 0 || info.driver_name == NULL ||
	    strcmp(info.driver_name, "net_pcap") != 0 || info.device == NULL)
		return 0;
	da = rte_dev_devargs(info.device);
	if (da == NULL || da->args == NULL || (args = strdup(da->args)) == NULL)
		return 0;
	for (tok = strtok_r(args, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strncmp(tok, "rx_pcap=", 8) == 0)
			n += pcap_records(tok + 8);
		else if (strcmp(tok, "infinite_rx=1") == 0)
			infinite = true;
	}
	free(args);
	return infinite ? n : 0;
}

/* Pool size for the port: explicit, or rx_queues shares raised to fit a
 * resident capture (see the file comment). */
static uint32_t
pool_size(uint16_t port_id, const struct dpmon_port_conf *pc, uint32_t mbufs_per_queue,
	  uint32_t per_queue_min)
{
	uint64_t share = mbufs_per_queue < per_queue_min ? per_queue_min : mbufs_per_queue;
	uint64_t n = share * pc->rx_queues;
	uint64_t resident;

	if (pc->mbufs != DPMON_MBUFS_AUTO)
		return pc->mbufs;
	resident = dpmon_port_pcap_resident(port_id);
	if (resident > 0 && resident + (uint64_t)per_queue_min * pc->rx_queues > n)
		n = resident + (uint64_t)per_queue_min * pc->rx_queues;
	return n > DPMON_MBUFS_MAX ? DPMON_MBUFS_MAX : (uint32_t)n;
}

/*
 * Did rx queue set-up fail for want of mbufs? DPDK 22.11's pcap PMD logs
 * "Not enough mbufs to accommodate packets in pcap file" and returns
 * -EINVAL, other PMDs return -ENOMEM: decide from the sizes, not the code.
 */
static bool
pool_short(uint16_t port_id, const struct dpmon_port_conf *pc, uint32_t n_mbufs, int rc,
	   uint32_t per_queue_min)
{
	uint64_t resident = dpmon_port_pcap_resident(port_id);

	if (resident > 0)
		return resident + (uint64_t)per_queue_min * pc->rx_queues > n_mbufs;
	return rc == -ENOMEM;
}

/* rx queue set-up failed for want of mbufs: say which option to raise. */
static void
explain_short_pool(uint16_t port_id, const struct dpmon_port_conf *pc, uint32_t n_mbufs,
		   uint32_t per_queue_min, FILE *err)
{
	uint64_t resident = dpmon_port_pcap_resident(port_id);

	if (err == NULL)
		return;
	fprintf(err,
		"dpmon: port '%s': the mbuf pool (%u mbufs) is too small for its RX "
		"queues",
		pc->device, n_mbufs);
	if (resident > 0)
		fprintf(err,
			": the pcap PMD with infinite_rx=1 keeps the whole capture in "
			"mbufs (%" PRIu64 " packets) and each queue needs %u more; set "
			"ports[].mbufs to at least %" PRIu64 "\n",
			resident, per_queue_min,
			resident + (uint64_t)per_queue_min * pc->rx_queues);
	else
		fprintf(err, "; raise ports[].mbufs (or mbufs_per_queue) to at least %" PRIu64 "\n",
			(uint64_t)per_queue_min * pc->rx_queues);
}

/* Ports whose PMD reports the packet types of the parse (dpmon_port_ptypes). */
static bool port_ptypes[RTE_MAX_ETHPORTS];

#define PTYPE_FAMILIES (RTE_PTYPE_L2_MASK | RTE_PTYPE_L3_MASK | RTE_PTYPE_L4_MASK)
#define PTYPES_MAX     64

/* Before the start: the L2/L3/L4 types only, where the PMD can be told (a
 * PMD may then pick a faster receive path; -ENOTSUP is not an error). */
static void
ptypes_set(uint16_t port_id)
{
	uint32_t set[PTYPES_MAX + 1];

	(void)rte_eth_dev_set_ptypes(port_id, PTYPE_FAMILIES, set, RTE_DIM(set));
}

/* After the start (when the PMD has chosen its receive function): does it
 * report untagged Ethernet, IPv4 or IPv6, TCP, UDP and fragments? */
static bool
ptypes_reported(uint16_t port_id)
{
	uint32_t pt[PTYPES_MAX];
	int n = rte_eth_dev_get_supported_ptypes(port_id, PTYPE_FAMILIES, pt, RTE_DIM(pt));
	bool eth = false, ip = false, tcp = false, udp = false, frag = false;

	for (int i = 0; i < n && i < (int)RTE_DIM(pt); i++) {
		switch (pt[i]) {
		case RTE_PTYPE_L2_ETHER:
			eth = true;
			break;
		case RTE_PTYPE_L3_IPV4:
		case RTE_PTYPE_L3_IPV4_EXT_UNKNOWN:
		case RTE_PTYPE_L3_IPV6:
		case RTE_PTYPE_L3_IPV6_EXT_UNKNOWN:
			ip = true;
			break;
		case RTE_PTYPE_L4_TCP:
			tcp = true;
			break;
		case RTE_PTYPE_L4_UDP:
			udp = true;
			break;
		case RTE_PTYPE_L4_FRAG:
			frag = true;
			break;
		default:
			break;
		}
	}
	return eth && ip && tcp && udp && frag;
}

bool
dpmon_port_ptypes(uint16_t port_id)
{
	return port_id < RTE_MAX_ETHPORTS && port_ptypes[port_id];
}

int
dpmon_port_start(uint16_t port_id, const struct dpmon_port_conf *pc, uint32_t mbufs_per_queue,
		 uint16_t burst, FILE *err)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_mempool *pool;
	uint8_t key[RSS_KEY_MAX];
	uint16_t nb_rxd = pc->rx_descriptors, nb_txd = 0;
	char name[RTE_MEMPOOL_NAMESIZE];
	int socket = rte_eth_dev_socket_id(port_id);
	uint32_t n_mbufs;
	int rc;

	if (socket < 0)
		socket = (int)rte_socket_id();
	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(port_id, &info);
	if (rc != 0)
		goto fail;
	if (pc->rx_queues > info.max_rx_queues) {
		if (err)
			fprintf(err,
				"dpmon: port '%s': %u RX queues requested, the device "
				"has %u\n",
				pc->device, pc->rx_queues, info.max_rx_queues);
		return -EINVAL;
	}
	rss_setup(&conf, &info, pc->rx_queues, key);
	rc = rte_eth_dev_configure(port_id, pc->rx_queues, 0, &conf);
	if (rc != 0)
		goto fail;
	if (nb_rxd == 0)
		nb_rxd = info.default_rxportconf.ring_size ? info.default_rxportconf.ring_size
							   : 1024;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &nb_rxd, &nb_txd);
	if (rc != 0)
		goto fail;
	n_mbufs = pool_size(port_id, pc, mbufs_per_queue, nb_rxd + burst + POOL_CACHE * 2u);
	snprintf(name, sizeof(name), "dpmon_pool_%u", port_id);
	pool = rte_pktmbuf_pool_create(name, n_mbufs, POOL_CACHE, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       socket);
	if (pool == NULL) {
		rc = -rte_errno;
		goto fail;
	}
	for (uint16_t q = 0; q < pc->rx_queues; q++) {
		rc = rte_eth_rx_queue_setup(port_id, q, nb_rxd, (unsigned)socket, NULL, pool);
		if (rc != 0 &&
		    pool_short(port_id, pc, n_mbufs, rc, nb_rxd + burst + POOL_CACHE * 2u)) {
			explain_short_pool(port_id, pc, n_mbufs, nb_rxd + burst + POOL_CACHE * 2u,
					   err);
			return -ENOMEM;
		}
		if (rc != 0)
			goto fail;
	}
	ptypes_set(port_id);
	rc = rte_eth_dev_start(port_id);
	if (rc != 0)
		goto fail;
	port_ptypes[port_id] = ptypes_reported(port_id);
	rc = rte_eth_promiscuous_enable(port_id);
	if (rc != 0 && rc != -ENOTSUP && err)
		fprintf(err, "dpmon: port '%s': promiscuous mode: %s\n", pc->device,
			rte_strerror(-rc));
	return 0;
fail:
	if (err)
		fprintf(err, "dpmon: port '%s': set-up failed: %s\n", pc->device,
			rte_strerror(rc < 0 ? -rc : rc));
	return rc < 0 ? rc : -rc;
}

void
dpmon_port_read_stats(uint16_t port_id, struct dpmon_port_stats *out)
{
	struct rte_eth_stats st;

	if (rte_eth_stats_get(port_id, &st) != 0)
		return;
	out->ipackets = st.ipackets;
	out->ibytes = st.ibytes;
	out->imissed = st.imissed;
	out->ierrors = st.ierrors;
	out->rx_nombuf = st.rx_nombuf;
}

void
dpmon_port_stop(uint16_t port_id)
{
	rte_eth_dev_stop(port_id);
	rte_eth_dev_close(port_id);
}
