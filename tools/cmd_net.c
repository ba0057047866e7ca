/*
 * cmd_net.c: `xqz net init` writes a freshly initialised network (the start of a
 * campaign); `xqz net info` prints a weights file's header and parameter count.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "commands.h"
#include "nn/nn_file.h"
#include "nn/nn_model.h"

static void net_usage(FILE *f) {
  fprintf(f,
          "usage: xqz net init (--size SIZE | --blocks B --channels C)\n"
          "                    [--seed S] [--id ID] [--force] --out FILE\n"
          "       xqz net info FILE\n\n"
          "SIZE is tiny (2x16), default (6x64), large (10x128) or BxC (e.g. 4x16); a g suffix\n"
          "adds global pooling to every block (tiny-g, 2x16g), gK to every K-th block from\n"
          "the last (6x64g2); an l suffix instead adds line convolutions (a rank and file\n"
          "bias) to every block (tiny-l, 2x16l); then an a gives the net the two attack planes\n"
          "(tiny-a, 2x16la); a v widens the value head to C/4 channels (tiny-v, 2x16av); an s\n"
          "adds the survival head (tiny-s, 2x16gs, 2x16las); a final r adds the\n"
          "opponent-reply head (tiny-r, 2x16r, 2x16sr).\n"
          "docs/network.md explains the architectures.\n"
          "init writes a freshly initialised net (He-normal weights from seed S, default 1)\n"
          "atomically to FILE; its net id is ID (default: random), parent id 0, step 0.\n"
          "It refuses to replace an existing FILE unless --force is given.\n"
          "info validates FILE and prints its header and parameter count.\n");
}

/* Parses a decimal or 0x-hex unsigned integer; returns 0 on success. */
static int parse_u64(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  if (!*s || *s == '-') return -1;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out) {
  uint64_t v;
  if (parse_u64(s, &v) || v < (uint64_t)lo || v > (uint64_t)hi) return -1;
  *out = (int)v;
  return 0;
}

static int net_init(int argc, char **argv) {
  const char *out = NULL, *size = NULL;
  int blocks = -1, channels = -1;
  uint64_t seed = 1, id = 0;
  bool force = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      net_usage(stdout);
      return 0;
    }
    if (!strcmp(a, "--force")) {
      force = true;
      continue;
    }
    if (!v) {
      fprintf(stderr, "xqz net init: %s needs a value\n", a);
      return 2;
    }
    i++;
    if (!strcmp(a, "--out")) out = v;
    else if (!strcmp(a, "--size")) size = v;
    else if (!strcmp(a, "--blocks")) {
      if (parse_int(v, 0, NN_MAX_BLOCKS, &blocks)) {
        fprintf(stderr, "xqz net init: --blocks must be an integer in 0..%d, not '%s'\n",
                NN_MAX_BLOCKS, v);
        return 2;
      }
    } else if (!strcmp(a, "--channels")) {
      if (parse_int(v, 1, NN_MAX_CHANNELS, &channels)) {
        fprintf(stderr, "xqz net init: --channels must be an integer in 1..%d, not '%s'\n",
                NN_MAX_CHANNELS, v);
        return 2;
      }
    } else if (!strcmp(a, "--seed")) {
      if (parse_u64(v, &seed)) {
        fprintf(stderr, "xqz net init: --seed must be a non-negative integer, not '%s'\n", v);
        return 2;
      }
    } else if (!strcmp(a, "--id")) {
      if (parse_u64(v, &id) || id == 0) {
        fprintf(stderr, "xqz net init: --id must be a non-zero integer, not '%s'\n", v);
        return 2;
      }
    } else {
      fprintf(stderr, "xqz net init: unknown option '%s'\n", a);
      net_usage(stderr);
      return 2;
    }
  }
  nn_arch_t arch;
  if (size) {
    if (blocks >= 0 || channels >= 0) {
      fprintf(stderr, "xqz net init: give either --size or --blocks/--channels, not both\n");
      return 2;
    }
    if (nn_arch_preset(size, &arch)) {
      fprintf(stderr, "xqz net init: unknown --size '%s' (" NN_ARCH_SPELLING ")\n", size);
      return 2;
    }
  } else {
    if (blocks < 0 || channels < 0) {
      fprintf(stderr, "xqz net init: need --size, or both --blocks and --channels\n");
      return 2;
    }
    arch = nn_arch_make(blocks, channels);
  }
  if (!out) {
    fprintf(stderr, "xqz net init: need --out FILE\n");
    return 2;
  }
  /* A net file may be a campaign's only copy of weeks of training: never replace it
   * silently. */
  if (!force && access(out, F_OK) == 0) {
    fprintf(stderr, "xqz net init: %s already exists; pass --force to replace it\n", out);
    return 1;
  }
  xq_errbuf_t eb = {{0}};
  nn_model_t *m;
  int rc = nn_model_new(&m, &arch, &eb);
  if (rc) {
    fprintf(stderr, "xqz net init: %s\n", eb.msg);
    return rc == XQ_ERANGE ? 2 : 1;
  }
  nn_model_init(m, seed);
  nn_file_meta_t meta = {0};
  meta.net_id = id ? id : nn_file_new_id();
  meta.created = (int64_t)time(NULL);
  rc = nn_file_save(out, m, &meta, &eb);
  if (rc) fprintf(stderr, "xqz net init: %s\n", eb.msg);
  else {
    char name[32];
    nn_arch_name(&arch, name, sizeof name);
    printf("wrote %s: %s net, %zu parameters, id %016" PRIx64 "\n", out, name, m->nparams,
           meta.net_id);
  }
  nn_model_free(&m);
  return rc ? 1 : 0;
}

static int net_info(int argc, char **argv) {
  if (argc != 2 || argv[1][0] == '-') {
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
      net_usage(stdout);
      return 0;
    }
    fprintf(stderr, "xqz net info: expected exactly one FILE\n");
    return 2;
  }
  xq_errbuf_t eb = {{0}};
  nn_file_meta_t meta;
  nn_model_t *m;
  int rc = nn_file_load(argv[1], &m, &meta, &eb);
  if (rc) {
    fprintf(stderr, "xqz net info: %s (%s)\n", eb.msg, xq_strerror(rc));
    return 1;
  }
  char when[64] = "?";
  time_t t = (time_t)meta.created;
  struct tm tm;
  if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  printf("file:            %s\n", argv[1]);
  printf("format version:  %u\n", meta.format_version);
  printf("input version:   %u (%d planes%s)\n", meta.input_version,
         nn_arch_input_planes(&meta.arch), meta.arch.attacks ? ", with the attack planes" : "");
  printf("architecture:    %d blocks x %d channels, policy head %d ch, value head %d ch, "
         "value hidden %d\n", meta.arch.blocks, meta.arch.channels, meta.arch.policy_channels,
         meta.arch.value_channels, meta.arch.value_hidden);
  if (meta.arch.gpool_every == 0)
    printf("global pooling:  none\n");
  else {
    char name[32];
    nn_arch_name(&meta.arch, name, sizeof name);
    if (meta.arch.gpool_every == 1) printf("global pooling:  in every block (%s)\n", name);
    else
      printf("global pooling:  in the last block and every %d blocks before it (%s)\n",
             meta.arch.gpool_every, name);
  }
  printf("line convs:      %s\n", meta.arch.lines ? "in every block (rank and file bias, "
                                  "docs/network.md)" : "none");
  printf("survival head:   %s\n", meta.arch.survival ? "yes (per-piece survival, docs/network.md)"
                                  : "none");
  printf("reply head:      %s\n", meta.arch.reply ? "yes (the opponent's next move, "
                                  "docs/network.md)" : "none");
  printf("net id:          %016" PRIx64 "\n", meta.net_id);
  printf("parent id:       %016" PRIx64 "\n", meta.parent_id);
  if (meta.campaign_id)
    printf("campaign id:     %016" PRIx64 "\n", meta.campaign_id);
  else
    printf("campaign id:     unknown (format version 1, before campaign ids)\n");
  printf("training step:   %" PRId64 "\n", meta.step);
  printf("created:         %" PRId64 " (%s)\n", meta.created, when);
  printf("parameters:      %zu (+ %zu BN running statistics)\n", m->nparams, m->nstats);
  printf("payload crc32:   %08x (verified)\n", meta.payload_crc);
  printf("forward flops:   %.1f M per position\n", nn_arch_flops(&meta.arch) / 1e6);
  nn_model_free(&m);
  return 0;
}

int xqz_cmd_net(int argc, char **argv) {
  if (argc < 2) {
    net_usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "init")) return net_init(argc - 1, argv + 1);
  if (!strcmp(argv[1], "info")) return net_info(argc - 1, argv + 1);
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    net_usage(stdout);
    return 0;
  }
  fprintf(stderr, "xqz net: unknown subcommand '%s'\n", argv[1]);
  net_usage(stderr);
  return 2;
}
