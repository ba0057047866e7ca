/*
 * conv3x3.c: the fast 3x3 convolutions of the residual tower (contract in conv3x3.h),
 * by a non-square Winograd transform with batched GEMMs (nn_sgemm) over the transformed tiles.
 *
 * Rows use F(5, 3) (7 points: 0, 1, -1, 2, -2, 1/2, inf), columns F(3, 3) (5 points:
 * 0, 1, -1, 2, inf): the 10x9 board is exactly 2x3 output tiles of 5 rows x 3 columns,
 * with no padding waste; each tile reads a 7x5 input patch and becomes 35 transformed
 * points. Per point p the convolution is one GEMM over every tile of a chunk of images:
 *   M_p (T, coutp) = V_p (T, cin) . U_p (cin, coutp),   T = images * 6 tiles
 * which costs 35*6 = 210 multiply-adds per (ci, co, image) against 90*9 = 810 for direct
 * convolution (3.9x fewer), 270 for F(4,3) x F(3,3) and 324 for square F(4x4, 3x3).
 * Inside a call the data is channels-last (NHWC), channels padded to a multiple of 8, so
 * every transform is an 8-wide vector loop over channels:
 *   x NCHW -> P (chunk, 12, 11, cinp) zero-padded -> V (35, T, cinp) -> GEMMs ->
 *   M (35, T, coutp) -> output transform -> Y (90, coutp) per image -> fused bias +
 *   residual + ReLU while transposing back to NCHW.
 * Images are processed in chunks so the transformed tiles stay in L2.
 *
 * backward_data is the same forward kernel: the gradient of a padded 3x3 conv wrt its
 * input is a padded 3x3 conv of dy with the weights transposed (cin <-> cout) and
 * rotated 180 degrees, transformed per call into scratch.
 * backward_weights uses the Winograd adjoint: dU_p (cin, coutp) = V_p^T . dM_p with
 * dM = A7 dY A3^T of the output-gradient tiles, then dw = G7^T dU G5.
 * See docs/network-performance.md for the measurements and the error bounds.
 */
/*
 * The build is ISO C11, in which GCC does not contract a * b + c into fused multiply-adds
 * (-ffp-contract=off); the transforms below are chains of exactly that, so allow it for
 * this file. Clang contracts within expressions by default.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif

#include "nn/conv3x3.h"

#include <assert.h>
#include <string.h>

#include "nn/nn_bf16.h"
#include "nn/nn_blas.h"

#define H NN_BOARD_H
#define W NN_BOARD_W
#define HW NN_BOARD_HW
enum {
  WG_TILES = 6,   /* 2x3 tiles of 5x3 outputs (rows x columns): exactly the board */
  WG_PTS = 35,    /* 7x5 transformed points per tile */
  WG_PH = 12,     /* padded input plane: 12 rows (-1..10) */
  WG_PW = 11,     /* and 11 columns (-1..9) */
  WG_VEC = 8,     /* channel block: one AVX2 register of floats */
  WG_CHUNK = 6,   /* images per chunk: V, M (35 x 36 x C floats each) stay in L2 (measured) */
};

static int round8(int c) { return (c + WG_VEC - 1) / WG_VEC * WG_VEC; }

/*
 * 8x8 float transpose in registers, written with GCC vector extensions so it compiles to
 * unpack/shuffle instructions on AVX and to something correct anywhere else. Used by the
 * NCHW <-> channels-last conversions, which otherwise load or store with a large stride.
 */
typedef float wg_v8 __attribute__((vector_size(32)));
typedef int wg_i8 __attribute__((vector_size(32)));

/*
 * Unaligned loads and stores through a 4-byte-aligned, may_alias vector type (GCC's
 * idiom for an unaligned vector access; a memcpy here was compiled, for AVX2 targets, as
 * two 16-byte stores to the stack and a 32-byte reload, which stalls on store
 * forwarding). Vectors go by pointer (no vector-ABI dependence).
 */
typedef float wg_v8u __attribute__((vector_size(32), aligned(4), may_alias));

static inline void wg_load8(wg_v8 *v, const float *p) { *v = *(const wg_v8u *)p; }

static inline void wg_store8(float *p, const wg_v8 *v) { *(wg_v8u *)p = *v; }

static inline __attribute__((always_inline)) void wg_transpose8(wg_v8 r[8]) {
  const wg_i8 lo = {0, 8, 1, 9, 4, 12, 5, 13}, hi = {2, 10, 3, 11, 6, 14, 7, 15};
  const wg_i8 lo2 = {0, 1, 8, 9, 4, 5, 12, 13}, hi2 = {2, 3, 10, 11, 6, 7, 14, 15};
  const wg_i8 lo4 = {0, 1, 2, 3, 8, 9, 10, 11}, hi4 = {4, 5, 6, 7, 12, 13, 14, 15};
  wg_v8 a[8], b[8];
  for (int i = 0; i < 4; i++) {
    a[2 * i] = __builtin_shuffle(r[2 * i], r[2 * i + 1], lo);
    a[2 * i + 1] = __builtin_shuffle(r[2 * i], r[2 * i + 1], hi);
  }
  for (int i = 0; i < 2; i++) /* b[4i + j]: columns j and j + 4 of rows 4i..4i+3 */
    for (int j = 0; j < 2; j++) {
      b[4 * i + 2 * j] = __builtin_shuffle(a[4 * i + j], a[4 * i + j + 2], lo2);
      b[4 * i + 2 * j + 1] = __builtin_shuffle(a[4 * i + j], a[4 * i + j + 2], hi2);
    }
  for (int j = 0; j < 4; j++) {
    r[j] = __builtin_shuffle(b[j], b[j + 4], lo4);
    r[j + 4] = __builtin_shuffle(b[j], b[j + 4], hi4);
  }
}

/* ---- transforms (Lavin & Gray; rows F(5, 3), columns F(3, 3)) ---- */

/* G (7x3) of F(5, 3), points 0, 1, -1, 2, -2, 1/2, inf: the row direction. */
static const float WG_G7[7][3] = {
    {-1.0f / 2, 0, 0},
    {-1.0f / 3, -1.0f / 3, -1.0f / 3},
    {1.0f / 9, -1.0f / 9, 1.0f / 9},
    {1.0f / 36, 1.0f / 18, 1.0f / 9},
    {-1.0f / 60, 1.0f / 30, -1.0f / 15},
    {32.0f / 45, 16.0f / 45, 8.0f / 45},
    {0, 0, 1},
};

/* G (5x3) of F(3, 3), points 0, 1, -1, 2, inf: the column direction. */
static const float WG_G5[5][3] = {
    {1.0f / 2, 0, 0},
    {-1.0f / 2, -1.0f / 2, -1.0f / 2},
    {-1.0f / 6, 1.0f / 6, -1.0f / 6},
    {1.0f / 6, 1.0f / 3, 2.0f / 3},
    {0, 0, 1},
};

/* One 1-D input transform B^T d of F(5, 3) on 7 vectors of WG_VEC channels. */
#define WG_BT7(o, d)                                                                     \
  do {                                                                                   \
    o[0] = d[5] - 2 * d[0] + 4 * d[1] + 2.5f * d[2] - 5 * d[3] - 0.5f * d[4];            \
    o[1] = d[5] + 2 * d[1] - 2 * d[2] - 4.5f * d[3] + 0.5f * d[4];                       \
    o[2] = d[5] - 2 * d[1] + 6 * d[2] - 3.5f * d[3] - 1.5f * d[4];                       \
    o[3] = d[5] + d[1] - 1.5f * d[2] - 2 * d[3] + 1.5f * d[4];                           \
    o[4] = d[5] - d[1] + 2.5f * (d[2] - d[4]);                                           \
    o[5] = d[5] + 4 * d[1] - 5 * d[3];                                                   \
    o[6] = d[6] - 2 * d[1] + 4 * d[2] + 2.5f * d[3] - 5 * d[4] - 0.5f * d[5];            \
  } while (0)

/* One 1-D input transform B^T d of F(3, 3) on 5 vectors. */
#define WG_BT5(o, d)                                                                     \
  do {                                                                                   \
    o[0] = 2 * (d[0] - d[2]) - d[1] + d[3];                                              \
    o[1] = -2 * d[1] - d[2] + d[3];                                                      \
    o[2] = 2 * d[1] - 3 * d[2] + d[3];                                                   \
    o[3] = d[3] - d[1];                                                                  \
    o[4] = 2 * (d[1] - d[3]) - d[2] + d[4];                                              \
  } while (0)

/*
 * V tile: v[p * vstride + k] = (B7^T d B5)[p][k], p = 5 i + j, for the 7x5 patch at src
 * (row stride rs floats, column stride cs floats), channels k = 0..WG_VEC-1.
 */
static void wg_input_tile(float *restrict v, size_t vstride, const float *restrict src,
                          size_t rs, size_t cs) {
  wg_v8 t[7][5]; /* (row i of B7^T d, column j), 8 channels each */
  for (int j = 0; j < 5; j++) {
    wg_v8 d[7], o[7];
    for (int i = 0; i < 7; i++) wg_load8(&d[i], src + i * rs + j * cs);
    WG_BT7(o, d);
    for (int i = 0; i < 7; i++) t[i][j] = o[i];
  }
  for (int i = 0; i < 7; i++) {
    wg_v8 o[5];
    WG_BT5(o, t[i]);
    for (int j = 0; j < 5; j++) wg_store8(v + (size_t)(i * 5 + j) * vstride, &o[j]);
  }
}

/* One 1-D output transform A^T m of F(5, 3): 7 vectors in, 5 out. */
#define WG_AT7(o, m)                                                                     \
  do {                                                                                   \
    wg_v8 s12 = m[1] + m[2], d12 = m[1] - m[2];                                          \
    wg_v8 s34 = m[3] + m[4], d34 = m[3] - m[4];                                          \
    o[0] = m[0] + s12 + s34 + m[5];                                                      \
    o[1] = d12 + 2 * d34 + 0.5f * m[5];                                                  \
    o[2] = s12 + 4 * s34 + 0.25f * m[5];                                                 \
    o[3] = d12 + 8 * d34 + 0.125f * m[5];                                                \
    o[4] = s12 + 16 * s34 + 0.0625f * m[5] + m[6];                                       \
  } while (0)

/* One 1-D output transform A^T m of F(3, 3): 5 vectors in, 3 out. */
#define WG_AT3(o, m)                                                                     \
  do {                                                                                   \
    wg_v8 s12 = m[1] + m[2], d12 = m[1] - m[2];                                          \
    o[0] = m[0] + s12 + m[3];                                                            \
    o[1] = d12 + 2 * m[3];                                                               \
    o[2] = s12 + 4 * m[3] + m[4];                                                        \
  } while (0)

/* out[i][j][k] = (A7^T m A3)[i][j] for channel k, from the 35 points at m (stride ms). */
/* Always inlined: its 15 output vectors then stay in registers in both callers. */
static inline __attribute__((always_inline)) void wg_output_tile(wg_v8 out[5][3],
                                                                 const float *restrict m,
                                                                 size_t ms) {
  wg_v8 t[5][5];
  for (int j = 0; j < 5; j++) {
    wg_v8 d[7], o[5];
    for (int i = 0; i < 7; i++) wg_load8(&d[i], m + (size_t)(i * 5 + j) * ms);
    WG_AT7(o, d);
    for (int i = 0; i < 5; i++) t[i][j] = o[i];
  }
  for (int i = 0; i < 5; i++) WG_AT3(out[i], t[i]);
}

/* One 1-D adjoint of F(5, 3)'s output transform, A g: 5 vectors in, 7 out. */
#define WG_A7(o, g)                                                                      \
  do {                                                                                   \
    wg_v8 e = g[0] + g[2] + g[4], f = g[1] + g[3];                                       \
    wg_v8 e2 = g[0] + 4 * g[2] + 16 * g[4], f2 = 2 * g[1] + 8 * g[3];                    \
    o[0] = g[0];                                                                         \
    o[1] = e + f;                                                                        \
    o[2] = e - f;                                                                        \
    o[3] = e2 + f2;                                                                      \
    o[4] = e2 - f2;                                                                      \
    o[5] = g[0] + 0.5f * g[1] + 0.25f * g[2] + 0.125f * g[3] + 0.0625f * g[4];           \
    o[6] = g[4];                                                                         \
  } while (0)

/* One 1-D adjoint of F(3, 3)'s output transform, A3 g: 3 vectors in, 5 out. */
#define WG_A3(o, g)                                                                      \
  do {                                                                                   \
    o[0] = g[0];                                                                         \
    o[1] = g[0] + g[1] + g[2];                                                           \
    o[2] = g[0] - g[1] + g[2];                                                           \
    o[3] = g[0] + 2 * g[1] + 4 * g[2];                                                   \
    o[4] = g[2];                                                                         \
  } while (0)

/* dm[p * ms + k] = (A7 g A3^T)[p] for a 5x3 gradient tile g (rows at stride rs, cols cs). */
static void wg_grad_tile(float *restrict dm, size_t ms, const float *restrict src, size_t rs,
                         size_t cs) {
  wg_v8 t[7][3];
  for (int j = 0; j < 3; j++) {
    wg_v8 g[5], o[7];
    for (int i = 0; i < 5; i++) wg_load8(&g[i], src + i * rs + j * cs);
    WG_A7(o, g);
    for (int i = 0; i < 7; i++) t[i][j] = o[i];
  }
  for (int i = 0; i < 7; i++) {
    wg_v8 o[5];
    WG_A3(o, t[i]);
    for (int j = 0; j < 5; j++) wg_store8(dm + (size_t)(i * 5 + j) * ms, &o[j]);
  }
}

/* ---- weights ---- */

/*
 * U (35, ci_e, co_ep) from w, U_p = (G7 g G5^T)_p. Not flipped: ci_e = cin, co_e = cout,
 * g = w[co][ci]. Flipped (for backward_data): ci_e = cout, co_e = cin,
 * g = rot180(w[ci_e][co_e]). Padding columns co_e..co_ep-1 are zero. Vectorised over
 * the output channel so that U is written in contiguous rows.
 */
static void wg_weights(float *U, const float *w, int cin, int cout, bool flipped) {
  const int ci_e = flipped ? cout : cin, co_e = flipped ? cin : cout, co_ep = round8(co_e);
  const size_t pstride = (size_t)ci_e * co_ep;
  enum { B = 64 }; /* output channels per block */
  for (int a = 0; a < ci_e; a++)
    for (int b0 = 0; b0 < co_ep; b0 += B) {
      const int nb = co_ep - b0 < B ? co_ep - b0 : B;
      float g[9][B], t[7][3][B]; /* filter taps and G g, per output channel */
      for (int b = 0; b < nb; b++) {
        const int bb = b0 + b;
        if (bb >= co_e) {
          for (int k = 0; k < 9; k++) g[k][b] = 0.0f;
          continue;
        }
        const float *src =
            flipped ? w + ((size_t)a * cin + bb) * 9 : w + ((size_t)bb * cin + a) * 9;
        for (int k = 0; k < 9; k++) g[k][b] = flipped ? src[8 - k] : src[k];
      }
      for (int i = 0; i < 7; i++)
        for (int j = 0; j < 3; j++)
          for (int b = 0; b < nb; b++)
            t[i][j][b] =
                WG_G7[i][0] * g[j][b] + WG_G7[i][1] * g[3 + j][b] + WG_G7[i][2] * g[6 + j][b];
      for (int i = 0; i < 7; i++)
        for (int j = 0; j < 5; j++) {
          float *dst = U + (size_t)(i * 5 + j) * pstride + (size_t)a * co_ep + b0;
          for (int b = 0; b < nb; b++)
            dst[b] =
                t[i][0][b] * WG_G5[j][0] + t[i][1][b] * WG_G5[j][1] + t[i][2][b] * WG_G5[j][2];
        }
    }
}

/*
 * dw (cout, cin, 3, 3) += G7^T dU G5, the adjoint of wg_weights, for dU (35, cin, coutp).
 * Vectorised over the output channel.
 */
static void wg_weights_adjoint(float *dw, const float *dU, int cin, int cout) {
  const int coutp = round8(cout);
  const size_t pstride = (size_t)cin * coutp;
  enum { B = 64 };
  for (int a = 0; a < cin; a++)
    for (int b0 = 0; b0 < cout; b0 += B) {
      const int nb = cout - b0 < B ? cout - b0 : B;
      float t[3][5][B], g[3][3][B]; /* G7^T dU, then G7^T dU G5 */
      for (int r = 0; r < 3; r++)
        for (int j = 0; j < 5; j++) {
          for (int b = 0; b < nb; b++) t[r][j][b] = 0.0f;
          for (int i = 0; i < 7; i++) {
            const float c = WG_G7[i][r];
            if (c == 0.0f) continue;
            const float *src = dU + (size_t)(i * 5 + j) * pstride + (size_t)a * coutp + b0;
            for (int b = 0; b < nb; b++) t[r][j][b] += c * src[b];
          }
        }
      for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++)
          for (int b = 0; b < nb; b++)
            g[r][q][b] = t[r][0][b] * WG_G5[0][q] + t[r][1][b] * WG_G5[1][q] +
                         t[r][2][b] * WG_G5[2][q] + t[r][3][b] * WG_G5[3][q] +
                         t[r][4][b] * WG_G5[4][q];
      for (int b = 0; b < nb; b++) {
        float *d = dw + ((size_t)(b0 + b) * cin + a) * 9;
        for (int k = 0; k < 9; k++) d[k] += g[k / 3][k % 3][b];
      }
    }
}

size_t nn_conv3x3_prepared_floats(int cin, int cout) {
  return (size_t)WG_PTS * cin * round8(cout);
}

void nn_conv3x3_prepare(float *wp, const float *w, int cin, int cout) {
  assert(wp && w && cin > 0 && cout > 0);
  wg_weights(wp, w, cin, cout, false);
}

/* ---- scratch ---- */

/* Floats of the forward kernel's scratch for a chunk of nc images. */
static size_t wg_forward_scratch(int nc, int cin, int cout) {
  const size_t cinp = round8(cin), coutp = round8(cout), t = (size_t)nc * WG_TILES;
  return (size_t)nc * WG_PH * WG_PW * cinp /* P */ + WG_PTS * t * cinp /* V */ +
         WG_PTS * t * coutp /* M */ + (size_t)HW * coutp /* Y */;
}

static int chunk_of(int n) { return n < WG_CHUNK ? (n > 0 ? n : 1) : WG_CHUNK; }

size_t nn_conv3x3_scratch_floats(int n, int cin, int cout) {
  const int nc = chunk_of(n);
  size_t fwd = wg_forward_scratch(nc, cin, cout);
  size_t bwd_data = nn_conv3x3_prepared_floats(cout, cin) + wg_forward_scratch(nc, cout, cin);
  /* backward_weights: dU (35, cin, coutp) + P + V (35, T, cinp) + dM (35, T, coutp). */
  const size_t cinp = round8(cin), coutp = round8(cout), t = (size_t)nc * WG_TILES;
  size_t bwd_w = (size_t)WG_PTS * cin * coutp + WG_PTS * t * (cinp + coutp) +
                 (size_t)nc * WG_PH * WG_PW * (cinp > coutp ? cinp : coutp);
  size_t m = fwd > bwd_data ? fwd : bwd_data;
  return m > bwd_w ? m : bwd_w;
}

/* ---- layout helpers ---- */

/*
 * P (nc, 12, 11, cp) <- x (nc, c, 10, 9): channels last, a one-cell zero border on top
 * and one right and below, for the 2x3 tiles of 7x5 patches. The border is
 * written only when `border` is set: later chunks of one call reuse the zeros of the
 * first (same P, same cp, no more images).
 */
static void wg_pad_nhwc(float *P, const float *x, int nc, int c, bool border) {
  const int cp = round8(c);
  for (int i = 0; i < nc; i++) {
    float *Pi = P + (size_t)i * WG_PH * WG_PW * cp; /* (12, 11, cp) */
    const float *xi = x + (size_t)i * c * HW;         /* (c, 10, 9) */
    /* The border: rows 0 and 11, and columns 0 and 10 of rows 1..10. */
    if (border) {
      memset(Pi, 0, sizeof(float) * WG_PW * cp);
      memset(Pi + (size_t)(H + 1) * WG_PW * cp, 0,
             sizeof(float) * (WG_PH - H - 1) * WG_PW * cp);
      for (int r = 1; r <= H; r++) {
        memset(Pi + (size_t)r * WG_PW * cp, 0, sizeof(float) * cp);
        memset(Pi + ((size_t)r * WG_PW + W + 1) * cp, 0, sizeof(float) * (WG_PW - W - 1) * cp);
      }
    }
    /*
     * The interior, 8 channels at a time: rows of 8 cells from 8 channels are
     * transposed in registers into 8 cells of 8 channels; the ninth column and a last
     * partial block of channels go one float at a time.
     */
    for (int cb = 0; cb < cp; cb += WG_VEC) {
      const int nk = c - cb < WG_VEC ? c - cb : WG_VEC;
      for (int r = 0; r < H; r++) {
        float *dst = Pi + ((size_t)(r + 1) * WG_PW + 1) * cp + cb; /* cell (r, 0) */
        const float *src = xi + (size_t)cb * HW + r * W;           /* (nk, 9) at stride 90 */
        /* Cells 0..7 through one register transpose, a partial block's missing channels
         * as zeros; then the ninth column. */
        wg_v8 v[8];
        for (int k = 0; k < 8; k++) {
          if (k < nk) wg_load8(&v[k], src + (size_t)k * HW);
          else v[k] = (wg_v8){0, 0, 0, 0, 0, 0, 0, 0};
        }
        wg_transpose8(v);
        for (int q = 0; q < 8; q++) wg_store8(dst + (size_t)q * cp, &v[q]);
        _Static_assert(W == 9, "a board row is 8 cells and one");
        for (int k = 0; k < WG_VEC; k++)
          dst[(size_t)8 * cp + k] = k < nk ? src[(size_t)k * HW + 8] : 0.0f;
      }
    }
  }
}

/* V (35, nc*6, cp) <- transformed 7x5 patches of P (nc, 12, 11, cp). */
static void wg_input_transform(float *V, const float *P, int nc, int cp) {
  const size_t t_all = (size_t)nc * WG_TILES, vstride = t_all * cp;
  for (int i = 0; i < nc; i++)
    for (int ty = 0; ty < 2; ty++)
      for (int tx = 0; tx < 3; tx++) {
        const size_t t = (size_t)i * WG_TILES + ty * 3 + tx;
        const float *base = P + (((size_t)i * WG_PH + ty * 5) * WG_PW + tx * 3) * cp;
        for (int cb = 0; cb < cp; cb += WG_VEC)
          wg_input_tile(V + t * cp + cb, vstride, base + cb, (size_t)WG_PW * cp, cp);
      }
}

/*
 * The forward kernel on prepared U (35, cin, coutp); x NCHW, y NCHW. Processes the
 * batch in chunks; scratch holds wg_forward_scratch(chunk).
 */
/* The output transform of image i's 6 tiles (of T in M) into Y (90, coutp). */
static inline void wg_output_image(float *Y, const float *M, int i, size_t T, int coutp) {
  for (int ty = 0; ty < 2; ty++)
    for (int tx = 0; tx < 3; tx++) {
      const size_t t = (size_t)i * WG_TILES + ty * 3 + tx;
      for (int cb = 0; cb < coutp; cb += WG_VEC) {
        wg_v8 o[5][3];
        wg_output_tile(o, M + t * coutp + cb, T * coutp);
        for (int r = 0; r < 5; r++)
          for (int q = 0; q < 3; q++) {
            float *dst = Y + (size_t)((ty * 5 + r) * W + tx * 3 + q) * coutp + cb;
            wg_store8(dst, &o[r][q]);
          }
      }
    }
}

/* The fused epilogue on 8 values: dst = act(v + b + res), res NULL for none. Both forward
 * paths use it, so they round alike. (Vectors go by pointer: by value they change the ABI
 * of a build without AVX.) */
static inline __attribute__((always_inline)) void wg_finish(float *dst, const wg_v8 *v,
                                                            const wg_v8 *b, const float *res,
                                                            bool relu) {
  const wg_v8 zero = {0, 0, 0, 0, 0, 0, 0, 0};
  wg_v8 t = *v + *b;
  if (res) {
    wg_v8 rv;
    wg_load8(&rv, res);
    t += rv;
  }
  if (relu) t = (wg_v8)((wg_i8)t & (t > zero)); /* max(t, 0) */
  wg_store8(dst, &t);
}

/* 8 whole channels from cb: Y (90, coutp) back to NCHW yi with the fused epilogue, 8
 * channels x 8 cells per register transpose; returns the first cell not done (the ninth
 * column's tail is done one float at a time by the caller). */
static inline int wg_epilogue8(float *yi, const float *ri, const float *Y, const float *bias,
                               bool relu, int cb, int coutp) {
  wg_v8 bv[8];
  for (int k = 0; k < 8; k++) {
    const float b = bias ? bias[cb + k] : 0.0f;
    bv[k] = (wg_v8){b, b, b, b, b, b, b, b};
  }
  int p0 = 0;
  for (; p0 + 8 <= HW; p0 += 8) {
    wg_v8 v[8];
    for (int q = 0; q < 8; q++) wg_load8(&v[q], Y + (size_t)(p0 + q) * coutp + cb);
    wg_transpose8(v); /* v[k] = channel cb + k, cells p0..p0+7 */
    for (int k = 0; k < 8; k++) {
      const size_t o = (size_t)(cb + k) * HW + p0;
      wg_finish(yi + o, &v[k], &bv[k], ri ? ri + o : NULL, relu);
    }
  }
  return p0;
}

/*
 * Y (90, coutp) of one image back to NCHW yi (cout, 90) with bias, residual ri and ReLU
 * fused. yi may alias ri: every value is read before it is written.
 */
static inline void wg_epilogue(float *yi, const float *ri, const float *Y, const float *bias,
                               bool relu, int cout, int coutp) {
  for (int cb = 0; cb < cout; cb += WG_VEC) {
    const int nk = cout - cb < WG_VEC ? cout - cb : WG_VEC;
    int p0 = nk == WG_VEC ? wg_epilogue8(yi, ri, Y, bias, relu, cb, coutp) : 0;
    for (int k = 0; k < nk; k++) {
      const int co = cb + k;
      const float b = bias ? bias[co] : 0.0f;
      for (int pos = p0; pos < HW; pos++) {
        float v = Y[(size_t)pos * coutp + co] + b;
        if (ri) v += ri[(size_t)co * HW + pos];
        if (relu) v = v > 0.0f ? v : 0.0f;
        yi[(size_t)co * HW + pos] = v;
      }
    }
  }
}

/* M (35, T, coutp) <- the 35 GEMMs of a chunk of nc images whose input transform V
 * (35, T, cinp) is done; U: prepared weights (35, cin, coutp), or, with U16 set, their bf16
 * copy (nn_bf16.h; V is then converted in place). */
static void wg_multiply(float *M, float *V, const float *U, const uint16_t *U16, int nc,
                        int cin, int cout) {
  const int cinp = round8(cin), coutp = round8(cout);
  const size_t T = (size_t)nc * WG_TILES;
  if (U16) {
    nn_bf16_wg_multiply(M, V, U16, (int)T, cin, cout);
    return;
  }
  for (int p = 0; p < WG_PTS; p++)
    nn_sgemm(CblasNoTrans, CblasNoTrans, (int)T, coutp, cin, 1.0f, V + p * T * cinp, cinp,
             U + (size_t)p * cin * coutp, coutp, 0.0f, M + p * T * coutp, coutp);
}

static void wg_forward(float *y, float *scratch, const float *x, const float *U,
                       const uint16_t *U16, const float *bias, const float *residual, bool relu, int n, int cin,
                       int cout) {
  const int cinp = round8(cin), coutp = round8(cout), nc_max = chunk_of(n);
  for (int n0 = 0; n0 < n; n0 += nc_max) {
    const int nc = n - n0 < nc_max ? n - n0 : nc_max;
    const size_t T = (size_t)nc * WG_TILES;
    float *P = scratch;                                        /* (nc, 12, 11, cinp) */
    float *V = P + (size_t)nc * WG_PH * WG_PW * cinp;        /* (35, T, cinp) */
    float *M = V + WG_PTS * T * cinp;                          /* (35, T, coutp) */
    float *Y = M + WG_PTS * T * coutp;                         /* (90, coutp) */
    wg_pad_nhwc(P, x + (size_t)n0 * cin * HW, nc, cin, n0 == 0);
    wg_input_transform(V, P, nc, cinp);
    wg_multiply(M, V, U, U16, nc, cin, cout);
    for (int i = 0; i < nc; i++) {
      wg_output_image(Y, M, i, T, coutp);
      wg_epilogue(y + (size_t)(n0 + i) * cout * HW,
                  residual ? residual + (size_t)(n0 + i) * cout * HW : NULL, Y, bias, relu,
                  cout, coutp);
    }
  }
}

/* ---- the resident layout: the inference tower between convs (conv3x3.h) ---- */

size_t nn_conv3x3_resident_floats(int n, int c) {
  return (size_t)n * WG_PH * WG_PW * round8(c);
}

int nn_conv3x3_resident_chunk(void) { return WG_CHUNK; }

void nn_conv3x3_to_resident(float *P, const float *x, int n, int c) {
  assert(P && x && n >= 0 && c > 0);
  wg_pad_nhwc(P, x, n, c, false);
}

void nn_conv3x3_from_resident(float *x, const float *P, int n, int c) {
  assert(x && P && n >= 0 && c > 0);
  const int cp = round8(c);
  for (int i = 0; i < n; i++) {
    const float *Pi = P + (size_t)i * WG_PH * WG_PW * cp;
    float *xi = x + (size_t)i * c * HW;
    for (int cb = 0; cb < c; cb += WG_VEC) {
      const int nk = c - cb < WG_VEC ? c - cb : WG_VEC;
      for (int r = 0; r < H; r++) {
        const float *src = Pi + ((size_t)(r + 1) * WG_PW + 1) * cp + cb; /* cell (r, 0) */
        float *dst = xi + (size_t)cb * HW + r * W;
        int q0 = 0;
        if (nk == WG_VEC) { /* cells 0..7 of 8 channels through one register transpose */
          wg_v8 v[8];
          for (int q = 0; q < 8; q++) wg_load8(&v[q], src + (size_t)q * cp);
          wg_transpose8(v);
          for (int k = 0; k < 8; k++) wg_store8(dst + (size_t)k * HW, &v[k]);
          q0 = 8;
        }
        for (int q = q0; q < W; q++)
          for (int k = 0; k < nk; k++) dst[(size_t)k * HW + q] = src[(size_t)q * cp + k];
      }
    }
  }
}

/*
 * Image i's 6 tiles of M through the output transform, the bias, the residual and the
 * ReLU, straight into the interior of its padded plane Py (12, 11, coutp). Pres (the same
 * layout) may be Py. The arithmetic and its order are wg_output_image's then
 * wg_epilogue's, so both paths give the same bits.
 */
static void wg_output_resident(float *Py, const float *Pres, const float *M, int i, size_t T,
                               const float *bias, bool relu, int cout, int coutp) {
  const wg_v8 zero = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int ty = 0; ty < 2; ty++)
    for (int tx = 0; tx < 3; tx++) {
      const size_t t = (size_t)i * WG_TILES + ty * 3 + tx;
      /* The tile's channels in order: M's rows are read front to back, as in
       * wg_output_image. */
      for (int cb = 0; cb < coutp; cb += WG_VEC) {
        wg_v8 bv = zero;
        if (bias)
          for (int k = 0; k < WG_VEC && cb + k < cout; k++) bv[k] = bias[cb + k];
        wg_v8 o[5][3];
        wg_output_tile(o, M + t * coutp + cb, T * coutp);
        for (int r = 0; r < 5; r++)
          for (int q = 0; q < 3; q++) {
            const size_t off = ((size_t)(1 + ty * 5 + r) * WG_PW + 1 + tx * 3 + q) * coutp + cb;
            wg_finish(Py + off, &o[r][q], &bv, Pres ? Pres + off : NULL, relu);
          }
      }
    }
}

static void wg_forward_resident(float *Py, float *scratch, const float *Px, const float *wp,
                                const uint16_t *wp16, const float *bias, const float *Pres,
                                bool relu, int n, int cin, int cout) {
  assert(Py && scratch && Px && (wp || wp16) && n >= 0 && cin > 0 && cout > 0);
  const int cinp = round8(cin), coutp = round8(cout), nc_max = chunk_of(n);
  const size_t plane_in = (size_t)WG_PH * WG_PW * cinp, plane_out = (size_t)WG_PH * WG_PW * coutp;
  for (int n0 = 0; n0 < n; n0 += nc_max) {
    const int nc = n - n0 < nc_max ? n - n0 : nc_max;
    const size_t T = (size_t)nc * WG_TILES;
    float *V = scratch;                /* (35, T, cinp) */
    float *M = V + WG_PTS * T * cinp;  /* (35, T, coutp) */
    wg_input_transform(V, Px + n0 * plane_in, nc, cinp);
    wg_multiply(M, V, wp, wp16, nc, cin, cout);
    for (int i = 0; i < nc; i++)
      wg_output_resident(Py + (n0 + i) * plane_out, Pres ? Pres + (n0 + i) * plane_out : NULL,
                         M, i, T, bias, relu, cout, coutp);
  }
}

void nn_conv3x3_forward_resident(float *Py, float *scratch, const float *Px, const float *wp,
                                 const float *bias, const float *Pres, bool relu, int n,
                                 int cin, int cout) {
  wg_forward_resident(Py, scratch, Px, wp, NULL, bias, Pres, relu, n, cin, cout);
}

void nn_conv3x3_forward_resident_bf16(float *Py, float *scratch, const float *Px,
                                      const uint16_t *wp16, const float *bias,
                                      const float *Pres, bool relu, int n, int cin, int cout) {
  wg_forward_resident(Py, scratch, Px, NULL, wp16, bias, Pres, relu, n, cin, cout);
}

void nn_conv3x3_forward(float *y, float *scratch, const float *x, const float *wp,
                        const float *bias, const float *residual, bool relu, int n, int cin,
                        int cout) {
  assert(y && scratch && x && wp && n >= 0 && cin > 0 && cout > 0);
  assert(y != x);
  wg_forward(y, scratch, x, wp, NULL, bias, residual, relu, n, cin, cout);
}

void nn_conv3x3_forward_bf16(float *y, float *scratch, const float *x, const uint16_t *wp16,
                             const float *bias, const float *residual, bool relu, int n,
                             int cin, int cout) {
  assert(y && scratch && x && wp16 && n >= 0 && cin > 0 && cout > 0);
  assert(y != x);
  wg_forward(y, scratch, x, NULL, wp16, bias, residual, relu, n, cin, cout);
}

void nn_conv3x3_backward_data(float *dx, float *scratch, const float *dy, const float *w,
                              int n, int cin, int cout) {
  assert(dx && scratch && dy && w && n >= 0 && cin > 0 && cout > 0);
  float *U = scratch; /* (35, cout, round8(cin)): transposed, rotated filters */
  wg_weights(U, w, cin, cout, true);
  wg_forward(dx, U + nn_conv3x3_prepared_floats(cout, cin), dy, U, NULL, NULL, NULL, false, n,
             cout, cin);
}

void nn_conv3x3_backward_weights(float *dw, float *scratch, const float *dy, const float *x,
                                 int n, int cin, int cout) {
  assert(dw && scratch && dy && x && n >= 0 && cin > 0 && cout > 0);
  const int cinp = round8(cin), coutp = round8(cout), nc_max = chunk_of(n);
  float *dU = scratch; /* (35, cin, coutp): summed over the batch */
  /* P first, at one place for every chunk: a later chunk relies on the zero border the
   * first one wrote, also when the last chunk is shorter (V and dM shrink with it). */
  float *P = dU + (size_t)WG_PTS * cin * coutp; /* (nc, 12, 11, max(cinp, coutp)) */
  float *rest = P + (size_t)nc_max * WG_PH * WG_PW * (cinp > coutp ? cinp : coutp);
  for (int n0 = 0; n0 < n; n0 += nc_max) {
    const int nc = n - n0 < nc_max ? n - n0 : nc_max;
    const size_t T = (size_t)nc * WG_TILES;
    float *V = rest;                    /* (35, T, cinp) */
    float *dM = V + WG_PTS * T * cinp;  /* (35, T, coutp) */
    wg_pad_nhwc(P, x + (size_t)n0 * cin * HW, nc, cin, n0 == 0 || cinp != coutp);
    wg_input_transform(V, P, nc, cinp);
    /*
     * dy in the same padded layout, shifted so the 5x3 tile (ty, tx) starts at
     * P[1 + 5ty][1 + 3tx] (the tiles cover the board exactly).
     */
    wg_pad_nhwc(P, dy + (size_t)n0 * cout * HW, nc, cout, n0 == 0 || cinp != coutp);
    for (int i = 0; i < nc; i++)
      for (int ty = 0; ty < 2; ty++)
        for (int tx = 0; tx < 3; tx++) {
          const size_t t = (size_t)i * WG_TILES + ty * 3 + tx;
          const float *base =
              P + (((size_t)i * WG_PH + 1 + ty * 5) * WG_PW + 1 + tx * 3) * coutp;
          for (int cb = 0; cb < coutp; cb += WG_VEC)
            wg_grad_tile(dM + t * coutp + cb, T * coutp, base + cb, (size_t)WG_PW * coutp,
                         coutp);
        }
    for (int p = 0; p < WG_PTS; p++)
      nn_sgemm(CblasTrans, CblasNoTrans, cin, coutp, (int)T, 1.0f,
                  V + p * T * cinp, cinp, dM + p * T * coutp, coutp, n0 ? 1.0f : 0.0f,
                  dU + (size_t)p * cin * coutp, coutp);
  }
  if (n == 0) return;
  wg_weights_adjoint(dw, dU, cin, cout);
}
