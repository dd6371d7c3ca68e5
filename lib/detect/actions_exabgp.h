/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_exabgp.h — ExaBGP's command pipe (actions.exabgp_pipe) as a set
 * of keyed routes: each route is a key, the line that announces it and the
 * line that withdraws it. The writer keeps the set of routes that should be
 * announced, writes what is due with the delivery guarantees of
 * docs/detection.md ("ExaBGP"), announces every route again when the pipe's
 * reader comes back (an ExaBGP restart), withdraws a route when it is
 * removed, and at the stop those not marked ACTIONS_ROUTE_KEEP_ON_STOP.
 *
 * The writer knows nothing of what a route means: the blackhole list
 * (actions_blackholes.c) keys its routes by host prefix ("10.0.0.5/32"),
 * and other users key theirs with a prefix of their own ("flow:12").
 * Lines are ExaBGP 4 text API commands, without the final newline:
 * "announce route 10.0.0.5/32 next-hop 192.0.2.1",
 * "withdraw flow route { match { destination 10.0.0.5/32; } }".
 *
 * Threads: every function but actions_exabgp_sync and actions_exabgp_stop
 * may be called from any thread (the writer has a mutex of its own, taken
 * for a few copies; a caller may hold its own lock around the call, the
 * writer never calls back). actions_exabgp_sync and actions_exabgp_stop are
 * for one thread, the actions thread, which does the pipe's I/O.
 */
#ifndef DPMON_ACTIONS_EXABGP_H
#define DPMON_ACTIONS_EXABGP_H

#include <stdbool.h>
#include <stdint.h>

/** Longest route key, its NUL included. */
#define ACTIONS_EXABGP_KEY_LEN  64
/**
 * Bound of a line: with its newline, a line is shorter than this, so that
 * it is one write() shorter than PIPE_BUF (4096 on Linux) and reaches
 * ExaBGP whole or not at all.
 */
#define ACTIONS_EXABGP_LINE_MAX 4000

/** Route flag: the route stays announced when dpmon stops (blackholes). */
#define ACTIONS_ROUTE_KEEP_ON_STOP 1u

struct actions_exabgp;

/**
 * A writer with no pipe and no route.
 * @param max_routes  most routes at once, and most withdraws waiting for
 *                    the pipe (each bound on its own).
 * @return the writer, or NULL (ENOMEM). Any thread.
 */
struct actions_exabgp *actions_exabgp_create(uint32_t max_routes);

/** Close the pipe and free the writer (no line is written). NULL ignored. */
void actions_exabgp_free(struct actions_exabgp *e);

/**
 * Use the FIFO at @p path ("" for none). Another path than the current one:
 * the old pipe is closed at the next sync (what it was sent stays with its
 * reader) and every route is announced to the new one.
 * With no pipe, routes are kept but never written, and a removed route
 * leaves no withdraw. Any thread.
 */
void actions_exabgp_set_pipe(struct actions_exabgp *e, const char *path);

/**
 * Announce route @p key with @p announce, @p withdraw being the line that
 * withdraws it later. A route of that key already announced with the same
 * line only takes @p withdraw and @p flags; with another line it is
 * announced again (an announce replaces a route's attributes). A withdraw
 * of @p key still waiting for the pipe is dropped.
 * @param key       the caller's name of the route, at most
 *                  ACTIONS_EXABGP_KEY_LEN - 1 bytes.
 * @param announce  one ExaBGP command, without '\n': at most
 *                  ACTIONS_EXABGP_LINE_MAX - 2 bytes.
 * @param withdraw  likewise.
 * @param flags     ACTIONS_ROUTE_KEEP_ON_STOP or 0.
 * @return 0 when the announce line is due, 1 when the route was already
 *         announced with this line (nothing to write), -EINVAL for a key or
 *         a line too long or holding a newline, -ENOSPC at max_routes,
 *         -ENOMEM. On error nothing changed.
 * Any thread.
 */
int actions_exabgp_announce(struct actions_exabgp *e, const char *key, const char *announce,
			    const char *withdraw, unsigned flags);

/**
 * Remove route @p key: its withdraw line is due (when a pipe is set), even
 * if its announce never reached the pipe (an ExaBGP that outlived an
 * earlier dpmon may still hold it).
 * @return 0 when removed, 1 when there was no such route, -ENOSPC when the
 *         route is removed but max_routes withdraws already wait (this one
 *         is lost, and logged). Any thread.
 */
int actions_exabgp_withdraw(struct actions_exabgp *e, const char *key);

/**
 * Make route @p key's announce line due again, as if it had never reached
 * the pipe: written after every withdraw already due, it brings back a
 * route that another key's withdraw (the same route under two keys, as
 * two FlowSpec rules with one match are) took away.
 * @return 0, or -ENOENT without such a route. Any thread.
 */
int actions_exabgp_reannounce(struct actions_exabgp *e, const char *key);

/**
 * @return true when route @p key's announce line reached the pipe (and no
 *         reader was lost since), false otherwise or without such a route.
 * Any thread.
 */
bool actions_exabgp_announced(struct actions_exabgp *e, const char *key);

/** @return the number of routes now. Any thread. */
uint32_t actions_exabgp_routes(struct actions_exabgp *e);

/** @return true when the pipe is open (a reader is there). Any thread. */
bool actions_exabgp_connected(struct actions_exabgp *e);

/**
 * Open the pipe if needed, then write the withdraws due, then the announces
 * due, until all are written, the pipe is full (EAGAIN) or its reader is
 * lost (every route is then due again). Never blocks on the pipe.
 * The actions thread only.
 */
void actions_exabgp_sync(struct actions_exabgp *e);

/**
 * The stop: remove every route not marked ACTIONS_ROUTE_KEEP_ON_STOP (their
 * withdraws due), then write what is due; while withdraws remain and the
 * pipe is full, wait for its reader to make room, at most @p drain_ms in
 * all. What is still not written then (no reader, a lost reader, or a
 * full pipe for @p drain_ms) is lost with the process, logged with the
 * count of withdraws.
 * @param drain_ms  milliseconds the stop may wait for a full pipe.
 * The actions thread only, after its last round.
 */
void actions_exabgp_stop(struct actions_exabgp *e, uint32_t drain_ms);

#endif /* DPMON_ACTIONS_EXABGP_H */
