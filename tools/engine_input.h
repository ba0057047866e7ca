/*
 * engine_input.h: the command side of `xqz engine` that never blocks: a line reader over a
 * file descriptor (stdin) that can wait on a second descriptor at the same time (the
 * search thread's "finished" pipe), and a bounded queue of commands that must wait for
 * the running search to end. Prefix engine_in_ / engine_queue_.
 *
 * stdio is not used for input: a FILE's buffer hides lines from poll(), so the reader
 * keeps its own buffer and splits lines itself. Ownership: the reader and the queue own
 * their buffers and the lines they hand out until the next call (reader) or until the
 * caller frees them (queue: the caller frees a popped line with free()).
 */
#ifndef XQZ_ENGINE_INPUT_H
#define XQZ_ENGINE_INPUT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
  int fd;
  char *buf;       /* (size) bytes read and not yet handed out */
  size_t size, len;
  bool eof;
  bool skipping;   /* inside a line longer than size: dropped up to its newline */
} engine_in_t;

enum { ENGINE_IN_LINE = 0, ENGINE_IN_NONE = 1, ENGINE_IN_EOF = 2, ENGINE_IN_TOO_LONG = 3 };

int engine_in_init(engine_in_t *in, int fd, size_t max_line);
void engine_in_close(engine_in_t *in);
/* The next whole line already read, NUL-terminated without its newline, into line (of
 * in->size bytes): ENGINE_IN_LINE; ENGINE_IN_TOO_LONG once for a line longer than the
 * buffer (dropped); ENGINE_IN_EOF when input ended and every line was handed out (a last
 * line without a newline is handed out first); else ENGINE_IN_NONE. */
int engine_in_next(engine_in_t *in, char *line);
/* Waits until input can be read (and reads it) or wake_fd is readable (-1: none), at most
 * timeout_ms (-1: no limit). Returns 1 when wake_fd is readable, else 0. */
int engine_in_wait(engine_in_t *in, int wake_fd, int timeout_ms);

/* A command waiting for the running search to end. */
typedef struct {
  char *line;      /* owned */
  bool stopped;    /* a stop or quit came after it: a `go` answers at once */
  bool ponderhit;  /* a ponderhit came after it: a `go ponder` starts as a plain go */
} engine_cmd_t;

#define ENGINE_QUEUE_MAX 256
typedef struct {
  engine_cmd_t cmd[ENGINE_QUEUE_MAX];
  int head, len;
} engine_queue_t;

/* Appends a copy of line; false when the queue is full or out of memory (dropped). */
bool engine_queue_push(engine_queue_t *q, const char *line);
/* Removes the oldest command into *out (the caller frees out->line); false when empty. */
bool engine_queue_pop(engine_queue_t *q, engine_cmd_t *out);
/* Marks every queued command as stopped (stop / quit) or ponder-hit. */
void engine_queue_mark(engine_queue_t *q, bool stopped, bool ponderhit);
void engine_queue_free(engine_queue_t *q);

#endif
