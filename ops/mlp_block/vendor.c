/*
 * mlp_block — vendor baseline from two oneDNN (2.6) primitives:
 *
 *   1. layer_normalization, forward_inference, use_scale | use_shift
 *      (statistics computed by the primitive): u = LN(x) * gamma + beta
 *      into a cached [rows x d] scratch buffer;
 *   2. matmul u [rows x d] x w [d x h] with a [1 x h] bias and an
 *      eltwise_gelu_erf post-op: y = gelu(u w + bias), exact GELU.
 *
 * The engine and stream are created once; primitives, memory objects and
 * the scratch buffer are cached for the last (rows, d, h, eps) seen, so a
 * repeated call only rebinds the data pointers and executes. Any oneDNN
 * error aborts with a message: a baseline must never silently produce
 * garbage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <oneapi/dnnl/dnnl.h>

#define MLP_DNNL_CHECK(call)                                                   \
    do {                                                                       \
        dnnl_status_t st_ = (call);                                            \
        if (st_ != dnnl_success) {                                             \
            fprintf(stderr, "mlp_block vendor: %s failed (status %d)\n", #call,\
                    (int)st_);                                                 \
            abort();                                                           \
        }                                                                      \
    } while (0)

static dnnl_engine_t mlp_engine;
static dnnl_stream_t mlp_stream;
static dnnl_primitive_t mlp_lnorm, mlp_matmul;
static dnnl_memory_t mlp_x, mlp_gamma, mlp_beta, mlp_u, mlp_w, mlp_bias, mlp_y;
static float *mlp_u_buf;
static int64_t mlp_rows = -1, mlp_d = -1, mlp_h = -1;
static float mlp_eps;

static void mlp_release(void)
{
    if (!mlp_matmul)
        return;
    dnnl_primitive_destroy(mlp_lnorm);
    dnnl_primitive_destroy(mlp_matmul);
    dnnl_memory_destroy(mlp_x);
    dnnl_memory_destroy(mlp_gamma);
    dnnl_memory_destroy(mlp_beta);
    dnnl_memory_destroy(mlp_u);
    dnnl_memory_destroy(mlp_w);
    dnnl_memory_destroy(mlp_bias);
    dnnl_memory_destroy(mlp_y);
    free(mlp_u_buf);
    mlp_lnorm = mlp_matmul = NULL;
    mlp_u_buf = NULL;
}

static dnnl_primitive_t mlp_make(const_dnnl_op_desc_t desc,
                                 const_dnnl_primitive_attr_t attr)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    MLP_DNNL_CHECK(dnnl_primitive_desc_create(&pd, desc, attr, mlp_engine, NULL));
    MLP_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void mlp_desc(dnnl_memory_desc_t *md, int nd, int64_t a, int64_t b)
{
    dnnl_dims_t dims = {a, b};
    MLP_DNNL_CHECK(dnnl_memory_desc_init_by_tag(md, nd, dims, dnnl_f32,
                                                nd == 1 ? dnnl_a : dnnl_ab));
}

static void mlp_setup(int64_t rows, int64_t d, int64_t h, float eps)
{
    if (!mlp_engine) {
        MLP_DNNL_CHECK(dnnl_engine_create(&mlp_engine, dnnl_cpu, 0));
        MLP_DNNL_CHECK(dnnl_stream_create(&mlp_stream, mlp_engine,
                                          dnnl_stream_default_flags));
    }
    mlp_release();

    dnnl_memory_desc_t xmd, statmd, cmd, wmd, bmd, ymd;
    mlp_desc(&xmd, 2, rows, d);
    mlp_desc(&statmd, 1, rows, 0);
    mlp_desc(&cmd, 1, d, 0);
    mlp_desc(&wmd, 2, d, h);
    mlp_desc(&bmd, 2, 1, h);
    mlp_desc(&ymd, 2, rows, h);

    dnnl_layer_normalization_desc_t ldesc;
    MLP_DNNL_CHECK(dnnl_layer_normalization_forward_desc_init(
        &ldesc, dnnl_forward_inference, &xmd, &statmd, eps,
        dnnl_use_scale | dnnl_use_shift));
    mlp_lnorm = mlp_make(&ldesc, NULL);

    dnnl_matmul_desc_t mdesc;
    MLP_DNNL_CHECK(dnnl_matmul_desc_init(&mdesc, &xmd, &wmd, &bmd, &ymd));
    dnnl_post_ops_t ops;
    dnnl_primitive_attr_t attr;
    MLP_DNNL_CHECK(dnnl_post_ops_create(&ops));
    MLP_DNNL_CHECK(dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_gelu_erf,
                                                0.0f, 0.0f));
    MLP_DNNL_CHECK(dnnl_primitive_attr_create(&attr));
    MLP_DNNL_CHECK(dnnl_primitive_attr_set_post_ops(attr, ops));
    mlp_matmul = mlp_make(&mdesc, attr);
    dnnl_primitive_attr_destroy(attr);
    dnnl_post_ops_destroy(ops);

    mlp_u_buf = malloc((size_t)(rows * d) * sizeof(float));
    if (!mlp_u_buf) {
        fprintf(stderr, "mlp_block vendor: out of memory\n");
        abort();
    }
    MLP_DNNL_CHECK(dnnl_memory_create(&mlp_x, &xmd, mlp_engine, DNNL_MEMORY_NONE));
    MLP_DNNL_CHECK(dnnl_memory_create(&mlp_gamma, &cmd, mlp_engine, DNNL_MEMORY_NONE));
    MLP_DNNL_CHECK(dnnl_memory_create(&mlp_beta, &cmd, mlp_engine, DNNL_MEMORY_NONE));
    MLP_DNNL_CHECK(dnnl_memory_create(&mlp_u, &xmd, mlp_engine, mlp_u_buf));
    MLP_DNNL_CHECK(dnnl_memory_create(&mlp_w, &wmd, mlp_engine, DNNL_MEMORY_NONE));
    MLP_DNNL_CHECK(dnnl_memory_create(&mlp_bias, &bmd, mlp_engine, DNNL_MEMORY_NONE));
    MLP_DNNL_CHECK(dnnl_memory_create(&mlp_y, &ymd, mlp_engine, DNNL_MEMORY_NONE));
    mlp_rows = rows;
    mlp_d = d;
    mlp_h = h;
    mlp_eps = eps;
}

void mlp_block(const float *x, const float *gamma, const float *beta,
               const float *w, const float *bias, float *y, int64_t rows,
               int64_t d, int64_t h, float eps)
{
    if (rows != mlp_rows || d != mlp_d || h != mlp_h ||
        memcmp(&eps, &mlp_eps, sizeof eps))
        mlp_setup(rows, d, h, eps);
    MLP_DNNL_CHECK(dnnl_memory_set_data_handle(mlp_x, (void *)x));
    MLP_DNNL_CHECK(dnnl_memory_set_data_handle(mlp_gamma, (void *)gamma));
    MLP_DNNL_CHECK(dnnl_memory_set_data_handle(mlp_beta, (void *)beta));
    MLP_DNNL_CHECK(dnnl_memory_set_data_handle(mlp_w, (void *)w));
    MLP_DNNL_CHECK(dnnl_memory_set_data_handle(mlp_bias, (void *)bias));
    MLP_DNNL_CHECK(dnnl_memory_set_data_handle(mlp_y, y));
    dnnl_exec_arg_t largs[4] = {{DNNL_ARG_SRC, mlp_x},
                                {DNNL_ARG_SCALE, mlp_gamma},
                                {DNNL_ARG_SHIFT, mlp_beta},
                                {DNNL_ARG_DST, mlp_u}};
    MLP_DNNL_CHECK(dnnl_primitive_execute(mlp_lnorm, mlp_stream, 4, largs));
    dnnl_exec_arg_t margs[4] = {{DNNL_ARG_SRC, mlp_u},
                                {DNNL_ARG_WEIGHTS, mlp_w},
                                {DNNL_ARG_BIAS, mlp_bias},
                                {DNNL_ARG_DST, mlp_y}};
    MLP_DNNL_CHECK(dnnl_primitive_execute(mlp_matmul, mlp_stream, 4, margs));
    MLP_DNNL_CHECK(dnnl_stream_wait(mlp_stream));
}
