/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen.c — deterministic synthetic traffic written to a pcap file.
 *
 * Design. dpmon_gen_write() validates the options, prepares a run (family
 * lists of subnets, cumulative weight tables, a zeroed frame buffer, a
 * host-used bitmap, the summary) and then loops: pick the two ends, the
 * protocol and the size (pick_packet), build the frame in place
 * (build_frame), count it (account) and hand it to pcap_dump. The
 * per-packet path allocates nothing and costs O(1): hosts are computed
 * from their index (network address OR (index + 1)), never stored.
 *
 * Frames. Ethernet II between two fixed locally administered MACs
 * (02:00:00:00:00:01 -> 02:00:00:00:00:02), optionally one 802.1Q tag,
 * then IPv4 (IHL 5, DF, TTL 64, ID = packet index mod 2^16, header
 * checksum) or IPv6 (hop limit 64, no extension header), then TCP (20
 * bytes, ACK, PSH|ACK with payload, SYN one packet in 16), UDP, ICMP echo
 * request (type 8) / ICMPv6 echo request (type 128), or "other": IPv4
 * protocol 47 with a 4-byte GRE header (protocol type 0x88b5, IEEE local
 * experimental) / IPv6 next header 59 (no next header). The payload is
 * all zero bytes; that is what makes the TCP/UDP/ICMP checksums cheap
 * (zero words add nothing to a ones' complement sum), so they are all
 * computed and valid. IP lengths match the frame exactly, no padding.
 *
 * Randomness: rng.h (xoshiro256** seeded through splitmix64).
 */
#include "cksum.h"
#include "gen.h"
#include "numbers.h"
#include "rng.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NO_SUBNET     UINT32_MAX
#define HEADROOM      96     /* zeroed per packet: covers every header (<= 78 bytes) */
#define IO_CHECK_MASK 0xffff /* check the stream for write errors every 65536 packets */
#define STDIO_BUFFER  (1u << 20)

static const uint8_t mac_src[6] = {0x02, 0, 0, 0, 0, 0x01};
static const uint8_t mac_dst[6] = {0x02, 0, 0, 0, 0, 0x02};

static const char *const default_subnets[] = {
	"10.0.0.0/24=office",
	"10.0.1.0/24=servers",
	"192.0.2.0/24=dmz",
	"2001:db8:10::/64=office-v6",
};

static const char *const peer_pools[] = {
	"198.51.100.0/24",
	"203.0.113.0/24",
	"2001:db8:ffff::/48",
};

static const char *const proto_names[DPMON_PROTO_MAX] = {"tcp", "udp", "icmp", "other"};
static const char *const dir_names[DPMON_DIR_MAX] = {"ingress", "egress"};
static const char *const total_names[DPMON_TOTAL_MAX] = {
	"ingress",
	"egress",
	"internal",
	"external",
};

/* ------------------------------------------------------------------------
 * Options.
 * --------------------------------------------------------------------- */

void
dpmon_gen_defaults(struct dpmon_gen_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->hosts = 64;
	o->packets = 100000;
	o->mix[DPMON_PROTO_TCP] = 40;
	o->mix[DPMON_PROTO_UDP] = 50;
	o->mix[DPMON_PROTO_ICMP] = 10;
	o->mix[DPMON_PROTO_OTHER] = 0;
	o->sizes[0] = 64;
	o->size_weights[0] = 1;
	o->n_sizes = 1;
	o->egress_percent = 30;
	o->internal_percent = 0;
	o->peers = 256;
	o->vlan = DPMON_GEN_NO_VLAN;
	o->seed = 1;
}

void
dpmon_gen_opts_free(struct dpmon_gen_opts *o)
{
	free(o->subnets);
	o->subnets = NULL;
	o->n_subnets = 0;
}

int
dpmon_gen_add_subnet(struct dpmon_gen_opts *o, const char *text, const char **why)
{
	char cidr[DPMON_PREFIX_STRLEN + 8];
	const char *eq = strchr(text, '=');
	const char *name = eq ? eq + 1 : "";
	size_t cidr_len = eq ? (size_t)(eq - text) : strlen(text);
	struct dpmon_gen_subnet sn;
	struct dpmon_gen_subnet *grown;
	const char *dummy;

	if (why == NULL)
		why = &dummy;
	if (cidr_len >= sizeof(cidr)) {
		*why = "bad CIDR (too long)";
		return -EINVAL;
	}
	memcpy(cidr, text, cidr_len);
	cidr[cidr_len] = '\0';
	if (dpmon_prefix_parse(cidr, &sn.prefix, why) != 0)
		return -EINVAL;
	if (eq != NULL && *name == '\0') {
		*why = "empty subnet name after '='";
		return -EINVAL;
	}
	if (strlen(name) >= sizeof(sn.name)) {
		*why = "subnet name longer than 63 bytes";
		return -EINVAL;
	}
	strcpy(sn.name, name);
	if (o->n_subnets >= DPMON_GEN_MAX_SUBNETS) {
		*why = "too many subnets (at most 65536)";
		return -EINVAL;
	}
	grown = realloc(o->subnets, (o->n_subnets + 1) * sizeof(*grown));
	if (grown == NULL) {
		*why = "out of memory";
		return -ENOMEM;
	}
	o->subnets = grown;
	o->subnets[o->n_subnets++] = sn;
	return 0;
}

int
dpmon_gen_default_subnets(struct dpmon_gen_opts *o)
{
	for (size_t i = 0; i < sizeof(default_subnets) / sizeof(default_subnets[0]); i++) {
		int rc = dpmon_gen_add_subnet(o, default_subnets[i], NULL);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/*
 * One number of a --mix or --size list: the @p len bytes at @p s, decimal,
 * at most @p max, and at most 10 characters long, leading zeros included.
 */
static bool
list_number(const char *s, size_t len, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (len > 10 || gen_parse_uint(s, len, max, &v) != 0)
		return false;
	*out = (uint32_t)v;
	return true;
}

static int
proto_by_name(const char *s, size_t len)
{
	for (int p = 0; p < DPMON_PROTO_MAX; p++)
		if (strlen(proto_names[p]) == len && strncmp(s, proto_names[p], len) == 0)
			return p;
	return -1;
}

int
dpmon_gen_parse_mix(struct dpmon_gen_opts *o, const char *text, const char **why)
{
	uint32_t mix[DPMON_PROTO_MAX] = {0};
	bool seen[DPMON_PROTO_MAX] = {false};
	uint64_t sum = 0;
	const char *p = text, *dummy;

	if (why == NULL)
		why = &dummy;
	for (;;) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		int proto;

		if (eq == NULL) {
			*why = "bad mix item (expected PROTO=WEIGHT, PROTO one of tcp, udp, icmp, "
			       "other)";
			return -EINVAL;
		}
		proto = proto_by_name(p, (size_t)(eq - p));
		if (proto < 0) {
			*why = "unknown protocol in mix (expected tcp, udp, icmp or other)";
			return -EINVAL;
		}
		if (seen[proto]) {
			*why = "protocol repeated in mix";
			return -EINVAL;
		}
		seen[proto] = true;
		if (!list_number(eq + 1, len - (size_t)(eq + 1 - p), 1000000, &mix[proto])) {
			*why = "bad mix weight (expected an integer 0..1000000)";
			return -EINVAL;
		}
		sum += mix[proto];
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	if (sum == 0) {
		*why = "mix weights sum to zero";
		return -EINVAL;
	}
	memcpy(o->mix, mix, sizeof(mix));
	return 0;
}

int
dpmon_gen_parse_sizes(struct dpmon_gen_opts *o, const char *text, const char **why)
{
	uint32_t sizes[DPMON_GEN_MAX_SIZES];
	uint32_t n = 0;
	const char *p = text, *dummy;

	if (why == NULL)
		why = &dummy;
	if (strcmp(text, "imix") == 0) {
		static const uint32_t imix[3] = {64, 594, 1518}, weight[3] = {7, 4, 1};
		memcpy(o->sizes, imix, sizeof(imix));
		memcpy(o->size_weights, weight, sizeof(weight));
		o->n_sizes = 3;
		return 0;
	}
	for (;;) {
		size_t len = strcspn(p, ",");

		if (n == DPMON_GEN_MAX_SIZES) {
			*why = "too many sizes (at most 64)";
			return -EINVAL;
		}
		if (!list_number(p, len, DPMON_GEN_MAX_FRAME, &sizes[n]) || sizes[n] == 0) {
			*why = "bad size (expected imix, or bytes 1..65531, comma separated)";
			return -EINVAL;
		}
		n++;
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	memcpy(o->sizes, sizes, n * sizeof(sizes[0]));
	for (uint32_t i = 0; i < n; i++)
		o->size_weights[i] = 1;
	o->n_sizes = n;
	return 0;
}

/* ------------------------------------------------------------------------
 * Validation of the options.
 * --------------------------------------------------------------------- */

uint32_t
dpmon_gen_min_frame(unsigned family, enum dpmon_proto proto)
{
	static const uint32_t l4[2][DPMON_PROTO_MAX] = {
		{20, 8, 8, 4}, /* IPv4: TCP, UDP, ICMP echo, GRE header */
		{20, 8, 8, 0}, /* IPv6: TCP, UDP, ICMPv6 echo, no next header */
	};
	return 14 + (family == 4 ? 20 : 40) + l4[family == 6][proto];
}

/* Hosts that fit in @p p after its network address (IPv4 broadcast excluded). */
static uint64_t
subnet_capacity(const struct dpmon_prefix *p)
{
	unsigned bits = (p->family == 4 ? 32u : 128u) - p->depth;

	if (bits >= 40)
		return UINT64_C(1) << 40;
	if (p->family == 4 && bits >= 2)
		return (UINT64_C(1) << bits) - 2;
	return (UINT64_C(1) << bits) - 1;
}

static bool
prefixes_overlap(const struct dpmon_prefix *a, const struct dpmon_prefix *b)
{
	return dpmon_prefix_contains(a, &b->addr) || dpmon_prefix_contains(b, &a->addr);
}

/* Order subnets by network address, the wider prefix first. */
static int
cmp_subnet_ptr(const void *x, const void *y)
{
	const struct dpmon_prefix *a = &(*(const struct dpmon_gen_subnet *const *)x)->prefix;
	const struct dpmon_prefix *b = &(*(const struct dpmon_gen_subnet *const *)y)->prefix;
	int c = dpmon_addr_cmp(&a->addr, &b->addr);
	unsigned da = a->family == 4 ? 96u + a->depth : a->depth;
	unsigned db = b->family == 4 ? 96u + b->depth : b->depth;

	if (c != 0)
		return c;
	return (da > db) - (da < db);
}

/* Error reporting for dpmon_gen_check: prints the first MAX_COMPLAINTS. */
#define MAX_COMPLAINTS 20

struct complaints {
	FILE *err;
	unsigned n;
};

static void complain(struct complaints *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
complain(struct complaints *c, const char *fmt, ...)
{
	va_list ap;

	if (c->err != NULL && c->n < MAX_COMPLAINTS) {
		fputs("dpmon-gen: ", c->err);
		va_start(ap, fmt);
		vfprintf(c->err, fmt, ap);
		va_end(ap);
		fputc('\n', c->err);
	}
	c->n++;
}

static void
check_scalars(const struct dpmon_gen_opts *o, struct complaints *c)
{
	uint64_t mix_sum = 0, size_sum = 0;

	if (o->output == NULL || o->output[0] == '\0')
		complain(c, "no output file (--output FILE.pcap)");
	if (o->hosts < 1 || o->hosts > DPMON_GEN_MAX_HOSTS)
		complain(c, "--hosts %" PRIu32 ": must be 1..%u", o->hosts, DPMON_GEN_MAX_HOSTS);
	if (o->egress_percent > 100)
		complain(c, "--egress-percent %" PRIu32 ": must be 0..100", o->egress_percent);
	if (o->internal_percent > 100)
		complain(c, "--internal-percent %" PRIu32 ": must be 0..100", o->internal_percent);
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		if (o->mix[p] > 1000000)
			complain(c, "--mix %s=%" PRIu32 ": weight must be 0..1000000",
				 proto_names[p], o->mix[p]);
		mix_sum += o->mix[p];
	}
	if (mix_sum == 0)
		complain(c, "--mix: weights sum to zero");
	if (o->n_sizes < 1 || o->n_sizes > DPMON_GEN_MAX_SIZES)
		complain(c, "--size: 1..%d sizes needed", DPMON_GEN_MAX_SIZES);
	for (uint32_t i = 0; i < o->n_sizes && i < DPMON_GEN_MAX_SIZES; i++) {
		if (o->sizes[i] < 1 || o->sizes[i] > DPMON_GEN_MAX_FRAME)
			complain(c, "--size %" PRIu32 ": must be 1..%d bytes", o->sizes[i],
				 DPMON_GEN_MAX_FRAME);
		if (o->size_weights[i] > 1000000)
			complain(c, "size weight %" PRIu32 ": must be 0..1000000",
				 o->size_weights[i]);
		size_sum += o->size_weights[i];
	}
	if (o->n_sizes >= 1 && size_sum == 0)
		complain(c, "--size: weights sum to zero");
	if (o->vlan != DPMON_GEN_NO_VLAN && (o->vlan < 0 || o->vlan > 4094))
		complain(c, "--vlan %" PRId32 ": VLAN id must be 0..4094", o->vlan);
	if (o->peers < 1 || o->peers > DPMON_GEN_MAX_PEERS)
		complain(c, "--peers %" PRIu32 ": must be 1..%u", o->peers, DPMON_GEN_MAX_PEERS);
}

static void
check_overlaps(const struct dpmon_gen_subnet *sn, uint32_t n, struct complaints *c)
{
	const struct dpmon_gen_subnet **sorted = malloc((n ? n : 1) * sizeof(*sorted));
	char a[DPMON_PREFIX_STRLEN], b[DPMON_PREFIX_STRLEN];

	if (sorted == NULL) {
		complain(c, "out of memory");
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		sorted[i] = &sn[i];
	qsort(sorted, n, sizeof(*sorted), cmp_subnet_ptr);
	/* Prefixes nest or are disjoint: any overlap shows between neighbours. */
	for (uint32_t i = 0; i + 1 < n; i++)
		if (prefixes_overlap(&sorted[i]->prefix, &sorted[i + 1]->prefix))
			complain(c, "subnets %s and %s overlap",
				 dpmon_prefix_format(&sorted[i]->prefix, a, sizeof(a)),
				 dpmon_prefix_format(&sorted[i + 1]->prefix, b, sizeof(b)));
	free(sorted);
	for (uint32_t i = 0; i < n; i++) {
		for (size_t k = 0; k < sizeof(peer_pools) / sizeof(peer_pools[0]); k++) {
			struct dpmon_prefix pool;
			dpmon_prefix_parse(peer_pools[k], &pool, NULL);
			if (prefixes_overlap(&sn[i].prefix, &pool))
				complain(c, "subnet %s overlaps the external peer pool %s",
					 dpmon_prefix_format(&sn[i].prefix, a, sizeof(a)),
					 peer_pools[k]);
		}
	}
}

static void
check_subnets(const struct dpmon_gen_opts *o, const struct dpmon_gen_subnet *sn, uint32_t n,
	      struct complaints *c)
{
	char a[DPMON_PREFIX_STRLEN];
	uint32_t fam_n[2] = {0, 0};

	if (n > DPMON_GEN_MAX_SUBNETS) {
		complain(c, "%" PRIu32 " subnets: at most %d", n, DPMON_GEN_MAX_SUBNETS);
		return;
	}
	if ((uint64_t)n * o->hosts > DPMON_GEN_MAX_TOTAL_HOSTS)
		complain(c, "%" PRIu32 " subnets x %" PRIu32 " hosts: at most %u hosts in all", n,
			 o->hosts, DPMON_GEN_MAX_TOTAL_HOSTS);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t cap = subnet_capacity(&sn[i].prefix);
		fam_n[sn[i].prefix.family == 6]++;
		if (o->hosts > cap)
			complain(c,
				 "--hosts %" PRIu32 " does not fit in subnet %s (%" PRIu64
				 " host addresses)",
				 o->hosts, dpmon_prefix_format(&sn[i].prefix, a, sizeof(a)), cap);
	}
	check_overlaps(sn, n, c);
	if (fam_n[0] > 0 && o->peers > DPMON_GEN_V4_PEER_POOL)
		complain(c, "--peers %" PRIu32 ": the IPv4 peer pool holds %d addresses", o->peers,
			 DPMON_GEN_V4_PEER_POOL);
	for (int f = 0; f < 2; f++)
		if (o->internal_percent > 0 && fam_n[f] > 0 && (uint64_t)fam_n[f] * o->hosts < 2)
			complain(c, "--internal-percent needs at least two IPv%d hosts", f ? 6 : 4);
}

/* The subnets of a run: @p o's, or the defaults, kept in @p tmp. */
static int
effective_subnets(const struct dpmon_gen_opts *o, struct dpmon_gen_opts *tmp,
		  const struct dpmon_gen_subnet **sn, uint32_t *n)
{
	int rc;

	memset(tmp, 0, sizeof(*tmp));
	if (o->n_subnets > 0) {
		*sn = o->subnets;
		*n = o->n_subnets;
		return 0;
	}
	rc = dpmon_gen_default_subnets(tmp);
	*sn = tmp->subnets;
	*n = tmp->n_subnets;
	return rc;
}

int
dpmon_gen_check(const struct dpmon_gen_opts *o, FILE *err)
{
	struct complaints c = {.err = err, .n = 0};
	struct dpmon_gen_opts tmp;
	const struct dpmon_gen_subnet *sn;
	uint32_t n;

	if (effective_subnets(o, &tmp, &sn, &n) != 0) {
		dpmon_gen_opts_free(&tmp);
		complain(&c, "out of memory");
		return -ENOMEM;
	}
	check_scalars(o, &c);
	check_subnets(o, sn, n, &c);
	dpmon_gen_opts_free(&tmp);
	if (c.n > MAX_COMPLAINTS && err != NULL)
		fprintf(err, "dpmon-gen: ... and %u more problems\n", c.n - MAX_COMPLAINTS);
	return c.n ? -EINVAL : 0;
}

/* ------------------------------------------------------------------------
 * The run.
 * --------------------------------------------------------------------- */

/* Everything one dpmon_gen_write() call works with. */
struct run {
	const struct dpmon_gen_opts *o;
	const struct dpmon_gen_subnet *sn;
	uint32_t n_sn;
	uint32_t total_hosts;  /* n_sn x hosts, <= 2^26 */
	uint32_t *fam_list[2]; /* subnet indices per family, 0: IPv4, 1: IPv6 */
	uint32_t fam_n[2];
	uint32_t *fam_pos;                 /* each subnet's position in its family list */
	uint32_t mix_cum[DPMON_PROTO_MAX]; /* cumulative protocol weights */
	uint32_t size_cum[DPMON_GEN_MAX_SIZES];
	struct rng rng;
	uint8_t *frame; /* DPMON_GEN_MAX_FRAME + 4 bytes, zero past the headers */
	uint64_t *used; /* one bit per configured host */
	struct dpmon_gen_summary *s;
};

/* One packet's choices. End 0 is the source, end 1 the destination. */
struct pkt {
	uint32_t sub[2];  /* subnet index, NO_SUBNET for an external peer */
	uint32_t host[2]; /* host index within the subnet */
	struct dpmon_addr addr[2];
	unsigned family; /* 4 or 6 */
	enum dpmon_proto proto;
	uint32_t size; /* frame bytes, VLAN tag excluded, grown to the minimum */
};

static void
run_free(struct run *r)
{
	free(r->fam_list[0]);
	free(r->frame);
	free(r->used);
	memset(r, 0, sizeof(*r));
}

static void
cumulate(uint32_t *cum, const uint32_t *w, uint32_t n)
{
	uint32_t sum = 0;

	for (uint32_t i = 0; i < n; i++)
		cum[i] = sum += w[i];
}

static int
run_init(struct run *r, const struct dpmon_gen_opts *o, const struct dpmon_gen_subnet *sn,
	 uint32_t n, struct dpmon_gen_summary *s)
{
	memset(r, 0, sizeof(*r));
	r->o = o;
	r->sn = sn;
	r->n_sn = n;
	r->total_hosts = n * o->hosts;
	r->s = s;
	r->fam_list[0] = malloc(2 * (size_t)n * sizeof(uint32_t));
	r->frame = calloc(1, DPMON_GEN_MAX_FRAME + 4);
	r->used = calloc(((size_t)r->total_hosts + 63) / 64, sizeof(uint64_t));
	s->subnets = calloc(n, sizeof(*s->subnets));
	s->output = strdup(o->output);
	if (r->fam_list[0] == NULL || r->frame == NULL || r->used == NULL || s->subnets == NULL ||
	    s->output == NULL)
		return -ENOMEM;
	r->fam_pos = r->fam_list[0] + n;
	for (uint32_t i = 0; i < n; i++)
		r->fam_n[0] += sn[i].prefix.family == 4;
	r->fam_list[1] = r->fam_list[0] + r->fam_n[0];
	r->fam_n[0] = 0;
	for (uint32_t i = 0; i < n; i++) {
		unsigned f = sn[i].prefix.family == 6;
		r->fam_pos[i] = r->fam_n[f];
		r->fam_list[f][r->fam_n[f]++] = i;
		s->subnets[i].subnet = sn[i];
	}
	cumulate(r->mix_cum, o->mix, DPMON_PROTO_MAX);
	cumulate(r->size_cum, o->size_weights, o->n_sizes);
	rng_seed(&r->rng, o->seed);
	s->n_subnets = n;
	s->seed = o->seed;
	s->hosts_configured = r->total_hosts;
	return 0;
}

/* ------------------------------------------------------------------------
 * Choosing a frame.
 * --------------------------------------------------------------------- */

/* Host @p host (0-based) of @p p: the network address OR (host + 1). */
static void
host_addr(const struct dpmon_prefix *p, uint32_t host, struct dpmon_addr *out)
{
	uint32_t v = host + 1;

	*out = p->addr;
	out->b[12] |= (uint8_t)(v >> 24);
	out->b[13] |= (uint8_t)(v >> 16);
	out->b[14] |= (uint8_t)(v >> 8);
	out->b[15] |= (uint8_t)v;
}

/* External peer @p i of a family: 198.51.100.1-254, 203.0.113.1-254; 2001:db8:ffff::1... */
static void
peer_addr(unsigned family, uint32_t i, struct dpmon_addr *out)
{
	static const uint8_t v6_pool[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff};
	uint32_t v = i + 1;

	if (family == 4) {
		dpmon_addr_from_v4(out, i < 254 ? 0xc6336400u + v : 0xcb007100u + (v - 254));
		return;
	}
	memcpy(out->b, v6_pool, 16);
	out->b[12] = (uint8_t)(v >> 24);
	out->b[13] = (uint8_t)(v >> 16);
	out->b[14] = (uint8_t)(v >> 8);
	out->b[15] = (uint8_t)v;
}

static void
set_host_end(const struct run *r, struct pkt *p, int end, uint32_t sub, uint32_t host)
{
	p->sub[end] = sub;
	p->host[end] = host;
	host_addr(&r->sn[sub].prefix, host, &p->addr[end]);
}

static void
set_peer_end(struct pkt *p, int end, uint32_t peer)
{
	p->sub[end] = NO_SUBNET;
	p->host[end] = peer;
	peer_addr(p->family, peer, &p->addr[end]);
}

/* Internal: @p sub/@p host sends to another host of the same family. */
static void
pick_internal(struct run *r, struct pkt *p, uint32_t sub, uint32_t host)
{
	uint32_t hosts = r->o->hosts;
	unsigned f = p->family == 6;
	uint32_t self = r->fam_pos[sub] * hosts + host;
	uint32_t other = rng_below(&r->rng, (uint64_t)r->fam_n[f] * hosts - 1);

	if (other >= self)
		other++; /* any host of the family but the source itself */
	set_host_end(r, p, 0, sub, host);
	set_host_end(r, p, 1, r->fam_list[f][other / hosts], other % hosts);
}

/* External: @p sub/@p host talks with a peer, as source with egress-percent. */
static void
pick_external(struct run *r, struct pkt *p, uint32_t sub, uint32_t host)
{
	uint32_t peer = rng_below(&r->rng, r->o->peers);
	int host_end = rng_below(&r->rng, 100) < r->o->egress_percent ? 0 : 1;

	set_host_end(r, p, host_end, sub, host);
	set_peer_end(p, !host_end, peer);
}

static void
pick_packet(struct run *r, struct pkt *p)
{
	bool internal = rng_below(&r->rng, 100) < r->o->internal_percent;
	uint32_t g = rng_below(&r->rng, r->total_hosts);
	uint32_t sub = g / r->o->hosts, host = g % r->o->hosts;
	uint32_t size, min;

	p->family = r->sn[sub].prefix.family;
	if (internal)
		pick_internal(r, p, sub, host);
	else
		pick_external(r, p, sub, host);
	p->proto = (enum dpmon_proto)rng_weighted(&r->rng, r->mix_cum, DPMON_PROTO_MAX);
	size = r->o->sizes[rng_weighted(&r->rng, r->size_cum, r->o->n_sizes)];
	min = dpmon_gen_min_frame(p->family, p->proto);
	p->size = size < min ? min : size;
}

/* ------------------------------------------------------------------------
 * Building a frame.
 * --------------------------------------------------------------------- */

static uint8_t
ip_proto(const struct pkt *p)
{
	static const uint8_t v4[DPMON_PROTO_MAX] = {6, 17, 1, 47};
	static const uint8_t v6[DPMON_PROTO_MAX] = {6, 17, 58, 59};

	return p->family == 4 ? v4[p->proto] : v6[p->proto];
}

/* Ethernet header (+ 802.1Q tag when @p vlan >= 0); returns its length. */
static size_t
put_eth(uint8_t *f, int32_t vlan, uint16_t ethertype)
{
	memcpy(f, mac_dst, 6);
	memcpy(f + 6, mac_src, 6);
	if (vlan < 0) {
		put16(f + 12, ethertype);
		return 14;
	}
	put16(f + 12, 0x8100);
	put16(f + 14, (uint32_t)vlan); /* PCP 0, DEI 0 */
	put16(f + 16, ethertype);
	return 18;
}

static void
put_ipv4(uint8_t *h, const struct pkt *p, uint32_t total_len, uint64_t index)
{
	h[0] = 0x45;
	put16(h + 2, total_len);
	put16(h + 4, (uint32_t)(index & 0xffff));
	put16(h + 6, 0x4000); /* DF */
	h[8] = 64;
	h[9] = ip_proto(p);
	memcpy(h + 12, p->addr[0].b + 12, 4);
	memcpy(h + 16, p->addr[1].b + 12, 4);
	put16(h + 10, csum_fold(csum_add(0, h, 20)));
}

static void
put_ipv6(uint8_t *h, const struct pkt *p, uint32_t payload_len)
{
	put32(h, 0x60000000u);
	put16(h + 4, payload_len);
	h[6] = ip_proto(p);
	h[7] = 64;
	memcpy(h + 8, p->addr[0].b, 16);
	memcpy(h + 24, p->addr[1].b, 16);
}

/* Pseudo-header sum for the TCP/UDP/ICMPv6 checksum (RFC 793, RFC 8200 8.1). */
static uint32_t
pseudo_sum(const struct pkt *p, uint32_t l4_len)
{
	uint32_t sum = ip_proto(p) + (l4_len >> 16) + (l4_len & 0xffff);

	if (p->family == 4)
		return csum_add(csum_add(sum, p->addr[0].b + 12, 4), p->addr[1].b + 12, 4);
	return csum_add(csum_add(sum, p->addr[0].b, 16), p->addr[1].b, 16);
}

/*
 * A port in 61440..65535: inside the IANA dynamic range and above every
 * port Wireshark/tshark dissects by default (the highest is 60001), so the
 * zero payloads decode as plain data, never as a malformed application PDU.
 */
static inline uint32_t
dyn_port(uint64_t bits)
{
	return 61440u + (uint32_t)(bits & 0xfff);
}

static void
put_tcp(uint8_t *h, struct rng *rng, uint32_t l4_len, uint32_t psum)
{
	uint64_t a = rng_next(rng), b = rng_next(rng);
	bool syn = ((a >> 32) & 15) == 0;

	put16(h, dyn_port(a));
	put16(h + 2, dyn_port(a >> 16));
	put32(h + 4, (uint32_t)b);
	put32(h + 8, syn ? 0 : (uint32_t)(b >> 32));
	h[12] = 5 << 4;
	h[13] = syn ? 0x02 : l4_len > 20 ? 0x18 : 0x10; /* SYN, PSH|ACK, ACK */
	put16(h + 14, 65535);
	put16(h + 16, csum_fold(csum_add(psum, h, 20))); /* payload is zero */
}

static void
put_udp(uint8_t *h, struct rng *rng, uint32_t l4_len, uint32_t psum)
{
	uint64_t a = rng_next(rng);
	uint16_t c;

	put16(h, dyn_port(a));
	put16(h + 2, dyn_port(a >> 16));
	put16(h + 4, l4_len);
	c = csum_fold(csum_add(psum, h, 8)); /* payload is zero */
	put16(h + 6, c ? c : 0xffff);        /* 0 means "no checksum" (RFC 768) */
}

/* ICMP echo request (RFC 792) or ICMPv6 echo request (RFC 4443 4.1). */
static void
put_echo(uint8_t *h, const struct pkt *p, struct rng *rng, uint64_t index, uint32_t psum)
{
	h[0] = p->family == 4 ? 8 : 128;
	put16(h + 4, (uint32_t)(rng_next(rng) & 0xffff));
	put16(h + 6, (uint32_t)(index & 0xffff));
	put16(h + 2, csum_fold(csum_add(p->family == 4 ? 0 : psum, h, 8)));
}

/* Build packet @p index in r->frame; returns the frame length (VLAN tag included). */
static uint32_t
build_frame(struct run *r, const struct pkt *p, uint64_t index)
{
	uint8_t *f = r->frame;
	bool v4 = p->family == 4;
	uint32_t l3_len = p->size - 14, l4_len = l3_len - (v4 ? 20 : 40);
	uint8_t *l3, *l4;

	memset(f, 0, HEADROOM); /* the previous packet's headers; the rest stays zero */
	l3 = f + put_eth(f, r->o->vlan, v4 ? 0x0800 : 0x86dd);
	l4 = l3 + (v4 ? 20 : 40);
	if (v4)
		put_ipv4(l3, p, l3_len, index);
	else
		put_ipv6(l3, p, l4_len);
	switch (p->proto) {
	case DPMON_PROTO_TCP:
		put_tcp(l4, &r->rng, l4_len, pseudo_sum(p, l4_len));
		break;
	case DPMON_PROTO_UDP:
		put_udp(l4, &r->rng, l4_len, pseudo_sum(p, l4_len));
		break;
	case DPMON_PROTO_ICMP:
		put_echo(l4, p, &r->rng, index, pseudo_sum(p, l4_len));
		break;
	default:
		if (v4)
			put16(l4 + 2, 0x88b5); /* GRE: no flags, version 0, local experimental */
		break;
	}
	return p->size + (r->o->vlan >= 0 ? 4 : 0);
}

/* ------------------------------------------------------------------------
 * Counting what was written.
 * --------------------------------------------------------------------- */

static inline void
count_add(struct dpmon_gen_count *c, uint32_t len)
{
	c->packets++;
	c->bytes += len;
}

static void
mark_used(struct run *r, uint32_t sub, uint32_t host)
{
	uint64_t bit = (uint64_t)sub * r->o->hosts + host;
	uint64_t mask = UINT64_C(1) << (bit & 63);

	if (r->used[bit >> 6] & mask)
		return;
	r->used[bit >> 6] |= mask;
	r->s->subnets[sub].hosts_used++;
	r->s->hosts_used++;
}

static void
account(struct run *r, const struct pkt *p, uint32_t len)
{
	struct dpmon_gen_summary *s = r->s;
	bool src_in = p->sub[0] != NO_SUBNET, dst_in = p->sub[1] != NO_SUBNET;

	count_add(&s->total, len);
	count_add(&s->proto[p->proto], len);
	for (int end = 0; end < 2; end++) {
		struct dpmon_gen_dir_count *d;
		if (p->sub[end] == NO_SUBNET)
			continue;
		d = &s->subnets[p->sub[end]].dir[end == 0 ? DPMON_DIR_EGRESS : DPMON_DIR_INGRESS];
		count_add(&d->all, len);
		count_add(&d->proto[p->proto], len);
		mark_used(r, p->sub[end], p->host[end]);
	}
	if (dst_in)
		count_add(&s->cat[DPMON_TOTAL_INGRESS], len);
	if (src_in)
		count_add(&s->cat[DPMON_TOTAL_EGRESS], len);
	if (src_in && dst_in)
		count_add(&s->cat[DPMON_TOTAL_INTERNAL], len);
	if (!src_in && !dst_in)
		count_add(&s->cat[DPMON_TOTAL_EXTERNAL], len);
}

/* ------------------------------------------------------------------------
 * Writing the capture.
 * --------------------------------------------------------------------- */

static int
write_packets(struct run *r, pcap_dumper_t *d, FILE *fp)
{
	struct pcap_pkthdr h;
	struct pkt p;
	time_t sec = DPMON_GEN_EPOCH_SEC;
	suseconds_t usec = 0;

	for (uint64_t i = 0; i < r->o->packets; i++) {
		pick_packet(r, &p);
		h.caplen = h.len = build_frame(r, &p, i);
		h.ts.tv_sec = sec;
		h.ts.tv_usec = usec;
		pcap_dump((u_char *)d, &h, r->frame);
		account(r, &p, h.caplen);
		if (++usec == 1000000) {
			usec = 0;
			sec++;
		}
		if ((i & IO_CHECK_MASK) == IO_CHECK_MASK && ferror(fp))
			return errno ? -errno : -EIO;
	}
	errno = 0;
	if (pcap_dump_flush(d) != 0 || ferror(fp))
		return errno ? -errno : -EIO;
	return 0;
}

/* True when @p fp is a regular file (only those are removed after a failure). */
static bool
is_regular(FILE *fp)
{
	struct stat st;

	return fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode);
}

/* Open @p path as a pcap dump with a large stdio buffer (*buf, to free). */
static int
open_dump(const char *path, pcap_t **pd, pcap_dumper_t **d, char **buf, bool *regular, FILE *err)
{
	FILE *fp = fopen(path, "wb");
	int rc;

	if (fp == NULL) {
		rc = -errno;
		if (err != NULL)
			fprintf(err, "dpmon-gen: %s: %s\n", path, strerror(errno));
		return rc;
	}
	*regular = is_regular(fp);
	*buf = malloc(STDIO_BUFFER);
	if (*buf != NULL)
		setvbuf(fp, *buf, _IOFBF, STDIO_BUFFER);
	*pd = pcap_open_dead(DLT_EN10MB, 65535);
	*d = *pd ? pcap_dump_fopen(*pd, fp) : NULL;
	if (*d == NULL) {
		if (err != NULL)
			fprintf(err, "dpmon-gen: %s: %s\n", path,
				*pd ? pcap_geterr(*pd) : "pcap_open_dead failed");
		fclose(fp);
		if (*regular)
			unlink(path);
		return -EIO;
	}
	return 0;
}

int
dpmon_gen_write(const struct dpmon_gen_opts *o, struct dpmon_gen_summary *s, FILE *err)
{
	struct dpmon_gen_opts tmp;
	const struct dpmon_gen_subnet *sn;
	struct run r;
	pcap_t *pd = NULL;
	pcap_dumper_t *d = NULL;
	char *buf = NULL;
	bool regular = false;
	uint32_t n;
	int rc;

	memset(s, 0, sizeof(*s));
	rc = dpmon_gen_check(o, err);
	if (rc != 0)
		return rc;
	rc = effective_subnets(o, &tmp, &sn, &n);
	if (rc == 0)
		rc = run_init(&r, o, sn, n, s);
	else
		memset(&r, 0, sizeof(r));
	if (rc == 0)
		rc = open_dump(o->output, &pd, &d, &buf, &regular, err);
	else if (err != NULL)
		fprintf(err, "dpmon-gen: out of memory\n");
	if (rc == 0) {
		rc = write_packets(&r, d, pcap_dump_file(d));
		pcap_dump_close(d);
		if (rc != 0) {
			if (err != NULL)
				fprintf(err, "dpmon-gen: %s: %s\n", o->output, strerror(-rc));
			if (regular)
				unlink(o->output);
		}
	}
	if (pd != NULL)
		pcap_close(pd);
	free(buf);
	run_free(&r);
	if (rc != 0)
		dpmon_gen_summary_free(s);
	dpmon_gen_opts_free(&tmp); /* the summary holds copies of the subnets */
	return rc;
}

void
dpmon_gen_summary_free(struct dpmon_gen_summary *s)
{
	if (s == NULL)
		return;
	free(s->output);
	free(s->subnets);
	memset(s, 0, sizeof(*s));
}

/* ------------------------------------------------------------------------
 * Printing the summary.
 * --------------------------------------------------------------------- */

void
dpmon_gen_json_string(FILE *out, const char *str)
{
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *)str; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(out, "\\u%04x", *c);
		else
			fputc(*c, out);
	}
	fputc('"', out);
}

static void
json_count(FILE *out, const char *key, const struct dpmon_gen_count *c)
{
	fprintf(out, "\"%s\": {\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "}", key, c->packets,
		c->bytes);
}

static void
json_dir(FILE *out, const char *key, const struct dpmon_gen_dir_count *d)
{
	fprintf(out, "\"%s\": {\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64, key, d->all.packets,
		d->all.bytes);
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		fputs(", ", out);
		json_count(out, proto_names[p], &d->proto[p]);
	}
	fputc('}', out);
}

static void
json_subnet(FILE *out, const struct dpmon_gen_subnet_summary *ss)
{
	char pfx[DPMON_PREFIX_STRLEN];

	fprintf(out, "    {\"prefix\": \"%s\", \"name\": ",
		dpmon_prefix_format(&ss->subnet.prefix, pfx, sizeof(pfx)));
	dpmon_gen_json_string(out, ss->subnet.name);
	fprintf(out, ", \"hosts_used\": %" PRIu64 ",\n     ", ss->hosts_used);
	json_dir(out, dir_names[DPMON_DIR_INGRESS], &ss->dir[DPMON_DIR_INGRESS]);
	fputs(",\n     ", out);
	json_dir(out, dir_names[DPMON_DIR_EGRESS], &ss->dir[DPMON_DIR_EGRESS]);
	fputc('}', out);
}

static int
finish_output(FILE *out)
{
	return fflush(out) != 0 || ferror(out) ? -EIO : 0;
}

int
dpmon_gen_summary_print_json(const struct dpmon_gen_summary *s, FILE *out)
{
	fputs("{\n  \"output\": ", out);
	dpmon_gen_json_string(out, s->output ? s->output : "");
	fprintf(out, ",\n  \"seed\": %" PRIu64 ",\n  \"subnets\": [", s->seed);
	for (uint32_t i = 0; i < s->n_subnets; i++) {
		fputs(i ? ",\n" : "\n", out);
		json_subnet(out, &s->subnets[i]);
	}
	fprintf(out, "%s],\n  \"totals\": {\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64,
		s->n_subnets ? "\n  " : "", s->total.packets, s->total.bytes);
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		fputs(p ? ", " : ",\n    ", out);
		json_count(out, proto_names[p], &s->proto[p]);
	}
	for (int t = 0; t < DPMON_TOTAL_MAX; t++) {
		fputs(t ? ", " : ",\n    ", out);
		json_count(out, total_names[t], &s->cat[t]);
	}
	fprintf(out, "},\n  \"hosts_configured\": %" PRIu64 ",\n  \"hosts_used\": %" PRIu64 "\n}\n",
		s->hosts_configured, s->hosts_used);
	return finish_output(out);
}

static void
text_row(FILE *out, int pw, const char *pfx, int nw, const char *name, const char *hosts,
	 const char *dir, const struct dpmon_gen_dir_count *d)
{
	fprintf(out, "%-*s  %-*s  %10s  %-8s  %12" PRIu64 "  %15" PRIu64, pw, pfx, nw, name, hosts,
		dir, d->all.packets, d->all.bytes);
	for (int p = 0; p < DPMON_PROTO_MAX; p++)
		fprintf(out, "  %11" PRIu64, d->proto[p].packets);
	fputc('\n', out);
}

int
dpmon_gen_summary_print_text(const struct dpmon_gen_summary *s, FILE *out)
{
	char pfx[DPMON_PREFIX_STRLEN], hosts[24];
	int pw = 6, nw = 4;
	struct dpmon_gen_dir_count all = {.all = s->total};

	for (uint32_t i = 0; i < s->n_subnets; i++) {
		int l = (int)strlen(
			dpmon_prefix_format(&s->subnets[i].subnet.prefix, pfx, sizeof(pfx)));
		int m = (int)strlen(s->subnets[i].subnet.name);
		pw = l > pw ? l : pw;
		nw = m > nw ? m : nw;
	}
	fprintf(out,
		"dpmon-gen: wrote %" PRIu64 " packets, %" PRIu64 " bytes to %s (seed %" PRIu64
		")\n\n",
		s->total.packets, s->total.bytes, s->output ? s->output : "", s->seed);
	fprintf(out, "%-*s  %-*s  %10s  %-8s  %12s  %15s  %11s  %11s  %11s  %11s\n", pw, "subnet",
		nw, "name", "hosts used", "dir", "packets", "bytes", "tcp pkts", "udp pkts",
		"icmp pkts", "other pkts");
	for (uint32_t i = 0; i < s->n_subnets; i++) {
		const struct dpmon_gen_subnet_summary *ss = &s->subnets[i];
		snprintf(hosts, sizeof(hosts), "%" PRIu64, ss->hosts_used);
		text_row(out, pw, dpmon_prefix_format(&ss->subnet.prefix, pfx, sizeof(pfx)), nw,
			 ss->subnet.name, hosts, "ingress", &ss->dir[DPMON_DIR_INGRESS]);
		text_row(out, pw, "", nw, "", "", "egress", &ss->dir[DPMON_DIR_EGRESS]);
	}
	memcpy(all.proto, s->proto, sizeof(all.proto));
	snprintf(hosts, sizeof(hosts), "%" PRIu64, s->hosts_used);
	fputc('\n', out);
	text_row(out, pw, "totals", nw, "", hosts, "all", &all);
	for (int t = 0; t < DPMON_TOTAL_MAX; t++) {
		struct dpmon_gen_dir_count c = {.all = s->cat[t]};
		fprintf(out, "%-*s  %-*s  %10s  %-8s  %12" PRIu64 "  %15" PRIu64 "\n", pw, "", nw,
			"", "", total_names[t], c.all.packets, c.all.bytes);
	}
	fprintf(out, "\nhosts used: %" PRIu64 " of %" PRIu64 " configured\n", s->hosts_used,
		s->hosts_configured);
	return finish_output(out);
}
