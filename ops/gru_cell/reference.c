/*
 * gru_cell — trusted reference (torch.nn.GRUCell, gate order r, z, n).
 *
 *   gi = x w_ih^T + b_ih,  gh = h w_hh^T + b_hh   (blocks r, z, n of hid)
 *   r = sigmoid(gi_r + gh_r),  z = sigmoid(gi_z + gh_z)
 *   n = tanh(gi_n + r * gh_n)
 *   h_new = (1 - z) * n + z * h
 *
 * Every dot product and gate is computed in double; the only fp32
 * rounding is the final conversion.
 */
#include <math.h>
#include <stdint.h>

static double gru_dot(const float *a, const float *w, int64_t n)
{
    double s = 0.0;
    for (int64_t c = 0; c < n; c++)
        s += (double)a[c] * (double)w[c];
    return s;
}

static double gru_sigmoid(double v)
{
    return 1.0 / (1.0 + exp(-v));
}

void gru_cell(const float *x, const float *h, const float *w_ih,
              const float *w_hh, const float *b_ih, const float *b_hh,
              float *h_new, int64_t b, int64_t in, int64_t hid)
{
    for (int64_t i = 0; i < b; i++) {
        const float *xi = x + i * in, *hi = h + i * hid;
        for (int64_t j = 0; j < hid; j++) {
            double gi[3], gh[3];
            for (int g = 0; g < 3; g++) {
                const int64_t row = g * hid + j;
                gi[g] = gru_dot(xi, w_ih + row * in, in) + b_ih[row];
                gh[g] = gru_dot(hi, w_hh + row * hid, hid) + b_hh[row];
            }
            const double r = gru_sigmoid(gi[0] + gh[0]);
            const double z = gru_sigmoid(gi[1] + gh[1]);
            const double n = tanh(gi[2] + r * gh[2]);
            h_new[i * hid + j] = (float)((1.0 - z) * n + z * (double)hi[j]);
        }
    }
}
