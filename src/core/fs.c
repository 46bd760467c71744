/*
 * Files and paths: whole-file reads, atomic writes (temp file + rename),
 * mkdir -p, rm -rf of kope's own scratch directories, small string helpers
 * and the location of kope's state directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "kope/core.h"

char *kope_strdup(const char *s)
{
  return s ? kope_strndup(s, strlen(s)) : NULL;
}

char *kope_strndup(const char *s, size_t n)
{
  char *p = malloc(n + 1);

  if (!p)
    return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *kope_sprintf(const char *fmt, ...)
{
  kope_buf b;
  va_list ap;
  int rc;

  kope_buf_init(&b, 0);
  va_start(ap, fmt);
  rc = kope_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  if (rc != 0 && !b.truncated) {   /* out of memory, not the 64 MiB cap */
    kope_buf_release(&b);
    return NULL;
  }
  return kope_buf_steal(&b);
}

void kope_format_bytes(long n, char *buf, size_t size)
{
  if (n <= 0)
    snprintf(buf, size, "unknown");
  else if (n % (1024L * 1024L) == 0)
    snprintf(buf, size, "%ld MiB", n / (1024L * 1024L));
  else if (n >= 1024L * 1024L)
    snprintf(buf, size, "%.1f MiB", (double)n / (1024.0 * 1024.0));
  else if (n % 1024L == 0)
    snprintf(buf, size, "%ld KiB", n / 1024L);
  else
    snprintf(buf, size, "%ld B", n);
}

char *kope_path_join(const char *a, const char *b)
{
  size_t la;

  if (!a || !b)
    return NULL;   /* a part that could not be allocated */
  la = strlen(a);
  if (b[0] == '/' || la == 0)
    return kope_strdup(b);
  return kope_sprintf("%s%s%s", a, a[la - 1] == '/' ? "" : "/", b);
}

char *kope_file_read(const char *path, size_t *len, kope_err *err)
{
  kope_buf b;
  char chunk[65536];
  size_t n;
  int nomem = 0;
  FILE *f;

  if (!path) {
    kope_err_nomem(err, "file path");
    return NULL;
  }
  if (!(f = fopen(path, "rb"))) {
    kope_err_set(err, KOPE_EINPUT, "%s: cannot read: %s", path, strerror(errno));
    return NULL;
  }
  kope_buf_init(&b, (size_t)256 << 20);
  while (!nomem && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
    nomem = kope_buf_append(&b, chunk, n) != 0 && !b.truncated;
  fclose(f);
  if (nomem) {
    kope_buf_release(&b);
    kope_err_nomem(err, path);
    return NULL;
  }
  if (len)
    *len = b.len;
  return kope_buf_steal(&b);
}

int kope_file_write_atomic(const char *path, const void *data, size_t len,
                           kope_err *err)
{
  char *tmp = path ? kope_sprintf("%s.tmp.%ld", path, (long)getpid()) : NULL;
  int fd, rc = KOPE_OK;
  const char *p = data;

  if (!tmp)
    return kope_err_nomem(err, "file path");
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    rc = kope_err_set(err, KOPE_EENV, "%s: cannot write: %s", path, strerror(errno));
    goto out;
  }
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      rc = kope_err_set(err, KOPE_EENV, "%s: write failed: %s", path, strerror(errno));
      close(fd);
      unlink(tmp);
      goto out;
    }
    p += w;
    len -= (size_t)w;
  }
  close(fd);
  if (rename(tmp, path) != 0) {
    rc = kope_err_set(err, KOPE_EENV, "%s: rename failed: %s", path, strerror(errno));
    unlink(tmp);
  }
out:
  free(tmp);
  return rc;
}

int kope_mkdirs(const char *path, kope_err *err)
{
  char *p = kope_strdup(path);
  int rc = KOPE_OK;
  char *s;

  if (!p)
    return kope_err_nomem(err, "directory path");
  for (s = p + 1; ; s++) {
    if (*s == '/' || *s == '\0') {
      char c = *s;
      *s = '\0';
      if (mkdir(p, 0755) != 0 && errno != EEXIST) {
        rc = kope_err_set(err, KOPE_EENV, "%s: cannot create directory: %s", p,
                          strerror(errno));
        break;
      }
      *s = c;
      if (c == '\0')
        break;
    }
  }
  free(p);
  return rc;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)st; (void)flag; (void)ftw;
  return remove(path);
}

int kope_rmtree(const char *path)
{
  return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int kope_is_dir(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int kope_is_file(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void kope_sha256_hex(const void *data, size_t len, char out[65])
{
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0, i;

  EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
  for (i = 0; i < n && i < 32; i++)
    snprintf(out + 2 * i, 3, "%02x", md[i]);
  out[64] = '\0';
}

double kope_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

char *kope_home_dir(void)
{
  const char *h = getenv("KOPE_HOME");
  char cwd[4096];

  if (!h || !*h)
    h = ".kope";
  /* Compilers and workers run in their own directories, so a relative
   * home is made absolute against the current directory here. */
  if (h[0] == '/' || !getcwd(cwd, sizeof cwd))
    return kope_strdup(h);
  return kope_path_join(cwd, h);
}
