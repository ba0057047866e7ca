/*
 * crc32.h: CRC-32 (IEEE 802.3 / zlib polynomial 0xEDB88820 reflected), the checksum of
 * xqzero's file payloads. Same value as zlib's crc32() and Python's zlib.crc32().
 */
#ifndef XQ_CRC32_H
#define XQ_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC: start with crc = 0, feed buffers in order. */
uint32_t xq_crc32(uint32_t crc, const void *data, size_t len);

#endif
