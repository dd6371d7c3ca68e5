/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowspec_json.h — a BGP FlowSpec rule (flowspec.h) as a JSON object of
 * its components, the form of a manual rule in POST /api/v1/flowspec
 * (docs/api.md) and in the state file: {"destination", "source",
 * "protocol", "source_ports", "destination_ports", "packet_length":
 * {"min", "max"}, "tcp_flags", "fragment", "icmp_type", "icmp_code",
 * "action"}, only "destination" required.
 *
 * The parser reads the form only; whether routers accept the rule is
 * dpmon_fs_rule_check's question. A pure module: no I/O, no global state;
 * every function may run on any thread.
 */
#ifndef DPMON_FLOWSPEC_JSON_H
#define DPMON_FLOWSPEC_JSON_H

#include <jansson.h>

#include "flowspec.h"

/** What is wrong with a rule's JSON object. */
enum dpmon_fs_json_fault {
	DPMON_FS_JSON_NOT_OBJECT,  /**< the document is not an object */
	DPMON_FS_JSON_UNKNOWN_KEY, /**< @c field is a key the form does not have */
	DPMON_FS_JSON_BAD_FIELD,   /**< @c field is missing or its value does not parse */
	/** @c field parses but is refused: a list value given twice, an empty
	 * or repeated TCP flag name, an IPv4-mapped IPv6 address, a source
	 * prefix of length 0. Earlier versions took these (and wrote some to
	 * the state file), so a saved rule with one is withdrawn, not fatal. */
	DPMON_FS_JSON_REFUSED,
};

/** Why dpmon_fs_rule_from_json refused a document. */
struct dpmon_fs_json_error {
	enum dpmon_fs_json_fault fault;
	/** The key at fault: a static name ("packet_length.min"), or for an
	 * unknown key the document's own key, valid while the document lives. */
	const char *field;
	char what[96]; /**< what is wrong with it ("must be an integer 0 .. 255") */
};

/**
 * Parse rule @p doc, in the form of the file comment, into @p out (zeroed
 * first). Addresses are IPv4 or IPv6, a destination or source without a
 * length is a host; "protocol" is "tcp", "udp", "icmp", "icmpv6" or
 * 0 .. 255; ports and ICMP types are arrays of 1 .. 4 values; TCP flags
 * are names joined by '+' ("syn+ack"), each value an exact match of FIN ..
 * URG; "action" as dpmon_fs_action_parse reads it (default discard). A list
 * repeats no value; an address is not IPv4-mapped; a source is no /0. A
 * list item at fault is named with its index ("tcp_flags[1]").
 * @param doc  not changed (jansson iterates an object through a non-const pointer).
 * @param err  on failure, the field and why.
 * @return 0, or -EINVAL.
 */
int dpmon_fs_rule_from_json(json_t *doc, struct dpmon_fs_rule *out,
			    struct dpmon_fs_json_error *err);

/**
 * Rule @p r in the form of the file comment, which dpmon_fs_rule_from_json
 * reads back into the same rule: only the components @p r has, the
 * protocol as its number.
 * @return a new reference, or NULL (out of memory).
 */
json_t *dpmon_fs_rule_to_json(const struct dpmon_fs_rule *r);

#endif /* DPMON_FLOWSPEC_JSON_H */
