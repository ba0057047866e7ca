/*
 * engine_input.c: the non-blocking line reader and the command queue of `xqz engine`
 * (see engine_input.h).
 */
#include "engine_input.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int engine_in_init(engine_in_t *in, int fd, size_t max_line) {
  *in = (engine_in_t){.fd = fd, .size = max_line};
  in->buf = malloc(max_line);
  return in->buf ? 0 : -1;
}

void engine_in_close(engine_in_t *in) {
  free(in->buf);
  in->buf = NULL;
}

int engine_in_next(engine_in_t *in, char *line) {
  for (;;) {
    char *nl = memchr(in->buf, '\n', in->len);
    if (!nl) {
      if (in->len == in->size) {
        /* A line longer than the buffer: drop what we have and the rest up to '\n'. */
        in->len = 0;
        bool first = !in->skipping;
        in->skipping = true;
        if (first) return ENGINE_IN_TOO_LONG;
        continue;
      }
      if (in->eof && in->len > 0 && !in->skipping) {
        memcpy(line, in->buf, in->len);
        line[in->len] = 0;
        in->len = 0;
        return ENGINE_IN_LINE;
      }
      return in->eof ? ENGINE_IN_EOF : ENGINE_IN_NONE;
    }
    size_t n = (size_t)(nl - in->buf);
    bool skip = in->skipping;
    if (!skip) {
      memcpy(line, in->buf, n);
      line[n] = 0;
    }
    memmove(in->buf, nl + 1, in->len - n - 1);
    in->len -= n + 1;
    in->skipping = false;
    if (!skip) return ENGINE_IN_LINE;
  }
}

int engine_in_wait(engine_in_t *in, int wake_fd, int timeout_ms) {
  struct pollfd p[2] = {{.fd = in->eof ? -1 : in->fd, .events = POLLIN},
                        {.fd = wake_fd, .events = POLLIN}};
  int rc = poll(p, 2, timeout_ms);
  if (rc < 0) return 0; /* EINTR: the caller loops */
  if (p[0].revents && !in->eof) {
    if (in->len == in->size) return 0; /* engine_in_next drops the long line first */
    ssize_t r = read(in->fd, in->buf + in->len, in->size - in->len);
    if (r > 0) in->len += (size_t)r;
    else if (r == 0 || (errno != EINTR && errno != EAGAIN)) in->eof = true;
  }
  return wake_fd >= 0 && (p[1].revents & POLLIN) ? 1 : 0;
}

bool engine_queue_push(engine_queue_t *q, const char *line) {
  if (q->len >= ENGINE_QUEUE_MAX) return false;
  char *copy = strdup(line);
  if (!copy) return false;
  q->cmd[(q->head + q->len) % ENGINE_QUEUE_MAX] = (engine_cmd_t){.line = copy};
  q->len++;
  return true;
}

bool engine_queue_pop(engine_queue_t *q, engine_cmd_t *out) {
  if (q->len == 0) return false;
  *out = q->cmd[q->head];
  q->head = (q->head + 1) % ENGINE_QUEUE_MAX;
  q->len--;
  return true;
}

void engine_queue_mark(engine_queue_t *q, bool stopped, bool ponderhit) {
  for (int i = 0; i < q->len; i++) {
    engine_cmd_t *c = &q->cmd[(q->head + i) % ENGINE_QUEUE_MAX];
    if (stopped) c->stopped = true;
    if (ponderhit) c->ponderhit = true;
  }
}

void engine_queue_free(engine_queue_t *q) {
  engine_cmd_t c;
  while (engine_queue_pop(q, &c)) free(c.line);
}
