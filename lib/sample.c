/*
 * sample.c — placeholder: watches nothing, samples nothing (see sample.h).
 */
#include "sample.h"

#include <errno.h>
#include <stdlib.h>

struct dpmon_sampler {
	unsigned n_workers;
};

struct dpmon_sampler *
dpmon_sampler_create(unsigned n_workers, const struct dpmon_actions_conf *conf)
{
	struct dpmon_sampler *s = calloc(1, sizeof(*s));

	(void)conf;
	if (s != NULL)
		s->n_workers = n_workers;
	return s;
}

void
dpmon_sampler_free(struct dpmon_sampler *s)
{
	free(s);
}

int
dpmon_sampler_watch(struct dpmon_sampler *s, const struct dpmon_addr *hosts,
		    const uint64_t *alert_ids, unsigned n)
{
	(void)s;
	(void)hosts;
	(void)alert_ids;
	return n > DPMON_SAMPLE_WATCH_MAX ? -E2BIG : 0;
}

void
dpmon_sampler_drain(struct dpmon_sampler *s)
{
	(void)s;
}

json_t *
dpmon_sampler_summary(struct dpmon_sampler *s, uint64_t alert_id)
{
	(void)s;
	(void)alert_id;
	return NULL;
}
