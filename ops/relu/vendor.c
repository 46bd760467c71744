/*
 * relu — vendor baseline: oneDNN eltwise_relu (alpha 0), forward_inference,
 * on a 1-D f32 tensor of n elements, on the CPU engine.
 *
 * Creating a oneDNN primitive is expensive (it may JIT-compile code), so the
 * engine and stream are created once and the primitive plus its two memory
 * objects are cached for the last n seen; a call with the same n only
 * rebinds the data pointers and executes. Any oneDNN error aborts with a
 * message: a baseline must never silently produce garbage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <oneapi/dnnl/dnnl.h>

#define RELU_DNNL_CHECK(call)                                              \
    do {                                                                   \
        dnnl_status_t st_ = (call);                                        \
        if (st_ != dnnl_success) {                                         \
            fprintf(stderr, "relu vendor: %s failed (status %d)\n", #call, \
                    (int)st_);                                             \
            abort();                                                       \
        }                                                                  \
    } while (0)

static dnnl_engine_t relu_engine;
static dnnl_stream_t relu_stream;
static dnnl_primitive_t relu_prim;
static dnnl_memory_t relu_src, relu_dst;
static int64_t relu_n = -1;

static void relu_setup(int64_t n)
{
    if (!relu_engine) {
        RELU_DNNL_CHECK(dnnl_engine_create(&relu_engine, dnnl_cpu, 0));
        RELU_DNNL_CHECK(dnnl_stream_create(&relu_stream, relu_engine,
                                           dnnl_stream_default_flags));
    }
    if (relu_prim) {
        dnnl_primitive_destroy(relu_prim);
        dnnl_memory_destroy(relu_src);
        dnnl_memory_destroy(relu_dst);
        relu_prim = NULL;
    }
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md;
    RELU_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a));
    dnnl_eltwise_desc_t desc;
    RELU_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &desc, dnnl_forward_inference, dnnl_eltwise_relu, &md, 0.0f, 0.0f));
    dnnl_primitive_desc_t pd;
    RELU_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, relu_engine, NULL));
    RELU_DNNL_CHECK(dnnl_primitive_create(&relu_prim, pd));
    dnnl_primitive_desc_destroy(pd);
    RELU_DNNL_CHECK(dnnl_memory_create(&relu_src, &md, relu_engine, DNNL_MEMORY_NONE));
    RELU_DNNL_CHECK(dnnl_memory_create(&relu_dst, &md, relu_engine, DNNL_MEMORY_NONE));
    relu_n = n;
}

void relu(const float *x, float *y, int64_t n)
{
    if (n != relu_n)
        relu_setup(n);
    RELU_DNNL_CHECK(dnnl_memory_set_data_handle(relu_src, (void *)x));
    RELU_DNNL_CHECK(dnnl_memory_set_data_handle(relu_dst, y));
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, relu_src}, {DNNL_ARG_DST, relu_dst}};
    RELU_DNNL_CHECK(dnnl_primitive_execute(relu_prim, relu_stream, 2, args));
    RELU_DNNL_CHECK(dnnl_stream_wait(relu_stream));
}
