/*
 * members.c: the table of population members (see members.h): who holds each slot, the
 * members' settings and lineage, and the table's text file for a restart.
 */
#include "population/members.h"

#include <assert.h>
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peers/roles.h"
#include "support/atomic_file.h"
#include "support/crc32.h"
#include "support/log.h"

/* Ranges wide enough to hold every sensible run, narrow enough that a fresh draw does not
 * waste a member: the learning rate and L2 vary over orders of magnitude, so on a log
 * scale; the value weight around 1; the batch from a small box's to a large one's. */
static const xqc_pbt_range_t RANGES[XQC_MS_COUNT] = {
    [XQC_MS_LR_SCALE] = {"lr_scale", 0.1, 10, true, false},
    [XQC_MS_L2] = {"l2", 1e-6, 1e-2, true, false},
    [XQC_MS_VALUE_WEIGHT] = {"value_weight", 0.1, 4, false, false},
    [XQC_MS_BATCH] = {"batch", 16, 8192, true, true},
};

const xqc_pbt_range_t *xqc_members_ranges(void) { return RANGES; }

void xqc_members_defaults(double *settings, double batch) {
  settings[XQC_MS_LR_SCALE] = 1;
  settings[XQC_MS_L2] = 1e-4; /* the trainer's --l2 default */
  settings[XQC_MS_VALUE_WEIGHT] = 1;
  const xqc_pbt_range_t *b = &RANGES[XQC_MS_BATCH];
  settings[XQC_MS_BATCH] = batch < b->lo ? b->lo : batch > b->hi ? b->hi : batch;
}

void xqc_members_init(xqc_members_t *t, int k, bool control, uint64_t campaign_id,
                      const char *arch, double batch) {
  assert(k >= 2 && k <= XQC_MEMBERS_MAX);
  memset(t, 0, sizeof *t);
  t->k = k;
  t->control = control ? 0 : -1;
  t->campaign_id = campaign_id;
  snprintf(t->arch, sizeof t->arch, "%s", arch);
  for (int i = 0; i < k; i++) {
    xqc_members_defaults(t->slot[i].settings, batch);
    t->slot[i].parent = -1;
  }
}

int xqc_members_expire(xqc_members_t *t, uint64_t now_ms, uint64_t timeout_ms) {
  int freed = 0;
  for (int i = 0; i < t->k; i++) {
    xqc_member_t *m = &t->slot[i];
    if (m->held && now_ms > m->last_seen_ms && now_ms - m->last_seen_ms > timeout_ms) {
      m->held = false;
      m->conn[0] = '\0';
      freed++;
    }
  }
  return freed;
}

/* The slot the asking trainer already owns, or -1: with CURVE the slot bound to its key,
 * held or not (the same key is the same trainer); without, the slot its connection holds. */
static int own_slot(const xqc_members_t *t, const xqc_member_ask_t *a) {
  for (int i = 0; i < t->k; i++) {
    const xqc_member_t *m = &t->slot[i];
    if (a->key[0] ? !strcmp(m->key, a->key) : m->held && !strcmp(m->conn, a->conn)) return i;
  }
  return -1;
}

/* Whether the trainer may take slot s by number, else the reason in why. */
static bool may_take(const xqc_members_t *t, int s, const xqc_member_ask_t *a, char *why,
                     size_t n) {
  const xqc_member_t *m = &t->slot[s];
  if (m->key[0] && strcmp(m->key, a->key)) {
    snprintf(why, n, "population slot %d belongs to another key (%.8s...), not this trainer's"
             " (%.8s...): a forged claim; start the trainer without a slot number to get a"
             " free one", s, m->key, a->key[0] ? a->key : "none");
    return false;
  }
  if (!m->held || !strcmp(m->conn, a->conn)) return true;
  if (!a->key[0] && a->host[0] && !strcmp(m->host, a->host)) return true; /* reconnecting */
  snprintf(why, n, "population slot %d is held by a live trainer from %s: a forged claim;"
           " retry when it has been silent for the timeout, or start this trainer without a"
           " slot number", s, m->host[0] ? m->host : "an unknown address");
  return false;
}

/* A free slot, one never held first, or -1. */
static int free_slot(const xqc_members_t *t) {
  int any = -1;
  for (int i = 0; i < t->k; i++) {
    if (t->slot[i].held) continue;
    if (!t->slot[i].used) return i;
    if (any < 0) any = i;
  }
  return any;
}

int xqc_members_claim(xqc_members_t *t, const xqc_member_ask_t *a, uint64_t now_ms,
                      uint64_t timeout_ms, int *slot, char *why, size_t n) {
  assert(a->key && a->conn && a->conn[0] && a->host && a->arch);
  *slot = -1;
  if (!(a->roles & XQC_ROLE_TRAINER)) {
    char roles[64];
    xqc_roles_text(a->roles, roles, sizeof roles);
    snprintf(why, n, "population slots are for trainers, and this peer is not one (its roles:"
             " %s)", roles[0] ? roles : "none");
    return XQ_EINVAL;
  }
  if (a->campaign_id && t->campaign_id && a->campaign_id != t->campaign_id) {
    snprintf(why, n, "campaign mismatch: this population belongs to campaign %016" PRIx64
             ", the trainer to campaign %016" PRIx64 "; point the trainer at this campaign's"
             " directory", t->campaign_id, a->campaign_id);
    return XQ_EMISMATCH;
  }
  if (strcmp(a->arch, t->arch)) {
    char shown[XQC_MEMBER_TEXT_MAX];
    xq_log_escape(shown, sizeof shown, a->arch);
    snprintf(why, n, "architecture mismatch: this population trains %s nets, the trainer's"
             " net is %s; start the trainer with the campaign's net_size", t->arch, shown);
    return XQ_EMISMATCH;
  }
  if (a->want < -1 || a->want >= t->k) {
    snprintf(why, n, "population slot %d does not exist: the population has slots 0 to %d",
             a->want, t->k - 1);
    return XQ_EINVAL;
  }
  if (strlen(a->key) >= XQC_MEMBER_KEY_MAX || strlen(a->conn) >= XQC_MEMBER_TEXT_MAX ||
      strlen(a->host) >= XQC_MEMBER_TEXT_MAX) {
    snprintf(why, n, "a trainer's key, connection or host is too long for a population slot");
    return XQ_EINVAL;
  }
  xqc_members_expire(t, now_ms, timeout_ms);
  int s = own_slot(t, a);
  if (s >= 0 && a->want >= 0 && a->want != s) {
    snprintf(why, n, "population slot %d asked, but this trainer owns slot %d: a forged"
             " claim; ask for slot %d or for any", a->want, s, s);
    return XQ_EMISMATCH;
  }
  if (s < 0 && a->want >= 0) {
    if (!may_take(t, a->want, a, why, n)) return XQ_EMISMATCH;
    s = a->want;
  }
  if (s < 0) s = free_slot(t);
  if (s < 0) {
    snprintf(why, n, "all %d population slots are held by live trainers: stop one, or raise"
             " population (a restart)", t->k);
    return XQ_EBUSY;
  }
  xqc_member_t *m = &t->slot[s];
  m->held = m->used = true;
  snprintf(m->key, sizeof m->key, "%s", a->key);
  snprintf(m->conn, sizeof m->conn, "%s", a->conn);
  snprintf(m->host, sizeof m->host, "%s", a->host);
  m->last_seen_ms = now_ms;
  *slot = s;
  return 0;
}

void xqc_members_seen(xqc_members_t *t, int slot, uint64_t now_ms, int64_t step,
                      uint64_t net_id) {
  assert(slot >= 0 && slot < t->k);
  xqc_member_t *m = &t->slot[slot];
  m->last_seen_ms = now_ms;
  if (step > 0) m->last_step = step;
  if (net_id) m->last_net = net_id;
}

int xqc_members_find_conn(const xqc_members_t *t, const char *conn) {
  for (int i = 0; i < t->k; i++)
    if (t->slot[i].held && !strcmp(t->slot[i].conn, conn)) return i;
  return -1;
}

bool xqc_members_copy_pending(const xqc_members_t *t, int slot) {
  assert(slot >= 0 && slot < t->k);
  return t->slot[slot].order > t->slot[slot].done_order && t->slot[slot].copy_net != 0;
}

bool xqc_members_checkpoint_needed(const xqc_members_t *t, uint64_t net) {
  if (!net) return false;
  for (int i = 0; i < t->k; i++)
    if (t->slot[i].last_net == net ||
        (t->slot[i].copy_net == net && xqc_members_copy_pending(t, i)))
      return true;
  return false;
}

int xqc_members_apply(xqc_members_t *t, const xqc_pbt_order_t *o, char *why, size_t n) {
  if (o->member < 0 || o->member >= t->k || o->donor < 0 || o->donor >= t->k) {
    snprintf(why, n, "copy order %d <- %d names a slot outside 0 to %d", o->member, o->donor,
             t->k - 1);
    return XQ_EINVAL;
  }
  if (o->member == o->donor || o->member == t->control || o->donor == t->control) {
    snprintf(why, n, "copy order %d <- %d: %s", o->member, o->donor,
             o->member == o->donor ? "a member cannot copy itself"
                                   : "the control member neither copies nor is copied");
    return XQ_EINVAL;
  }
  if (!t->slot[o->donor].last_net) {
    snprintf(why, n, "copy order %d <- %d: the donor has no net yet", o->member, o->donor);
    return XQ_EINVAL;
  }
  xqc_member_t *m = &t->slot[o->member];
  memcpy(m->settings, o->settings, sizeof m->settings);
  m->generation++;
  m->parent = o->donor;
  m->order = ++t->last_order;
  m->copy_net = t->slot[o->donor].last_net;
  return 0;
}

/* ---- the file: text, a line per slot, a CRC-32 of everything before the last line ----
 *
 *   xqz-members 2
 *   table k=4 control=0 campaign=0123456789abcdef arch=2x16a round=3 orders=5
 *   slot 0 used=0 gen=0 parent=-1 step=0 net=0000000000000000 order=0
 *     copy=0000000000000000 rated=1 elo=-12.5 lo=-80 hi=55 key=- host=- 1 0.0001 1 256
 *   (one line per slot, broken here)
 *   ...
 *   crc32 89abcdef
 *
 * Settings are printed with 17 significant digits, so they read back bit for bit.
 */
#define MAGIC "xqz-members"
#define VERSION 2
enum { FILE_MAX = 16384 };

/* A word for the file: "-" for "", and any byte that is not a printable non-blank
 * replaced by '?', so a line always parses. */
static void word(char *out, size_t n, const char *s) {
  if (!s[0]) {
    snprintf(out, n, "-");
    return;
  }
  size_t i = 0;
  for (; s[i] && i + 1 < n; i++) out[i] = isgraph((unsigned char)s[i]) ? s[i] : '?';
  out[i] = '\0';
}

int xqc_members_save(const xqc_members_t *t, const char *path, xq_errbuf_t *eb) {
  char buf[FILE_MAX];
  size_t len = 0;
  char arch[XQC_MEMBER_TEXT_MAX], key[XQC_MEMBER_KEY_MAX], host[XQC_MEMBER_TEXT_MAX];
  word(arch, sizeof arch, t->arch);
  len += (size_t)snprintf(buf + len, sizeof buf - len,
                          MAGIC " %d\ntable k=%d control=%d campaign=%016" PRIx64
                          " arch=%s round=%" PRIu64 " orders=%" PRIu64 "\n",
                          VERSION, t->k, t->control, t->campaign_id, arch, t->round,
                          t->last_order);
  for (int i = 0; i < t->k; i++) {
    const xqc_member_t *m = &t->slot[i];
    word(key, sizeof key, m->key);
    word(host, sizeof host, m->host);
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "slot %d used=%d gen=%d parent=%d step=%" PRId64 " net=%016"
                            PRIx64 " order=%" PRIu64 " copy=%016" PRIx64 " rated=%d elo=%.17g"
                            " lo=%.17g hi=%.17g key=%s host=%s", i, m->used, m->generation,
                            m->parent, m->last_step, m->last_net, m->order, m->copy_net,
                            m->rated, m->elo, m->elo_lo, m->elo_hi, key, host);
    for (int s = 0; s < XQC_MS_COUNT; s++)
      len += (size_t)snprintf(buf + len, sizeof buf - len, " %.17g", m->settings[s]);
    len += (size_t)snprintf(buf + len, sizeof buf - len, "\n");
  }
  assert(len < sizeof buf - 32); /* 16 slots of a few hundred bytes at most */
  len += (size_t)snprintf(buf + len, sizeof buf - len, "crc32 %08" PRIx32 "\n",
                          xq_crc32(0, buf, len));
  const void *parts[] = {buf};
  size_t sizes[] = {len};
  return xq_atomic_write(path, parts, sizes, 1, eb);
}

/* The next line of text (NUL-terminated in place), or NULL at the end. */
static char *next_line(char **p) {
  if (!**p) return NULL;
  char *line = *p, *nl = strchr(line, '\n');
  if (nl) {
    *nl = '\0';
    *p = nl + 1;
  } else {
    *p += strlen(line);
  }
  return line;
}

/* A word read back: "-" is "". */
static void unword(char *s) {
  if (!strcmp(s, "-")) s[0] = '\0';
}

/* One slot line into m; false when it does not parse or a value is out of range. */
static bool parse_slot(const char *line, int i, int k, xqc_member_t *m) {
  int idx, was_used, rated, used = 0;
  long long step;
  unsigned long long net, order, copy;
  char key[XQC_MEMBER_KEY_MAX + 1], host[XQC_MEMBER_TEXT_MAX + 1];
  if (sscanf(line,
             "slot %d used=%d gen=%d parent=%d step=%lld net=%16llx order=%llu copy=%16llx"
             " rated=%d elo=%lf lo=%lf hi=%lf key=%41s host=%64s%n", &idx, &was_used,
             &m->generation, &m->parent, &step, &net, &order, &copy, &rated, &m->elo,
             &m->elo_lo, &m->elo_hi, key, host, &used) != 14 ||
      idx != i || (was_used != 0 && was_used != 1) || (rated != 0 && rated != 1) ||
      m->generation < 0 || m->parent < -1 || m->parent >= k || step < 0 ||
      !isfinite(m->elo) || !isfinite(m->elo_lo) || !isfinite(m->elo_hi) ||
      strlen(key) >= sizeof m->key || strlen(host) >= sizeof m->host)
    return false;
  m->order = order;
  m->copy_net = copy;
  m->rated = rated;
  const char *p = line + used;
  for (int s = 0; s < XQC_MS_COUNT; s++) {
    char *end;
    double v = strtod(p, &end);
    if (end == p || !isfinite(v) || v < RANGES[s].lo || v > RANGES[s].hi) return false;
    m->settings[s] = v;
    p = end;
  }
  if (*p) return false;
  unword(key);
  unword(host);
  memcpy(m->key, key, strlen(key) + 1); /* lengths checked above */
  memcpy(m->host, host, strlen(host) + 1);
  m->last_step = step;
  m->last_net = net;
  m->used = was_used;
  return true;
}

/* Parses text (NUL-terminated, checksum already checked) into out. */
static int parse(char *text, const char *path, xqc_members_t *out, xq_errbuf_t *eb) {
  char *p = text, *line;
  int version, used = 0, lineno = 1;
  line = next_line(&p);
  if (!line || sscanf(line, MAGIC " %d%n", &version, &used) != 1 || line[used])
    return xq_err_set(eb, XQ_EFORMAT, "%s: line 1: not a population table (no '" MAGIC "')",
                      path);
  if (version != VERSION)
    return xq_err_set(eb, XQ_EVERSION, "%s: population table version %d, this build reads %d",
                      path, version, VERSION);
  line = next_line(&p);
  lineno++;
  unsigned long long campaign, round, orders;
  char arch[XQC_MEMBER_TEXT_MAX + 1];
  if (!line || sscanf(line, "table k=%d control=%d campaign=%16llx arch=%64s round=%llu"
                      " orders=%llu%n", &out->k, &out->control, &campaign, arch, &round,
                      &orders, &used) != 6 || line[used] ||
      out->k < 2 || out->k > XQC_MEMBERS_MAX || out->control < -1 || out->control > 0 ||
      strlen(arch) >= sizeof out->arch)
    return xq_err_set(eb, XQ_EFORMAT, "%s: line 2: not a population table's header", path);
  unword(arch);
  out->campaign_id = campaign;
  out->round = round;
  out->last_order = orders;
  memcpy(out->arch, arch, strlen(arch) + 1); /* length checked above */
  for (int i = 0; i < out->k; i++) {
    line = next_line(&p);
    lineno++;
    if (!line || !parse_slot(line, i, out->k, &out->slot[i]))
      return xq_err_set(eb, XQ_EFORMAT, "%s: line %d: slot %d does not parse or is out of"
                        " range", path, lineno, i);
  }
  line = next_line(&p);
  if (!line || strncmp(line, "crc32 ", 6) || next_line(&p))
    return xq_err_set(eb, XQ_EFORMAT, "%s: line %d: %d slots, then the checksum line"
                      " expected", path, lineno + 1, out->k);
  return 0;
}

int xqc_members_load(xqc_members_t *t, const char *path, xq_errbuf_t *eb) {
  unsigned char *data = NULL;
  size_t size = 0;
  int rc = xq_read_file(path, FILE_MAX, &data, &size, eb);
  if (rc < 0) return rc;
  char *text = malloc(size + 1);
  if (!text) {
    free(data);
    return xq_err_set(eb, XQ_ENOMEM, "%s: out of memory", path);
  }
  memcpy(text, data, size);
  text[size] = '\0';
  free(data);
  /* The checksum covers every byte before the last line, "crc32 XXXXXXXX\n". */
  char *last = size >= 2 ? text + size - 2 : text;
  while (last > text && last[-1] != '\n') last--;
  unsigned crc = 0;
  int used = 0;
  if (size < 2 || text[size - 1] != '\n' || strlen(text) != size ||
      sscanf(last, "crc32 %8x%n", &crc, &used) != 1 || last[used] != '\n') {
    free(text);
    return xq_err_set(eb, XQ_EFORMAT, "%s: damaged population table: no checksum line at the"
                      " end (a torn or edited file); restore it or remove it to start the"
                      " members afresh", path);
  }
  if (xq_crc32(0, text, (size_t)(last - text)) != crc) {
    free(text);
    return xq_err_set(eb, XQ_ECHECKSUM, "%s: damaged population table: checksum mismatch;"
                      " restore it or remove it to start the members afresh", path);
  }
  xqc_members_t *tmp = calloc(1, sizeof *tmp);
  if (!tmp) {
    free(text);
    return xq_err_set(eb, XQ_ENOMEM, "%s: out of memory", path);
  }
  rc = parse(text, path, tmp, eb);
  if (rc == 0) *t = *tmp;
  free(tmp);
  free(text);
  return rc;
}
