/* The kernel's floor under every tcp latency figure: two processes ping-pong 8 bytes over a
 * loopback TCP connection (TCP_NODELAY), each spinning on recv(MSG_DONTWAIT) so no wake-up is
 * measured, no library in between. Prints the one-way latency in microseconds, averaged as
 * ucx_perftest's "Final" column is. scripts/bench-msg.sh puts it beside raw UCT's am_lat over
 * tcp, ufi and libfabric's tcp provider. A benchmark, not a test; loopback only.
 *   tcp_floor [iterations] */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int recv_all(int fd, char *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t r = recv(fd, buf + got, len - got, MSG_DONTWAIT);
    if (r > 0) got += (size_t)r;
    else if (r == 0 || (errno != EAGAIN && errno != EINTR)) return -1;
  }
  return 0;
}

static int send_all(int fd, const char *buf, size_t len) {
  size_t sent = 0;
  while (sent < len) {
    ssize_t r = send(fd, buf + sent, len - sent, MSG_NOSIGNAL);
    if (r > 0) sent += (size_t)r;
    else if (r < 0 && errno != EAGAIN && errno != EINTR) return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 20000;
  const long warmup = 1000;
  if (iters <= 0) { fprintf(stderr, "usage: tcp_floor [iterations]\n"); return 2; }
  int one = 1;
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t addr_len = sizeof addr;
  if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 ||
      listen(listener, 1) != 0 || getsockname(listener, (struct sockaddr *)&addr, &addr_len) != 0) {
    perror("tcp_floor: listen on loopback");
    return 1;
  }
  pid_t child = fork();
  if (child < 0) { perror("tcp_floor: fork"); return 1; }
  int fd;
  if (child == 0) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) _exit(1);
  } else {
    fd = accept(listener, NULL, NULL);
    if (fd < 0) { perror("tcp_floor: accept"); return 1; }
  }
  close(listener);
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  char buf[8] = {0};
  double start = 0;
  for (long i = 0; i < warmup + iters; ++i) {
    if (i == warmup) start = now_us();
    int failed = child ? (send_all(fd, buf, sizeof buf) || recv_all(fd, buf, sizeof buf))
                       : (recv_all(fd, buf, sizeof buf) || send_all(fd, buf, sizeof buf));
    if (failed) {
      if (child) perror("tcp_floor: ping-pong");
      return 1;
    }
  }
  if (child == 0) _exit(0);
  double one_way = (now_us() - start) / (double)iters / 2.0;
  int status = 0;
  waitpid(child, &status, 0);
  printf("%.3f\n", one_way);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
