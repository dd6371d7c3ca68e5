/*
 * port.c — ethdev configuration for monitoring (see port.h).
 */
#include "port.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#define RSS_KEY_MAX 64
#define POOL_CACHE 256

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
		fprintf(err, "dpmon: port '%s': no such DPDK device (attach it with EAL "
			     "options, e.g. --vdev or -a PCI_ADDRESS; if you did, its driver "
			     "refused it: see the messages above)\n", device);
	return -ENODEV;
}

/* Symmetric RSS: with a key of repeated 0x6d5a, Toeplitz gives the same hash
 * for (src, dst) and (dst, src) (Woo and Park, "Scalable TCP Session
 * Monitoring with Symmetric Receive-side Scaling", 2012). */
static void
rss_setup(struct rte_eth_conf *conf, const struct rte_eth_dev_info *info,
	  uint16_t nb_rxq, uint8_t *key)
{
	uint64_t hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
		      info->flow_type_rss_offloads;
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

int
dpmon_port_start(uint16_t port_id, const struct dpmon_port_conf *pc,
		 uint32_t mbufs_per_queue, uint16_t burst, FILE *err)
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
			fprintf(err, "dpmon: port '%s': %u RX queues requested, the device "
				     "has %u\n", pc->device, pc->rx_queues, info.max_rx_queues);
		return -EINVAL;
	}
	rss_setup(&conf, &info, pc->rx_queues, key);
	rc = rte_eth_dev_configure(port_id, pc->rx_queues, 0, &conf);
	if (rc != 0)
		goto fail;
	if (nb_rxd == 0)
		nb_rxd = info.default_rxportconf.ring_size ? info.default_rxportconf.ring_size : 1024;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &nb_rxd, &nb_txd);
	if (rc != 0)
		goto fail;
	n_mbufs = mbufs_per_queue;
	if (n_mbufs < nb_rxd + burst + POOL_CACHE * 2u)
		n_mbufs = nb_rxd + burst + POOL_CACHE * 2u;
	n_mbufs *= pc->rx_queues;
	snprintf(name, sizeof(name), "dpmon_pool_%u", port_id);
	pool = rte_pktmbuf_pool_create(name, n_mbufs, POOL_CACHE, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	if (pool == NULL) {
		rc = -rte_errno;
		goto fail;
	}
	for (uint16_t q = 0; q < pc->rx_queues; q++) {
		rc = rte_eth_rx_queue_setup(port_id, q, nb_rxd, (unsigned)socket, NULL, pool);
		if (rc != 0)
			goto fail;
	}
	rc = rte_eth_dev_start(port_id);
	if (rc != 0)
		goto fail;
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
dpmon_port_read_stats(uint16_t port_id, struct dpmon_snap_port *out)
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
