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
#include <string.h>
#include "mem/sq.h"

#define SQ_CKPT_SOFT 4000    /* frames: wake the helper */
#define SQ_CKPT_HARD 24000   /* frames: the writer checkpoints (the WAL can restart) */

/* The thresholds in use (tests lower them with sq_ckpt_tune). */
static int soft_frames = SQ_CKPT_SOFT, hard_frames = SQ_CKPT_HARD;

struct sq_ckpt {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;    /* wakes the helper */
  pthread_cond_t idle;  /* the helper finished a checkpoint */
  sqlite3 *h;      /* the helper's own connection; used by the helper only */
  int wanted;      /* a checkpoint was asked for */
  int busy;        /* a checkpoint (helper's or writer's) is running */
  int stop;
  int woke_at;     /* WAL frames when the helper was last woken (writer only) */
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
    if (c->busy)   /* the writer is checkpointing: it does this round's work */
      continue;
    c->busy = 1;
    pthread_mutex_unlock(&c->mu);
    /* SQLITE_BUSY (another process checkpoints) or an I/O error leaves
     * the work to the next round or the writer's own checkpoint. */
    sqlite3_wal_checkpoint_v2(c->h, "main", SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    pthread_mutex_lock(&c->mu);
    c->busy = 0;
    pthread_cond_broadcast(&c->idle);
  }
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

/* The writer's own checkpoint: wait for a helper round in progress to
 * end (SQLite answers BUSY, without waiting, to a second checkpointer),
 * keep the helper out, and copy what is left; the next transaction then
 * restarts the WAL. */
static void writer_checkpoint(sq_ckpt *c, sqlite3 *h, const char *db)
{
  pthread_mutex_lock(&c->mu);
  while (c->busy)
    pthread_cond_wait(&c->idle, &c->mu);
  c->busy = 1;
  pthread_mutex_unlock(&c->mu);
  sqlite3_wal_checkpoint_v2(h, db, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
  pthread_mutex_lock(&c->mu);
  c->busy = 0;
  pthread_mutex_unlock(&c->mu);
}

/* Called by SQLite on the writer's connection after each commit, with the
 * frames the WAL holds. The helper is woken once per soft_frames new
 * frames (it checkpoints incrementally, so the writer's checkpoint past
 * hard_frames has little left to copy and sync). */
static int on_commit(void *arg, sqlite3 *h, const char *db, int frames)
{
  sq_ckpt *c = arg;

  if (frames < c->woke_at)   /* the WAL restarted */
    c->woke_at = 0;
  if (frames >= hard_frames) {
    writer_checkpoint(c, h, db);
  } else if (frames - c->woke_at >= soft_frames) {
    c->woke_at = frames;
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
  pthread_cond_destroy(&c->idle);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

/* Does the helper's connection see the file in WAL mode? A connection
 * opens the WAL when it first reads; until then a checkpoint on it is a
 * silent no-op. */
static int sees_wal(sqlite3 *h)
{
  sqlite3_stmt *st = NULL;
  int yes = sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW &&
            strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0;

  sqlite3_finalize(st);
  return yes;
}

int sq_ckpt_start(sq *s)
{
  sq_ckpt *c = calloc(1, sizeof *c);

  if (!c)
    return -1;
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  pthread_cond_init(&c->idle, NULL);
  if (sqlite3_open_v2(s->path, &c->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
          SQLITE_OK ||
      sqlite3_busy_timeout(c->h, SQ_BUSY_MS) != SQLITE_OK || !sees_wal(c->h) ||
      pthread_create(&c->thread, NULL, helper, c) != 0) {
    ckpt_free(c);
    return -1;   /* the writer keeps SQLite's own checkpoints */
  }
  s->ckpt = c;
  sqlite3_wal_hook(s->h, on_commit, c);
  return 0;
}

void sq_ckpt_tune(int soft, int hard)
{
  soft_frames = soft > 0 ? soft : SQ_CKPT_SOFT;
  hard_frames = hard > 0 ? hard : SQ_CKPT_HARD;
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
