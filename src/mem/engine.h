/*
 * The store interface behind kope_db: a table of functions an engine
 * implements (SQLite today; a PostgreSQL engine can be added for a memory
 * shared by many machines without touching callers). The engine-neutral
 * parts of the memory (validation, the scoring walk, digest aggregation,
 * retrieval ordering, summaries, export and import) live in the other files of src/mem
 * and reach storage only through this table.
 *
 * Conventions: every function returns a kope_status and fills err; ids
 * are int64, 0 meaning "none"; strings handed out are owned by the caller.
 */
#ifndef KOPE_MEM_ENGINE_H
#define KOPE_MEM_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include "kope/mem.h"

/* The scoring view of a Case: what the d(v) walk reads and writes. */
typedef struct mem_node {
  int64_t id, prev_id;   /* prev_id 0 = root */
  double a;              /* effective absolute speedup a_v */
  double r, d, succ_sum, confidence;
  int64_t n_succ;
  int label;
  double aux;            /* engine-private, read by node_get, seen by node_put */
} mem_node;

/* Where a row came from: NULL db = made here. */
typedef struct mem_origin {
  const char *db;
  int64_t id;
  int64_t import_id;
} mem_origin;

/* A full-text hit. */
typedef struct mem_hit {
  int kind;          /* mem_text_kind */
  int64_t id;        /* the Case, Journal or digest id */
  int64_t case_id;   /* the Case it is about, 0 = none */
  double score;      /* bm25, lower is better */
} mem_hit;

typedef struct mem_ids {
  int64_t *v;
  size_t n, cap;
} mem_ids;

int mem_ids_push(mem_ids *ids, int64_t id);
/* Append h to *hits (n in use, cap allocated, grown by kope_grow); 0, or
 * KOPE_ENOMEM with the array unchanged (text.c). */
int mem_hits_push(mem_hit **hits, size_t *n, size_t *cap, mem_hit h);
/* qsort order of hits: best (lowest, bm25-like) score first, newer first
 * on ties; both engines' text search ends with it (text.c). */
int mem_hit_cmp(const void *a, const void *b);
void mem_ids_release(mem_ids *ids);

/* One Case as digest aggregation sees it (rows come sorted by key). */
typedef struct mem_drow {
  const char *target, *category, *layer, *thought_id, *title;
  int64_t case_id;
  int label, correct;
  double r;
} mem_drow;
typedef int (*mem_drow_fn)(const mem_drow *row, void *ctx);

typedef int (*mem_journal_fn)(const kope_mem_journal *j, void *ctx);
typedef int (*mem_kv_fn)(const char *key, const char *value, void *ctx);

enum mem_text_kind { MEM_T_CASE = 0, MEM_T_JOURNAL = 1, MEM_T_DIGEST = 2 };
enum mem_uid_kind { MEM_U_CASE = 0, MEM_U_SESSION = 1, MEM_U_JOURNAL = 2 };
/* READ/READ_END bracket a group of reads (a retrieval) in one snapshot
 * that sees every committed row in the full-text index; no-ops inside a
 * write transaction, and no write may start in between. */
enum mem_txn_op { MEM_TXN_BEGIN = 0, MEM_TXN_COMMIT = 1, MEM_TXN_ROLLBACK = 2,
                  MEM_TXN_READ = 3, MEM_TXN_READ_END = 4 };

typedef struct mem_engine {
  const char *name;
  int (*open)(const char *path, int flags, void **impl, kope_err *err);
  void (*close)(void *impl);
  const char *(*uuid)(void *impl);
  int (*schema_version)(void *impl);
  /* Nestable write transaction; only the outermost commits. */
  int (*txn)(void *impl, int op, kope_err *err);

  /* Cases and scoring. node_get of an unknown id: KOPE_EINPUT. */
  int (*node_get)(void *impl, int64_t id, mem_node *n, kope_err *err);
  int (*node_put)(void *impl, const mem_node *n, kope_err *err);
  /* The nodes from id up to its root (id first), in one query; an unknown
   * id gives KOPE_EINPUT. Caller frees *nodes. */
  int (*ancestors)(void *impl, int64_t id, mem_node **nodes, size_t *n, kope_err *err);
  int (*case_put)(void *impl, const kope_mem_case_in *c, const mem_node *score,
                  const char *err_sig, const mem_origin *o, int64_t *id, kope_err *err);
  int (*case_get)(void *impl, int64_t id, int flags, kope_mem_case *out, kope_err *err);
  /* What ranking needs, from the narrow score row: id, label, rank,
   * step_ratio, d_score, layer, target, hw (owned); the rest stays at
   * kope_mem_case_init's values. Unknown id: KOPE_EINPUT. */
  int (*case_brief)(void *impl, int64_t id, kope_mem_case *out, kope_err *err);
  int (*case_each)(void *impl, const kope_mem_filter *f, int flags, kope_mem_case_fn fn,
                   void *ctx, kope_err *err);
  int (*successors)(void *impl, int64_t id, mem_ids *out, kope_err *err);
  /* Local id of a row imported from (db, id), or 0. */
  int (*find_uid)(void *impl, int kind, const char *db, int64_t id, int64_t *local,
                  kope_err *err);
  int (*exists)(void *impl, int kind, int64_t id, int *yes, kope_err *err);
  /* Every Case's scoring node, in id order; caller frees *nodes. */
  int (*nodes_all)(void *impl, mem_node **nodes, size_t *n, kope_err *err);
  int (*node_put_full)(void *impl, const mem_node *n, kope_err *err);

  /* Retrieval. top: Case ids of one label matching f, best d*c first. */
  int (*top)(void *impl, const kope_mem_filter *f, int label, size_t k, mem_ids *out,
             kope_err *err);
  /* text: bm25 hits of free text over Cases, Journals and digests, best
   * first; all_terms = AND (else a relevance OR of the rarest terms). */
  int (*text)(void *impl, const char *text, int all_terms, size_t limit, mem_hit **hits,
              size_t *n, kope_err *err);
  /* Failed Cases with this error signature, same-op first, newest first. */
  int (*err_cases)(void *impl, const char *sig, const kope_mem_filter *f, size_t limit,
                   mem_ids *out, kope_err *err);
  /* The Case that fixed a failed one, or 0. */
  int (*fix_of)(void *impl, int64_t failed_id, int64_t *fix_id, kope_err *err);

  /* Sessions, Journals, sources, hardware profiles. */
  int (*session_put)(void *impl, const kope_mem_session *s, const mem_origin *o,
                     int64_t *id, kope_err *err);
  int (*session_end)(void *impl, int64_t id, const char *status, kope_err *err);
  int (*session_get)(void *impl, int64_t id, kope_mem_session *out, kope_err *err);
  int (*journal_put)(void *impl, const kope_mem_journal *j, const mem_origin *o,
                     int64_t *id, kope_err *err);
  int (*journal_get)(void *impl, int64_t id, kope_mem_journal *out, kope_err *err);
  /* Journals of one Case (case_id > 0) or all (0), oldest first. */
  int (*journal_each)(void *impl, int64_t case_id, mem_journal_fn fn, void *ctx,
                      kope_err *err);
  int (*source_put)(void *impl, const char *body, char hash[65], int *added,
                    kope_err *err);
  /* *body = NULL when the source is not (or no longer) stored. */
  int (*source_get)(void *impl, const char *hash, char **body, kope_err *err);
  int (*hw_put)(void *impl, const char *fingerprint, const char *profile, int *added,
                kope_err *err);
  int (*hw_each)(void *impl, mem_kv_fn fn, void *ctx, kope_err *err);

  /* Digests. */
  int (*digest_rows)(void *impl, int64_t session_id, mem_drow_fn fn, void *ctx,
                     kope_err *err);
  int (*digest_put)(void *impl, const kope_mem_digest *d, kope_err *err);
  /* Most attempts first; limit 0 = all; with_ids loads case_ids. */
  int (*digest_list)(void *impl, const kope_mem_filter *f, size_t limit, int with_ids,
                     kope_mem_digest **out, size_t *n, kope_err *err);
  int (*digest_get)(void *impl, int64_t id, kope_mem_digest *out, kope_err *err);
  int (*digest_set_text)(void *impl, int64_t id, const char *text, kope_err *err);

  /* Maintenance. */
  int (*stats)(void *impl, kope_mem_stats *st, kope_err *err);
  int (*gc)(void *impl, const kope_mem_gc_opts *o, kope_mem_gc_stats *st, kope_err *err);
  int (*import_begin)(void *impl, const char *src_db, const char *src_path,
                      int64_t *import_id, kope_err *err);
  int (*import_end)(void *impl, const kope_mem_import_stats *st, kope_err *err);
  /* Storage-level integrity check; findings appended to report. */
  int (*integrity)(void *impl, kope_buf *report, kope_err *err);
  /* Copy the whole store, consistently, into a new file at dst (an
   * existing file there is replaced); the store is only read. NULL for
   * an engine that cannot (kope_db_copy then gives KOPE_EINPUT). */
  int (*copy)(void *impl, const char *dst, kope_err *err);

  /* Batched reads, for an engine that pays a round trip per statement
   * (NULL: callers loop over case_brief, case_get and fix_of). out[i] /
   * fix[i] answer ids[i] as the single-row function would (case_gets
   * without code); an unknown id gives KOPE_EINPUT and out is released. */
  int (*case_briefs)(void *impl, const int64_t *ids, size_t n, kope_mem_case *out,
                     kope_err *err);
  int (*case_gets)(void *impl, const int64_t *ids, size_t n, kope_mem_case *out,
                   kope_err *err);
  int (*fixes_of)(void *impl, const int64_t *ids, size_t n, int64_t *fix, kope_err *err);
} mem_engine;

extern const mem_engine kope_mem_sqlite_engine;
extern const mem_engine kope_mem_pg_engine;   /* pg_open.c */
/* The URL with its password masked (pg_open.c); caller frees. */
char *kope_pg_mask_url(const char *url);

struct kope_db {
  const mem_engine *eng;
  void *impl;
  char *path;
};

/* ---- engine-neutral helpers shared by the src/mem files -------------- */

/* Wall-clock time in unix seconds. */
double mem_wall_now(void);
/* Global uid text "<db>:<id>"; caller frees. */
char *mem_uid(const char *db, int64_t id);
/* Split "<db>:<id>"; 0 on success. db receives at most dbsize-1 chars. */
int mem_uid_parse(const char *uid, char *db, size_t dbsize, int64_t *id);
/* Store a Case with its scoring; see kope_mem_case_insert. */
int mem_case_insert(kope_db *db, const kope_mem_case_in *c, const mem_origin *o,
                    int64_t *id, kope_err *err);
/* Recompute every node (post-order over the forest). Returns the largest
 * change in r or d; nodes are indexed by position, prev by id. */
int mem_rescore_nodes(mem_node *nodes, size_t n, double *max_change);
/* Summary of a digest. Caller frees. */
char *mem_digest_summary(const kope_mem_digest *d);
/* The computed one-line lesson for a digest. Caller frees. */
char *mem_digest_auto_text(const kope_mem_digest *d);
void mem_digest_release(kope_mem_digest *d);
/* Free text -> search terms (lower-cased words, at most max, deduped). */
size_t mem_terms(const char *text, char terms[][48], size_t max);
/* A word too common to rank by (both engines' full-text queries skip it
 * unless every term is wanted). */
int mem_is_stopword(const char *w);
/* FNV-1a hash of a search term: its slot in an engine's cache of term
 * frequencies (text.c). */
uint32_t mem_word_hash(const char *w);
/* Append a record to a list; strings are copied. Returns the record. */
kope_mem_rec *mem_recs_push(kope_mem_recs *r);
void mem_rec_release(kope_mem_rec *rec);
void mem_rec_from_case(kope_mem_rec *rec, const kope_mem_case *c);
void mem_case_release_strings(kope_mem_case *c);
void mem_session_release_strings(kope_mem_session *s);

#endif
