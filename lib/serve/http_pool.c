/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_pool.c — the threads that render heavy HTTP answers (http_pool.h).
 *
 * A mutex and a condition variable guard a singly linked FIFO. Outside
 * the data path (these threads never touch worker memory), so a lock is
 * the simple and right tool. A stopping pool still runs what was queued:
 * the HTTP server suspended a connection for each job and resumes it only
 * when its job ran or was cancelled, so a stopping pool cancels what
 * still waits (a render could take seconds) and lets the running ones end.
 * The threads inherit the starting thread's CPU affinity (the main
 * lcore's) and run at nice HTTP_POOL_NICE, so that the merge and the loop
 * thread get that CPU first.
 */
#include "http_pool.h"

#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

static void *
pool_main(void *arg)
{
	struct http_pool *p = arg;

	/* Below the main lcore and the loop thread: a render of megabytes must
	 * not delay a merge (the health verdict) nor /health. */
	(void)!setpriority(PRIO_PROCESS, (id_t)gettid(), HTTP_POOL_NICE);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct http_job *j;

		while (p->head == NULL && !p->stopping)
			pthread_cond_wait(&p->wake, &p->lock);
		if (p->head == NULL)
			break; /* stopping, and nothing left */
		j = p->head;
		p->head = j->next;
		if (p->head == NULL)
			p->tail = NULL;
		p->queued--;
		pthread_mutex_unlock(&p->lock);
		j->run(j);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int
http_pool_start(struct http_pool *p)
{
	int err;

	*p = (struct http_pool){.head = NULL};
	if ((err = pthread_mutex_init(&p->lock, NULL)) != 0)
		return -err;
	if ((err = pthread_cond_init(&p->wake, NULL)) != 0) {
		pthread_mutex_destroy(&p->lock);
		return -err;
	}
	p->started = true;
	for (unsigned i = 0; i < HTTP_POOL_THREADS; i++) {
		char name[16];

		if ((err = pthread_create(&p->threads[i], NULL, pool_main, p)) != 0) {
			http_pool_stop(p);
			return -err;
		}
		snprintf(name, sizeof(name), "dpmon-http-w%u", i);
		pthread_setname_np(p->threads[i], name);
		p->n_threads = i + 1;
	}
	return 0;
}

int
http_pool_submit(struct http_pool *p, struct http_job *j)
{
	int ret = 0;

	j->next = NULL;
	pthread_mutex_lock(&p->lock);
	if (p->stopping)
		ret = -ESHUTDOWN;
	else if (p->queued >= HTTP_POOL_QUEUE)
		ret = -EBUSY;
	if (ret == 0) {
		if (p->tail != NULL)
			p->tail->next = j;
		else
			p->head = j;
		p->tail = j;
		p->queued++;
		pthread_cond_signal(&p->wake);
	}
	pthread_mutex_unlock(&p->lock);
	return ret;
}

void
http_pool_stop(struct http_pool *p)
{
	struct http_job *j;

	if (!p->started)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	j = p->head;
	p->head = p->tail = NULL;
	p->queued = 0;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	while (j != NULL) {
		struct http_job *next = j->next;

		j->cancel(j);
		j = next;
	}
	for (unsigned i = 0; i < p->n_threads; i++)
		pthread_join(p->threads[i], NULL);
	p->n_threads = 0;
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	p->started = false;
}
