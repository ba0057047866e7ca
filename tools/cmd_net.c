/*
 * cmd_net.c: `xqz net init` writes a freshly initialised network (the start of a
 * campaign); `xqz net info` prints a weights file's header and parameter count.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "cli_options.h"
#include "commands.h"
#include "nn/nn_file.h"
#include "nn/nn_model.h"

/* net init's command line. */
typedef struct {
  const char *out, *size;
  int blocks, channels; /* -1: not given */
  uint64_t seed, id;    /* id 0: a random one */
  bool force;
} init_opts_t;

#define O(f) XQ_OPT_FIELD(init_opts_t, f)
static const xq_opt_t rows[] = {
    {"size", XQ_OPTION_TEXT, O(size), NULL, 0, 0, .arg = "SIZE", .help = "the architecture"},
    {"blocks", XQ_OPTION_INT, O(blocks), NULL, 0, NN_MAX_BLOCKS, .arg = "B",
     .help = "residual blocks, instead of --size"},
    {"channels", XQ_OPTION_INT, O(channels), NULL, 1, NN_MAX_CHANNELS, .arg = "C",
     .help = "channels, instead of --size"},
    {"seed", XQ_OPTION_UINT, O(seed), "1", 0, XQ_OPTS_U64_MAX, .arg = "S",
     .help = "seed of the weights (decimal or 0x-hex)"},
    {"id", XQ_OPTION_UINT, O(id), NULL, 1, XQ_OPTS_U64_MAX, .arg = "ID",
     .help = "the net id, not 0 (decimal or 0x-hex)", .shown = "random"},
    {"force", XQ_OPTION_FLAG, O(force), NULL, 0, 0, .help = "replace an existing FILE"},
    {"out", XQ_OPTION_TEXT, O(out), NULL, 0, 0, .arg = "FILE", .help = "the file written"},
};
static const xq_opts_t TABLE = {rows, (int)(sizeof rows / sizeof rows[0]), XQ_OPTS_IN_RANGE};

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
          "info validates FILE and prints its header and parameter count.\n\n"
          "init's options:\n");
  xq_opts_help(&TABLE, f, 14);
}

static int net_init(int argc, char **argv) {
  init_opts_t o = {.blocks = -1, .channels = -1};
  xq_opts_defaults(&TABLE, &o);
  int st = xqz_options_parse("net init", &TABLE, &o, argc, argv, NULL, NULL, net_usage);
  if (st >= 0) return st;
  const char *out = o.out, *size = o.size;
  int blocks = o.blocks, channels = o.channels;
  uint64_t seed = o.seed, id = o.id;
  bool force = o.force;
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
