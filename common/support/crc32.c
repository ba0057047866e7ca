/* crc32.c: table-driven CRC-32 (slice-by-1; payloads are checked once per load). */
#include "support/crc32.h"

static uint32_t crc_table[256];
static int crc_table_ready;

static void crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[i] = c;
  }
  crc_table_ready = 1;
}

uint32_t xq_crc32(uint32_t crc, const void *data, size_t len) {
  /* The table is deterministic, so a benign race between two first callers writes the
   * same values; still, callers load files from one thread at start-up. */
  if (!crc_table_ready) crc_init();
  const unsigned char *p = data;
  crc = ~crc;
  for (size_t i = 0; i < len; i++) crc = crc_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}
