/*
 * The one table of a Case's fields. Everything that lists the fields of a
 * kope_mem_case is generated from MEM_CASE_FIELDS below: the SQLite column
 * lists and the row reading and binding (sq_case.c, sq_open.c), the
 * release of its strings, the Case-to-JSON writer used by `kope memory
 * export` and by the CLI (kope_mem_case_json), and the import's reading
 * of a JSON Case (import.c), and both engines' column lists, parameters
 * and row reading (sq_case.c, pg_case.c). Adding a Case field is: its
 * member in kope/mem.h (kope_mem_case_in for a field given on insert),
 * one row here, and the schema migration that adds its column in each
 * engine (sq_schema.c, pg_schema.c, KOPE_DB_SCHEMA_VERSION); whoever
 * produces the value then sets it (the agent: agent/record.c). A new kind
 * of field also needs its case in the per-kind switches (case_fields.c,
 * import.c, sq_case.c, pg_case.c).
 *
 * X(name, kind, place, column, group, key, aux, flags), in the order of
 * the JSON object (jansson keeps insertion order, so this order is the
 * export format's):
 *   name    the member of kope_mem_case, as a path (in.op: the field
 *           given on insert, in kope_mem_case_in; in.score.speedup: in
 *           its kope_mem_score) (SRC: the text member; its hash lives in
 *           name##_hash, char[65]). Every CASE field lies in `in`, the
 *           first member, so its offset is also its offset in a
 *           kope_mem_case_in (MF_IN_AT)
 *   kind    how the value is held, stored and written (the SQL type an
 *           engine gives its column in brackets):
 *             LINK   int64 id of another row, 0 = none (SQL NULL, JSON
 *                    null) [BIGINT]; export adds aux = its uid, import
 *                    resolves the link through that uid
 *             INT    int64 [BIGINT]
 *             BOOL   int, stored 0/1, JSON true/false [INTEGER]
 *             TEXT   const char *, NULL = absent [TEXT]
 *             BUF    char[], "" = absent (SQL NULL, JSON null) [TEXT]
 *             REAL   double, non-finite = unknown (SQL NULL, JSON null)
 *                    [DOUBLE PRECISION]
 *             NUM    double, always a number [DOUBLE PRECISION]
 *             TIME   double unix seconds; 0 on insert means now
 *                    [DOUBLE PRECISION]
 *             LABEL  int kope_mem_label, its name in JSON [INTEGER]
 *             SRC    kernel source stored content-addressed: the column
 *                    and key hold name##_hash [TEXT, 64 hex digits or
 *                    NULL]; aux is the JSON key of the text itself
 *   place   where the value lives:
 *             CASE     a column of the cases table: inserted, read back,
 *                      exported and imported
 *             SCORE    a column of the narrow score table (kept by the
 *                      scoring walk; the engine writes it from mem_node):
 *                      read back and exported
 *             DERIVED  a column of cases the library computes on insert
 *                      (the row id, the error signature): read back and
 *                      exported, never imported
 *             ENGINE   not a column: the engine makes it on read (the
 *                      global uid, the provenance text); exported only
 *   column  the SQL column name (NULL for ENGINE)
 *   group   "" for a top-level JSON key, else the sub-object holding it
 *   key     the JSON key
 *   aux     LINK: the JSON key of the linked row's uid; SRC: the JSON key
 *           of the source text; NULL otherwise
 *   flags   MF_BRIEF: part of the brief JSON (kope memory list --json);
 *           MF_TO_CASE / MF_TO_SESSION: what a LINK points at
 *
 * kope_mem_case.journal is input only (stored as a Journal, not a column)
 * and so is not in the table.
 */
#ifndef KOPE_MEM_CASE_FIELDS_H
#define KOPE_MEM_CASE_FIELDS_H

#include <stddef.h>
#include <jansson.h>
#include "kope/mem.h"

#define MEM_CASE_FIELDS(X)                                                                     \
  X(id, INT, DERIVED, "id", "", "case_id", NULL, MF_BRIEF)                                     \
  X(uid, TEXT, ENGINE, NULL, "", "uid", NULL, 0)                                               \
  X(in.prev_case_id, LINK, CASE, "prev_id", "", "prev_case_id", "prev_uid",                    \
    MF_BRIEF | MF_TO_CASE)                                                                     \
  X(in.session_id, LINK, CASE, "session_id", "", "session_id", "session_uid",                  \
    MF_BRIEF | MF_TO_SESSION)                                                                  \
  X(in.step, INT, CASE, "step", "", "step", NULL, MF_BRIEF)                                    \
  X(in.op, TEXT, CASE, "op", "", "op", NULL, MF_BRIEF)                                         \
  X(in.category, TEXT, CASE, "category", "", "category", NULL, MF_BRIEF)                       \
  X(in.target, TEXT, CASE, "target", "", "target", NULL, MF_BRIEF)                             \
  X(in.hw, TEXT, CASE, "hw", "", "hw", NULL, 0)                                                \
  X(in.device, BUF, CASE, "device", "", "device", NULL, MF_BRIEF)                              \
  X(in.scene, TEXT, CASE, "scene", "", "scene", NULL, 0)                                       \
  X(in.verdict, TEXT, CASE, "verdict", "", "verdict", NULL, MF_BRIEF)                          \
  X(in.score.correct, BOOL, CASE, "correct", "", "correct", NULL, MF_BRIEF)                    \
  X(in.score.speedup, REAL, CASE, "speedup", "", "speedup", NULL, MF_BRIEF)                    \
  X(in.score.speedup_vendor, REAL, CASE, "speedup_vendor", "", "speedup_vendor", NULL, 0)      \
  X(in.score.step_ratio, NUM, SCORE, "step_ratio", "", "step_ratio", NULL, MF_BRIEF)           \
  X(in.score.label, LABEL, SCORE, "label", "", "label", NULL, MF_BRIEF)                        \
  X(in.score.d_score, NUM, SCORE, "d_score", "", "d_score", NULL, MF_BRIEF)                    \
  X(in.score.confidence, NUM, CASE, "confidence", "", "confidence", NULL, MF_BRIEF)            \
  X(in.score.rank, NUM, SCORE, "rank", "", "rank", NULL, 0)                                    \
  X(n_succ, INT, SCORE, "n_succ", "", "n_succ", NULL, 0)                                       \
  X(in.layer, TEXT, CASE, "layer", "thought", "layer", NULL, MF_BRIEF)                         \
  X(in.thought_id, TEXT, CASE, "thought_id", "thought", "id", NULL, MF_BRIEF)                  \
  X(in.thought_title, TEXT, CASE, "thought_title", "thought", "title", NULL, MF_BRIEF)         \
  X(in.rationale, TEXT, CASE, "rationale", "thought", "rationale", NULL, 0)                    \
  X(in.feedback, TEXT, CASE, "feedback", "", "feedback", NULL, 0)                              \
  X(err_sig, TEXT, DERIVED, "err_sig", "", "err_sig", NULL, 0)                                 \
  X(in.code_before, SRC, CASE, "code_before_hash", "", "code_before_hash", "code_before", 0)   \
  X(in.code_after, SRC, CASE, "code_after_hash", "", "code_after_hash", "code_after", 0)       \
  X(in.diff, SRC, CASE, "diff_hash", "", "diff_hash", "diff", 0)                               \
  X(in.tokens_in, INT, CASE, "tokens_in", "", "tokens_in", NULL, 0)                            \
  X(in.tokens_out, INT, CASE, "tokens_out", "", "tokens_out", NULL, 0)                         \
  X(in.eval_seconds, REAL, CASE, "eval_seconds", "", "eval_seconds", NULL, 0)                  \
  X(in.harness, TEXT, CASE, "harness", "", "harness", NULL, 0)                                 \
  X(in.created, TIME, CASE, "created", "", "created", NULL, 0)                                 \
  X(origin, TEXT, ENGINE, NULL, "", "origin", NULL, 0)

enum mem_field_kind { MF_LINK, MF_INT, MF_BOOL, MF_TEXT, MF_BUF, MF_REAL, MF_NUM, MF_TIME,
                      MF_LABEL, MF_SRC };
enum mem_field_place { MF_P_CASE, MF_P_SCORE, MF_P_DERIVED, MF_P_ENGINE };
enum mem_field_flags { MF_BRIEF = 1, MF_TO_CASE = 2, MF_TO_SESSION = 4 };

/* One row of the table, with where its member sits in kope_mem_case. */
typedef struct mem_field {
  const char *name;
  int kind, place;
  const char *column, *group, *key, *aux;
  unsigned flags;
  size_t off;        /* offsetof(kope_mem_case, name) */
  size_t hash_off;   /* SRC: offsetof(kope_mem_case, name##_hash), else 0 */
  size_t size;       /* sizeof the member (BUF: the buffer's size) */
} mem_field;

/* The table as an array, in table order. */
extern const mem_field mem_case_fields[];
extern const size_t mem_n_case_fields;

/* The member of c that f describes, as type T (mf_str for TEXT and SRC). */
typedef const char *mf_str;
#define MF_AT(c, f, T) ((T *)((char *)(c) + (f)->off))
#define MF_CAT(c, f, T) ((const T *)((const char *)(c) + (f)->off))
/* The same for a field given on insert (place CASE: it lies in `in`, the
 * first member of kope_mem_case) of a kope_mem_case_in. */
#define MF_IN_AT(in, f, T) ((T *)((char *)(in) + (f)->off))
#define MF_IN_CAT(in, f, T) ((const T *)((const char *)(in) + (f)->off))
_Static_assert(offsetof(kope_mem_case, in) == 0, "kope_mem_case.in is its first member");
/* The hash buffer of a SRC field. */
#define MF_HASH(c, f) ((char *)(c) + (f)->hash_off)
#define MF_CHASH(c, f) ((const char *)(c) + (f)->hash_off)

/* Number of fields in place p, as a constant expression:
 * (0 MEM_CASE_FIELDS(MF_COUNT_CASE)) counts the CASE columns. */
#define MF_COUNT_IF_CASE 1
#define MF_COUNT_IF_SCORE 0
#define MF_COUNT_IF_DERIVED 0
#define MF_COUNT_IF_ENGINE 0
#define MF_COUNT_CASE(name, kind, place, ...) + MF_COUNT_IF_##place

/* Resolves a LINK field's id to the linked row's uid (NULL: none), for
 * the export's prev_uid and session_uid. */
typedef const char *(*mem_link_fn)(const mem_field *f, int64_t id, void *ctx);

enum mem_json_private_flags { MEM_JSON_LINKS = 0x100 };

/* The JSON object of c: the fields in table order (KOPE_MEM_JSON_BRIEF:
 * only the MF_BRIEF ones; KOPE_MEM_JSON_CODE: also the source texts that
 * are loaded; MEM_JSON_LINKS: each LINK followed by its uid from link).
 * New reference; NULL when out of memory. */
json_t *mem_case_json(const kope_mem_case *c, int flags, mem_link_fn link, void *ctx);

/* The texts of c's SRC fields, from their hashes, through get (an
 * engine's source_get on impl); a text no longer stored stays NULL. */
int mem_case_load_code(kope_mem_case *c,
                       int (*get)(void *impl, const char *hash, char **body, kope_err *err),
                       void *impl, kope_err *err);

#endif
