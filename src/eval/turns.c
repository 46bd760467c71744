/*
 * Machine-wide turns for timing. Within one kope process two kernels are
 * never timed at once; this extends the rule to every kope process on the
 * machine (several `kope bench` or `kope worker` runs, a test suite in
 * parallel): before timing a case, an evaluator takes an exclusive
 * flock(2) on one lock file shared by all users, and releases it after the
 * case. Waiting shows in the wall time only, never in a sample. The lock
 * is released by the kernel when a process dies, so a crash cannot block
 * the others. Where the file cannot be opened (a read-only /tmp), timing
 * goes on without turns, as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "eval/eval_int.h"

#define TURNS_PATH "/tmp/kope-timing.lock"

int kope_eval_turn_take(int *waited)
{
  int fd = open(TURNS_PATH, O_RDWR | O_CREAT | O_CLOEXEC, 0666);

  *waited = 0;
  if (fd < 0)
    return -1;
  fchmod(fd, 0666);   /* other users' kope processes share the file (umask) */
  if (flock(fd, LOCK_EX | LOCK_NB) == 0)
    return fd;
  *waited = 1;
  while (flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) {
      close(fd);
      return -1;
    }
  return fd;
}

void kope_eval_turn_give(int fd)
{
  if (fd >= 0)
    close(fd);   /* closing the only descriptor releases the flock */
}
