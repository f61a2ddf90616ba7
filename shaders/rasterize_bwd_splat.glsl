// rasterize_bwd_splat.glsl: body of the per-splat rasterize backward (`rasterize_bwd: splat`):
// rasterize_bwd_splat.comp (float atomic add), rasterize_bwd_splat_cas.comp (compare-and-swap)
// and rasterize_bwd_splat_det.comp (64-bit fixed point, deterministic), as grad2d_add.glsl says.
//
// The per-pixel backward (rasterize_bwd.glsl) walks a tile's splats with one thread per pixel and
// pays, for every splat, a subgroup reduction of its 9 gradient sums and their atomics; a dense
// tile is also one long workgroup. Here a subgroup of BUCKET lanes owns a run of BUCKET
// consecutive splats of one tile (lane i: the run's i-th splat, front to back) and sums each
// splat's gradient in that lane's registers: no reduction, and one set of atomics per splat and
// run. The runs of a tile are independent: the forward (rasterize_fwd_bucket.comp) stored, for
// every run and pixel, the compositing state in front of the run's first splat (colour so far C,
// transmittance T). The pixels go through the run as a pipeline: at step s lane i works on pixel
// s - i, with the state lane i - 1 left for that pixel one step earlier (a subgroup shuffle up);
// lane 0 takes each pixel's stored state. After the last lane a pixel's state is dropped.
//
// Per pixel and splat (alpha = min(alpha_max, o G), G = exp(-sigma), out = the rendered colour,
// background included): dL/drgb += alpha T dL/dpix; the colour behind the splat times the
// transmittance in front of it is T B = (out - C') / (1 - alpha), C' = C + rgb alpha T the colour
// up to and including the splat, so dL/dalpha = dot(rgb T - T B, dL/dpix) and from it the
// opacity, 2D mean and conic terms (add_alpha_grad, shared with rasterize_bwd.glsl); then C <- C', T <- T (1 - alpha).
// A splat touches only pixels in front of the pixel's last contributor (the forward's `last`),
// so states the forward never wrote (pixels finished before the run) are never used. A run only
// walks the tile rows its splats can reach, and each lane looks only at pixels in its splat's box:
// |dy| <= sqrt(2 ln(255 o) cov_yy) for alpha >= 1/255 (sigma >= dy^2 / (2 cov_yy) for any dx),
// |dx| likewise with cov_xx, plus a pixel of margin.
//
// `bwd_run_pixels: active` (COMPACT 1): before the walk the subgroup lists, in pixel order, the
// pixels of those rows inside the union of its lanes' boxes whose last contributor lies past the
// run's first splat (a subgroup ballot per 32 pixels), and the pipeline walks that list instead
// of every pixel of the rows. The pixels left out are ones every lane skips anyway (outside its
// box, or finished before the run), so each lane sums the same terms in the same order: the
// same gradients, bit for bit, and fewer steps where a run's splats are small or its tile's
// pixels finish early. `covered` (COMPACT 2) also leaves out the pixels of the union box that
// no lane's box holds (a subgroup OR of the boxes as a 256-bit tile mask): small splats spread
// over a tile leave gaps in their union box that every lane skips.
//
// The workgroup is GS_BUCKET_GROUP subgroups of BUCKET lanes, the runs of one group entry
// (bucket_alloc.comp); the tile's dL/dpix, last contributors and rendered colours are staged once
// in shared memory. BUCKET must be the subgroup size the kernel runs with (the host sets it from
// the device's fixed subgroup size and refuses devices whose size varies).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require

#define GS_GLSL 1
#include "gs_train_shared.h"
#include "splat_box.glsl"

layout(local_size_x_id = GS_SPEC_BWD_SPLAT_WG) in;
layout(constant_id = GS_SPEC_BWD_SIGMA_SKIP) const uint SIGMA_SKIP = 1u;
layout(constant_id = GS_SPEC_BWD_ALPHA_MAX) const float ALPHA_MAX = GS_ALPHA_MAX_F;
layout(constant_id = GS_SPEC_BWD_BUCKET) const uint BUCKET = 32u;
layout(constant_id = GS_SPEC_BWD_COMPACT) const uint COMPACT = 0u;
layout(constant_id = GS_SPEC_BWD_STEP) const uint STEP = 0u;
layout(constant_id = GS_SPEC_BWD_DRAIN) const uint DRAIN = 0u;
layout(constant_id = GS_SPEC_BWD_STATE) const uint STATE = 0u;
layout(constant_id = GS_SPEC_BWD_CHAIN) const uint CHAIN = 1u;

layout(std430, binding = 0) readonly buffer Ranges { uint ranges[]; };
layout(std430, binding = 1) readonly buffer Values { uint values[]; };
layout(std430, binding = 2) readonly buffer Splats { gs_splat2d splats[]; };
layout(std430, binding = 3) readonly buffer Rgb { float out_rgb[]; };
layout(std430, binding = 4) readonly buffer Last { uint last[]; };
layout(std430, binding = 5) readonly buffer Dl { float dl[]; };
#define GS_GRAD_BINDING 6
#include "grad2d_add.glsl"
layout(std430, binding = 7) readonly buffer Groups { uint groups[]; };
layout(std430, binding = 8) readonly buffer State { vec4 bucket_state[]; };
layout(std430, binding = 9) readonly buffer TileMax { uint tile_maxlast[]; };
layout(std430, binding = 10) readonly buffer Meta { uint meta[]; };
layout(push_constant) uniform PC { gs_pc_raster_splat pc; };

// Per run: (C, T) per pixel, staged from bucket_state (`bwd_state: shared`); `global` reads the
// states from bucket_state itself and needs no such copy (one element).
const uint STATE_ELEMS = STATE != 0u ? 1u : uint(GS_BUCKET_GROUP * GS_RASTER_WG);
shared vec4 s_state[STATE_ELEMS];
shared vec4 s_dl[GS_RASTER_WG]; // dL/dpix, last contributor (bits)
// The rendered colour, or (`bwd_step: dot`) its dot product with dL/dpix.
const uint OUT_ELEMS = STEP == 3u ? 1u : uint(GS_RASTER_WG);
const uint OD_ELEMS = STEP == 3u ? uint(GS_RASTER_WG) : 1u;
shared vec3 s_out[OUT_ELEMS];
shared float s_od[OD_ELEMS];
shared uint s_list[GS_BUCKET_GROUP * GS_RASTER_WG];  // per run (COMPACT): the pixels it walks
shared uint s_cover[GS_BUCKET_GROUP * GS_RASTER_WG / 32]; // per run (COMPACT 2): its boxes' mask

// The tile pixel at entry i of a run's walk: its list (COMPACT, at lbase) or its rows from plo.
uint walk_pixel(uint lbase, uint plo, uint i) {
  return COMPACT != 0u ? s_list[lbase + i] : plo + i;
}

// `bwd_step: dot` (STEP 3) carries through the pipeline, instead of a pixel's colour so far C and
// transmittance T, (w, T) with w = dot(C, dL/dpix): the only use of C is dot(out - C', dL/dpix)
// (out the rendered colour, C' the colour up to and including the splat), which is
// dot(out, dL/dpix) - w', w' = w + alpha T dot(rgb, dL/dpix). A state is a vec4 with (w, T) in
// x and y; a stored (C, T) becomes one at tile pixel p here, and a state passes from lane to lane
// as two floats instead of four (shuffle_state).
vec4 state_at(vec4 st, uint p) {
  return STEP == 3u ? vec4(dot(st.xyz, s_dl[p].xyz), st.w, 0.0, 0.0) : st;
}

vec4 shuffle_state(vec4 st, uint from) {
  return STEP == 3u ? vec4(subgroupShuffle(st.xy, from), 0.0, 0.0) : subgroupShuffle(st, from);
}

vec4 shuffle_state_up(vec4 st) {
  return STEP == 3u ? vec4(subgroupShuffleUp(st.xy, 1u), 0.0, 0.0) : subgroupShuffleUp(st, 1u);
}

// Tile pixel p's rendered colour as the step takes it: (dot(out, dL/dpix), 0, 0) for `dot`.
vec3 out_at(uint p) { return STEP == 3u ? vec3(s_od[p], 0.0, 0.0) : s_out[p]; }

// `bwd_state: global`: the stored state in front of the run (its bucket_state block at sbase) of
// walk entry e, zero past the walk's cnt entries. The subgroup loads the states of BUCKET entries
// at once, one per lane, a block ahead of the one lane 0 takes its states from by a shuffle.
vec4 entry_state(uint sbase, uint lbase, uint plo, uint cnt, uint e) {
  if (e >= cnt) return vec4(0.0);
  uint p = walk_pixel(lbase, plo, e);
  return state_at(bucket_state[sbase + p], p);
}

// The stored state of walk entry e for lane 0: from the run's copy in shared memory (at lbase,
// STATE 0), or (STATE 1) from the blocks the subgroup loaded: cur holds block blk's states (lane
// L: entry blk BUCKET + L), nxt the next block's, and moving on (e at most one block past blk,
// uniform; in uniform control flow) loads the block after that.
vec4 run_state(uint sbase, uint lbase, uint plo, uint cnt, uint e, inout uint blk,
               inout vec4 cur, inout vec4 nxt) {
  if (STATE == 0u) {
    uint p = walk_pixel(lbase, plo, e);
    return state_at(s_state[lbase + p], p);
  }
  if (e / BUCKET != blk) {
    blk++;
    cur = nxt;
    nxt = entry_state(sbase, lbase, plo, cnt, (blk + 1u) * BUCKET + gl_SubgroupInvocationID);
  }
  return shuffle_state(cur, e % BUCKET);
}

// A lane's splat of a run: its position in the tile's list and id, 2D mean, conic, colour and
// opacity, and its box in tile pixels, [x0, x1] x [y0, y1] (empty: x0 > x1), from the extents
// above. A lane past the tile's live splats has none (has false, an empty box).
struct lane_splat {
  bool has;
  uint pos, id;
  vec2 mean;
  vec3 cn;
  vec4 rgbo;
  int x0, x1, y0, y1;
};

lane_splat load_splat(uint pos, uint live, uint start, uint ox, uint oy) {
  lane_splat sp;
  sp.pos = pos;
  sp.has = pos < live;
  sp.id = sp.has ? values[start + pos] : 0u;
  sp.mean = vec2(0.0);
  sp.cn = vec3(0.0);
  sp.rgbo = vec4(0.0);
  sp.x0 = GS_RASTER_TILE, sp.x1 = -1, sp.y0 = GS_RASTER_TILE, sp.y1 = -1;
  if (sp.has) {
    uint id = sp.id;
    sp.mean = vec2(splats[id].mean2d[0], splats[id].mean2d[1]);
    sp.cn = vec3(splats[id].conic[0], splats[id].conic[1], splats[id].conic[2]);
    sp.rgbo = vec4(splats[id].rgb[0], splats[id].rgb[1], splats[id].rgb[2], splats[id].opacity);
    vec2 e = splat_extent(sp.rgbo.w, splats[id].cov2d[0], splats[id].cov2d[2]);
    ivec4 box = splat_box(sp.mean - vec2(float(ox), float(oy)), e);
    sp.x0 = box.x, sp.x1 = box.y, sp.y0 = box.z, sp.y1 = box.w;
  }
  return sp;
}

// A run's walk (uniform control flow, the whole subgroup): its entries, 0 when none of its
// splats reaches a pixel centre of the tile; *plo the first pixel of the rows its splats reach.
// COMPACT lists the entries in s_list from lbase (COMPACT 2 with the run's box mask at cbase of
// s_cover); `rows` lists them too when `list` is set (the chained walk), else they are plo
// onwards. first: the run's first splat in the tile's list.
uint run_walk(lane_splat sp, uint first, uint lbase, uint cbase, bool list, out uint plo) {
  uint lane = gl_SubgroupInvocationID;
  int uy0 = subgroupMin(sp.y0), uy1 = subgroupMax(sp.y1);
  plo = 0u;
  if (uy0 > uy1) return 0u; // no splat of the run reaches a pixel centre of this tile
  plo = uint(uy0) * GS_RASTER_TILE;
  uint phi = uint(uy1) * GS_RASTER_TILE + GS_RASTER_TILE - 1u;
  uint cnt = phi - plo + 1u;
  if (COMPACT != 0u) {
    int ux0 = subgroupMin(sp.x0), ux1 = subgroupMax(sp.x1);
    // COMPACT 2 (covered): the union of the lanes' boxes as a tile mask, two rows per word, in
    // the run's words of s_cover (every lane writes the same value).
    if (COMPACT == 2u) {
      uint rowbits =
          sp.x0 > sp.x1 ? 0u : ((2u << uint(sp.x1)) - 1u) & ~((1u << uint(sp.x0)) - 1u);
      for (int k = 0; k < GS_RASTER_WG / 32; k++) {
        uint wbits = (2 * k >= sp.y0 && 2 * k <= sp.y1 ? rowbits : 0u) |
                     (2 * k + 1 >= sp.y0 && 2 * k + 1 <= sp.y1 ? rowbits << 16u : 0u);
        uint word = subgroupOr(wbits);
        if (lane == 0u) s_cover[cbase + uint(k)] = word;
      }
      subgroupMemoryBarrierShared();
      subgroupBarrier();
    }
    cnt = 0u;
    for (uint c = plo; c <= phi; c += BUCKET) {
      uint p = c + lane;
      int px = int(p % GS_RASTER_TILE);
      bool act = p <= phi && px >= ux0 && px <= ux1 && first < floatBitsToUint(s_dl[p].w);
      if (COMPACT == 2u && act) act = (s_cover[cbase + p / 32u] & (1u << (p % 32u))) != 0u;
      uvec4 bal = subgroupBallot(act);
      if (act) s_list[lbase + cnt + subgroupBallotExclusiveBitCount(bal)] = p;
      cnt += subgroupBallotBitCount(bal);
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
  } else if (list) {
    for (uint i = lane; i < cnt; i += BUCKET) s_list[lbase + i] = plo + i;
    subgroupMemoryBarrierShared();
    subgroupBarrier();
  }
  return cnt;
}

// `bwd_drain: trim`: the entries of a run's walk (cnt of them, listed from lbase, or rows from
// plo) up to the last pixel of the lane's box; 0 for a lane without a box in the tile.
uint entries_in_box(lane_splat sp, uint lbase, uint plo, uint cnt, bool list) {
  if (!sp.has || sp.x0 > sp.x1 || sp.y0 > sp.y1) return 0u;
  uint pend = uint(sp.y1) * GS_RASTER_TILE + uint(sp.x1); // the box's last pixel
  if (COMPACT == 0u && !list) return pend - plo + 1u; // rows walks every pixel from plo
  uint lo = 0u, hi = cnt; // the list is in pixel order
  while (lo < hi) {
    uint mid = (lo + hi) / 2u;
    if (s_list[lbase + mid] <= pend)
      lo = mid + 1u;
    else
      hi = mid;
  }
  return lo;
}

// A splat's sums into grad2d (the lane's own splat; after the last step of its walk). `lean`
// summed raw moments in the mean and conic slots (select_step): they become the gradients here.
void flush_sums(inout float gr[9], lane_splat sp) {
  if (!sp.has) return;
  if (STEP >= 2u) {
    float sx = gr[GS_G2D_MEAN], sy = gr[GS_G2D_MEAN + 1];
    gr[GS_G2D_MEAN] = sp.cn.x * sx + sp.cn.y * sy;
    gr[GS_G2D_MEAN + 1] = sp.cn.y * sx + sp.cn.z * sy;
    gr[GS_G2D_CONIC] *= 0.5;
    gr[GS_G2D_CONIC + 2] *= 0.5;
  }
#ifdef GS_DET
  // Each lane's sums are in pixel order, so the rounded terms repeat exactly.
  fx_weigh(gr, pc.fx_scale, sp.cn);
#endif
  uint gb = GS_G2D * sp.id;
  for (uint k = 0u; k < 9u; k++)
    if (gr[k] != 0.0) grad_add(gb + k, gr[k]);
}

// The centre of tile pixel (px, py) of the tile at (ox, oy), v + 0.5 per axis. `lean` (STEP 2)
// and `dot` (STEP 3)
// takes it as (2^23 + v) - (2^23 - 0.5), 2^23 + v being v's bits under the exponent of 2^23:
// the same float (exact for v < 2^22) without an int-to-float conversion.
vec2 pixel_centre(uint ox, uint oy, int px, int py) {
  if (STEP < 2u) return vec2(float(ox + uint(px)) + 0.5, float(oy + uint(py)) + 0.5);
  uvec2 v = uvec2(ox + uint(px), oy + uint(py));
  return uintBitsToFloat(v | 0x4B000000u) - 8388607.5;
}

// One step of `bwd_step: select` for the lane's splat at tile pixel p (its dL/dpix and last
// contributor pa, rendered colour po) with the pixel's state st in front of the splat: the terms
// are added to gr, masked to +-0 where the lane skips the pixel (in_walk false: the entry is not
// one of the splat's run; outside its box, behind the pixel's last contributor, alpha under
// 1/255), and the state behind the splat is returned (st itself where skipped).
// `lean` (STEP 2) computes the same step with fewer instructions: the pixel centre above;
// dL/dalpha as T dot(rgb, dL/dpix) - dot(out - C', dL/dpix) / (1 - alpha), one division instead
// of three; and in the mean and conic slots the raw moments sum(dsig dx), sum(dsig dy),
// sum(dsig dx^2), sum(dsig dx dy), sum(dsig dy^2), which flush_sums multiplies by the conic (and
// halves) once. The same sums up to rounding, not to the bit. `dot` (STEP 3) is lean's step on
// the state (w, T) (state_at): po is (dot(out, dL/dpix), 0, 0), and dot(out - C', dL/dpix) is
// po.x - w', three multiply-adds fewer than C' and one dot product fewer; the same sums as lean
// up to rounding. It also drops the box test (in_box below).
vec4 select_step(inout float gr[9], bool in_walk, lane_splat sp, uint p, vec4 pa, vec3 po, vec4 st,
                 uint ox, uint oy) {
  int px = int(p % GS_RASTER_TILE), py = int(p / GS_RASTER_TILE);
  // `dot` leaves out the box test: outside its box a splat's alpha is under 1/255 (the box is
  // the alpha >= 1/255 extent plus a pixel; fwd_cull: rows rests on the same fact), so the alpha
  // test below masks the same steps, four compares fewer a step.
  bool in_box = STEP == 3u || (px >= sp.x0 && px <= sp.x1 && py >= sp.y0 && py <= sp.y1);
  bool on = sp.has && in_walk && in_box && sp.pos < floatBitsToUint(pa.w);
  vec2 d = sp.mean - pixel_centre(ox, oy, px, py);
  vec3 cn = sp.cn;
  float sigma = 0.5 * (cn.x * d.x * d.x + cn.z * d.y * d.y) + cn.y * d.x * d.y;
  on = on && sigma >= 0.0 && (SIGMA_SKIP == 0u || sigma < GS_SIGMA_SKIP);
  float G = exp(-max(sigma, 0.0)); // sigma >= 0 where on: exp(-sigma), finite elsewhere
  float raw = sp.rgbo.w * G;
  float alpha = min(ALPHA_MAX, raw);
  on = on && alpha >= GS_ALPHA_MIN_F;
  float am = on ? alpha : 0.0;
  float T = STEP == 3u ? st.y : st.w;
  float fac = on ? alpha * T : 0.0; // not am T: a pixel no lane of the run composites can carry
                                    // a state the forward never wrote (`rows`)
  gr[GS_G2D_RGB] += fac * pa.x;
  gr[GS_G2D_RGB + 1] += fac * pa.y;
  gr[GS_G2D_RGB + 2] += fac * pa.z;
  if (STEP >= 2u) {
    // The state behind the splat, and dot(out - C', dL/dpix) from it.
    float prgb = dot(sp.rgbo.xyz, pa.xyz), q;
    vec4 behind;
    if (STEP == 3u) {
      behind = vec4(st.x + fac * prgb, T * (1.0 - am), 0.0, 0.0);
      q = po.x - behind.x;
    } else {
      behind = vec4(st.xyz + sp.rgbo.xyz * fac, T * (1.0 - am));
      q = dot(po - behind.xyz, pa.xyz);
    }
    float dalpha = on && raw < ALPHA_MAX ? T * prgb - q / (1.0 - am) : 0.0;
    float gd = (on ? G : 0.0) * dalpha;
    gr[GS_G2D_OPACITY] += gd;
    float dsig = -sp.rgbo.w * gd;
    float t = dsig * d.x, u = dsig * d.y;
    gr[GS_G2D_MEAN] += t;
    gr[GS_G2D_MEAN + 1] += u;
    gr[GS_G2D_CONIC] += t * d.x;
    gr[GS_G2D_CONIC + 1] += t * d.y;
    gr[GS_G2D_CONIC + 2] += u * d.y;
    return behind;
  }
  vec3 c1 = st.xyz + sp.rgbo.xyz * fac;
  vec3 behind = (po - c1) / (1.0 - am);
  float dalpha = on && raw < ALPHA_MAX ? dot(sp.rgbo.xyz * T - behind, pa.xyz) : 0.0;
  add_alpha_grad(gr, on ? G : 0.0, dalpha, sp.rgbo.w, cn, d);
  return vec4(c1, T * (1.0 - am));
}

// ---- `bwd_chain` (CHAIN > 1): a subgroup walks CHAIN runs of the group back to back ----
//
// The runs' lists lie back to back in s_list from the subgroup's first run's slot, one stream:
// run j's entries are stream entries off_j .. off_j + cnt_j - 1. The pipeline runs over the
// stream as over one run's list: lane i works on stream entry s - i at step s with the state
// lane i - 1 left for it, lane 0 takes the stored state of the run the entry belongs to. A lane
// moves to its splat of the next run when its next entry belongs to it, after adding its sums
// for the splat it leaves: it sums the same terms in the same order as the run's own walk would
// (the same gradients, bit for bit), and the 31 steps that drain a run's pipeline now fill the
// next run's. Each lane's splats of the subgroup's runs wait in s_sp (three vec4 each), and the
// sums of the splats it is done with in s_sum (9 floats each, an odd stride: no bank conflicts),
// added to grad2d after the walk, all lanes at once, rather than by one lane in a divergent
// branch inside it.
const uint CHAIN_SPLATS = CHAIN > 1u ? 3u * uint(GS_BUCKET_GROUP) * BUCKET : 1u;
const uint CHAIN_SUMS = CHAIN > 1u ? 9u * uint(GS_BUCKET_GROUP) * BUCKET : 1u;
shared vec4 s_sp[CHAIN_SPLATS];
shared float s_sum[CHAIN_SUMS];

void put_splat(uint slot, lane_splat sp) {
  uint box = uint(sp.x0 + 1) | (uint(sp.x1 + 1) << 8u) | (uint(sp.y0 + 1) << 16u) |
             (uint(sp.y1 + 1) << 24u);
  s_sp[3u * slot] = vec4(sp.mean, sp.cn.xy);
  s_sp[3u * slot + 1u] = vec4(sp.cn.z, sp.rgbo.xyz);
  s_sp[3u * slot + 2u] = vec4(sp.rgbo.w, uintBitsToFloat(box), uintBitsToFloat(sp.id),
                              uintBitsToFloat(sp.has ? sp.pos : ~0u));
}

lane_splat get_splat(uint slot) {
  vec4 a = s_sp[3u * slot], b = s_sp[3u * slot + 1u], c = s_sp[3u * slot + 2u];
  lane_splat sp;
  sp.mean = a.xy;
  sp.cn = vec3(a.zw, b.x);
  sp.rgbo = vec4(b.yzw, c.x);
  uint box = floatBitsToUint(c.y);
  sp.x0 = int(box & 255u) - 1, sp.x1 = int((box >> 8u) & 255u) - 1;
  sp.y0 = int((box >> 16u) & 255u) - 1, sp.y1 = int(box >> 24u) - 1;
  sp.id = floatBitsToUint(c.z);
  sp.pos = floatBitsToUint(c.w);
  sp.has = sp.pos != ~0u;
  return sp;
}

// The run (0 .. CHAIN - 1) of stream entry e < total: the last run starting at or before it (an
// empty run starts where the next one does, so it is never the answer).
uint run_of(uint e, uvec4 off) {
  return (CHAIN > 1u && e >= off.y ? 1u : 0u) + (CHAIN > 2u && e >= off.z ? 1u : 0u) +
         (CHAIN > 3u && e >= off.w ? 1u : 0u);
}

uint pick(uvec4 v, uint j) { return j == 0u ? v.x : j == 1u ? v.y : j == 2u ? v.z : v.w; }

// The stored state in front of stream entry e's run at its pixel, zero past the stream's total
// entries: sb the stream's first list slot, rr0 / run0 the subgroup's first run in the group /
// in bucket_state.
vec4 stream_state(uint sb, uint rr0, uint run0, uvec4 off, uint total, uint e) {
  if (e >= total) return vec4(0.0);
  uint r = run_of(e, off), p = s_list[sb + e];
  return state_at(STATE == 0u ? s_state[(rr0 + r) * uint(GS_RASTER_WG) + p]
                              : bucket_state[(run0 + r) * uint(GS_RASTER_WG) + p],
                  p);
}

// Lane 0's state for stream entry e, as run_state: from s_state (STATE 0) or from the blocks of
// BUCKET entries the subgroup loaded (STATE 1; e uniform, at most one block past blk).
vec4 chain_state(uint sb, uint rr0, uint run0, uvec4 off, uint total, uint e, inout uint blk,
                 inout vec4 cur, inout vec4 nxt) {
  if (STATE == 0u) return stream_state(sb, rr0, run0, off, total, e);
  if (e / BUCKET != blk) {
    blk++;
    cur = nxt;
    nxt = stream_state(sb, rr0, run0, off, total, (blk + 1u) * BUCKET + gl_SubgroupInvocationID);
  }
  return shuffle_state(cur, e % BUCKET);
}

// The chained walk of the subgroup's runs rr0 .. rr0 + CHAIN - 1 of group g (first: the tile
// position of run rr0's first splat). The step is `bwd_step: select`'s (the host asks for it).
void walk_chain(uint g, uint rr0, uint first, uint live, uint start, uint ox, uint oy) {
  uint lane = gl_SubgroupInvocationID;
  uint sb = rr0 * uint(GS_RASTER_WG), run0 = g * uint(GS_BUCKET_GROUP) + rr0;
  uvec4 off = uvec4(0u), len = uvec4(0u);
  uint total = 0u;
  int need = -1; // `bwd_drain: trim`: the last step this lane needs
  for (uint j = 0u; j < CHAIN; j++) {
    uint fj = first + j * BUCKET, plo;
    lane_splat sp = load_splat(fj + lane, live, start, ox, oy);
    put_splat((rr0 + j) * BUCKET + lane, sp);
    for (uint i = 0u; i < 9u; i++) s_sum[9u * ((rr0 + j) * BUCKET + lane) + i] = 0.0;
    uint cnt = run_walk(sp, fj, sb + total, (rr0 + j) * uint(GS_RASTER_WG / 32), true, plo);
    if (DRAIN != 0u && cnt != 0u) {
      uint n_in = entries_in_box(sp, sb + total, plo, cnt, true);
      if (n_in != 0u) need = int(total + n_in) - 1 + int(lane);
    }
    // (by component: a vector indexed by a variable can end up in memory)
    uvec4 at = uvec4(equal(uvec4(j), uvec4(0u, 1u, 2u, 3u)));
    off += at * total;
    len += at * cnt;
    total += cnt;
  }
  if (total == 0u) return; // nothing to walk: every lane's sums are zero (the whole subgroup)
  uint steps = total + BUCKET - 1u;
  if (DRAIN != 0u) steps = min(uint(subgroupMax(need) + 1), steps);

  float gr[9] = float[9](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
  vec4 st = vec4(0.0); // (C, T) of the pixel this lane works on
  uint blk = 0u;
  vec4 cur = vec4(0.0), nxt = vec4(0.0);
  if (STATE != 0u) {
    cur = stream_state(sb, rr0, run0, off, total, lane);
    nxt = stream_state(sb, rr0, run0, off, total, BUCKET + lane);
  }
  int k = -int(lane); // this lane's stream entry (negative: not started)
  uint last_k = total - 1u;
  uint kc = uint(clamp(k, 0, int(last_k)));
  uint cr = run_of(kc, off); // the lane's run, its splat and its entries [lo, hi)
  lane_splat sp = get_splat((rr0 + cr) * BUCKET + lane);
  int lo = int(pick(off, cr)), hi = lo + int(pick(len, cr));
  vec4 nst = chain_state(sb, rr0, run0, off, total, 0u, blk, cur, nxt);
  uint p = s_list[sb + kc];
  vec4 pa = s_dl[p];
  vec3 po = out_at(p);
  for (uint s = 0u; s < steps; s++) {
    vec4 up = shuffle_state_up(st);
    st = lane == 0u ? (s < total ? nst : vec4(0.0)) : up;
    uint s1 = min(s + 1u, last_k);
    vec4 nst1 = chain_state(sb, rr0, run0, off, total, s1, blk, cur, nxt);
    uint kn = uint(clamp(k + 1, 0, int(last_k)));
    uint pn = s_list[sb + kn];
    vec4 pan = s_dl[pn];
    vec3 pon = out_at(pn);

    st = select_step(gr, k >= lo && k < hi, sp, p, pa, po, st, ox, oy);

    // The lane's next entry lies in a later run: its splat of this run is done. One lane takes
    // this branch, at the 31 steps after a run's end: a branch, not predicated code every step.
    [[dont_flatten]] if (k + 1 >= hi && k + 1 <= int(last_k)) {
      for (uint i = 0u; i < 9u; i++) {
        s_sum[9u * ((rr0 + cr) * BUCKET + lane) + i] = gr[i];
        gr[i] = 0.0;
      }
      cr = run_of(kn, off);
      sp = get_splat((rr0 + cr) * BUCKET + lane);
      lo = int(pick(off, cr));
      hi = lo + int(pick(len, cr));
    }
    k++;
    p = pn;
    pa = pan;
    po = pon;
    nst = nst1;
  }
  for (uint i = 0u; i < 9u; i++) s_sum[9u * ((rr0 + cr) * BUCKET + lane) + i] = gr[i];
  // Each lane reads back only its own sums: no barrier needed.
  for (uint j = 0u; j < CHAIN; j++) {
    uint slot = (rr0 + j) * BUCKET + lane;
    for (uint i = 0u; i < 9u; i++) gr[i] = s_sum[9u * slot + i];
    flush_sums(gr, get_splat(slot));
  }
}

void main() {
  uint g = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (g >= min(meta[GS_BMETA_GROUPS], pc.max_groups)) return;
  uint tile = groups[2u * g], first0 = groups[2u * g + 1u];
  if (tile >= pc.tiles_x * pc.tiles_y) return;
  uint start = ranges[2u * tile], end = ranges[2u * tile + 1u];
  uint count = end > start ? end - start : 0u;
  // Splats at or behind every pixel's last contributor touch nothing.
  uint live = min(count, tile_maxlast[tile]);
  if (first0 >= live) return;

  uint tid = gl_LocalInvocationIndex;
  uint ox = (tile % pc.tiles_x) * GS_RASTER_TILE, oy = (tile / pc.tiles_x) * GS_RASTER_TILE;
  for (uint i = tid; i < uint(GS_RASTER_WG); i += gl_WorkGroupSize.x) {
    uint x = ox + i % GS_RASTER_TILE, y = oy + i / GS_RASTER_TILE;
    vec3 d = vec3(0.0), o = vec3(0.0); // zero outside the image
    uint lst = 0u;
    if (x < pc.width && y < pc.height) {
      uint p = y * pc.width + x;
      d = vec3(dl[3u * p], dl[3u * p + 1u], dl[3u * p + 2u]);
      o = vec3(out_rgb[3u * p], out_rgb[3u * p + 1u], out_rgb[3u * p + 2u]);
      lst = last[p];
    }
    s_dl[i] = vec4(d, uintBitsToFloat(lst));
    if (STEP == 3u)
      s_od[i] = dot(o, d);
    else
      s_out[i] = o;
  }
  uint sub = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  uint rr0 = sub * CHAIN; // the subgroup's first run in the group (CHAIN runs, `bwd_chain`)
  uint first = first0 + rr0 * BUCKET;
  uint run = g * uint(GS_BUCKET_GROUP) + rr0; // the forward's run: tile_base + first / BUCKET
  if (STATE == 0u)
    for (uint j = 0u; j < CHAIN; j++)
      if (first + j * BUCKET < live)
        for (uint i = lane; i < uint(GS_RASTER_WG); i += BUCKET)
          s_state[(rr0 + j) * uint(GS_RASTER_WG) + i] =
              bucket_state[(run + j) * uint(GS_RASTER_WG) + i];
  barrier();
  if (first >= live) return; // the whole subgroup; no barrier follows
  if (CHAIN > 1u) {
    walk_chain(g, rr0, first, live, start, ox, oy);
    return;
  }

  lane_splat sp = load_splat(first + lane, live, start, ox, oy);
  // The walk: steps 0 .. cnt - 1 of the list (COMPACT) or pixels plo .. plo + cnt - 1.
  uint lbase = sub * uint(GS_RASTER_WG), plo;
  uint cnt = run_walk(sp, first, lbase, sub * uint(GS_RASTER_WG / 32), false, plo);
  if (cnt == 0u) return; // nothing to walk: every lane's sums are zero (the whole subgroup)

  // The walk's steps: lane i works on entry s - i at step s, so the last lane is done after
  // cnt + BUCKET - 1 steps. `bwd_drain: trim` (DRAIN 1) ends the walk once every lane is past
  // the last entry inside its box (a binary search of the list, which is in pixel order): the
  // steps left out would only add masked zeros.
  uint steps = cnt + BUCKET - 1u;
  if (DRAIN != 0u) {
    int need = int(entries_in_box(sp, lbase, plo, cnt, false)) - 1 + int(lane);
    // A lane without a box in the tile (none, or above or below it) needs no step.
    if (!sp.has || sp.x0 > sp.x1 || sp.y0 > sp.y1) need = -1;
    steps = min(uint(subgroupMax(need) + 1), steps);
  }

  float gr[9] = float[9](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
  vec4 st = vec4(0.0); // (C, T) of the pixel this lane works on
  // STATE 1: the run's stored states, a block of BUCKET entries at a time (run_state).
  uint gbase = run * uint(GS_RASTER_WG), blk = 0u;
  vec4 cur = vec4(0.0), nxt = vec4(0.0);
  if (STATE != 0u) {
    cur = entry_state(gbase, lbase, plo, cnt, lane);
    nxt = entry_state(gbase, lbase, plo, cnt, BUCKET + lane);
  }
  if (STEP != 0u) {
    // `bwd_step: select`: every lane computes every step; a step the branches below would skip
    // has its alpha and its terms masked to 0, which adds +-0 to the sums and leaves (C, T) as
    // they were, so the sums are the same bits. The step is one basic block, and the loads of a
    // lane's next pixel (and of lane 0's next stored state) are issued before this step's
    // arithmetic, off the shuffle's chain from lane to lane.
    int k = -int(lane); // this lane's step of the walk (negative: not started)
    uint last_k = cnt - 1u;
    vec4 nst = run_state(gbase, lbase, plo, cnt, 0u, blk, cur, nxt);
    uint kc = uint(clamp(k, 0, int(last_k)));
    uint p = walk_pixel(lbase, plo, kc);
    vec4 pa = s_dl[p];
    vec3 po = out_at(p);
    for (uint s = 0u; s < steps; s++) {
      vec4 up = shuffle_state_up(st);
      st = lane == 0u ? (s < cnt ? nst : vec4(0.0)) : up;
      uint s1 = min(s + 1u, last_k);
      vec4 nst1 = run_state(gbase, lbase, plo, cnt, s1, blk, cur, nxt);
      uint kn = uint(clamp(k + 1, 0, int(last_k)));
      uint pn = walk_pixel(lbase, plo, kn);
      vec4 pan = s_dl[pn];
      vec3 pon = out_at(pn);

      st = select_step(gr, k >= 0 && k <= int(last_k), sp, p, pa, po, st, ox, oy);

      k++;
      p = pn;
      pa = pan;
      po = pon;
      nst = nst1;
    }
  } else {
    for (uint s = 0u; s < steps; s++) {
      vec4 up = shuffle_state_up(st);
      vec4 s0 = vec4(0.0);
      if (s < cnt) s0 = run_state(gbase, lbase, plo, cnt, s, blk, cur, nxt); // uniform
      st = lane == 0u ? s0 : up;
      if (!sp.has || s < lane) continue;
      uint k = s - lane; // this lane's step of the walk
      if (k >= cnt) continue;
      uint p = walk_pixel(lbase, plo, k);
      int px = int(p % GS_RASTER_TILE), py = int(p / GS_RASTER_TILE);
      if (px < sp.x0 || px > sp.x1 || py < sp.y0 || py > sp.y1) continue;
      vec4 pa = s_dl[p];
      if (sp.pos >= floatBitsToUint(pa.w)) continue;
      vec2 d = sp.mean - pixel_centre(ox, oy, px, py);
      float sigma = 0.5 * (sp.cn.x * d.x * d.x + sp.cn.z * d.y * d.y) + sp.cn.y * d.x * d.y;
      if (sigma < 0.0) continue;
      if (SIGMA_SKIP != 0u && sigma >= GS_SIGMA_SKIP) continue;
      float G = exp(-sigma);
      float raw = sp.rgbo.w * G;
      float alpha = min(ALPHA_MAX, raw);
      if (!(alpha >= GS_ALPHA_MIN_F)) continue;
      float T = st.w;
      float fac = alpha * T;
      gr[GS_G2D_RGB] += fac * pa.x;
      gr[GS_G2D_RGB + 1] += fac * pa.y;
      gr[GS_G2D_RGB + 2] += fac * pa.z;
      vec3 c1 = st.xyz + sp.rgbo.xyz * fac;
      if (raw < ALPHA_MAX) { // where the alpha clamp is active alpha is flat
        vec3 behind = (s_out[p] - c1) / (1.0 - alpha);
        add_alpha_grad(gr, G, dot(sp.rgbo.xyz * T - behind, pa.xyz), sp.rgbo.w, sp.cn, d);
      }
      st = vec4(c1, T * (1.0 - alpha));
    }
  }
  flush_sums(gr, sp);
}
