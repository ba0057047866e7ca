/* member_link.c: the socket-free pieces of the trainer's population conversation
 * (member_link.h). */
#include "member_link.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/atomic_file.h"
#include "support/crc32.h"
#include "wire/wire.h"

static int file_path(char *out, size_t n, const char *dir, const char *name, xq_errbuf_t *eb) {
  int k = snprintf(out, n, "%s/%s", dir, name);
  if (k < 0 || (size_t)k >= n)
    return xq_err_set(eb, XQ_EINVAL, "trainer directory name too long: %s", dir);
  return 0;
}

int trainer_member_file_read(const char *dir, const char *name, uint64_t *v, xq_errbuf_t *eb) {
  char path[1024], text[64];
  *v = 0;
  int rc = file_path(path, sizeof path, dir, name, eb);
  if (rc) return rc;
  FILE *f = fopen(path, "r");
  if (!f) return 0; /* nothing remembered */
  size_t got = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[got] = '\0';
  char *end;
  errno = 0;
  unsigned long long n = strtoull(text, &end, 10);
  if (errno || end == text || (*end && *end != '\n') || text[0] == '-')
    return xq_err_set(eb, XQ_EFORMAT, "%s holds no number: remove it (the trainer then asks"
                      " for any slot and carries out its next copy order)", path);
  *v = (uint64_t)n;
  return 0;
}

int trainer_member_file_write(const char *dir, const char *name, uint64_t v, xq_errbuf_t *eb) {
  char path[1024], text[32];
  int rc = file_path(path, sizeof path, dir, name, eb);
  if (rc) return rc;
  int n = snprintf(text, sizeof text, "%" PRIu64 "\n", v);
  const void *parts[] = {text};
  const size_t sizes[] = {(size_t)n};
  return xq_atomic_write(path, parts, sizes, 1, eb);
}

void trainer_member_settings_from_wire(trainer_member_settings_t *s,
                                       const Xqz__MemberSettings *w) {
  s->lr_scale = w->lr_scale;
  s->l2 = w->l2;
  s->value_weight = w->value_weight;
  s->batch = (int64_t)w->batch;
}

bool trainer_member_settings_equal(const trainer_member_settings_t *a,
                                   const trainer_member_settings_t *b) {
  return a->lr_scale == b->lr_scale && a->l2 == b->l2 && a->value_weight == b->value_weight &&
         a->batch == b->batch;
}

trainer_hello_verdict_t trainer_member_refusal(const Xqz__Error *e) {
  const char *m = e->message ? e->message : "";
  if (e->code == XQ_ERROR_CAMPAIGN || strstr(m, "campaign mismatch") ||
      strstr(m, "architecture mismatch"))
    return TRAINER_HELLO_FATAL;
  /* members.h's refusals of a claim that may succeed later: every slot held by a live
   * trainer, or the asked one held still (its old connection not yet timed out). */
  if (strstr(m, "slots are held") || strstr(m, "is held by a live trainer"))
    return TRAINER_HELLO_RETRY;
  return TRAINER_HELLO_SINGLE;
}

int trainer_member_checkpoint_check(const Xqz__Checkpoint *ck, uint64_t net, uint64_t size,
                                    uint32_t crc, xq_errbuf_t *eb) {
  if (ck->net_id != net)
    return xq_err_set(eb, XQ_EMISMATCH, "checkpoint of net %016" PRIx64 " came for the copy"
                      " order's net %016" PRIx64, ck->net_id, net);
  if ((uint64_t)ck->data.len != size)
    return xq_err_set(eb, XQ_EMISMATCH, "checkpoint of net %016" PRIx64 " holds %zu bytes,"
                      " the copy order says %" PRIu64, net, ck->data.len, size);
  uint32_t got = xq_crc32(0, ck->data.data, ck->data.len);
  if (got != crc || ck->crc32 != crc)
    return xq_err_set(eb, XQ_ECHECKSUM, "checkpoint of net %016" PRIx64 " has CRC-32 %08"
                      PRIx32 ", its message says %08" PRIx32 " and the copy order %08" PRIx32
                      ": damaged, not copied", net, got, ck->crc32, crc);
  return 0;
}
