/*
 * conv2d — vendor baseline: oneDNN (2.6) convolution_direct,
 * forward_inference, symmetric padding, stride and padding the same in
 * both spatial dimensions.
 *
 * Layout: the primitive is created with format `any` for src, weights and
 * dst, so oneDNN picks the layouts its fastest kernel wants (blocked
 * nChw8c / OIhw8i8o for jit:avx2); on the operator's plain nchw / oihw
 * tensors it would only offer im2col + sgemm (gemm:jit), 1.5-3x slower on
 * one core. Each call reorders x and w into the chosen layouts and the
 * result back into y (jit reorders) — the way oneDNN is meant to be used
 * from plain tensors; the reorders are counted in the baseline's time and
 * skipped when the chosen layout is already the plain one. The bias stays
 * plain.
 *
 * Creating a oneDNN primitive is expensive (it may JIT-compile code), so
 * the engine and stream are created once and the primitives, the blocked
 * scratch tensors and the memory objects are cached for the last shape
 * (all dims, stride, pad) seen; a call with the same shape only rebinds
 * the data pointers and executes. Any oneDNN error aborts with a message:
 * a baseline must never silently produce garbage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <oneapi/dnnl/dnnl.h>

#define CV_NAME "conv2d"

#define CV_DNNL_CHECK(call)                                                \
    do {                                                                   \
        dnnl_status_t st_ = (call);                                        \
        if (st_ != dnnl_success) {                                         \
            fprintf(stderr, CV_NAME " vendor: %s failed (status %d)\n",    \
                    #call, (int)st_);                                      \
            abort();                                                       \
        }                                                                  \
    } while (0)

#define CV_NKEY 9

/* A caller's tensor and, when the primitive wants another layout, the
 * primitive's copy (inner) and the reorder between the two; otherwise
 * inner is user and reorder is NULL. */
typedef struct {
    dnnl_memory_t user, inner;
    dnnl_primitive_t reorder;
} cv_tensor;

static dnnl_engine_t cv_engine;
static dnnl_stream_t cv_stream;
static dnnl_primitive_t cv_prim;
static cv_tensor cv_src, cv_wei, cv_bias, cv_dst;
static int64_t cv_key[CV_NKEY] = {-1};

static dnnl_primitive_t cv_reorder(const dnnl_memory_desc_t *from,
                                   const dnnl_memory_desc_t *to)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    CV_DNNL_CHECK(dnnl_reorder_primitive_desc_create(&pd, from, cv_engine, to,
                                                     cv_engine, NULL));
    CV_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

/* to_user: the tensor is an output (reorder inner -> user after the run). */
static void cv_tensor_init(cv_tensor *t, const dnnl_memory_desc_t *user_md,
                           const dnnl_memory_desc_t *want, int to_user)
{
    CV_DNNL_CHECK(dnnl_memory_create(&t->user, user_md, cv_engine, DNNL_MEMORY_NONE));
    t->inner = t->user;
    t->reorder = NULL;
    if (dnnl_memory_desc_equal(user_md, want))
        return;
    CV_DNNL_CHECK(dnnl_memory_create(&t->inner, want, cv_engine, DNNL_MEMORY_ALLOCATE));
    t->reorder = to_user ? cv_reorder(want, user_md) : cv_reorder(user_md, want);
}

static void cv_tensor_free(cv_tensor *t)
{
    if (t->reorder) {
        dnnl_primitive_destroy(t->reorder);
        dnnl_memory_destroy(t->inner);
    }
    dnnl_memory_destroy(t->user);
}

/* Bind the caller's buffer; for an input, bring it into the inner layout. */
static void cv_tensor_bind(cv_tensor *t, const void *data, int is_input)
{
    CV_DNNL_CHECK(dnnl_memory_set_data_handle(t->user, (void *)data));
    if (!t->reorder || !is_input)
        return;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, t->user}, {DNNL_ARG_TO, t->inner}};
    CV_DNNL_CHECK(dnnl_primitive_execute(t->reorder, cv_stream, 2, args));
}

static void cv_tensor_flush(cv_tensor *t)
{
    if (!t->reorder)
        return;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, t->inner}, {DNNL_ARG_TO, t->user}};
    CV_DNNL_CHECK(dnnl_primitive_execute(t->reorder, cv_stream, 2, args));
}

static void cv_release(void)
{
    if (!cv_prim)
        return;
    dnnl_primitive_destroy(cv_prim);
    cv_tensor_free(&cv_src);
    cv_tensor_free(&cv_wei);
    cv_tensor_free(&cv_bias);
    cv_tensor_free(&cv_dst);
    cv_prim = NULL;
}

/* Plain descriptors of the operator's four tensors: src, weights, bias, dst. */
static void cv_plain_mds(const int64_t *key, dnnl_memory_desc_t *md,
                         dnnl_format_tag_t fmt)
{
    const int64_t n = key[0], cin = key[1], cout = key[2], ih = key[3],
                  iw = key[4], kh = key[5], kw = key[6], stride = key[7],
                  pad = key[8];
    const int64_t oh = (ih + 2 * pad - kh) / stride + 1;
    const int64_t ow = (iw + 2 * pad - kw) / stride + 1;
    dnnl_dims_t sd = {n, cin, ih, iw}, wd = {cout, cin, kh, kw}, bd = {cout},
                dd = {n, cout, oh, ow};
    const int any = fmt == dnnl_format_tag_any;
    CV_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md[0], 4, sd, dnnl_f32, any ? fmt : dnnl_nchw));
    CV_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md[1], 4, wd, dnnl_f32, any ? fmt : dnnl_oihw));
    CV_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md[2], 1, bd, dnnl_f32, dnnl_a));
    CV_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md[3], 4, dd, dnnl_f32, any ? fmt : dnnl_nchw));
}

static void cv_setup(const int64_t *key)
{
    if (!cv_engine) {
        CV_DNNL_CHECK(dnnl_engine_create(&cv_engine, dnnl_cpu, 0));
        CV_DNNL_CHECK(dnnl_stream_create(&cv_stream, cv_engine,
                                         dnnl_stream_default_flags));
    }
    cv_release();
    dnnl_memory_desc_t plain[4], any[4];
    cv_plain_mds(key, plain, dnnl_format_tag_undef);
    cv_plain_mds(key, any, dnnl_format_tag_any);
    dnnl_dims_t strides = {key[7], key[7]}, padding = {key[8], key[8]};
    dnnl_convolution_desc_t desc;
    CV_DNNL_CHECK(dnnl_convolution_forward_desc_init(
        &desc, dnnl_forward_inference, dnnl_convolution_direct, &any[0],
        &any[1], &any[2], &any[3], strides, padding, padding));
    dnnl_primitive_desc_t pd;
    CV_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, cv_engine, NULL));
    CV_DNNL_CHECK(dnnl_primitive_create(&cv_prim, pd));
    cv_tensor_init(&cv_src, &plain[0], dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), 0);
    cv_tensor_init(&cv_wei, &plain[1], dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), 0);
    cv_tensor_init(&cv_bias, &plain[2], dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1), 0);
    cv_tensor_init(&cv_dst, &plain[3], dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), 1);
    dnnl_primitive_desc_destroy(pd);
    memcpy(cv_key, key, sizeof cv_key);
}

void conv2d(const float *x, const float *w, const float *bias, float *y,
            int64_t n, int64_t cin, int64_t cout, int64_t ih, int64_t iw,
            int64_t kh, int64_t kw, int64_t stride, int64_t pad)
{
    const int64_t key[CV_NKEY] = {n, cin, cout, ih, iw, kh, kw, stride, pad};
    if (memcmp(key, cv_key, sizeof key))
        cv_setup(key);
    cv_tensor_bind(&cv_src, x, 1);
    cv_tensor_bind(&cv_wei, w, 1);
    cv_tensor_bind(&cv_bias, bias, 1);
    cv_tensor_bind(&cv_dst, y, 0);
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, cv_src.inner},
                               {DNNL_ARG_WEIGHTS, cv_wei.inner},
                               {DNNL_ARG_BIAS, cv_bias.inner},
                               {DNNL_ARG_DST, cv_dst.inner}};
    CV_DNNL_CHECK(dnnl_primitive_execute(cv_prim, cv_stream, 4, args));
    cv_tensor_flush(&cv_dst);
    CV_DNNL_CHECK(dnnl_stream_wait(cv_stream));
}
