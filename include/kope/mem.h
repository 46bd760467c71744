/*
 * kope experience graph memory (DESIGN.md §1 "Experience Graph Memory").
 *
 * Every attempt the agent makes is stored as a Case (structured: operator,
 * scene, optimization thought, code, feedback, verdict, speedup, lineage)
 * and optionally a Journal entry (narrative Markdown). prev_case_id links a
 * Case to the state it started from, so the Cases form a forest. From the
 * stored graph the library derives, and keeps up to date as successors
 * arrive:
 *   a_v  effective absolute speedup: the speedup vs reference when the
 *        Case is correct and timed, else 0 (failed or unknown);
 *   r_v  step ratio a_v / a_prev; 1 for a root or a non-positive
 *        predecessor; 0 for a Case whose own a_v is 0 (it failed);
 *   label  effective r >= 1.05, partial 1 <= r < 1.05,
 *        ineffective 0.85 <= r < 1, negative r < 0.85;
 *   d(v) discounted downstream score: r_v for a leaf, otherwise
 *        0.5 r_v + 0.35 sum over successors d(u).
 * Retrieval ranks Cases inside each label bucket by d(v) * confidence.
 * Digests are lessons aggregated per (target, category, layer, thought id).
 *
 * The store sits behind an engine interface; the engine today is SQLite
 * (one file, WAL, every write one short transaction). A handle is used by
 * one thread at a time; several processes may share the file.
 *
 * Conventions: functions return a kope_status (KOPE_OK, KOPE_EINPUT for bad
 * input such as an unknown id or a foreign file, KOPE_EENV for an
 * unwritable or busy database) and fill the caller's kope_err. Strings
 * passed in are borrowed for the duration of the call. Results are owned
 * by the caller and released with the matching _release/_free function.
 */
#ifndef KOPE_MEM_H
#define KOPE_MEM_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include "kope/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kope_db kope_db;

/* The schema version this library writes (kept in PRAGMA user_version). */
#define KOPE_DB_SCHEMA_VERSION 4

/* ---- opening ---------------------------------------------------------- */

enum kope_db_flags {
  KOPE_DB_NOCREATE = 1,  /* a missing file is an error (KOPE_EINPUT) */
  KOPE_DB_READONLY = 2,  /* read only; an older schema is then an error */
  KOPE_DB_DURABLE = 4    /* fsync every commit (survives power loss) */
};

/* Open (creating it and its parent directories unless NOCREATE) the store
 * at path; NULL means <kope_home_dir()>/kope.db. An older schema is
 * migrated forward in one transaction. A file that is not a kope database
 * (not SQLite, another application's, corrupt, or from a newer kope) is
 * refused with KOPE_EINPUT before anything is written to it; a path that
 * cannot be created or opened gives KOPE_EENV. Returns NULL on failure.
 * The handle is owned by the caller: kope_db_close. */
kope_db *kope_db_open(const char *path, int flags, kope_err *err);
void kope_db_close(kope_db *db);
const char *kope_db_path(const kope_db *db);      /* owned by db */
const char *kope_db_uuid(const kope_db *db);      /* this store's identity */
int kope_db_schema_version(const kope_db *db);
const char *kope_db_engine(const kope_db *db);    /* "sqlite" or "postgresql" */

/* Copy the store db into a new file at dst (replaced if it exists), one
 * consistent snapshot taken through the engine (SQLite: the online
 * backup, so a store in WAL mode is copied whole); db is only read and
 * may be read-only. An engine that cannot copy to a file: KOPE_EINPUT;
 * dst not writable: KOPE_EENV. */
int kope_db_copy(kope_db *db, const char *dst, kope_err *err);

/* Group several writes into one transaction (bulk loads, imports). Writes
 * made inside are durable only once kope_db_commit returns KOPE_OK; a
 * failed write inside makes the commit fail and roll everything back. */
int kope_db_begin(kope_db *db, kope_err *err);
int kope_db_commit(kope_db *db, kope_err *err);
void kope_db_rollback(kope_db *db);

/* ---- scoring (pure functions; the store uses exactly these) ---------- */

typedef enum kope_mem_label {
  KOPE_LABEL_EFFECTIVE = 0,
  KOPE_LABEL_PARTIAL = 1,
  KOPE_LABEL_INEFFECTIVE = 2,
  KOPE_LABEL_NEGATIVE = 3,
  KOPE_LABEL_COUNT = 4
} kope_mem_label;

#define KOPE_MEM_EFFECTIVE_MIN 1.05
#define KOPE_MEM_PARTIAL_MIN 1.0
#define KOPE_MEM_INEFFECTIVE_MIN 0.85
#define KOPE_MEM_D_SELF 0.5       /* weight of r_v in d(v) */
#define KOPE_MEM_D_DISCOUNT 0.7   /* discount of the successors' sum */

const char *kope_mem_label_name(int label);   /* "effective", ... */
int kope_mem_label_parse(const char *name);   /* -1 when unknown */
int kope_mem_label_of(double r);
/* a_v: speedup when verdict is "correct", correct != 0 and speedup is a
 * finite positive number; 0 otherwise. */
double kope_mem_effective_speedup(const char *verdict, int correct, double speedup);
/* r_v from a_v; has_prev 0 for a root. */
double kope_mem_step_ratio(double a_v, int has_prev, double a_prev);
/* d(v) from r_v and the successors' scores (n_succ of them, summing to
 * succ_sum). */
double kope_mem_d_score(double r, int64_t n_succ, double succ_sum);
/* 1 for the verdicts kope's evaluator reports: correct, compile_error,
 * incorrect, crash, timeout, forbidden; and no_kernel (a policy reply
 * that held no usable kernel). */
int kope_mem_verdict_valid(const char *verdict);
/* Token estimate for context budgets: ceil(characters / 4), counting UTF-8
 * characters (not bytes). */
size_t kope_mem_token_estimate(const char *text);
/* The normalized error text used by error-driven retrieval: the first
 * error (or mismatch) line of feedback with paths, line numbers, numbers
 * and quoted names replaced, lower-cased, whitespace collapsed. NULL when
 * feedback holds nothing error-like. Caller frees. */
char *kope_mem_error_signature(const char *feedback);

/* ---- scores ----------------------------------------------------------- */

/* The scores of a Case, one struct wherever they are carried: in the Case
 * itself (kope_mem_case.score), in a retrieval record (kope_mem_rec) and
 * in a context item (kope_ctx_item), copied whole from one to the next. */
typedef struct kope_mem_score {
  int correct;              /* the evaluator accepted the kernel */
  double speedup;           /* absolute, vs reference; NAN = unknown */
  double speedup_vendor;    /* vs vendor library; NAN = unknown */
  double confidence;        /* c_v in [0, 1] */
  double step_ratio;        /* r_v */
  int label;                /* kope_mem_label; -1 = none (digests, Journals) */
  double d_score;           /* d(v) */
  double rank;              /* d(v) * confidence */
} kope_mem_score;

/* The scores of a Case not yet scored: speedups unknown (NAN), confidence
 * 1, r = d = 1, label partial (what a root of a_v 1 gets), rank 0 (not
 * ranked yet), not correct. */
void kope_mem_score_init(kope_mem_score *s);

/* ---- sessions --------------------------------------------------------- */

/* One optimization run of one operator on one target. Ownership, as for a
 * Case: a session given to kope_mem_session_begin is only read (its
 * descriptive fields, strings borrowed for the call); a session filled by
 * kope_mem_session_get owns every string it holds, and
 * kope_mem_session_release frees them. Release only what _get filled
 * (or a zeroed struct). */
typedef struct kope_mem_session {
  const char *op;        /* operator name (required) */
  const char *target;    /* e.g. "cpu" */
  const char *hw;        /* hardware fingerprint */
  const char *policy;    /* e.g. "tuner", "llm:model-name" */
  const char *budget;    /* free text, e.g. "steps=30 tokens=200000" */
  /* filled on read */
  int64_t id;
  double started, ended;  /* unix seconds; ended 0 while open */
  const char *status;     /* set by session_end, e.g. "done" */
  const char *uid;        /* global identity "<db uuid>:<id>" */
} kope_mem_session;

int kope_mem_session_begin(kope_db *db, const kope_mem_session *s, int64_t *id,
                           kope_err *err);
/* Close a session (status may be NULL) and refresh the digests of every
 * (target, category, layer, thought id) the session touched. */
int kope_mem_session_end(kope_db *db, int64_t id, const char *status, kope_err *err);
int kope_mem_session_get(kope_db *db, int64_t id, kope_mem_session *out, kope_err *err);
void kope_mem_session_release(kope_mem_session *s);

/* ---- Cases ------------------------------------------------------------ */

/* A Case has two parts and one ownership rule for each:
 *   kope_mem_case_in  the fields a caller gives to store a Case. Its
 *       strings are never owned by it: they are borrowed (const) for the
 *       call to kope_mem_case_insert, and nothing of it is ever freed by
 *       the library. Start from kope_mem_case_in_init (NULL = absent).
 *   kope_mem_case     a Case the library hands out (kope_mem_case_get,
 *       kope_mem_case_each): its input part `in`, the scores in in.score
 *       and the fields filled on read. It always owns every string it
 *       holds (in.op ... in.harness, the loaded sources, err_sig, uid,
 *       origin); kope_mem_case_release frees them. Only the library fills
 *       one: a kope_mem_case whose strings the caller set is not to be
 *       released. */
typedef struct kope_mem_case_in {
  int64_t session_id;       /* 0 = none */
  int64_t step;             /* step index in the session */
  int64_t prev_case_id;     /* 0 = root; else must exist */
  const char *op;           /* required */
  const char *category;     /* operator category, e.g. "reduction" */
  const char *target;       /* e.g. "cpu" */
  const char *hw;           /* hardware fingerprint (the host CPU's) */
  /* The device the kernel ran on, as its target names it (cpu: the CPU
   * model; opencl: "platform / device"; cuda: "GPU name (sm_XY)"); "" =
   * unknown (older Cases, stored as NULL). */
  char device[256];
  const char *scene;        /* input scene, e.g. "rows=4096 cols=1024" */
  const char *layer;        /* parallel, tiling, vectorize, memory, ... */
  const char *thought_id;   /* e.g. "parallel.outer=on" */
  const char *thought_title;
  const char *rationale;
  const char *code_before;  /* kernel sources, stored content-addressed */
  const char *code_after;
  const char *diff;         /* optional */
  const char *feedback;     /* compiler/runtime/checker text */
  const char *verdict;      /* required; see kope_mem_verdict_valid */
  /* given: score.correct, .speedup, .speedup_vendor, .confidence; the
   * rest of score (r, label, d, rank) is computed, filled on read */
  kope_mem_score score;
  int64_t tokens_in, tokens_out;
  double eval_seconds;
  const char *harness;      /* evaluator/harness version */
  double created;           /* unix seconds; 0 = now */
  const char *journal;      /* optional Journal entry (Markdown) stored with
                               the Case in the same transaction; not
                               filled on read (kope_mem_journal_list) */
  /* Content hashes of the sources ("" = none). Filled on read; on insert
   * used only for a source whose text is NULL (an import that carries the
   * hash but not the text). */
  char code_before_hash[65], code_after_hash[65], diff_hash[65];
} kope_mem_case_in;

typedef struct kope_mem_case {
  kope_mem_case_in in;      /* first member: the field table relies on it */
  /* filled on read */
  int64_t id;
  int64_t n_succ;           /* number of successors */
  const char *err_sig;      /* normalized error text of a failed Case */
  const char *uid;          /* global identity "<db uuid>:<id>" */
  const char *origin;       /* "imported from <db uuid> (<file>)" or NULL */
} kope_mem_case;

void kope_mem_case_in_init(kope_mem_case_in *in);
/* An empty Case (no strings), safe to release. */
void kope_mem_case_init(kope_mem_case *c);
/* Free every string of c and empty it (c may be NULL). */
void kope_mem_case_release(kope_mem_case *c);
/* Validate and store in; *id is set only after the transaction committed
 * (or, inside kope_db_begin, once the enclosing commit succeeds). The
 * ancestors' d scores are updated in the same transaction. */
int kope_mem_case_insert(kope_db *db, const kope_mem_case_in *in, int64_t *id,
                         kope_err *err);

enum kope_mem_get_flags {
  KOPE_MEM_WITH_CODE = 1     /* also load code_before/code_after/diff */
};
/* Unknown id: KOPE_EINPUT. */
int kope_mem_case_get(kope_db *db, int64_t id, int flags, kope_mem_case *out,
                      kope_err *err);
/* One line describing a Case (id, op, target, step, label, r, d, c,
 * thought, verdict, speedup or error). Caller frees. */
char *kope_mem_case_summary(const kope_mem_case *c);

enum kope_mem_json_flags {
  KOPE_MEM_JSON_BRIEF = 1,   /* only the fields a listing shows */
  KOPE_MEM_JSON_CODE = 2     /* also the kernel sources that are loaded
                                (code_before, code_after, diff) */
};
/* The JSON object of a Case, exactly as kope_mem_export writes it in
 * "cases" (every field of the Case in the same order and form, the
 * thought's fields under "thought"), without the export's uid links
 * (prev_uid, session_uid). New reference; NULL when out of memory. */
json_t *kope_mem_case_json(const kope_mem_case *c, int flags);

/* Exact-match filters; NULL / 0 fields are not applied. */
typedef struct kope_mem_filter {
  const char *op, *category, *layer, *thought_id, *target, *hw;
  const char *label;     /* label name */
  const char *verdict;
  int64_t session_id;
  int max_digests;       /* retrieve only: 0 = (k+1)/2, < 0 = none */
} kope_mem_filter;

/* Calls fn for each Case matching f (NULL = all) in id order; fn returns
 * nonzero to stop. The Case passed is valid only during the call. flags:
 * KOPE_MEM_WITH_CODE and/or KOPE_MEM_EACH_ANCESTORS. */
typedef int (*kope_mem_case_fn)(const kope_mem_case *c, void *ctx);
enum kope_mem_each_flags {
  KOPE_MEM_EACH_ANCESTORS = 2   /* also every ancestor of a match */
};
int kope_mem_case_each(kope_db *db, const kope_mem_filter *f, int flags,
                       kope_mem_case_fn fn, void *ctx, kope_err *err);
/* Ids from the root down to id (inclusive); caller frees *ids. */
int kope_mem_lineage(kope_db *db, int64_t id, int64_t **ids, size_t *n, kope_err *err);
/* Direct successors of id, in id order; caller frees *ids. */
int kope_mem_successors(kope_db *db, int64_t id, int64_t **ids, size_t *n,
                        kope_err *err);
/* Recompute r, label and d of every Case from the graph; *max_change
 * (may be NULL) gets the largest correction made. */
int kope_mem_rescore(kope_db *db, double *max_change, kope_err *err);

/* ---- Journals ---------------------------------------------------------- */

typedef struct kope_mem_journal {
  int64_t id, case_id, session_id;   /* 0 = none */
  double created;
  char *body;                        /* Markdown, owned */
  char *uid;
} kope_mem_journal;

/* Append a Journal entry (Markdown) about case_id and/or session_id. */
int kope_mem_journal_append(kope_db *db, int64_t case_id, int64_t session_id,
                            const char *markdown, int64_t *id, kope_err *err);
/* The Journals of a Case (case_id 0: all), oldest first. Caller frees
 * with kope_mem_journals_free. */
int kope_mem_journal_list(kope_db *db, int64_t case_id, kope_mem_journal **out,
                          size_t *n, kope_err *err);
void kope_mem_journals_free(kope_mem_journal *j, size_t n);

/* ---- digests ----------------------------------------------------------- */

typedef struct kope_mem_digest {
  int64_t id;
  char *target, *category, *layer, *thought_id;   /* "" when absent */
  char *title;            /* the thought's latest title */
  int64_t attempts, n_correct;
  int64_t n_label[KOPE_LABEL_COUNT];   /* by kope_mem_label */
  double median_ratio;
  char *text;             /* the lesson: the policy's text if set, else auto */
  char *auto_text;        /* computed one-liner */
  int has_policy_text;
  int64_t *case_ids;      /* supporting Cases */
  size_t n_case_ids;
  double updated;
} kope_mem_digest;

/* Recompute the digests touched by session_id (0: all of them). Counts
 * are always computed; a text set by kope_mem_digest_set_text survives. */
int kope_mem_digest_refresh(kope_db *db, int64_t session_id, size_t *n_digests,
                            kope_err *err);
/* Digests matching f's target/category/layer/thought_id, most attempts
 * first. Caller frees with kope_mem_digests_free. */
int kope_mem_digest_list(kope_db *db, const kope_mem_filter *f, kope_mem_digest **out,
                         size_t *n, kope_err *err);
void kope_mem_digests_free(kope_mem_digest *d, size_t n);
/* Replace a digest's text with the policy's own reflection (NULL: back to
 * the computed text). */
int kope_mem_digest_set_text(kope_db *db, int64_t digest_id, const char *text,
                             kope_err *err);

/* ---- retrieval --------------------------------------------------------- */

/* What the agent is working on. op and target are the default exact
 * filters; category selects digests; hw is informational (set
 * kope_mem_filter.hw to restrict to one machine: memory imported from
 * other hardware is otherwise included). */
typedef struct kope_mem_state {
  const char *op, *category, *target, *hw;
  const char *text;       /* free text for search (spec, incumbent summary) */
  const char *feedback;   /* the latest feedback, also searched */
} kope_mem_state;

typedef enum kope_mem_rec_kind {
  KOPE_MEM_REC_CASE = 0,
  KOPE_MEM_REC_DIGEST = 1,
  KOPE_MEM_REC_JOURNAL = 2
} kope_mem_rec_kind;

enum kope_mem_match {
  KOPE_MEM_BY_FILTER = 1,   /* exact filters */
  KOPE_MEM_BY_TEXT = 2,     /* full-text search */
  KOPE_MEM_BY_ERROR = 4     /* same normalized error */
};

/* A compact record for context assembly; all strings owned by the list. */
typedef struct kope_mem_rec {
  int kind;               /* kope_mem_rec_kind */
  int64_t id;             /* Case, digest or Journal id */
  int64_t case_id;        /* the Case it is about (0 for a digest) */
  char *op, *target, *layer, *thought_id, *thought_title, *verdict;
  kope_mem_score score;   /* a Case's; label -1 for digests/journals, a
                             digest's median ratio in step_ratio */
  double text_score;      /* bm25 (lower is better), 0 when not by text */
  unsigned match;         /* kope_mem_match bits */
  int64_t fix_case_id;    /* error-driven: the Case that fixed it, 0 none */
  char *summary;          /* one line, ready for a prompt */
  size_t tokens;          /* kope_mem_token_estimate(summary) */
} kope_mem_rec;

typedef struct kope_mem_recs {
  kope_mem_rec *v;
  size_t n, cap;
} kope_mem_recs;

void kope_mem_recs_init(kope_mem_recs *r);
void kope_mem_recs_release(kope_mem_recs *r);

/* Graph-aware retrieval. The relevance pool is the union of the Cases
 * matching the exact filters (f; NULL means op and target of the state)
 * and the full-text hits (bm25) of state->text and state->feedback in
 * Case thoughts/feedback, Journals and digests, from any operator (text
 * hits still honour f's label, layer, target and hw). Searching indexes
 * Cases queued for the full-text index first (a short write), so it sees
 * every committed Case; a read-only handle searches what is indexed. Cases are bucketed
 * by label (effective, partial, ineffective, negative) and ordered inside
 * a bucket by d(v) * c_v; the k slots are shared round-robin between the
 * non-empty buckets so failure modes appear next to successes. Appends up
 * to k Case records (bucket order, then rank), then digest records (exact
 * target/category matches and text hits; count per f->max_digests). */
int kope_mem_retrieve(kope_db *db, const kope_mem_state *state,
                      const kope_mem_filter *f, size_t k, kope_mem_recs *out,
                      kope_err *err);
/* Error-driven retrieval: past failed Cases whose feedback has the same
 * normalized error as feedback, each with what fixed it (the best correct
 * successor, else the session's next correct step) in fix_case_id and the
 * summary. Those with a fix come first; at most k. f may restrict op or
 * target (NULL: any). */
int kope_mem_fixes(kope_db *db, const char *feedback, const kope_mem_filter *f,
                   size_t k, kope_mem_recs *out, kope_err *err);
/* Full-text search over Cases, Journals and digests (all terms must
 * match), best bm25 first, at most limit records. */
int kope_mem_search(kope_db *db, const char *text, size_t limit, kope_mem_recs *out,
                    kope_err *err);

/* ---- statistics, export, import, gc ----------------------------------- */

typedef struct kope_mem_count {
  char *key;
  int64_t n;
} kope_mem_count;

typedef struct kope_mem_stats {
  int schema;
  int64_t cases, sessions, journals, digests, sources, source_bytes, imports,
      hw_profiles;
  kope_mem_count *by_op, *by_target, *by_label, *by_verdict;
  size_t n_op, n_target, n_label, n_verdict;
} kope_mem_stats;

int kope_mem_stats_get(kope_db *db, kope_mem_stats *st, kope_err *err);
void kope_mem_stats_release(kope_mem_stats *st);

/* Store a hardware profile (JSON text) under its fingerprint. */
int kope_mem_hw_put(kope_db *db, const char *fingerprint, const char *profile_json,
                    kope_err *err);

typedef enum kope_mem_format {
  KOPE_MEM_FMT_JSON = 0,
  KOPE_MEM_FMT_MD = 1,
  KOPE_MEM_FMT_DOT = 2
} kope_mem_format;

enum kope_mem_export_flags {
  KOPE_MEM_EXPORT_NO_SOURCES = 1   /* json: leave kernel sources out */
};

/* Write the Cases matching f (NULL = all; ancestors of a match always
 * come along so the forest stays whole) to out. json: one document
 * {"format":"kope-memory", "cases":[...], "sessions", "journals",
 * "sources", "digests", "hw_profiles"}; md: a table and the forest; dot:
 * a Graphviz digraph. */
int kope_mem_export(kope_db *db, FILE *out, int format, const kope_mem_filter *f,
                    int flags, kope_err *err);
/* The experience forest of the Cases matching f as indented text. */
int kope_mem_tree(kope_db *db, FILE *out, const kope_mem_filter *f, kope_err *err);

typedef struct kope_mem_import_stats {
  int64_t import_id;
  int64_t cases_new, cases_known, sessions_new, journals_new, sources_new,
      hw_new;
} kope_mem_import_stats;

/* Merge a json export (from another machine or target) in one
 * transaction. New Cases get fresh local ids and keep their global uid
 * and provenance; Cases already present (same uid) are skipped, so an
 * import is idempotent. Bad file: KOPE_EINPUT, nothing changed. */
int kope_mem_import(kope_db *db, const char *path, kope_mem_import_stats *st,
                    kope_err *err);

typedef struct kope_mem_gc_opts {
  int64_t keep_journals;  /* keep the newest N Journals (< 0: default 10000) */
  int64_t keep_sources;   /* keep sources of the newest N Cases and of the
                             best correct Case per op/target (< 0: 10000) */
  int dry_run;
  int vacuum;             /* compact the file afterwards */
} kope_mem_gc_opts;

typedef struct kope_mem_gc_stats {
  int64_t journals_dropped, sources_dropped, source_bytes_dropped;
} kope_mem_gc_stats;

/* Drop old Journals and kernel sources; Cases (and their source hashes)
 * stay, so the graph and its scores are unchanged. */
int kope_mem_gc(kope_db *db, const kope_mem_gc_opts *o, kope_mem_gc_stats *st,
                kope_err *err);

/* PRAGMA integrity_check plus a check that every stored r, label and d
 * equals a recomputation from the graph. KOPE_OK when both pass; the
 * findings are appended to report (may be NULL). */
int kope_mem_check(kope_db *db, kope_buf *report, kope_err *err);

#ifdef __cplusplus
}
#endif
#endif
