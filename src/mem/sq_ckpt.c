/*
 * SQLite engine: WAL checkpoints off the writer's path.
 *
 * A checkpoint copies the pages committed to the WAL back into the
 * database file and makes both durable with fsync. With SQLite's
 * automatic checkpoint that work (0.2-0.3 s for 16000 pages on the
 * development VM, nearly all of it waiting for the disk) lands on the
 * commit that crosses the threshold, and at 100,000 Cases it was about a
 * quarter of the insertion time. Here a writable handle owns a helper
 * thread with its own connection to the same file. After every commit
 * SQLite calls the WAL hook of the writer's connection with the size of
 * the WAL; past SQ_CKPT_SOFT frames it wakes the helper, which runs a
 * PASSIVE checkpoint (it never blocks the writer, and the writer never
 * waits for it). A WAL can only restart from its beginning when it has
 * been copied completely, which a helper racing a busy writer may never
 * see; so past SQ_CKPT_HARD frames the writer checkpoints itself (what is
 * left after the helper's work: a few thousand frames). Durability is
 * unchanged: a transaction is durable against a killed process when its
 * COMMIT has written the WAL, and a checkpoint (in any thread, killed at
 * any moment) is crash-safe by SQLite's design.
 *
 * The helper only exists between sq_ckpt_start and sq_ckpt_stop (open and
 * close of a writable handle); a handle stays single-threaded for its
 * callers.
 */
#include <pthread.h>
#include <stdlib.h>
#include "mem/sq.h"

#define SQ_CKPT_SOFT 4000    /* frames: wake the helper */
#define SQ_CKPT_HARD 24000   /* frames: the writer checkpoints (the WAL can restart) */

struct sq_ckpt {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  sqlite3 *h;      /* the helper's own connection; used by the helper only */
  int wanted;      /* a checkpoint was asked for */
  int stop;
};

static void *helper(void *arg)
{
  sq_ckpt *c = arg;

  pthread_mutex_lock(&c->mu);
  for (;;) {
    while (!c->wanted && !c->stop)
      pthread_cond_wait(&c->cv, &c->mu);
    if (c->stop)
      break;
    c->wanted = 0;
    pthread_mutex_unlock(&c->mu);
    /* SQLITE_BUSY (the writer is checkpointing) or an I/O error leaves
     * the work to the writer's own checkpoint at SQ_CKPT_HARD. */
    sqlite3_wal_checkpoint_v2(c->h, "main", SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    pthread_mutex_lock(&c->mu);
  }
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

/* Called by SQLite on the writer's connection after each commit. */
static int on_commit(void *arg, sqlite3 *h, const char *db, int frames)
{
  sq_ckpt *c = arg;

  if (frames >= SQ_CKPT_HARD) {
    sqlite3_wal_checkpoint_v2(h, db, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
  } else if (frames >= SQ_CKPT_SOFT) {
    pthread_mutex_lock(&c->mu);
    c->wanted = 1;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
  }
  return SQLITE_OK;
}

static void ckpt_free(sq_ckpt *c)
{
  sqlite3_close(c->h);
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

int sq_ckpt_start(sq *s)
{
  sq_ckpt *c = calloc(1, sizeof *c);

  if (!c)
    return -1;
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  if (sqlite3_open_v2(s->path, &c->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
          SQLITE_OK ||
      sqlite3_busy_timeout(c->h, SQ_BUSY_MS) != SQLITE_OK ||
      pthread_create(&c->thread, NULL, helper, c) != 0) {
    ckpt_free(c);
    return -1;   /* the writer keeps SQLite's own checkpoints */
  }
  s->ckpt = c;
  sqlite3_wal_hook(s->h, on_commit, c);
  return 0;
}

void sq_ckpt_stop(sq *s)
{
  sq_ckpt *c = s->ckpt;

  if (!c)
    return;
  sqlite3_wal_hook(s->h, NULL, NULL);
  pthread_mutex_lock(&c->mu);
  c->stop = 1;
  pthread_cond_signal(&c->cv);
  pthread_mutex_unlock(&c->mu);
  pthread_join(c->thread, NULL);
  ckpt_free(c);
  s->ckpt = NULL;
}
