/*
 * The environment a benchmark ran in, recorded with its results: kope and
 * harness versions, the host, the target's compiler and default flags,
 * threads, and the hardware profile (CPU model, cores, caches, measured
 * peak FLOP/s and bandwidth that the roofline uses).
 */
#include <stdlib.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "kope/eval.h"
#include "kope/hw.h"
#include "kope/target.h"
#include "bench/bench_int.h"

static void add_target(json_t *env, const char *name)
{
  kope_err err;
  kope_target *t;

  kope_err_clear(&err);
  if (!(t = kope_target_open(name, &err))) {
    json_object_set_new(env, "target_error", json_string(err.msg));
    return;
  }
  json_object_set_new(env, "compiler", json_string(kope_target_compiler(t)));
  json_object_set_new(env, "cflags", json_string(kope_target_default_flags(t)));
  kope_target_free(t);
}

static void add_hw(json_t *env)
{
  kope_err err;
  kope_hw *hw;

  kope_err_clear(&err);
  if (!(hw = kope_hw_get(NULL, 0, &err))) {
    json_object_set_new(env, "hw_error", json_string(err.msg));
    return;
  }
  json_object_set_new(env, "cpu", json_string(kope_hw_cpu_model(hw)));
  json_object_set_new(env, "cores", json_integer(kope_hw_cores(hw)));
  json_object_set_new(env, "logical_cpus", json_integer(kope_hw_threads(hw)));
  json_object_set_new(env, "peak_gflops", json_real(kope_hw_peak_gflops(hw)));
  json_object_set_new(env, "bandwidth_gbs", json_real(kope_hw_bandwidth_gbs(hw)));
  json_object_set_new(env, "hw_fingerprint", json_string(kope_hw_fingerprint(hw)));
  json_object_set_new(env, "hw", kope_hw_to_json(hw));
  kope_hw_free(hw);
}

json_t *kope_bench_environment(const kope_bench_opts *o)
{
  json_t *env = json_object();
  struct utsname u;
  char when[32], host[256] = "";
  time_t now = time(NULL);

  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  gethostname(host, sizeof host - 1);
  json_object_set_new(env, "kope_version", json_string(KOPE_VERSION));
  json_object_set_new(env, "harness_version", json_string(KOPE_HARNESS_VERSION));
  json_object_set_new(env, "date", json_string(when));
  json_object_set_new(env, "host", json_string(host));
  if (uname(&u) == 0)
    json_object_set_new(env, "os", json_sprintf("%s %s %s", u.sysname, u.release, u.machine));
  json_object_set_new(env, "target", json_string(o->target ? o->target : "cpu"));
  json_object_set_new(env, "threads", json_integer(o->threads));
  add_target(env, o->target ? o->target : "cpu");
  add_hw(env);
  return env;
}
