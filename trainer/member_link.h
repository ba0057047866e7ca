/*
 * member_link.h: the trainer's side of the population conversation (docs/population.md,
 * "The trainer as a member"; issue 48). The trainer says Hello with the slot it held
 * before; the coordinator's Welcome makes it a member (a slot, settings, copy orders) or
 * leaves it a single trainer. What the trainer remembers across restarts lives in two
 * small files of its --dir: member.slot (its 1-based slot) and member.order (the last
 * copy order it carried out), each one decimal number and a newline, written atomically.
 * The loop itself (requests, replies, the copy) is trainer.c's; this file holds the
 * pieces that need no socket: the files, the settings from the wire, what a refused Hello
 * means, and the checks of a donor's Checkpoint.
 */
#ifndef XQ_TRAINER_MEMBER_LINK_H
#define XQ_TRAINER_MEMBER_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "member.h"
#include "support/error.h"
#include "xqz.pb-c.h"

#define TRAINER_MEMBER_SLOT_FILE "member.slot"
#define TRAINER_MEMBER_ORDER_FILE "member.order"

/* The number in DIR/name into *v: 0 when the file is missing (nothing remembered).
 * Returns 0, or XQ_EFORMAT when it holds no number (the file named in eb; *v is 0). */
int trainer_member_file_read(const char *dir, const char *name, uint64_t *v, xq_errbuf_t *eb);
/* Writes v as the contents of DIR/name, atomically. Returns 0 or XQ_EIO (reason in eb). */
int trainer_member_file_write(const char *dir, const char *name, uint64_t v, xq_errbuf_t *eb);

/* The settings a Member carries into s (w not NULL). */
void trainer_member_settings_from_wire(trainer_member_settings_t *s,
                                       const Xqz__MemberSettings *w);
bool trainer_member_settings_equal(const trainer_member_settings_t *a,
                                   const trainer_member_settings_t *b);

/* What a trainer does with the coordinator's Error to its Hello. */
typedef enum {
  TRAINER_HELLO_SINGLE, /* an older coordinator, or a refusal of the Hello itself: go on as
                         * a single trainer */
  TRAINER_HELLO_RETRY,  /* every slot is held (or its own slot still is): ask again later */
  TRAINER_HELLO_FATAL,  /* another campaign or another architecture: stop (exit status 2) */
} trainer_hello_verdict_t;
trainer_hello_verdict_t trainer_member_refusal(const Xqz__Error *e);

/* Checks a donor's Checkpoint against the copy order's net, size and CRC-32 (Member
 * copy_net, copy_size, copy_crc32): the same net, data of copy_size bytes, and
 * copy_crc32 == Checkpoint.crc32 == the CRC-32 of the data. Returns 0, or XQ_EMISMATCH
 * (another net, another size) or XQ_ECHECKSUM with what differs named in eb. */
int trainer_member_checkpoint_check(const Xqz__Checkpoint *ck, uint64_t net, uint64_t size,
                                    uint32_t crc, xq_errbuf_t *eb);

#endif
