/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_state.h — the blackholes' state file (actions.state_file), so
 * that blackholes survive a restart: its document built from the list,
 * written atomically, and read back into the list at the start.
 */
#ifndef DPMON_ACTIONS_STATE_H
#define DPMON_ACTIONS_STATE_H

#include <jansson.h>

#include "actions_blackholes.h"

/*
 * The state file's document of list @p l; sorts the list by address (a
 * stable file for diffs). @return a new reference, or NULL (ENOMEM).
 * The list's lock held.
 */
json_t *actions_state_json(struct bh_list *l);

/*
 * Write @p doc to @p path atomically: PATH.tmp.XXXXXX in the same
 * directory, fsync, rename over @p path, fsync the directory.
 * @return 0 or -errno (the temporary file is removed). No lock held.
 */
int actions_state_write(const char *path, const json_t *doc);

/*
 * Read the state file @p path into the empty list @p l (entries announced).
 * A missing file is an empty list.
 * @return 0, or -EINVAL with the reason logged (the module must not start:
 *         starting with an empty list would overwrite the operator's
 *         blackholes at the next change).
 * Before the actions thread starts.
 */
int actions_state_load(struct bh_list *l, const char *path);

#endif /* DPMON_ACTIONS_STATE_H */
