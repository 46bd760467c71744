/*
 * kope work queue: optimization jobs kept in a PostgreSQL store (table
 * kope_jobs, created by the store's schema v2), claimed by workers on any
 * machine. A claim takes the oldest pending job (or a running one whose
 * lease expired: its worker died) with FOR UPDATE SKIP LOCKED, so two
 * workers never claim one job; the worker renews its lease while it runs
 * and records the result, which only the job's current holder can do, so
 * a job is done exactly once. Jobs carry the harness version they were
 * queued with; a worker of another version is refused.
 *
 * Conventions: functions return a kope_status and fill err. Strings passed
 * in are borrowed; jobs handed out are owned by the caller
 * (kope_jobs_free).
 */
#ifndef KOPE_QUEUE_H
#define KOPE_QUEUE_H

#include <stddef.h>
#include <stdint.h>
#include "kope/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kope_queue kope_queue;

typedef struct kope_job {
  int64_t id;
  char op[128], target[32], policy[128], harness[64], state[16];
  int64_t budget_evals;
  char *options;          /* JSON array of extra `kope optimize` arguments */
  char worker[160], device[128];
  int claims;             /* times claimed (> 1: reclaimed after a lease ran out) */
  int64_t session_id;
  int exit_code, passed;
  double best_speedup, age_s;   /* age_s: seconds since queued */
  char stop_reason[64];
} kope_job;

/* Open the queue of the store at url (NULL: $KOPE_DB). Only a PostgreSQL
 * store has one: an SQLite store gives KOPE_EINPUT. */
kope_queue *kope_queue_open(const char *url, kope_err *err);
void kope_queue_close(kope_queue *q);

/* Queue one job; *id (may be NULL) gets its id. options: a JSON array text
 * (NULL = "[]"). */
int kope_queue_add(kope_queue *q, const char *op, const char *target, const char *policy,
                   int64_t budget_evals, const char *options, const char *harness,
                   int64_t *id, kope_err *err);
/* Every job in id order. */
int kope_queue_list(kope_queue *q, kope_job **jobs, size_t *n, kope_err *err);
void kope_jobs_free(kope_job *jobs, size_t n);
/* KOPE_EENV when a pending or running job was queued with another harness
 * version than this worker's. */
int kope_queue_check_harness(kope_queue *q, const char *harness, kope_err *err);
/* Claim the next job for worker (target NULL: any) under a lease of
 * lease_s seconds; *got 0 when none is claimable. */
int kope_queue_claim(kope_queue *q, const char *worker, const char *target,
                     const char *device, const char *harness, double lease_s, kope_job *job,
                     int *got, kope_err *err);
/* Renew the lease; *held 0 when the job is no longer this worker's. */
int kope_queue_heartbeat(kope_queue *q, int64_t id, const char *worker, double lease_s,
                         int *held, kope_err *err);
/* Record the result (state "done" or "failed"); ignored (held 0) when the
 * job is no longer this worker's. */
int kope_queue_finish(kope_queue *q, const kope_job *result, const char *worker, int *held,
                      kope_err *err);
/* Give a job back (pending again), e.g. when the worker was interrupted. */
int kope_queue_release(kope_queue *q, int64_t id, const char *worker, const char *note,
                       kope_err *err);
/* Jobs still to do: pending, and running (claimed, maybe reclaimable). */
int kope_queue_open_jobs(kope_queue *q, int64_t *pending, int64_t *running, kope_err *err);

#ifdef __cplusplus
}
#endif
#endif
