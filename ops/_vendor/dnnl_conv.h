/*
 * Shared helper of the trusted oneDNN (2.6) convolution baselines (conv1d,
 * conv2d, conv_transpose2d): convolution_direct or deconvolution_direct,
 * forward_inference, one or two spatial dimensions, symmetric padding,
 * stride and padding the same in every spatial dimension, with bias.
 *
 * Layout: the primitive is created with format `any` for src, weights and
 * dst, so oneDNN picks the layouts its fastest kernel wants (blocked, e.g.
 * nChw8c / OIhw8i8o for jit:avx2); on the operator's plain ncw/nchw and
 * oiw/oihw (deconvolution: iohw, torch's storage) tensors it would only
 * offer im2col + sgemm (gemm:jit), 1.5-3x slower on one core. Each call
 * reorders x and w into the chosen layouts and the result back into y (jit
 * reorders) — the way oneDNN is meant to be used from plain tensors; the
 * reorders are counted in the baseline's time and skipped when the chosen
 * layout is already the plain one. The bias stays plain.
 *
 * Creating a oneDNN primitive is expensive (it may JIT-compile code), so
 * the primitive, the blocked scratch tensors and the memory objects are
 * cached for the last shape seen; a call with the same shape only rebinds
 * the data pointers and executes.
 */
#ifndef KV_DNNL_CONV_H
#define KV_DNNL_CONV_H

#include "dnnl.h"

/* A convolution's shape; every field int64_t, so it compares with memcmp.
 * sp: spatial dimensions (1 or 2); in/k: input and kernel extents per
 * spatial dimension (unused ones 0). */
typedef struct {
    int64_t deconv, sp, n, cin, cout, in[2], k[2], stride, pad;
} kv_conv_shape;

/* A caller's tensor and, when the primitive wants another layout, the
 * primitive's copy (inner) and the reorder between the two; otherwise
 * inner is user and reorder is NULL. */
typedef struct {
    dnnl_memory_t user, inner;
    dnnl_primitive_t reorder;
} kv_tensor;

static dnnl_primitive_t kv_cv_prim;
static kv_tensor kv_cv_src, kv_cv_wei, kv_cv_bias, kv_cv_dst;
static kv_conv_shape kv_cv_key = {-1, -1, -1, -1, -1, {-1, -1}, {-1, -1}, -1, -1};

/* to_user: the tensor is an output (reorder inner -> user after the run). */
static inline void kv_tensor_init(kv_tensor *t, const dnnl_memory_desc_t *user_md,
                                  const dnnl_memory_desc_t *want, int to_user)
{
    t->user = kv_mem(user_md, 0);
    t->inner = t->user;
    t->reorder = NULL;
    if (dnnl_memory_desc_equal(user_md, want))
        return;
    t->inner = kv_mem(want, 1);
    t->reorder = to_user ? kv_reorder(want, user_md) : kv_reorder(user_md, want);
}

static inline void kv_tensor_free(kv_tensor *t)
{
    if (t->reorder) {
        dnnl_primitive_destroy(t->reorder);
        dnnl_memory_destroy(t->inner);
    }
    dnnl_memory_destroy(t->user);
}

/* Bind the caller's buffer; for an input, bring it into the inner layout. */
static inline void kv_tensor_bind(kv_tensor *t, const void *data, int is_input)
{
    KV_CHECK(dnnl_memory_set_data_handle(t->user, (void *)data));
    if (t->reorder && is_input)
        kv_run2(t->reorder, DNNL_ARG_FROM, t->user, DNNL_ARG_TO, t->inner);
}

static inline void kv_tensor_flush(kv_tensor *t)
{
    if (t->reorder)
        kv_run2(t->reorder, DNNL_ARG_FROM, t->inner, DNNL_ARG_TO, t->user);
}

static inline void kv_conv_release(void)
{
    if (!kv_cv_prim)
        return;
    dnnl_primitive_destroy(kv_cv_prim);
    kv_tensor_free(&kv_cv_src);
    kv_tensor_free(&kv_cv_wei);
    kv_tensor_free(&kv_cv_bias);
    kv_tensor_free(&kv_cv_dst);
    kv_cv_prim = NULL;
}

/* Output extent of one spatial dimension. */
static inline int64_t kv_conv_out(const kv_conv_shape *s, int d)
{
    if (s->deconv)
        return (s->in[d] - 1) * s->stride - 2 * s->pad + s->k[d];
    return (s->in[d] + 2 * s->pad - s->k[d]) / s->stride + 1;
}

/* Descriptors of the operator's four tensors: src, weights, bias, dst, in
 * their plain layouts (any == 0) or format `any`. */
static inline void kv_conv_mds(const kv_conv_shape *s, dnnl_memory_desc_t *md, int any)
{
    const int nd = (int)s->sp + 2;
    const dnnl_format_tag_t act = nd == 4 ? dnnl_nchw : dnnl_ncw;
    const dnnl_format_tag_t wei = s->deconv ? (nd == 4 ? dnnl_iohw : dnnl_bac)
                                            : (nd == 4 ? dnnl_oihw : dnnl_oiw);
    dnnl_dims_t sd = {s->n, s->cin, s->in[0], s->in[1]},
                wd = {s->cout, s->cin, s->k[0], s->k[1]}, bd = {s->cout},
                dd = {s->n, s->cout, kv_conv_out(s, 0), nd == 4 ? kv_conv_out(s, 1) : 0};
    md[0] = kv_md(nd, sd, any ? dnnl_format_tag_any : act);
    md[1] = kv_md(nd, wd, any ? dnnl_format_tag_any : wei);
    md[2] = kv_md(1, bd, dnnl_a);
    md[3] = kv_md(nd, dd, any ? dnnl_format_tag_any : act);
}

static inline void kv_conv_setup(const kv_conv_shape *s)
{
    kv_init();
    kv_conv_release();
    dnnl_memory_desc_t plain[4], any[4];
    kv_conv_mds(s, plain, 0);
    kv_conv_mds(s, any, 1);
    dnnl_dims_t strides = {s->stride, s->stride}, padding = {s->pad, s->pad};
    dnnl_convolution_desc_t desc;   /* dnnl_deconvolution_desc_t is the same type */
    if (s->deconv)
        KV_CHECK(dnnl_deconvolution_forward_desc_init(
            &desc, dnnl_forward_inference, dnnl_deconvolution_direct, &any[0],
            &any[1], &any[2], &any[3], strides, padding, padding));
    else
        KV_CHECK(dnnl_convolution_forward_desc_init(
            &desc, dnnl_forward_inference, dnnl_convolution_direct, &any[0],
            &any[1], &any[2], &any[3], strides, padding, padding));
    dnnl_primitive_desc_t pd;
    KV_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, kv_engine, NULL));
    KV_CHECK(dnnl_primitive_create(&kv_cv_prim, pd));
    kv_tensor_init(&kv_cv_src, &plain[0], dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), 0);
    kv_tensor_init(&kv_cv_wei, &plain[1], dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), 0);
    kv_tensor_init(&kv_cv_bias, &plain[2], dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1), 0);
    kv_tensor_init(&kv_cv_dst, &plain[3], dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), 1);
    dnnl_primitive_desc_destroy(pd);
    kv_cv_key = *s;
}

/* y = the convolution of shape s of x with weights w plus bias. */
static inline void kv_conv(const kv_conv_shape *s, const float *x, const float *w,
                           const float *bias, float *y)
{
    if (memcmp(s, &kv_cv_key, sizeof *s))
        kv_conv_setup(s);
    kv_tensor_bind(&kv_cv_src, x, 1);
    kv_tensor_bind(&kv_cv_wei, w, 1);
    kv_tensor_bind(&kv_cv_bias, bias, 1);
    kv_tensor_bind(&kv_cv_dst, y, 0);
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, kv_cv_src.inner},
                               {DNNL_ARG_WEIGHTS, kv_cv_wei.inner},
                               {DNNL_ARG_BIAS, kv_cv_bias.inner},
                               {DNNL_ARG_DST, kv_cv_dst.inner}};
    KV_CHECK(dnnl_primitive_execute(kv_cv_prim, kv_stream, 4, args));
    kv_tensor_flush(&kv_cv_dst);
    KV_CHECK(dnnl_stream_wait(kv_stream));
}

#endif
