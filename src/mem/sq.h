/*
 * The SQLite engine of the experience memory: its handle, the prepared
 * statement cache, error mapping and the functions the engine table
 * (sq_open.c) points at. The files are sq_open.c (open, validation,
 * pragmas, transactions), sq_schema.c (schema versions and migrations),
 * sq_case.c (Cases and scoring rows), sq_query.c (retrieval queries and
 * full-text search), sq_misc.c (sessions, Journals, sources, hardware) and
 * sq_digest.c (digests, statistics, gc, imports, integrity), sq_fts.c
 * (feeding the full-text index) and sq_ckpt.c (WAL checkpoints in a
 * helper thread).
 *
 * Every SQL text is a constant or assembled from constant fragments; user
 * data only ever travels as bound parameters.
 */
#ifndef KOPE_MEM_SQ_H
#define KOPE_MEM_SQ_H

#include <sqlite3.h>
#include "mem/case_fields.h"
#include "mem/engine.h"

#define SQ_APP_ID 0x6B6F7065   /* "kope" in PRAGMA application_id */
#define SQ_BUSY_MS 10000

/* Cached statements, prepared on first use. */
enum sq_stmt_id {
  SQ_NODE_GET, SQ_NODE_PUT, SQ_NODE_PUT_IX, SQ_NODE_PUT_FULL, SQ_SCORE_INS, SQ_CASE_INS, SQ_CASE_GET, SQ_CASE_BRIEF, SQ_SRC_INS,
  SQ_SRC_GET, SQ_SUCC, SQ_EXISTS_CASE, SQ_EXISTS_SESSION, SQ_EXISTS_JOURNAL,
  SQ_UID_CASE, SQ_UID_SESSION, SQ_UID_JOURNAL, SQ_JOURNAL_INS, SQ_JOURNAL_GET,
  SQ_JOURNAL_CASE, SQ_PROBE, SQ_FTS, SQ_FTS_ALL, SQ_META_INT, SQ_META_SET,
  SQ_MAX_CASE, SQ_MAX_JOURNAL, SQ_FLUSH_CASES, SQ_FLUSH_JOURNALS, SQ_FIX_SUCC, SQ_FIX_NEXT, SQ_DIGEST_GET, SQ_DIGEST_IDS, SQ_COUNT
};

#define SQ_TOP_CACHE 256
/* rank_ix may lag rank by this fraction of rank_ix (0 lag at 0). */
#define SQ_RANK_SLACK 0.10
#define SQ_ERRCODE(err) ((err) ? (err)->code : KOPE_EINTERNAL)

/* What Case text the full-text index holds (p: row prefix). */
#define CASE_FTS_BODY(p)                                                          \
  "coalesce(" p "op, '') || ' ' || coalesce(" p "category, '') || ' ' || "        \
  "coalesce(" p "layer, '') || ' ' || coalesce(" p "thought_id, '') || ' ' || "   \
  "coalesce(" p "thought_title, '') || ' ' || coalesce(" p "rationale, '') || "   \
  "' ' || coalesce(" p "verdict, '') || ' ' || "                                  \
  "substr(coalesce(" p "feedback, ''), 1, 2000)"

/* The columns of a Case read back, generated from the field table
 * (case_fields.h): its CASE and DERIVED columns from cases (c), its SCORE
 * columns from case_scores (s), in table order, then the provenance
 * columns sq_read_case reads from SQ_N_SEL on. */
#define SQ_SEL_IF_CASE(col) "c." col ", "
#define SQ_SEL_IF_DERIVED(col) "c." col ", "
#define SQ_SEL_IF_SCORE(col) "s." col ", "
#define SQ_SEL_IF_ENGINE(col)
#define SQ_SEL(name, kind, place, col, ...) SQ_SEL_IF_##place(col)
#define SQ_CASE_COLS                                                              \
  MEM_CASE_FIELDS(SQ_SEL) "c.origin_db, c.origin_id, c.import_id, i.source_path"
#define SQ_NSEL_IF_CASE 1
#define SQ_NSEL_IF_DERIVED 1
#define SQ_NSEL_IF_SCORE 1
#define SQ_NSEL_IF_ENGINE 0
#define SQ_NSEL(name, kind, place, ...) + SQ_NSEL_IF_##place
enum { SQ_N_SEL = 0 MEM_CASE_FIELDS(SQ_NSEL) };
/* The columns SQ_CASE_INS writes: the table's CASE columns, in order, as
 * parameters 1..SQ_N_INS, then err_sig, origin_db, origin_id, import_id. */
#define SQ_INS_COL_IF_CASE(col) col ", "
#define SQ_INS_COL_IF_DERIVED(col)
#define SQ_INS_COL_IF_SCORE(col)
#define SQ_INS_COL_IF_ENGINE(col)
#define SQ_INS_COL(name, kind, place, col, ...) SQ_INS_COL_IF_##place(col)
#define SQ_INS_Q(name, kind, place, col, ...) SQ_INS_COL_IF_##place("?")
enum { SQ_N_INS = 0 MEM_CASE_FIELDS(MF_COUNT_CASE) };
#define SQ_CASE_FROM                                                              \
  " FROM cases c JOIN case_scores s ON s.id = c.id"                               \
  " LEFT JOIN imports i ON i.id = c.import_id"

#define SQ_DIGEST_COLS                                                            \
  "id, target, category, layer, thought_id, title, attempts, n_correct, "         \
  "n_effective, n_partial, n_ineffective, n_negative, median_ratio, "             \
  "coalesce(policy_text, auto_text), auto_text, policy_text IS NOT NULL, updated"

/* Document frequencies of search terms, cached per handle for a while
 * (they only steer which terms a query uses, so slightly stale is fine). */
#define SQ_DF_SLOTS 2048
#define SQ_DF_TTL 300.0
typedef struct sq_df {
  char term[48];
  int64_t df;
  double at;
} sq_df;

typedef struct sq_ckpt sq_ckpt;

typedef struct sq {
  sqlite3 *h;
  char *path;
  char uuid[64];
  int schema;
  int depth;        /* nesting of kope_db_begin */
  int failed;       /* an inner write failed: the outer commit must not */
  int reading;      /* a read snapshot (MEM_TXN_READ) is open */
  sqlite3_stmt *st[SQ_COUNT];
  sqlite3_stmt *top[SQ_TOP_CACHE];
  sq_df *df;        /* SQ_DF_SLOTS entries, allocated on first search */
  int queued;       /* rows this handle added since its last full-text flush */
  sq_ckpt *ckpt;    /* the checkpoint helper of a writable handle, or NULL */
} sq;

/* ---- sq_open.c ---------------------------------------------------------- */
/* Map an SQLite result to a kope status and message ("<path>: what: ..."). */
int sq_fail(sq *s, int rc, const char *what, kope_err *err);
/* A cached statement, reset and with bindings cleared; NULL on error. */
sqlite3_stmt *sq_stmt(sq *s, int which, kope_err *err);
int sq_exec(sq *s, const char *sql, kope_err *err);
/* Prepare an uncached statement (caller finalizes). */
int sq_prep(sq *s, const char *sql, sqlite3_stmt **st, kope_err *err);
/* One integer from a one-row query with an optional int64 parameter ?1. */
int sq_query_int(sq *s, const char *sql, int64_t param, int64_t *v, kope_err *err);
/* Step a statement that returns no rows; resets it. */
int sq_run(sq *s, sqlite3_stmt *st, const char *what, kope_err *err);
/* Fills out from the current row of st. */
typedef void (*sq_row_fn)(sq *s, sqlite3_stmt *st, void *out);
/* The one read by id: st (from sq_stmt or sq_prep; NULL: its error is in
 * err) gets id as ?1 and is stepped once, its row handed to read; st is
 * reset. No row: KOPE_EINPUT "no WHAT with id ID in PATH"; an SQLite
 * failure: sq_fail's "reading a WHAT". */
int sq_get_by_id(sq *s, sqlite3_stmt *st, int64_t id, const char *what, sq_row_fn read,
                 void *out, kope_err *err);
void sq_bind_text(sqlite3_stmt *st, int i, const char *v);   /* NULL -> NULL */
void sq_bind_real(sqlite3_stmt *st, int i, double v);        /* non-finite -> NULL */
void sq_bind_id(sqlite3_stmt *st, int i, int64_t v);         /* 0 -> NULL */
char *sq_col_text(sqlite3_stmt *st, int i);                  /* copy or NULL */
char *sq_col_text0(sqlite3_stmt *st, int i);                 /* copy, "" for NULL */
double sq_col_real(sqlite3_stmt *st, int i, double if_null);
int sq_txn(void *impl, int op, kope_err *err);

/* ---- sq_fts.c ------------------------------------------------------------ */
/* A Case or Journal row was added (in the current transaction): index the
 * rows waiting above the watermarks once enough have accumulated. */
int sq_fts_queue(sq *s, kope_err *err);
/* Index every waiting row (own transaction unless one is open); skipped on
 * a read-only handle and inside a read snapshot (which checked at its
 * start that nothing was waiting). */
int sq_fts_sync(sq *s, kope_err *err);
/* Is any Case or Journal waiting to be indexed? */
int sq_fts_waiting(sq *s, int *yes, kope_err *err);
/* After Journals were deleted (everything indexed before): lower the
 * Journal watermark to the highest remaining id. */
int sq_fts_journals_deleted(sq *s, kope_err *err);

/* ---- sq_ckpt.c ----------------------------------------------------------- */
/* Move WAL checkpoints of a writable handle (WAL mode set) to a helper
 * thread with its own connection; -1 (nothing changed: SQLite keeps
 * checkpointing on commit) when it cannot be started. */
int sq_ckpt_start(sq *s);
/* Stop and join the helper (no-op without one); before closing s->h. */
void sq_ckpt_stop(sq *s);
/* For tests: WAL sizes (frames) that wake the helper and make the writer
 * checkpoint, for handles opened from now on in this process; 0 restores
 * the default. Not thread-safe against handles in use. */
void sq_ckpt_tune(int soft, int hard);

/* ---- sq_schema.c -------------------------------------------------------- */
/* Bring an opened, validated database to KOPE_DB_SCHEMA_VERSION. */
int sq_migrate(sq *s, kope_err *err);
/* Apply the migrations up to version target (tests build old files). */
int sq_migrate_to(sq *s, int target, kope_err *err);
/* Create a new file at schema version 1 (for the migration test). */
int kope_sq_create_v1(const char *path, kope_err *err);
/* Create a file at schema version v (1 <= v <= KOPE_DB_SCHEMA_VERSION),
 * or bring an existing older one up to v with the real migrations (tests
 * build old files). */
int kope_sq_create_at(const char *path, int v, kope_err *err);
/* SQL functions the schema uses (kope_err_sig). */
int sq_register_functions(sq *s, kope_err *err);

/* ---- sq_case.c ---------------------------------------------------------- */
int sq_node_get(void *impl, int64_t id, mem_node *n, kope_err *err);
int sq_node_put(void *impl, const mem_node *n, kope_err *err);
int sq_ancestors(void *impl, int64_t id, mem_node **nodes, size_t *n, kope_err *err);
int sq_node_put_full(void *impl, const mem_node *n, kope_err *err);
int sq_case_put(void *impl, const kope_mem_case_in *c, const mem_node *score,
                const char *err_sig, const mem_origin *o, int64_t *id, kope_err *err);
int sq_case_get(void *impl, int64_t id, int flags, kope_mem_case *out, kope_err *err);
int sq_case_brief(void *impl, int64_t id, kope_mem_case *out, kope_err *err);
int sq_case_each(void *impl, const kope_mem_filter *f, int flags, kope_mem_case_fn fn,
                 void *ctx, kope_err *err);
int sq_successors(void *impl, int64_t id, mem_ids *out, kope_err *err);
int sq_find_uid(void *impl, int kind, const char *db, int64_t id, int64_t *local,
                kope_err *err);
int sq_exists(void *impl, int kind, int64_t id, int *yes, kope_err *err);
int sq_nodes_all(void *impl, mem_node **nodes, size_t *n, kope_err *err);
int sq_rescore_all(sq *s, kope_err *err);
/* Fill out from a row of SQ_CASE_COLS (owned strings, no code bodies). */
void sq_read_case(sq *s, sqlite3_stmt *st, kope_mem_case *out);
/* Filter fragments shared with sq_query.c: appends " AND c.col = ?N" for
 * each set field; returns the mask of fields used. */
unsigned sq_filter_sql(const kope_mem_filter *f, kope_buf *sql);
void sq_filter_bind(sqlite3_stmt *st, const kope_mem_filter *f, unsigned mask);

/* ---- sq_query.c --------------------------------------------------------- */
int sq_top(void *impl, const kope_mem_filter *f, int label, size_t k, mem_ids *out,
           kope_err *err);
int sq_text(void *impl, const char *text, int all_terms, size_t limit, mem_hit **hits,
            size_t *n, kope_err *err);
int sq_err_cases(void *impl, const char *sig, const kope_mem_filter *f, size_t limit,
                 mem_ids *out, kope_err *err);
int sq_fix_of(void *impl, int64_t failed_id, int64_t *fix_id, kope_err *err);

/* ---- sq_misc.c ---------------------------------------------------------- */
int sq_session_put(void *impl, const kope_mem_session *s, const mem_origin *o,
                   int64_t *id, kope_err *err);
int sq_session_end(void *impl, int64_t id, const char *status, kope_err *err);
int sq_session_get(void *impl, int64_t id, kope_mem_session *out, kope_err *err);
int sq_journal_put(void *impl, const kope_mem_journal *j, const mem_origin *o,
                   int64_t *id, kope_err *err);
int sq_journal_get(void *impl, int64_t id, kope_mem_journal *out, kope_err *err);
int sq_journal_each(void *impl, int64_t case_id, mem_journal_fn fn, void *ctx,
                    kope_err *err);
int sq_source_put(void *impl, const char *body, char hash[65], int *added, kope_err *err);
int sq_source_get(void *impl, const char *hash, char **body, kope_err *err);
int sq_hw_put(void *impl, const char *fingerprint, const char *profile, int *added,
              kope_err *err);
int sq_hw_each(void *impl, mem_kv_fn fn, void *ctx, kope_err *err);
int sq_digest_rows(void *impl, int64_t session_id, mem_drow_fn fn, void *ctx,
                   kope_err *err);
int sq_digest_put(void *impl, const kope_mem_digest *d, kope_err *err);
int sq_digest_list(void *impl, const kope_mem_filter *f, size_t limit, int with_ids,
                   kope_mem_digest **out, size_t *n, kope_err *err);
int sq_digest_get(void *impl, int64_t id, kope_mem_digest *out, kope_err *err);
int sq_digest_set_text(void *impl, int64_t id, const char *text, kope_err *err);
int sq_stats(void *impl, kope_mem_stats *st, kope_err *err);
int sq_gc(void *impl, const kope_mem_gc_opts *o, kope_mem_gc_stats *st, kope_err *err);
int sq_import_begin(void *impl, const char *src_db, const char *src_path,
                    int64_t *import_id, kope_err *err);
int sq_import_end(void *impl, const kope_mem_import_stats *st, kope_err *err);
int sq_integrity(void *impl, kope_buf *report, kope_err *err);
/* Fill d from a row of SQ_DIGEST_COLS (no case ids). */
void sq_read_digest(sqlite3_stmt *st, kope_mem_digest *d);

#endif
