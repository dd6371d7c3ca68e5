/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowspec_terms.h — the BGP FlowSpec vocabulary that the configuration
 * and lib/detect share: a rule's action (RFC 8955 section 7), the match
 * components that can be turned off for routers that refuse them, and
 * what an alert with ban set gets (its mitigation).
 *
 * Thread-safety: pure functions; any thread.
 */
#ifndef DPMON_FLOWSPEC_TERMS_H
#define DPMON_FLOWSPEC_TERMS_H

#include <stddef.h>
#include <stdint.h>

/** What a router does with the matching packets (RFC 8955 section 7). */
enum dpmon_fs_action_kind {
	DPMON_FS_DISCARD,    /**< traffic-rate 0 */
	DPMON_FS_RATE_LIMIT, /**< traffic-rate-bytes: at most @c rate bytes/s */
	DPMON_FS_REDIRECT,   /**< redirect to the VRF of route target ASN:VALUE (RFC 7674) */
	DPMON_FS_MARK,       /**< traffic-marking: rewrite the DSCP */
};

/** A rule's action. */
struct dpmon_fs_action {
	enum dpmon_fs_action_kind kind;
	uint64_t rate;  /**< DPMON_FS_RATE_LIMIT: bytes per second, 0 .. 10^12 */
	uint32_t asn;   /**< DPMON_FS_REDIRECT: the route target's AS number */
	uint32_t value; /**< DPMON_FS_REDIRECT: its local value */
	uint8_t dscp;   /**< DPMON_FS_MARK: 0 .. 63 */
};

/** Largest rate-limit, bytes/s (ExaBGP's ceiling). */
#define DPMON_FS_RATE_MAX 1000000000000ull

/**
 * Parse an action as the configuration and the API write it: "discard",
 * "rate-limit BYTES_PER_S", "redirect ASN:VALUE" or "mark DSCP".
 * @param why  on failure, a static English reason; may be NULL.
 * @return 0, or -EINVAL.
 */
int dpmon_fs_action_parse(const char *text, struct dpmon_fs_action *out, const char **why);

/**
 * Is @p a an action routers accept? A rate-limit within 0 .. 10^12
 * bytes/s, a DSCP 0 .. 63, a redirect with a 16-bit ASN and 32-bit value
 * or a 32-bit ASN and 16-bit value (RFC 7674 section 3.1).
 * @param why  on failure, a static English reason; may be NULL.
 * @return 0, or -EINVAL.
 */
int dpmon_fs_action_check(const struct dpmon_fs_action *a, const char **why);

/**
 * The action as ExaBGP 4 writes it ("discard", "rate-limit 9600",
 * "redirect 65000:666", "mark 46"), which is also the configuration's
 * form, into @p buf of @p len bytes (32 are enough).
 * @return the length written, or -ENOSPC.
 */
int dpmon_fs_action_text(const struct dpmon_fs_action *a, char *buf, size_t len);

/** Match components a rule may use: bits of "flowspec.components". */
enum dpmon_fs_component {
	DPMON_FS_C_SOURCE_PORT = 1u << 0,      /**< "source_port" (RFC 8955 type 6) */
	DPMON_FS_C_DESTINATION_PORT = 1u << 1, /**< "destination_port" (type 5) */
	DPMON_FS_C_PACKET_LENGTH = 1u << 2,    /**< "packet_length" (type 10) */
	DPMON_FS_C_TCP_FLAGS = 1u << 3,        /**< "tcp_flags" (type 9) */
	DPMON_FS_C_FRAGMENT = 1u << 4,         /**< "fragment" (type 12) */
	DPMON_FS_C_ICMP = 1u << 5,             /**< "icmp": type and code (types 7, 8) */
	DPMON_FS_C_SOURCE_PREFIX = 1u << 6,    /**< "source_prefix" (type 2) */
	DPMON_FS_C_ALL = (1u << 7) - 1,
};

/**
 * The configuration's name of component bit @p c ("source_port", ...), or
 * NULL for a value that is not one bit of enum dpmon_fs_component.
 */
const char *dpmon_fs_component_name(unsigned c);

/** What an alert with ban set gets: "detection.mitigation", "hostgroups[].mitigation". */
enum dpmon_mitigation {
	DPMON_MITIGATION_BLACKHOLE,          /**< "blackhole": the host's route (the default) */
	DPMON_MITIGATION_FLOWSPEC,           /**< "flowspec": FlowSpec rules only */
	DPMON_MITIGATION_FLOWSPEC_BLACKHOLE, /**< "flowspec+blackhole": rules, else the blackhole */
	DPMON_MITIGATION_NONE,               /**< "none": neither */
};

/** The name of @p m ("blackhole", "flowspec", "flowspec+blackhole", "none"). */
const char *dpmon_mitigation_name(enum dpmon_mitigation m);

/** Parse a mitigation name. @return 0, or -EINVAL. */
int dpmon_mitigation_parse(const char *text, enum dpmon_mitigation *out);

#endif /* DPMON_FLOWSPEC_TERMS_H */
