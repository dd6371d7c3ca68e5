/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_state.h — the state file (actions.state_file): the blackholes,
 * so that they survive a restart, and the FlowSpec rules sent to ExaBGP,
 * so that the next start announces the manual ones again and withdraws
 * the others; its document built from the
 * lists, written atomically, and read back at the start.
 */
#ifndef DPMON_ACTIONS_STATE_H
#define DPMON_ACTIONS_STATE_H

#include <jansson.h>

#include "actions_blackholes.h"

/*
 * The state file's document of list @p l and of the FlowSpec rules
 * @p flowspec (actions_fs_state_json; the reference is taken, even on
 * error); sorts the list by address (a stable file for diffs).
 * @return a new reference, or NULL (ENOMEM). The list's lock held.
 */
json_t *actions_state_json(struct bh_list *l, json_t *flowspec);

/*
 * Write @p doc to @p path atomically, mode 0600 (dpmon_file_write_new:
 * PATH.tmp.XXXXXX in the same directory, fsync, rename over @p path,
 * fsync the directory; never through a link).
 * @return 0 or -errno (the temporary file is removed). No lock held.
 */
int actions_state_write(const char *path, const json_t *doc);

/*
 * Read the state file @p path into the empty list @p l (entries announced)
 * and its FlowSpec rules into @p flowspec (a new reference to the array,
 * for actions_fs_restore; NULL when the file has none: a missing file, or
 * one written before dpmon kept rules). A missing file is an empty list.
 * @return 0, or -EINVAL with the reason logged (the module must not start:
 *         starting with an empty list would overwrite the operator's
 *         blackholes at the next change).
 * Before the actions thread starts.
 */
int actions_state_load(struct bh_list *l, const char *path, json_t **flowspec);

#endif /* DPMON_ACTIONS_STATE_H */
