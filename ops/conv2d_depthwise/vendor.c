/*
 * conv2d_depthwise — vendor baseline: oneDNN (2.6) grouped
 * convolution_direct with groups = c (weights logical [c x 1 x 1 x kh x
 * kw]), forward_inference, symmetric padding, stride and padding the same
 * in both spatial dimensions.
 *
 * Layout: on the operator's plain nchw / goihw tensors oneDNN 2.6 only
 * offers its im2col + sgemm implementation (gemm:jit), about 5x slower on
 * one core than its depthwise JIT kernel (jit_dw), which wants blocked
 * layouts. So each call reorders x into nChw8c and w into Goihw8g (jit
 * reorders), runs jit_dw and reorders the result back into y — the way
 * oneDNN is meant to be used from plain tensors; all three reorders are
 * counted in the baseline's time. The bias stays plain.
 *
 * Creating a oneDNN primitive is expensive (it may JIT-compile code), so
 * the engine and stream are created once and the four primitives, the
 * blocked scratch tensors and the memory objects are cached for the last
 * shape (all dims, stride, pad) seen; a call with the same shape only
 * rebinds the data pointers and executes. Any oneDNN error aborts with a
 * message: a baseline must never silently produce garbage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <oneapi/dnnl/dnnl.h>

#define CV_DNNL_CHECK(call)                                                \
    do {                                                                   \
        dnnl_status_t st_ = (call);                                        \
        if (st_ != dnnl_success) {                                         \
            fprintf(stderr, "conv2d_depthwise vendor: %s failed (status %d)\n", \
                    #call, (int)st_);                                      \
            abort();                                                       \
        }                                                                  \
    } while (0)

#define CV_NKEY 8

static dnnl_engine_t cv_engine;
static dnnl_stream_t cv_stream;
static dnnl_primitive_t cv_prim, cv_rs, cv_rw, cv_rd;
static dnnl_memory_t cv_bs, cv_bw, cv_bd;
static dnnl_memory_t cv_src, cv_wei, cv_bias, cv_dst;
static int64_t cv_key[CV_NKEY] = {-1};

static void cv_release(void)
{
    if (!cv_prim)
        return;
    dnnl_primitive_destroy(cv_prim);
    dnnl_memory_destroy(cv_src);
    dnnl_memory_destroy(cv_wei);
    dnnl_memory_destroy(cv_bias);
    dnnl_memory_destroy(cv_dst);
    dnnl_primitive_destroy(cv_rs);
    dnnl_primitive_destroy(cv_rw);
    dnnl_primitive_destroy(cv_rd);
    dnnl_memory_destroy(cv_bs);
    dnnl_memory_destroy(cv_bw);
    dnnl_memory_destroy(cv_bd);
    cv_prim = NULL;
}

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

static void cv_setup(const int64_t *key)
{
    const int64_t n = key[0], c = key[1], ih = key[2], iw = key[3],
                  kh = key[4], kw = key[5], stride = key[6], pad = key[7];
    if (!cv_engine) {
        CV_DNNL_CHECK(dnnl_engine_create(&cv_engine, dnnl_cpu, 0));
        CV_DNNL_CHECK(dnnl_stream_create(&cv_stream, cv_engine,
                                         dnnl_stream_default_flags));
    }
    cv_release();
    const int64_t oh = (ih + 2 * pad - kh) / stride + 1;
    const int64_t ow = (iw + 2 * pad - kw) / stride + 1;
    dnnl_dims_t sd = {n, c, ih, iw}, wd = {c, 1, 1, kh, kw}, bd = {c},
                dd = {n, c, oh, ow};
    dnnl_dims_t strides = {stride, stride}, padding = {pad, pad};
    dnnl_memory_desc_t smd, wmd, bmd, dmd;
    CV_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, dnnl_nchw));
    CV_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&wmd, 5, wd, dnnl_f32, dnnl_goihw));
    CV_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_a));
    CV_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, dnnl_nchw));
    dnnl_memory_desc_t bsmd, bwmd, bdmd;
    CV_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&bsmd, 4, sd, dnnl_f32, dnnl_nChw8c));
    CV_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&bwmd, 5, wd, dnnl_f32, dnnl_Goihw8g));
    CV_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&bdmd, 4, dd, dnnl_f32, dnnl_nChw8c));
    dnnl_convolution_desc_t desc;
    CV_DNNL_CHECK(dnnl_convolution_forward_desc_init(
        &desc, dnnl_forward_inference, dnnl_convolution_direct, &bsmd, &bwmd,
        &bmd, &bdmd, strides, padding, padding));
    dnnl_primitive_desc_t pd;
    CV_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, cv_engine, NULL));
    CV_DNNL_CHECK(dnnl_primitive_create(&cv_prim, pd));
    dnnl_primitive_desc_destroy(pd);
    CV_DNNL_CHECK(dnnl_memory_create(&cv_src, &smd, cv_engine, DNNL_MEMORY_NONE));
    CV_DNNL_CHECK(dnnl_memory_create(&cv_wei, &wmd, cv_engine, DNNL_MEMORY_NONE));
    CV_DNNL_CHECK(dnnl_memory_create(&cv_bias, &bmd, cv_engine, DNNL_MEMORY_NONE));
    CV_DNNL_CHECK(dnnl_memory_create(&cv_dst, &dmd, cv_engine, DNNL_MEMORY_NONE));
    CV_DNNL_CHECK(dnnl_memory_create(&cv_bs, &bsmd, cv_engine, DNNL_MEMORY_ALLOCATE));
    CV_DNNL_CHECK(dnnl_memory_create(&cv_bw, &bwmd, cv_engine, DNNL_MEMORY_ALLOCATE));
    CV_DNNL_CHECK(dnnl_memory_create(&cv_bd, &bdmd, cv_engine, DNNL_MEMORY_ALLOCATE));
    cv_rs = cv_reorder(&smd, &bsmd);
    cv_rw = cv_reorder(&wmd, &bwmd);
    cv_rd = cv_reorder(&bdmd, &dmd);
    memcpy(cv_key, key, sizeof cv_key);
}

static void cv_run_reorder(dnnl_primitive_t prim, dnnl_memory_t from,
                           dnnl_memory_t to)
{
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    CV_DNNL_CHECK(dnnl_primitive_execute(prim, cv_stream, 2, args));
}

void conv2d_depthwise(const float *x, const float *w, const float *bias,
                      float *y, int64_t n, int64_t c, int64_t ih, int64_t iw,
                      int64_t kh, int64_t kw, int64_t stride, int64_t pad)
{
    const int64_t key[CV_NKEY] = {n, c, ih, iw, kh, kw, stride, pad};
    if (memcmp(key, cv_key, sizeof key))
        cv_setup(key);
    CV_DNNL_CHECK(dnnl_memory_set_data_handle(cv_src, (void *)x));
    CV_DNNL_CHECK(dnnl_memory_set_data_handle(cv_wei, (void *)w));
    CV_DNNL_CHECK(dnnl_memory_set_data_handle(cv_bias, (void *)bias));
    CV_DNNL_CHECK(dnnl_memory_set_data_handle(cv_dst, y));
    cv_run_reorder(cv_rs, cv_src, cv_bs);
    cv_run_reorder(cv_rw, cv_wei, cv_bw);
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, cv_bs},
                               {DNNL_ARG_WEIGHTS, cv_bw},
                               {DNNL_ARG_BIAS, cv_bias},
                               {DNNL_ARG_DST, cv_bd}};
    CV_DNNL_CHECK(dnnl_primitive_execute(cv_prim, cv_stream, 4, args));
    cv_run_reorder(cv_rd, cv_bd, cv_dst);
    CV_DNNL_CHECK(dnnl_stream_wait(cv_stream));
}
