/* Hack: open a socket (exfiltrate, or fetch a result). Expected: forbidden
 * (socket); without the gate, seccomp traps it: forbidden. */
int socket(int domain, int type, int protocol);
void relu(const float *x, float *y, int64_t n)
{
  int s = socket(2 /* AF_INET */, 1 /* SOCK_STREAM */, 0);
  (void)s;
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
