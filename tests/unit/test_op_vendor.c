/*
 * Unit tests of per-target vendor baselines and device identity: the
 * shipped matmul and softmax name their C and CUDA baselines for the cpu
 * and cuda targets and none for opencl; a copy of relu with a
 * "vendor_cuda" object loads, and malformed ones (a CPU library, a missing
 * file, not an object) are rejected naming op.json and the field; the
 * cuda library flags; and kope_target_device: the cpu target names the
 * CPU model the hardware profile reads, the cuda target names a GPU only
 * when the device check finds one (NULL here without a GPU); and the
 * vendor baseline each target times (kope_target_vendor).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "kope/core.h"
#include "kope/hw.h"
#include "kope/op.h"
#include "kope/target.h"

static char *ops_dir(void)
{
  const char *src = getenv("KOPE_SRC");

  return kope_path_join(src && *src ? src : KOPE_SOURCE_DIR, "ops");
}

static void test_shipped_vendors(void **state)
{
  char *dir = ops_dir();
  kope_err err = {0, ""};
  kope_op *op = kope_op_load("matmul", dir, &err);
  const kope_op_vendor *v;

  (void)state;
  if (!op)
    fail_msg("%s", err.msg);
  v = kope_op_vendor_for(op, KOPE_OP_VENDOR_C);
  assert_non_null(v);
  assert_string_equal(v->path, kope_op_vendor_path(op));
  assert_int_equal(v->nlibs, 1);
  assert_string_equal(v->libs[0], "openblas");
  v = kope_op_vendor_for(op, KOPE_OP_VENDOR_CUDA);
  assert_non_null(v);
  assert_non_null(strstr(v->path, "matmul/vendor.cu"));
  assert_string_equal(v->name, "cuBLAS cublasSgemm");
  assert_int_equal(v->nlibs, 1);
  assert_string_equal(v->libs[0], "cublas");
  assert_null(kope_op_vendor_for(op, KOPE_OP_VENDOR_NONE));
  kope_op_free(op);

  op = kope_op_load("softmax", dir, &err);
  assert_non_null(op);
  assert_string_equal(kope_op_vendor_for(op, KOPE_OP_VENDOR_CUDA)->libs[0], "cudnn");
  kope_op_free(op);
  op = kope_op_load("relu", dir, &err);   /* no vendor.cu */
  assert_non_null(op);
  assert_null(kope_op_vendor_for(op, KOPE_OP_VENDOR_CUDA));
  assert_non_null(kope_op_vendor_for(op, KOPE_OP_VENDOR_C));
  kope_op_free(op);
  free(dir);
}

static void test_lib_flags(void **state)
{
  (void)state;
  assert_string_equal(kope_op_vendor_lib_flag(KOPE_OP_VENDOR_CUDA, "cublas"), "-lcublas");
  assert_string_equal(kope_op_vendor_lib_flag(KOPE_OP_VENDOR_CUDA, "cudnn"), "-lcudnn");
  assert_null(kope_op_vendor_lib_flag(KOPE_OP_VENDOR_CUDA, "openblas"));
  assert_string_equal(kope_op_vendor_lib_flag(KOPE_OP_VENDOR_C, "openblas"), "-lopenblas");
  assert_null(kope_op_vendor_lib_flag(KOPE_OP_VENDOR_C, "cublas"));
  assert_null(kope_op_vendor_lib_flag(KOPE_OP_VENDOR_NONE, "cublas"));
}

/* A copy of ops/relu in a scratch folder with op.json's vendor_cuda set
 * to the JSON text vc (NULL: left out) and vendor.cu written when
 * with_file. Returns the folder (caller frees and removes its parent). */
static char *relu_copy(const char *root, const char *vc, int with_file)
{
  char *dir = ops_dir(), *src = kope_path_join(dir, "relu"), *dst = kope_path_join(root, "relu");
  const char *files[] = {"op.json", "reference.c", "seed.c", "vendor.c"};
  kope_err err = {0, ""};
  size_t i;

  assert_int_equal(kope_mkdirs(dst, &err), KOPE_OK);
  for (i = 0; i < sizeof files / sizeof files[0]; i++) {
    char *a = kope_path_join(src, files[i]), *b = kope_path_join(dst, files[i]);
    size_t n = 0;
    char *text = kope_file_read(a, &n, &err);
    assert_non_null(text);
    assert_int_equal(kope_file_write_atomic(b, text, n, &err), KOPE_OK);
    free(text);
    free(a);
    free(b);
  }
  if (vc) {
    char *spec = kope_path_join(dst, "op.json");
    json_t *root_j = json_load_file(spec, 0, NULL), *v = json_loads(vc, JSON_DECODE_ANY, NULL);
    assert_non_null(root_j);
    assert_non_null(v);
    json_object_set_new(root_j, "vendor_cuda", v);
    assert_int_equal(json_dump_file(root_j, spec, JSON_INDENT(2)), 0);
    json_decref(root_j);
    free(spec);
  }
  if (with_file) {
    char *cu = kope_path_join(dst, "vendor.cu");
    assert_int_equal(kope_file_write_atomic(cu, "/* test */\n", 11, &err), KOPE_OK);
    free(cu);
  }
  free(src);
  free(dir);
  return dst;
}

static void expect_rejected(const char *root, const char *vc, int with_file, const char *words)
{
  char *dir = relu_copy(root, vc, with_file);
  kope_err err = {0, ""};
  kope_op *op = kope_op_load(dir, NULL, &err);

  if (op)
    fail_msg("vendor_cuda %s was accepted", vc);
  assert_int_equal(err.code, KOPE_EINPUT);
  if (!strstr(err.msg, "op.json") || !strstr(err.msg, words))
    fail_msg("message '%s' lacks op.json or '%s'", err.msg, words);
  kope_rmtree(dir);
  free(dir);
}

static void test_spec_vendor_cuda(void **state)
{
  char root[64];
  char *dir;
  kope_err err = {0, ""};
  kope_op *op;
  const kope_op_vendor *v;

  (void)state;
  snprintf(root, sizeof root, "/tmp/kope-vendortest-XXXXXX");
  assert_non_null(mkdtemp(root));
  dir = relu_copy(root, "{\"source\": \"vendor.cu\", \"libs\": [\"cudnn\", \"cublas\"], "
                        "\"name\": \"cuDNN activation\"}", 1);
  op = kope_op_load(dir, NULL, &err);
  if (!op)
    fail_msg("%s", err.msg);
  v = kope_op_vendor_for(op, KOPE_OP_VENDOR_CUDA);
  assert_non_null(v);
  assert_string_equal(v->name, "cuDNN activation");
  assert_int_equal(v->nlibs, 2);
  assert_string_equal(v->libs[1], "cublas");
  kope_op_free(op);
  kope_rmtree(dir);
  free(dir);

  dir = relu_copy(root, "{\"libs\": [\"cublas\"]}", 1);   /* default file and name */
  op = kope_op_load(dir, NULL, &err);
  assert_non_null(op);
  assert_non_null(strstr(kope_op_vendor_for(op, KOPE_OP_VENDOR_CUDA)->path, "relu/vendor.cu"));
  assert_string_equal(kope_op_vendor_for(op, KOPE_OP_VENDOR_CUDA)->name, "cublas");
  kope_op_free(op);
  kope_rmtree(dir);
  free(dir);

  expect_rejected(root, "{\"source\": \"vendor.cu\", \"libs\": [\"openblas\"]}", 1,
                  "field 'vendor_cuda.libs[0]': expected one of cublas, cudnn");
  expect_rejected(root, "{\"source\": \"vendor.cu\", \"libs\": [\"cublas\"]}", 0,
                  "field 'vendor_cuda.source'");
  expect_rejected(root, "\"vendor.cu\"", 1, "field 'vendor_cuda': expected an object");
  expect_rejected(root, "{\"source\": \"../x.cu\"}", 1, "inside the operator folder");
  kope_rmtree(root);
}

static void test_target_device(void **state)
{
  kope_err err = {0, ""};
  kope_target *t = kope_target_open("cpu", &err);
  kope_hw *hw = kope_hw_detect(&err);
  const char *d;

  (void)state;
  assert_non_null(t);
  assert_non_null(hw);
  d = kope_target_device(t);
  assert_non_null(d);
  assert_string_equal(d, kope_hw_cpu_model(hw));
  assert_ptr_equal(kope_target_device(t), d);   /* asked once */
  kope_hw_free(hw);
  kope_target_free(t);

  t = kope_target_open("cuda", &err);
  if (!t) {   /* no nvcc: nothing more to check */
    assert_int_equal(err.code, KOPE_EENV);
    return;
  }
  if (kope_target_check_device(t, &err) == KOPE_OK) {
    d = kope_target_device(t);
    assert_non_null(d);
    assert_non_null(strstr(d, "(sm_"));
  } else {
    assert_null(kope_target_device(t));   /* no GPU: no device */
  }
  kope_target_free(t);
}

/* The vendor baseline each target times: cpu and cuda their own, opencl
 * none of its own but the borrowed C one; relu has no CUDA baseline, so the
 * cuda target times none (no C fallback). */
static void expect_target_vendor(const char *name, kope_op_vendor_lang own,
                                 int build_only_vendor, const kope_op *matmul,
                                 const kope_op *relu, kope_op_vendor_lang timed_matmul,
                                 kope_op_vendor_lang timed_relu)
{
  kope_err err = {0, ""};
  kope_target *t = kope_target_open(name, &err);

  if (!t) {   /* toolchain missing here: nothing to check */
    assert_int_equal(err.code, KOPE_EENV);
    return;
  }
  assert_int_equal(kope_target_vendor_lang(t), own);
  assert_int_equal(kope_target_build_only_vendor(t), build_only_vendor);
  assert_ptr_equal(kope_target_vendor(t, matmul), kope_op_vendor_for(matmul, timed_matmul));
  assert_ptr_equal(kope_target_vendor(t, relu), kope_op_vendor_for(relu, timed_relu));
  kope_target_free(t);
}

static void test_target_vendor(void **state)
{
  char *dir = ops_dir();
  kope_err err = {0, ""};
  kope_op *matmul = kope_op_load("matmul", dir, &err), *relu = kope_op_load("relu", dir, &err);

  (void)state;
  assert_non_null(matmul);
  assert_non_null(relu);
  assert_non_null(kope_op_vendor_for(relu, KOPE_OP_VENDOR_C));
  expect_target_vendor("cpu", KOPE_OP_VENDOR_C, 0, matmul, relu, KOPE_OP_VENDOR_C,
                       KOPE_OP_VENDOR_C);
  expect_target_vendor("opencl", KOPE_OP_VENDOR_NONE, 0, matmul, relu, KOPE_OP_VENDOR_C,
                       KOPE_OP_VENDOR_C);
  expect_target_vendor("cuda", KOPE_OP_VENDOR_CUDA, 1, matmul, relu, KOPE_OP_VENDOR_CUDA,
                       KOPE_OP_VENDOR_NONE);
  kope_op_free(matmul);
  kope_op_free(relu);
  free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_shipped_vendors),
    cmocka_unit_test(test_lib_flags),
    cmocka_unit_test(test_spec_vendor_cuda),
    cmocka_unit_test(test_target_device),
    cmocka_unit_test(test_target_vendor),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
