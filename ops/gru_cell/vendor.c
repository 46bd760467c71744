/*
 * gru_cell — vendor baseline built on OpenBLAS, the way PyTorch's CPU
 * GRUCell computes it: two matrix products, then one elementwise gate
 * pass.
 *
 *   gi = x w_ih^T      cblas_sgemm, [b x 3*hid]
 *   gh = h w_hh^T      cblas_sgemm, [b x 3*hid]
 *   r = sigmoid(gi_r + b_ih_r + gh_r + b_hh_r), z likewise,
 *   n = tanh(gi_n + b_ih_n + r * (gh_n + b_hh_n)),
 *   h_new = (1 - z) * n + z * h                   C loop, OpenMP rows
 *
 * The two [b x 3*hid] scratch matrices are the only state: static
 * buffers reallocated when a larger one is needed (never freed: a
 * baseline process lives for one evaluation). An allocation failure
 * aborts with a message.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cblas.h>

static float *gru_gi, *gru_gh;
static int64_t gru_cap;

static void gru_buffers(int64_t count)
{
    if (count <= gru_cap)
        return;
    free(gru_gi);
    free(gru_gh);
    gru_gi = malloc((size_t)count * sizeof(float));
    gru_gh = malloc((size_t)count * sizeof(float));
    if (!gru_gi || !gru_gh) {
        fprintf(stderr, "gru_cell vendor: out of memory for 2 x %lld floats\n",
                (long long)count);
        abort();
    }
    gru_cap = count;
}

void gru_cell(const float *x, const float *h, const float *w_ih,
              const float *w_hh, const float *b_ih, const float *b_hh,
              float *h_new, int64_t b, int64_t in, int64_t hid)
{
    const int64_t g3 = 3 * hid;
    gru_buffers(b * g3);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)b,
                (blasint)g3, (blasint)in, 1.0f, x, (blasint)in, w_ih,
                (blasint)in, 0.0f, gru_gi, (blasint)g3);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)b,
                (blasint)g3, (blasint)hid, 1.0f, h, (blasint)hid, w_hh,
                (blasint)hid, 0.0f, gru_gh, (blasint)g3);
    const float *gi_all = gru_gi, *gh_all = gru_gh;
#pragma omp parallel for schedule(static) if (b * hid >= 16384)
    for (int64_t i = 0; i < b; i++) {
        const float *gi = gi_all + i * g3, *gh = gh_all + i * g3;
        for (int64_t j = 0; j < hid; j++) {
            const float r = 1.0f / (1.0f + expf(-(gi[j] + b_ih[j] + gh[j] + b_hh[j])));
            const float z = 1.0f / (1.0f + expf(-(gi[hid + j] + b_ih[hid + j] +
                                                  gh[hid + j] + b_hh[hid + j])));
            const float n = tanhf(gi[2 * hid + j] + b_ih[2 * hid + j] +
                                  r * (gh[2 * hid + j] + b_hh[2 * hid + j]));
            h_new[i * hid + j] = (1.0f - z) * n + z * h[i * hid + j];
        }
    }
}
