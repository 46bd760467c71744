/*
 * The PostgreSQL engine of the experience memory (libpq): its handle,
 * parameter lists, result helpers, error mapping and the functions the
 * engine table (pg_open.c) points at. The files are pg_open.c (the URL,
 * connecting, validation, transactions, the engine table), pg_schema.c
 * (schema versions and migrations), pg_case.c (Cases and scoring rows),
 * pg_query.c (retrieval queries and full-text search) and pg_misc.c
 * (sessions, Journals, sources, hardware, digests, statistics, gc,
 * imports, integrity).
 *
 * Every SQL text is a constant or assembled from constant fragments; user
 * data only ever travels as parameters ($n, text format; doubles are sent
 * with 17 significant digits and read back exactly).
 *
 * Concurrency: several processes on several machines write one store.
 * Inside a write transaction node_get locks the score row it reads
 * (SELECT ... FOR UPDATE), so the d(v) walk of case.c reads the latest
 * committed successor sum and no update is lost; the walk goes from a
 * Case to its root, always to smaller ids, so two writers lock rows in one
 * global order and cannot deadlock on scores.
 */
#ifndef KOPE_MEM_PG_H
#define KOPE_MEM_PG_H

#include <libpq-fe.h>
#include "mem/engine.h"

#define PG_MAX_PAR 40
#define PG_LOCK_KEY 0x6B6F7065   /* advisory lock serializing migrations */
#define PG_ANALYZE_ROWS 1000     /* an import of this many rows ends with ANALYZE */

/* Document frequencies of search terms, cached per handle for a while
 * (they only steer which terms a relevance query uses). */
#define PG_DF_SLOTS 1024
#define PG_DF_TTL 300.0
typedef struct pg_df {
  char term[48];
  int64_t df;
  double at;
} pg_df;

typedef struct pg {
  PGconn *c;
  char *path;        /* the URL with any password masked (for messages) */
  char uuid[64];
  int schema;
  int depth;         /* nesting of kope_db_begin */
  int failed;        /* an inner write failed: the outer commit must not */
  int reading;       /* a read snapshot (MEM_TXN_READ) is open */
  int readonly;
  pg_df *df;         /* PG_DF_SLOTS entries, allocated on first search */
  pg_df *common;     /* the most common search terms, sorted (pg_query.c) */
  size_t ncommon;
  double common_at;  /* when they were read (0: never) */
  struct pg_imp *imp; /* the import's caches (pg_import.c), NULL outside one */
} pg;

/* Parameters of one statement; values are copied into the list. */
typedef struct pg_par {
  const char *v[PG_MAX_PAR];
  char num[PG_MAX_PAR][32];
  int n;
} pg_par;

/* ---- pg_open.c ---------------------------------------------------------- */
/* Append a parameter; returns its number ($n) for assembled SQL. */
int pg_par_text(pg_par *p, const char *v);     /* NULL -> NULL (borrowed) */
/* ids as a bigint[] literal "{1,2,3}" (digits only: safe as a text
 * parameter for "= ANY($1::bigint[])"); caller frees; NULL when out of
 * memory. (pg_case.c) */
char *pg_id_array(const int64_t *ids, size_t n);
int pg_par_i64(pg_par *p, int64_t v);
int pg_par_id(pg_par *p, int64_t v);           /* 0 -> NULL */
int pg_par_real(pg_par *p, double v);          /* non-finite -> NULL */
/* Run sql with p (may be NULL). *res (may be NULL: cleared here) holds the
 * rows of a successful statement; the caller clears it. */
int pg_run(pg *s, const char *sql, const pg_par *p, PGresult **res, const char *what,
           kope_err *err);
/* One int64 from a one-row query (0 when no row). */
int pg_int(pg *s, const char *sql, const pg_par *p, int64_t *v, kope_err *err);
/* Fills out from row row of r. */
typedef void (*pg_row_fn)(pg *s, const PGresult *r, int row, void *out);
/* The one read by id (pg_misc.c): sql with $1 = id, its one row handed to
 * read. No row: KOPE_EINPUT "no WHAT with id ID in PATH"; a failure:
 * pg_run's "reading a WHAT". */
int pg_get_by_id(pg *s, const char *sql, int64_t id, const char *what, pg_row_fn read,
                 void *out, kope_err *err);
/* Map a failed result to a kope status and message ("<url>: what: ..."). */
int pg_fail(pg *s, PGresult *r, const char *what, kope_err *err);
char *pg_txt(const PGresult *r, int row, int col);    /* copy or NULL */
char *pg_txt0(const PGresult *r, int row, int col);   /* copy, "" for NULL */
int64_t pg_i64(const PGresult *r, int row, int col);  /* 0 for NULL */
double pg_dbl(const PGresult *r, int row, int col, double if_null);
int pg_txn(void *impl, int op, kope_err *err);
/* The URL with the password (user:PASS@ or password=...) replaced by
 * "***"; caller frees. */
char *kope_pg_mask_url(const char *url);

/* ---- pg_schema.c -------------------------------------------------------- */
#define PG_SCHEMA_VERSION 2
/* Bring a connected, validated store to PG_SCHEMA_VERSION. */
int pg_migrate(pg *s, kope_err *err);

/* ---- pg_case.c ---------------------------------------------------------- */
int pg_node_get(void *impl, int64_t id, mem_node *n, kope_err *err);
int pg_node_put(void *impl, const mem_node *n, kope_err *err);
int pg_ancestors(void *impl, int64_t id, mem_node **nodes, size_t *n, kope_err *err);
int pg_node_put_full(void *impl, const mem_node *n, kope_err *err);
int pg_case_put(void *impl, const kope_mem_case_in *c, const mem_node *score,
                const char *err_sig, const mem_origin *o, int64_t *id, kope_err *err);
int pg_case_get(void *impl, int64_t id, int flags, kope_mem_case *out, kope_err *err);
int pg_case_brief(void *impl, int64_t id, kope_mem_case *out, kope_err *err);
int pg_case_each(void *impl, const kope_mem_filter *f, int flags, kope_mem_case_fn fn,
                 void *ctx, kope_err *err);
int pg_case_briefs(void *impl, const int64_t *ids, size_t n, kope_mem_case *out,
                   kope_err *err);
int pg_case_gets(void *impl, const int64_t *ids, size_t n, kope_mem_case *out,
                 kope_err *err);
int pg_successors(void *impl, int64_t id, mem_ids *out, kope_err *err);
int pg_find_uid(void *impl, int kind, const char *db, int64_t id, int64_t *local,
                kope_err *err);
int pg_exists(void *impl, int kind, int64_t id, int *yes, kope_err *err);
int pg_nodes_all(void *impl, mem_node **nodes, size_t *n, kope_err *err);
/* Appends " AND <col> = $n" for each set field of f (label excluded when
 * no_label). */
void pg_filter_sql(const kope_mem_filter *f, int no_label, kope_buf *sql, pg_par *p);

/* ---- pg_query.c --------------------------------------------------------- */
int pg_top(void *impl, const kope_mem_filter *f, int label, size_t k, mem_ids *out,
           kope_err *err);
int pg_text(void *impl, const char *text, int all_terms, size_t limit, mem_hit **hits,
            size_t *n, kope_err *err);
int pg_err_cases(void *impl, const char *sig, const kope_mem_filter *f, size_t limit,
                 mem_ids *out, kope_err *err);
int pg_fix_of(void *impl, int64_t failed_id, int64_t *fix_id, kope_err *err);
int pg_fixes_of(void *impl, const int64_t *ids, size_t n, int64_t *fix, kope_err *err);

/* ---- pg_import.c ------------------------------------------------------- */
/* The import's bulk mode (see pg_import.c): started by import_begin inside
 * a transaction, stopped (caches freed) when the outer transaction ends.
 * Each pg_imp_* returns 0 / KOPE_OK and does nothing outside an import.
 * The lookups return 1 when they answered (then *rc / the out value is
 * set), 0 when the caller must ask the server. */
int pg_imp_start(pg *s, kope_err *err);
void pg_imp_stop(pg *s);
int pg_imp_find_uid(pg *s, int kind, const char *db, int64_t id, int64_t *local, int *rc,
                    kope_err *err);
int pg_imp_exists(pg *s, int kind, int64_t id, int *yes);
/* A row of kind this import stored (o: its origin, or NULL). */
int pg_imp_made(pg *s, int kind, int64_t id, const mem_origin *o, kope_err *err);
/* 1 when this import already stored the source with this hash. */
int pg_imp_source_seen(pg *s, const char *hash);
int pg_imp_node_get(pg *s, int64_t id, mem_node *n);
int pg_imp_node_keep(pg *s, const mem_node *n, int dirty, kope_err *err);
/* Quiet: the statements now run are the cache's own reads. */
void pg_imp_quiet(pg *s, int on);
/* Write the changed score rows and drop the cache. */
int pg_imp_flush(pg *s, kope_err *err);
/* Called by pg_run before each statement. */
int pg_imp_before(pg *s, const char *sql, kope_err *err);

/* ---- pg_misc.c ---------------------------------------------------------- */
int pg_session_put(void *impl, const kope_mem_session *s, const mem_origin *o,
                   int64_t *id, kope_err *err);
int pg_session_end(void *impl, int64_t id, const char *status, kope_err *err);
int pg_session_get(void *impl, int64_t id, kope_mem_session *out, kope_err *err);
int pg_journal_put(void *impl, const kope_mem_journal *j, const mem_origin *o,
                   int64_t *id, kope_err *err);
int pg_journal_get(void *impl, int64_t id, kope_mem_journal *out, kope_err *err);
int pg_journal_each(void *impl, int64_t case_id, mem_journal_fn fn, void *ctx,
                    kope_err *err);
int pg_source_put(void *impl, const char *body, char hash[65], int *added, kope_err *err);
int pg_source_get(void *impl, const char *hash, char **body, kope_err *err);
int pg_hw_put(void *impl, const char *fingerprint, const char *profile, int *added,
              kope_err *err);
int pg_hw_each(void *impl, mem_kv_fn fn, void *ctx, kope_err *err);
int pg_digest_rows(void *impl, int64_t session_id, mem_drow_fn fn, void *ctx,
                   kope_err *err);
int pg_digest_put(void *impl, const kope_mem_digest *d, kope_err *err);
int pg_digest_list(void *impl, const kope_mem_filter *f, size_t limit, int with_ids,
                   kope_mem_digest **out, size_t *n, kope_err *err);
int pg_digest_get(void *impl, int64_t id, kope_mem_digest *out, kope_err *err);
int pg_digest_set_text(void *impl, int64_t id, const char *text, kope_err *err);
int pg_stats(void *impl, kope_mem_stats *st, kope_err *err);
int pg_gc(void *impl, const kope_mem_gc_opts *o, kope_mem_gc_stats *st, kope_err *err);
int pg_import_begin(void *impl, const char *src_db, const char *src_path,
                    int64_t *import_id, kope_err *err);
int pg_import_end(void *impl, const kope_mem_import_stats *st, kope_err *err);
int pg_integrity(void *impl, kope_buf *report, kope_err *err);

#endif
