/*
 * uci_player.c: the `uci:COMMAND[:LIMIT]` player, an external UCI Xiangqi engine run as a
 * child process and spoken to over two pipes.
 *
 * Setup: `uci` (wait for uciok), `setoption name UCI_Variant value xiangqi`,
 * `setoption name Protocol value ucci` (Fairy-Stockfish then prints ICCS ranks 0-9, as we
 * do, instead of UCI's 1-10; engines without the option ignore it), `isready`.
 * Each move: `position fen <start> moves ...` with the start FEN rebuilt by unmaking the
 * game's history on a copy, `go depth N|nodes N|movetime MS`, then the `bestmove` line.
 * The engine's move is checked with our rules; an illegal move, a dead engine or a timeout
 * is an error for the caller (the engine never decides that a game is over).
 *
 * Writing to a dead engine would raise SIGPIPE; starting a uci player sets SIGPIPE to
 * ignored for the process if it was at its default, so such a write fails with EPIPE.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rules/fen.h"
#include "rules/notation.h"
#include "search/player_impl.h"
#include "support/clock.h"

#define UCI_HANDSHAKE_MS 10000   /* uciok / readyok */
#define UCI_SEARCH_MS 60000      /* bestmove for depth and nodes limits */
#define UCI_STOP_GRACE_MS 2000   /* after `stop`, before giving up */
#define UCI_MAX_ARGS 16

static int uci_send(xq_player_t *p, const char *line, xq_errbuf_t *eb) {
  size_t n = strlen(line), off = 0;
  while (off < n) {
    ssize_t w = write(p->uci.to_fd, line + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0)
      return xq_err_set(eb, XQ_EIO, "%s: cannot write to the engine (%s): has it exited?",
                        p->name, strerror(errno));
    off += (size_t)w;
  }
  return 0;
}

/* Reads one line (without its newline) into line[cap], waiting until deadline_ms. */
static int uci_readline(xq_player_t *p, char *line, size_t cap, int64_t deadline_ms,
                        xq_errbuf_t *eb) {
  for (;;) {
    char *nl = memchr(p->uci.buf, '\n', p->uci.len);
    if (nl || p->uci.len == sizeof p->uci.buf) {
      size_t n = nl ? (size_t)(nl - p->uci.buf) : p->uci.len;
      size_t used = nl ? n + 1 : n;
      size_t c = n < cap - 1 ? n : cap - 1;
      memcpy(line, p->uci.buf, c);
      line[c] = 0;
      if (c && line[c - 1] == '\r') line[c - 1] = 0;
      memmove(p->uci.buf, p->uci.buf + used, p->uci.len - used);
      p->uci.len -= used;
      return 0;
    }
    int64_t left = deadline_ms - xq_clock_ms();
    if (left <= 0) return xq_err_set(eb, XQ_EIO, "%s: the engine did not answer in time", p->name);
    struct pollfd pfd = {.fd = p->uci.from_fd, .events = POLLIN};
    int r = poll(&pfd, 1, (int)(left > 1000000 ? 1000000 : left));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return xq_err_set(eb, XQ_EIO, "%s: poll: %s", p->name, strerror(errno));
    if (r == 0) continue;
    ssize_t got = read(p->uci.from_fd, p->uci.buf + p->uci.len, sizeof p->uci.buf - p->uci.len);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return xq_err_set(eb, XQ_EIO, "%s: read: %s", p->name, strerror(errno));
    if (got == 0) {
      p->uci.eof = true;
      return xq_err_set(eb, XQ_EIO, "%s: the engine exited", p->name);
    }
    p->uci.len += (size_t)got;
  }
}

/* Reads lines until one starts with word; that line is left in line. */
static int uci_expect(xq_player_t *p, const char *word, char *line, size_t cap, int64_t timeout_ms,
                      xq_errbuf_t *eb) {
  int64_t deadline = xq_clock_ms() + timeout_ms;
  size_t wl = strlen(word);
  for (;;) {
    int rc = uci_readline(p, line, cap, deadline, eb);
    if (rc) return rc;
    if (!strncmp(line, word, wl) && (line[wl] == 0 || line[wl] == ' ')) return 0;
  }
}

/* Splits the limit suffix off args: the part after the last ':' when it is a limit. */
static int uci_parse_limit(xq_player_t *p, char *cmd, xq_errbuf_t *eb) {
  snprintf(p->uci.limit, sizeof p->uci.limit, "depth 5");
  char *colon = strrchr(cmd, ':');
  if (!colon) return 0;
  const char *lim = colon + 1;
  static const char *const kinds[] = {"depth", "nodes", "movetime"};
  static const long long maxes[] = {100, 1000000000000LL, 86400000LL};
  for (int i = 0; i < 3; i++) {
    size_t kl = strlen(kinds[i]);
    if (strncmp(lim, kinds[i], kl) || lim[kl] != '=') continue;
    long long v;
    if (!xq_player_parse_int(lim + kl + 1, 1, maxes[i], &v))
      return xq_err_set(eb, XQ_EINVAL,
                        "%s: bad limit '%s' (depth=1..100, nodes=N, movetime=MS)", p->name, lim);
    snprintf(p->uci.limit, sizeof p->uci.limit, "%s %lld", kinds[i], v);
    if (i == 2) p->uci.movetime_ms = v;
    *colon = 0;
    return 0;
  }
  return 0; /* a ':' inside the command itself */
}

int xq_uci_player_start(xq_player_t *p, const char *args, xq_errbuf_t *eb) {
  char cmd[1024];
  if (!*args || strlen(args) >= sizeof cmd)
    return xq_err_set(eb, XQ_EINVAL,
                      "uci player needs a command: uci:COMMAND[:depth=N|nodes=N|movetime=MS]");
  memcpy(cmd, args, strlen(args) + 1);
  int rc = uci_parse_limit(p, cmd, eb);
  if (rc) return rc;
  char *argv[UCI_MAX_ARGS + 1];
  int argc = 0;
  for (char *tok = strtok(cmd, " \t"); tok && argc < UCI_MAX_ARGS; tok = strtok(NULL, " \t"))
    argv[argc++] = tok;
  argv[argc] = NULL;
  if (argc == 0) return xq_err_set(eb, XQ_EINVAL, "%s: empty engine command", p->name);
  if (!p->scratch && !(p->scratch = malloc(sizeof *p->scratch)))
    return xq_err_set(eb, XQ_ENOMEM, "%s: out of memory", p->name);

  struct sigaction old;
  if (sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, NULL);
  }
  int in[2], out[2]; /* in: we write, engine reads; out: engine writes, we read */
  if (pipe(in)) return xq_err_set(eb, XQ_EIO, "%s: pipe: %s", p->name, strerror(errno));
  if (pipe(out)) {
    close(in[0]);
    close(in[1]);
    return xq_err_set(eb, XQ_EIO, "%s: pipe: %s", p->name, strerror(errno));
  }
  fcntl(in[1], F_SETFD, FD_CLOEXEC);
  fcntl(out[0], F_SETFD, FD_CLOEXEC);
  pid_t pid = fork();
  if (pid < 0) {
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    return xq_err_set(eb, XQ_EIO, "%s: fork: %s", p->name, strerror(errno));
  }
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]);
    close(out[1]);
    execvp(argv[0], argv);
    fprintf(stderr, "xqz: cannot run engine '%s': %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  p->uci.pid = pid;
  p->uci.to_fd = in[1];
  p->uci.from_fd = out[0];

  char line[4096];
  if ((rc = uci_send(p, "uci\n", eb)) ||
      (rc = uci_expect(p, "uciok", line, sizeof line, UCI_HANDSHAKE_MS, eb))) {
    char why[sizeof eb->msg];
    snprintf(why, sizeof why, "%s", eb ? eb->msg : "");
    return xq_err_set(eb, rc, "%s: no 'uciok' from '%s' (missing, not a UCI engine, or dead): %s",
                      p->name, argv[0], why);
  }
  if ((rc = uci_send(p,
                     "setoption name UCI_Variant value xiangqi\n"
                     "setoption name Protocol value ucci\n"
                     "isready\n",
                     eb)) ||
      (rc = uci_expect(p, "readyok", line, sizeof line, UCI_HANDSHAKE_MS, eb)))
    return rc;
  return 0;
}

void xq_uci_player_stop(xq_player_t *p) {
  if (p->uci.to_fd >= 0) {
    (void)!write(p->uci.to_fd, "quit\n", 5);
    close(p->uci.to_fd);
    p->uci.to_fd = -1;
  }
  if (p->uci.pid > 0) {
    /* Give the engine a second to quit on its own, then kill it. */
    int status;
    pid_t r = 0;
    for (int i = 0; i < 100 && (r = waitpid(p->uci.pid, &status, WNOHANG)) == 0; i++) {
      struct timespec ts = {0, 10 * 1000000};
      nanosleep(&ts, NULL);
    }
    if (r == 0) {
      kill(p->uci.pid, SIGKILL);
      waitpid(p->uci.pid, &status, 0);
    }
    p->uci.pid = -1;
  }
  if (p->uci.from_fd >= 0) {
    close(p->uci.from_fd);
    p->uci.from_fd = -1;
  }
}

int xq_uci_player_new_game(xq_player_t *p, xq_errbuf_t *eb) {
  char line[4096];
  int rc = uci_send(p, "ucinewgame\nisready\n", eb);
  if (!rc) rc = uci_expect(p, "readyok", line, sizeof line, UCI_HANDSHAKE_MS, eb);
  return rc;
}

int xq_uci_player_move(xq_player_t *p, xq_pos_t *pos, xq_move_t *move, xq_errbuf_t *eb) {
  /* Rebuild the game's start position by unmaking its whole history on a copy. */
  xq_pos_t *start = p->scratch;
  memcpy(start, pos, sizeof *start);
  while (start->ply > 0) xq_pos_unmake(start);
  char fen[XQ_FEN_MAX];
  xq_fen_print(start, fen);
  size_t cap = 64 + XQ_FEN_MAX + (size_t)pos->ply * 5 + 32;
  char *cmd = malloc(cap);
  if (!cmd) return xq_err_set(eb, XQ_ENOMEM, "%s: out of memory", p->name);
  size_t n = (size_t)snprintf(cmd, cap, "position fen %s", fen);
  if (pos->ply) n += (size_t)snprintf(cmd + n, cap - n, " moves");
  for (int i = 0; i < pos->ply; i++) {
    char mv[5];
    xq_move_print(pos->hist[i].move, mv);
    n += (size_t)snprintf(cmd + n, cap - n, " %s", mv);
  }
  snprintf(cmd + n, cap - n, "\ngo %s\n", p->uci.limit);
  int rc = uci_send(p, cmd, eb);
  free(cmd);
  if (rc) return rc;

  char line[4096];
  int64_t timeout = UCI_SEARCH_MS + 2 * p->uci.movetime_ms;
  rc = uci_expect(p, "bestmove", line, sizeof line, timeout, eb);
  if (rc && !p->uci.eof && uci_send(p, "stop\n", NULL) == 0) {
    rc = uci_expect(p, "bestmove", line, sizeof line, UCI_STOP_GRACE_MS, eb);
    if (rc)
      return xq_err_set(eb, XQ_EIO, "%s: no bestmove within %lld ms (engine hung or dead)",
                        p->name, (long long)(timeout + UCI_STOP_GRACE_MS));
  }
  if (rc) return rc;
  char tok[16] = {0};
  if (sscanf(line, "bestmove %15s", tok) != 1)
    return xq_err_set(eb, XQ_EMOVE, "%s: malformed reply '%s'", p->name, line);
  xq_errbuf_t why = {{0}};
  if (xq_move_parse_legal(pos, tok, move, &why)) {
    xq_fen_print(pos, fen);
    return xq_err_set(eb, XQ_EMOVE, "%s: engine played illegal move '%s' in %s: %s", p->name,
                      tok, fen, why.msg);
  }
  return 0;
}
