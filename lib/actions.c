/*
 * actions.c — placeholder: accepts and discards events (see actions.h).
 */
#include "actions.h"

#include <errno.h>
#include <stdlib.h>

struct dpmon_actions {
	struct dpmon_actions_conf conf;
};

struct dpmon_actions *
dpmon_actions_create(const struct dpmon_actions_conf *conf)
{
	struct dpmon_actions *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->conf = *conf;
	return a;
}

int
dpmon_actions_post(struct dpmon_actions *a, struct dpmon_action_event *ev)
{
	(void)a;
	json_decref(ev->alert);
	ev->alert = NULL;
	return 0;
}

void
dpmon_actions_free(struct dpmon_actions *a)
{
	free(a);
}
