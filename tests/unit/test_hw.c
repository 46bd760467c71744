/*
 * Unit tests for the hardware profile (src/hw/): detection gives
 * sane facts, measurement gives plausible positive figures, the cache is
 * reused when it matches and re-measured when it is corrupt, incomplete or
 * from other hardware, an unwritable cache is not an error, and the
 * roofline bound and renderings follow from the figures. Each measuring
 * call takes about a second.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/core.h"
#include "kope/hw.h"

static char g_dir[64];

static char *tmp_path(const char *name)
{
  return kope_path_join(g_dir, name);
}

static void write_bytes(const char *path, const void *data, size_t len)
{
  kope_err err = {0, ""};

  assert_int_equal(kope_file_write_atomic(path, data, len, &err), KOPE_OK);
}

static void write_text(const char *path, const char *text)
{
  write_bytes(path, text, strlen(text));
}

/* Per-level bandwidths of a written cache, as multiples of DRAM's. */
#define LV_L1 40.0
#define LV_L2 20.0
#define LV_L3 5.0

/* A cache document with this machine's fingerprint and the given peaks;
 * its level table is LV_* x bw (all threads), half that on one thread. */
static void write_cache(const char *path, const char *fingerprint, double peak,
                        double bw)
{
  json_t *j = json_pack("{s:s, s:f, s:f, s:s, s:f, s:{s:{s:f,s:f}, s:{s:f,s:f}, "
                        "s:{s:f,s:f}, s:{s:f,s:f}}}",
                        "fingerprint", fingerprint, "peak_gflops_fp32", peak,
                        "bandwidth_gbs", bw, "measured_at", "2024-01-01T00:00:00Z",
                        "peak_gflops_fp32_one_thread", peak / 2, "bandwidth_levels",
                        "l1d", "all_threads_gbs", LV_L1 * bw, "one_thread_gbs", LV_L1 * bw / 2,
                        "l2", "all_threads_gbs", LV_L2 * bw, "one_thread_gbs", LV_L2 * bw / 2,
                        "l3", "all_threads_gbs", LV_L3 * bw, "one_thread_gbs", LV_L3 * bw / 2,
                        "dram", "all_threads_gbs", bw, "one_thread_gbs", bw / 2);
  char *text = json_dumps(j, 0);

  assert_non_null(text);
  write_text(path, text);
  free(text);
  json_decref(j);
}

static char *this_fingerprint(void)
{
  kope_err err = {0, ""};
  kope_hw *hw = kope_hw_detect(&err);
  char *fp;

  assert_non_null(hw);
  fp = kope_strdup(kope_hw_fingerprint(hw));
  kope_hw_free(hw);
  return fp;
}

static kope_hw *get_ok(const char *path, int refresh)
{
  kope_err err = {0, ""};
  kope_hw *hw = kope_hw_get(path, refresh, &err);

  if (!hw)
    fail_msg("kope_hw_get: %s", err.msg);
  assert_int_equal(err.code, KOPE_OK);
  return hw;
}

static void assert_measured(const kope_hw *hw)
{
  double peak = kope_hw_peak_gflops(hw), bw = kope_hw_bandwidth_gbs(hw);

  assert_int_equal(kope_hw_from_cache(hw), 0);
  assert_true(peak > 0 && peak < 100000);
  assert_true(bw > 0 && bw < 10000);
  assert_true(kope_hw_measure_seconds(hw) > 0);
}

static int setup(void **state)
{
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/kope-test-hw-XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
  (void)state;
  kope_rmtree(g_dir);
  return 0;
}

static void test_detect(void **state)
{
  kope_err err = {0, ""};
  kope_hw *hw = kope_hw_detect(&err), *again;
  const char *simd;
  int lv;

  (void)state;
  assert_non_null(hw);
  assert_true(strlen(kope_hw_cpu_model(hw)) > 0);
  assert_true(kope_hw_threads(hw) >= 1);
  assert_true(kope_hw_cores(hw) >= 1);
  assert_true(kope_hw_cores(hw) <= kope_hw_threads(hw));
  assert_true(strlen(kope_hw_compiler(hw)) > 0);
  assert_true(strlen(kope_hw_fingerprint(hw)) > 0);
  for (lv = 1; lv <= 3; lv++)
    assert_true(kope_hw_cache_bytes(hw, lv) >= 0);
  assert_int_equal(kope_hw_cache_bytes(hw, 0), 0);
  assert_int_equal(kope_hw_cache_bytes(hw, 4), 0);
  assert_true(kope_hw_peak_gflops(hw) == 0.0);
  assert_true(kope_hw_bandwidth_gbs(hw) == 0.0);
  assert_int_equal(kope_hw_from_cache(hw), 0);
  assert_true(kope_hw_roofline_seconds(hw, 1e9, 1e9) == 0.0);
  simd = kope_hw_simd(hw);
  assert_non_null(simd);
  print_message("model=%s cores=%d threads=%d simd=[%s] L1d=%ld L2=%ld L3=%ld\n",
                kope_hw_cpu_model(hw), kope_hw_cores(hw), kope_hw_threads(hw),
                simd, kope_hw_cache_bytes(hw, 1), kope_hw_cache_bytes(hw, 2),
                kope_hw_cache_bytes(hw, 3));
#if defined(__x86_64__)
  assert_true(kope_hw_has_feature(hw, "sse2"));
#endif
  again = kope_hw_detect(&err);
  assert_non_null(again);
  assert_string_equal(kope_hw_fingerprint(hw), kope_hw_fingerprint(again));
  kope_hw_free(again);
  kope_hw_free(hw);
}

static void test_has_feature_tokens(void **state)
{
  kope_err err = {0, ""};
  kope_hw *hw = kope_hw_detect(&err);
  char *copy, *tok, *save = NULL;

  (void)state;
  assert_non_null(hw);
  copy = kope_strdup(kope_hw_simd(hw));
  for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
    assert_true(kope_hw_has_feature(hw, tok));
  free(copy);
  assert_false(kope_hw_has_feature(hw, ""));
  assert_false(kope_hw_has_feature(hw, NULL));
  assert_false(kope_hw_has_feature(hw, "no_such_feature"));
  /* Prefixes of reported features are not features. */
  assert_false(kope_hw_has_feature(hw, "sse"));
  assert_false(kope_hw_has_feature(hw, "avx512"));
  assert_false(kope_hw_has_feature(NULL, "sse2"));
  kope_hw_free(hw);
}

static void test_measure_then_cache(void **state)
{
  char *path = tmp_path("hw.json");
  kope_hw *first, *second, *third;

  (void)state;
  first = get_ok(path, 0);
  assert_measured(first);
  assert_true(kope_is_file(path));
  print_message("peak %.1f GFLOP/s, bandwidth %.1f GB/s, measured in %.2f s\n",
                kope_hw_peak_gflops(first), kope_hw_bandwidth_gbs(first),
                kope_hw_measure_seconds(first));

  second = get_ok(path, 0);
  assert_int_equal(kope_hw_from_cache(second), 1);
  assert_true(kope_hw_peak_gflops(second) == kope_hw_peak_gflops(first));
  assert_true(kope_hw_bandwidth_gbs(second) == kope_hw_bandwidth_gbs(first));
  assert_string_equal(kope_hw_fingerprint(second), kope_hw_fingerprint(first));
  assert_string_equal(kope_hw_cpu_model(second), kope_hw_cpu_model(first));
  assert_true(kope_hw_measure_seconds(second) == 0.0);

  third = get_ok(path, 1);
  assert_measured(third);
  kope_hw_free(third);
  kope_hw_free(second);
  kope_hw_free(first);
  free(path);
}

static void test_default_cache_path(void **state)
{
  char *home = kope_home_dir();
  char *path = kope_path_join(home, "hw.json");
  kope_hw *hw;

  (void)state;
  hw = get_ok(NULL, 0);
  assert_true(kope_hw_peak_gflops(hw) > 0);
  assert_true(kope_is_file(path));
  kope_hw_free(hw);
  hw = get_ok(NULL, 0);
  assert_int_equal(kope_hw_from_cache(hw), 1);
  kope_hw_free(hw);
  free(path);
  free(home);
}

static void test_corrupt_cache(void **state)
{
  static const char binary[] = {'\x7f', 'E', 'L', 'F', '\0', '\xff', '{', '\0'};
  char *path = tmp_path("corrupt.json");
  char *fp = this_fingerprint();
  char *bad_values;
  kope_hw *hw;
  int i;

  (void)state;
  bad_values = kope_sprintf("{\"fingerprint\": \"%s\", \"peak_gflops_fp32\": "
                            "\"fast\", \"bandwidth_gbs\": -3}", fp);
  for (i = 0; i < 3; i++) {
    if (i == 0)
      write_text(path, "this is not json {{{ \"fingerprint\":");
    else if (i == 1)
      write_bytes(path, binary, sizeof binary);
    else
      write_text(path, bad_values);
    hw = get_ok(path, 0);
    assert_measured(hw);
    kope_hw_free(hw);
  }
  /* The last measurement replaced the bad file with a good one. */
  hw = get_ok(path, 0);
  assert_int_equal(kope_hw_from_cache(hw), 1);
  kope_hw_free(hw);
  free(bad_values);
  free(fp);
  free(path);
}

static void test_stale_fingerprint(void **state)
{
  char *path = tmp_path("stale.json");
  char *fp = this_fingerprint();
  kope_hw *hw;

  (void)state;
  write_cache(path, "0000deadbeef0000", 1.5, 2.5);
  hw = get_ok(path, 0);
  assert_measured(hw);
  assert_string_equal(kope_hw_fingerprint(hw), fp);
  kope_hw_free(hw);
  hw = get_ok(path, 0);
  assert_int_equal(kope_hw_from_cache(hw), 1);
  kope_hw_free(hw);
  free(fp);
  free(path);
}

static void test_unwritable_cache(void **state)
{
  char *blocker = tmp_path("blocker");
  char *path = kope_path_join(blocker, "sub/hw.json");
  kope_hw *hw;

  (void)state;
  write_text(blocker, "a file where a directory would have to be\n");
  hw = get_ok(path, 0);
  assert_measured(hw);
  kope_hw_free(hw);
  free(path);
  free(blocker);
}

/* A profile with known peaks, made through a hand-written cache. */
static kope_hw *known_profile(const char *name, double peak, double bw)
{
  char *path = tmp_path(name);
  char *fp = this_fingerprint();
  kope_hw *hw;

  write_cache(path, fp, peak, bw);
  hw = get_ok(path, 0);
  assert_int_equal(kope_hw_from_cache(hw), 1);
  free(fp);
  free(path);
  return hw;
}

static void test_roofline(void **state)
{
  kope_hw *hw = known_profile("known.json", 100.0, 10.0);

  (void)state;
  assert_float_equal(kope_hw_peak_gflops(hw), 100.0, 0.0);
  assert_float_equal(kope_hw_bandwidth_gbs(hw), 10.0, 0.0);
  /* 100 GFLOP/s, 10 GB/s: ridge at 10 FLOP/byte. */
  assert_float_equal(kope_hw_roofline_seconds(hw, 1e9, 0), 0.01, 1e-12);
  assert_float_equal(kope_hw_roofline_seconds(hw, 0, 1e9), 0.1, 1e-12);
  assert_float_equal(kope_hw_roofline_seconds(hw, 1e10, 1e8), 0.1, 1e-12);
  assert_float_equal(kope_hw_roofline_seconds(hw, 2e10, 1e9), 0.2, 1e-12);
  assert_float_equal(kope_hw_roofline_seconds(hw, 1e9, 1e9), 0.1, 1e-12);
  assert_float_equal(kope_hw_roofline_seconds(hw, 0, 0), 0.0, 0.0);
  assert_float_equal(kope_hw_roofline_seconds(NULL, 1e9, 1e9), 0.0, 0.0);
  kope_hw_free(hw);
}

/* The level a working set falls in follows the detected cache sizes, and
 * the roofline uses that level's bandwidth. */
static void test_levels(void **state)
{
  kope_hw *hw = known_profile("levels.json", 100.0, 10.0);
  long l1 = kope_hw_cache_bytes(hw, 1), l3 = kope_hw_cache_bytes(hw, 3);

  (void)state;
  assert_float_equal(kope_hw_level_bandwidth_gbs(hw, 4, 1), 10.0, 0.0);
  assert_float_equal(kope_hw_level_bandwidth_gbs(hw, 4, 0), 5.0, 0.0);
  assert_float_equal(kope_hw_level_bandwidth_gbs(hw, 0, 1), 0.0, 0.0);
  assert_float_equal(kope_hw_level_bandwidth_gbs(hw, 5, 1), 0.0, 0.0);
  assert_float_equal(kope_hw_peak_one_gflops(hw), 50.0, 0.0);
  assert_null(kope_hw_suspect(hw));
  /* far beyond any cache: DRAM, the all-threads or one-thread column */
  assert_int_equal(kope_hw_level_for(hw, 1e12, 2), 4);
  assert_float_equal(kope_hw_bandwidth_for(hw, 1e12, 2), 10.0, 0.0);
  assert_float_equal(kope_hw_bandwidth_for(hw, 1e12, 1), 5.0, 0.0);
  if (l1 > 0) {
    assert_int_equal(kope_hw_level_for(hw, (double)l1 / 2, 1), 1);
    assert_float_equal(kope_hw_bandwidth_for(hw, (double)l1 / 2, 1), LV_L1 * 5.0, 0.0);
    assert_float_equal(kope_hw_roofline_seconds(hw, 0, (double)l1 / 2),
                       (double)l1 / 2 / (LV_L1 * 10.0 * 1e9), 1e-15);
  } else {
    assert_int_equal(kope_hw_level_for(hw, 1024, 1), l3 > 0 ? 3 : 4);
  }
  if (l3 > 0) {
    assert_int_equal(kope_hw_level_for(hw, (double)l3, 1), 3);
    assert_int_equal(kope_hw_level_for(hw, (double)l3 + 1, 1), 4);
  }
  kope_hw_free(hw);
}

/* A cached suspect mark is kept and reported; a cache without the level
 * table (an older kope) is measured again. */
static void test_suspect_and_old_cache(void **state)
{
  char *path = tmp_path("suspect.json"), *fp = this_fingerprint();
  json_t *j;
  kope_hw *hw;

  (void)state;
  write_cache(path, fp, 100.0, 10.0);
  j = json_load_file(path, 0, NULL);
  assert_non_null(j);
  json_object_set_new(j, "suspect", json_string("measured under load"));
  assert_int_equal(json_dump_file(j, path, 0), 0);
  hw = get_ok(path, 0);
  assert_int_equal(kope_hw_from_cache(hw), 1);
  assert_non_null(kope_hw_suspect(hw));
  assert_string_equal(kope_hw_suspect(hw), "measured under load");
  kope_hw_free(hw);

  json_object_del(j, "bandwidth_levels");
  assert_int_equal(json_dump_file(j, path, 0), 0);
  hw = get_ok(path, 0);
  assert_int_equal(kope_hw_from_cache(hw), 0);
  assert_true(kope_hw_level_bandwidth_gbs(hw, 4, 1) > 0);
  assert_true(kope_hw_level_bandwidth_gbs(hw, 4, 0) > 0);
  assert_true(kope_hw_peak_one_gflops(hw) > 0);
  kope_hw_free(hw);
  json_decref(j);
  free(fp);
  free(path);
}

static size_t count_tokens(const char *s)
{
  size_t n = 0;
  int in = 0;

  for (; *s; s++) {
    if (*s != ' ' && !in)
      n++;
    in = *s != ' ';
  }
  return n;
}

static void test_json_and_describe(void **state)
{
  kope_hw *hw = known_profile("render.json", 200.0, 8.0);
  json_t *j = kope_hw_to_json(hw), *cache, *simd;
  char *text, ridge[48];
  size_t i;

  (void)state;
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "cpu_model")),
                      kope_hw_cpu_model(hw));
  assert_int_equal(json_integer_value(json_object_get(j, "cores")), kope_hw_cores(hw));
  assert_int_equal(json_integer_value(json_object_get(j, "threads")),
                   kope_hw_threads(hw));
  simd = json_object_get(j, "simd");
  assert_true(json_is_array(simd));
  assert_int_equal(json_array_size(simd), count_tokens(kope_hw_simd(hw)));
  for (i = 0; i < json_array_size(simd); i++)
    assert_true(kope_hw_has_feature(hw, json_string_value(json_array_get(simd, i))));
  cache = json_object_get(j, "cache");
  assert_int_equal(json_integer_value(json_object_get(cache, "l1d")),
                   kope_hw_cache_bytes(hw, 1));
  assert_int_equal(json_integer_value(json_object_get(cache, "l2")),
                   kope_hw_cache_bytes(hw, 2));
  assert_int_equal(json_integer_value(json_object_get(cache, "l3")),
                   kope_hw_cache_bytes(hw, 3));
  assert_true(json_is_string(json_object_get(j, "compiler")));
  assert_float_equal(json_number_value(json_object_get(j, "peak_gflops_fp32")), 200.0, 0.0);
  assert_float_equal(json_number_value(json_object_get(j, "bandwidth_gbs")), 8.0, 0.0);
  assert_string_equal(json_string_value(json_object_get(j, "fingerprint")),
                      kope_hw_fingerprint(hw));
  assert_true(json_is_true(json_object_get(j, "from_cache")));
  assert_true(json_is_number(json_object_get(j, "measure_seconds")));
  assert_string_equal(json_string_value(json_object_get(j, "measured_at")),
                      "2024-01-01T00:00:00Z");
  json_decref(j);

  text = kope_hw_describe(hw);
  assert_non_null(text);
  assert_non_null(strstr(text, kope_hw_cpu_model(hw)));
  assert_non_null(strstr(text, "200.0 GFLOP/s"));
  assert_non_null(strstr(text, "8.0 GB/s"));
  /* the ridge uses the review's peak, max(200, threads x 100): 25 on up
   * to 2 threads */
  snprintf(ridge, sizeof ridge, "%.1f FLOP/byte",
           (kope_hw_threads(hw) > 2 ? 100.0 * kope_hw_threads(hw) : 200.0) / 8.0);
  assert_non_null(strstr(text, ridge));
  free(text);
  kope_hw_free(hw);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_detect),
    cmocka_unit_test(test_has_feature_tokens),
    cmocka_unit_test(test_measure_then_cache),
    cmocka_unit_test(test_default_cache_path),
    cmocka_unit_test(test_corrupt_cache),
    cmocka_unit_test(test_stale_fingerprint),
    cmocka_unit_test(test_unwritable_cache),
    cmocka_unit_test(test_roofline),
    cmocka_unit_test(test_levels),
    cmocka_unit_test(test_suspect_and_old_cache),
    cmocka_unit_test(test_json_and_describe),
  };

  return cmocka_run_group_tests(tests, setup, teardown);
}
