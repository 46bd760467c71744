/*
 * The inside of a target, shared by the files of src/target/ only: the
 * table each target fills in (what the evaluator asks through
 * target/target.h is answered from it), the handle, toolchain runs, and
 * the content-addressed cache of trusted builds (reference, vendor,
 * runtime objects) keyed by content hash.
 */
#ifndef KOPE_TARGET_INT_H
#define KOPE_TARGET_INT_H

#include "kope/target.h"
#include "core/proc.h"
#include "target/target.h"

typedef struct kope_target_vt {
  const char *name;
  const char *language;
  const char *ext;
  /* Extra flags a candidate may add; an entry ending in '*' is a prefix. */
  const char *const *allowed_flags;
  int (*init)(kope_target *t, kope_err *err);
  /* KOPE_OK with out->ok 0 for a compile error; KOPE_EENV when the
   * toolchain itself failed to run. */
  int (*build)(kope_target *t, const kope_build_req *req, kope_build_out *out,
               kope_err *err);
  /* Environment for a worker of this role. */
  void (*worker_env)(kope_target *t, kope_build_role role, int threads, kope_env *env);
  char *(*describe)(kope_target *t, const kope_hw *hw);
  /* The device kernels run on, as the target names it, into buf:
   * KOPE_OK, or KOPE_EENV when there is none (cuda without a GPU). */
  int (*device)(kope_target *t, char *buf, size_t size, kope_err *err);
  /* Whether kernels can run here (kope_target_check_device); NULL: always. */
  int (*check_device)(kope_target *t, kope_err *err);
  /* The decisions the evaluator asks of a target (target/target.h). */
  kope_target_gate gate;         /* the source gate of its language */
  int gate_artifacts;            /* the gate reads the C build's .i, .s, .o */
  kope_op_vendor_lang vendor;    /* its own vendor baseline's language */
  int borrows_c_vendor;          /* without one of its own, times the C one */
  int build_only_vendor;         /* build-only evaluations build its vendor */
  int mem_limited;               /* workers get an address-space limit */
  long worker_fsize;             /* RLIMIT_FSIZE of workers (0: no writes) */
  int host_roofline;             /* the host's hardware profile applies */
} kope_target_vt;

struct kope_target {
  const kope_target_vt *vt;
  char compiler[256];
  char default_flags[128];
  char *cache_dir;          /* <kope_home>/cache */
  char device[256];         /* kope_target_device, once found */
  int device_state;         /* 0 not asked yet, 1 found, -1 none */
  char *want_device;        /* kope_target_opts.device, or the environment's;
                             * NULL: the first (owned) */
  char *cuda_arch;          /* kope_target_opts.cuda_arch, or the environment's;
                             * NULL: the default (owned) */
};

/* A toolchain run (compiler, linker, build helper) with limits. */
typedef struct kope_tool_run {
  const char *const *argv;
  const char *cwd;
  const kope_env *env;      /* NULL: kope's clean environment */
  double timeout_s;         /* wall and CPU limit; <= 0: default_s */
  double default_s;
  long mem_mb;              /* address-space limit; 0: none */
  long fsize_bytes;         /* largest file it may write */
  const char *what;         /* "compiler", "build": names it in the kill line */
  const char *signal_hint;  /* appended to the killed-by-signal line, "" or NULL */
  const char *sandbox_dir;  /* not NULL: run sandboxed, this directory writable only
                             * (kope_sandbox_enter_compile; untrusted source) */
} kope_tool_run;

/* Run a tool; 1 it exited 0, 0 it failed (the log says why, with a line
 * when it was killed), -1 it could not run (the log holds the error).
 * *log gets the output (caller frees); *code, when not NULL, the exit
 * status or -1; *secs, when not NULL, grows by the wall time. */
int kope_target_run_tool(const kope_tool_run *t, char **log, int *code, double *secs);
/* Fills the fresh directory dir with a cache entry (ctx: the caller's):
 * KOPE_OK, else an error and nothing is stored. */
typedef int (*kope_cache_fill_fn)(kope_target *t, const char *dir, void *ctx, kope_err *err);
/* The one content-addressed cache of trusted builds: the entry
 * <cache>/<entry> ("obj/runtime-<hash>": the name carries the content
 * hash of everything it depends on) is complete when its file marker
 * exists. Then *dir is its path and *cached 1; else fill runs in a fresh
 * <entry>.tmpXXXXXX beside it, which is renamed into place when fill
 * returned KOPE_OK and left the marker (*dir then set, caller frees); a
 * fill without the marker stores nothing (*dir NULL, KOPE_OK: a compile
 * error the caller reports). cached may be NULL. An entry NULL (a name
 * that could not be allocated) is KOPE_ENOMEM. */
int kope_target_cache_entry(kope_target *t, const char *entry, const char *marker,
                            kope_cache_fill_fn fill, void *ctx, char **dir, int *cached,
                            kope_err *err);
/* The name of a cache entry: fmt's text, "-" and the first 16 hex digits
 * of the SHA-256 of blob (everything the entry depends on). Caller frees;
 * NULL when blob is NULL or out of memory (kope_target_cache_entry then
 * reports KOPE_ENOMEM). */
char *kope_target_cache_name(const char *blob, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* kope_target_cache_entry for an entry that must exist after its fill:
 * its directory (caller frees), or NULL with err set, "target T: <what>
 * was not built" when fill stored nothing. */
char *kope_target_cached_dir(kope_target *t, const char *entry, const char *marker,
                             kope_cache_fill_fn fill, void *ctx, const char *what,
                             kope_err *err);
/* Write the embedded files named in names (NULL-terminated) into dir, each
 * under its own name. KOPE_OK, or an error (a missing file: KOPE_EINTERNAL). */
int kope_target_write_embedded(const char *dir, const char *const *names, kope_err *err);
/* Split the flag string flags (NULL: none) at spaces into argv[*n...],
 * at most up to max - 1 entries; the copy the entries point into is kept
 * in *hold (caller frees). 0, or -1 when out of memory (argv unchanged). */
int kope_target_add_flags(const char **argv, int *n, int max, const char *flags, char **hold);
/* Builds a worker into the fresh directory dir (ctx: the caller's). */
typedef int (*kope_build_in_fn)(kope_target *t, const kope_build_req *req, const char *dir,
                                kope_build_out *out, kope_err *err, void *ctx);
/* The artifact cache of trusted builds: when <cache>/build/<name>/worker
 * exists, out says cached; else build_in runs in a fresh <name>.tmpXXXXXX
 * beside it, which is renamed into place when it built, and out->exe
 * (and out->obj, when build_in set one) then point into <name>. name
 * carries the content hash of everything the build depends on. */
int kope_target_cached_build(kope_target *t, const char *name, kope_build_in_fn build_in,
                             const kope_build_req *req, void *ctx, kope_build_out *out,
                             kope_err *err);
/* Trim compiler output for a prompt: drop the work directory from paths,
 * keep error/warning lines with their context, de-duplicate, cap at
 * max_lines. Caller frees; NULL when out of memory. */
char *kope_trim_diagnostics(const char *text, const char *workdir, int max_lines);
/* C source of the per-operator shim that unpacks kope_child_args into a
 * call of the kernel. Caller frees. */
char *kope_shim_source(const kope_op *op);
/* Contents of an embedded file (child runtime sources). */
const char *kope_embedded_file(const char *name, size_t *size);

extern const kope_target_vt kope_target_cpu;
extern const kope_target_vt kope_target_cuda;

/* cuda.c: run the device probe (built once, cached). KOPE_OK with desc
 * (may be NULL) set to "NAME (sm_XY)" of device 0, or KOPE_EENV "no CUDA
 * device (cudaGetDeviceCount: ...)". */
int kope_cuda_device_check(kope_target *t, char *desc, size_t size, kope_err *err);

#endif
