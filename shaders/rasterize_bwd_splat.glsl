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

#define GS_GLSL 1
#include "gs_train_shared.h"

layout(local_size_x_id = GS_SPEC_BWD_SPLAT_WG) in;
layout(constant_id = GS_SPEC_BWD_SIGMA_SKIP) const uint SIGMA_SKIP = 1u;
layout(constant_id = GS_SPEC_BWD_ALPHA_MAX) const float ALPHA_MAX = GS_ALPHA_MAX_F;
layout(constant_id = GS_SPEC_BWD_BUCKET) const uint BUCKET = 32u;
layout(constant_id = GS_SPEC_BWD_COMPACT) const uint COMPACT = 0u;
layout(constant_id = GS_SPEC_BWD_STEP) const uint STEP = 0u;
layout(constant_id = GS_SPEC_BWD_DRAIN) const uint DRAIN = 0u;
layout(constant_id = GS_SPEC_BWD_STATE) const uint STATE = 0u;

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
shared vec4 s_dl[GS_RASTER_WG];                      // dL/dpix, last contributor (bits)
shared vec3 s_out[GS_RASTER_WG];                     // rendered colour
shared uint s_list[GS_BUCKET_GROUP * GS_RASTER_WG];  // per run (COMPACT): the pixels it walks
shared uint s_cover[GS_BUCKET_GROUP * GS_RASTER_WG / 32]; // per run (COMPACT 2): its boxes' mask

// The tile pixel at entry i of a run's walk: its list (COMPACT, at lbase) or its rows from plo.
uint walk_pixel(uint lbase, uint plo, uint i) {
  return COMPACT != 0u ? s_list[lbase + i] : plo + i;
}

// `bwd_state: global`: the stored state in front of the run (its bucket_state block at sbase) of
// walk entry e, zero past the walk's cnt entries. The subgroup loads the states of BUCKET entries
// at once, one per lane, a block ahead of the one lane 0 takes its states from by a shuffle.
vec4 entry_state(uint sbase, uint lbase, uint plo, uint cnt, uint e) {
  return e < cnt ? bucket_state[sbase + walk_pixel(lbase, plo, e)] : vec4(0.0);
}

// The stored state of walk entry e for lane 0: from the run's copy in shared memory (at lbase,
// STATE 0), or (STATE 1) from the blocks the subgroup loaded: cur holds block blk's states (lane
// L: entry blk BUCKET + L), nxt the next block's, and moving on (e at most one block past blk,
// uniform; in uniform control flow) loads the block after that.
vec4 run_state(uint sbase, uint lbase, uint plo, uint cnt, uint e, inout uint blk,
               inout vec4 cur, inout vec4 nxt) {
  if (STATE == 0u) return s_state[lbase + walk_pixel(lbase, plo, e)];
  if (e / BUCKET != blk) {
    blk++;
    cur = nxt;
    nxt = entry_state(sbase, lbase, plo, cnt, (blk + 1u) * BUCKET + gl_SubgroupInvocationID);
  }
  return subgroupShuffle(cur, e % BUCKET);
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
    if (x < pc.width && y < pc.height) {
      uint p = y * pc.width + x;
      s_dl[i] = vec4(dl[3u * p], dl[3u * p + 1u], dl[3u * p + 2u], uintBitsToFloat(last[p]));
      s_out[i] = vec3(out_rgb[3u * p], out_rgb[3u * p + 1u], out_rgb[3u * p + 2u]);
    } else {
      s_dl[i] = vec4(0.0, 0.0, 0.0, uintBitsToFloat(0u));
      s_out[i] = vec3(0.0);
    }
  }
  uint sub = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  uint first = first0 + sub * BUCKET;
  uint run = g * uint(GS_BUCKET_GROUP) + sub; // the forward's run: tile_base + first / BUCKET
  if (first < live && STATE == 0u)
    for (uint i = lane; i < uint(GS_RASTER_WG); i += BUCKET)
      s_state[sub * uint(GS_RASTER_WG) + i] = bucket_state[run * uint(GS_RASTER_WG) + i];
  barrier();
  if (first >= live) return; // the whole subgroup; no barrier follows

  uint pos = first + lane;
  bool has = pos < live;
  uint id = has ? values[start + pos] : 0u;
  vec2 mean = vec2(0.0);
  vec3 cn = vec3(0.0);
  vec4 rgbo = vec4(0.0);
  // The lane's box in tile pixels, [x0, x1] x [y0, y1] (empty: x0 > x1), from the extents above.
  int x0 = GS_RASTER_TILE, x1 = -1, y0 = GS_RASTER_TILE, y1 = -1;
  if (has) {
    mean = vec2(splats[id].mean2d[0], splats[id].mean2d[1]);
    cn = vec3(splats[id].conic[0], splats[id].conic[1], splats[id].conic[2]);
    rgbo = vec4(splats[id].rgb[0], splats[id].rgb[1], splats[id].rgb[2], splats[id].opacity);
    float s2 = 2.0 * max(log(255.0 * rgbo.w), 0.0);
    float ex = sqrt(s2 * max(splats[id].cov2d[0], 0.0));
    float ey = sqrt(s2 * max(splats[id].cov2d[2], 0.0));
    vec2 m = mean - vec2(float(ox), float(oy));
    x0 = int(clamp(floor(m.x - ex) - 1.0, 0.0, float(GS_RASTER_TILE)));
    x1 = int(clamp(ceil(m.x + ex) + 1.0, -1.0, float(GS_RASTER_TILE - 1)));
    y0 = int(clamp(floor(m.y - ey) - 1.0, 0.0, float(GS_RASTER_TILE)));
    y1 = int(clamp(ceil(m.y + ey) + 1.0, -1.0, float(GS_RASTER_TILE - 1)));
    if (x0 > x1) y0 = GS_RASTER_TILE, y1 = -1;
  }
  int uy0 = subgroupMin(y0), uy1 = subgroupMax(y1);
  if (uy0 > uy1) return; // no splat of the run reaches a pixel centre of this tile
  uint plo = uint(uy0) * GS_RASTER_TILE, phi = uint(uy1) * GS_RASTER_TILE + GS_RASTER_TILE - 1u;
  // The walk: steps 0 .. cnt - 1 of the list (COMPACT) or pixels plo .. phi.
  uint lbase = sub * uint(GS_RASTER_WG), cnt = phi - plo + 1u;
  if (COMPACT != 0u) {
    int ux0 = subgroupMin(x0), ux1 = subgroupMax(x1);
    // COMPACT 2 (covered): the union of the lanes' boxes as a tile mask, two rows per word, in
    // the subgroup's words of s_cover (every lane writes the same value).
    uint cbase = sub * uint(GS_RASTER_WG / 32);
    if (COMPACT == 2u) {
      uint rowbits = x0 > x1 ? 0u : ((2u << uint(x1)) - 1u) & ~((1u << uint(x0)) - 1u);
      for (int k = 0; k < GS_RASTER_WG / 32; k++) {
        uint wbits = (2 * k >= y0 && 2 * k <= y1 ? rowbits : 0u) |
                     (2 * k + 1 >= y0 && 2 * k + 1 <= y1 ? rowbits << 16u : 0u);
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
    if (cnt == 0u) return; // nothing to walk: every lane's sums are zero (the whole subgroup)
  }

  // The walk's steps: lane i works on entry s - i at step s, so the last lane is done after
  // cnt + BUCKET - 1 steps. `bwd_drain: trim` (DRAIN 1) ends the walk once every lane is past
  // the last entry inside its box (a binary search of the list, which is in pixel order): the
  // steps left out would only add masked zeros.
  uint steps = cnt + BUCKET - 1u;
  if (DRAIN != 0u) {
    int need = -1; // the last step this lane needs
    if (has && x0 <= x1 && y0 <= y1) { // a box above or below the tile holds no entry
      uint pend = uint(y1) * GS_RASTER_TILE + uint(x1); // the box's last pixel
      uint n_in = pend - plo + 1u; // entries up to it: rows walks every pixel from plo
      if (COMPACT != 0u) {
        uint lo = 0u, hi = cnt;
        while (lo < hi) {
          uint mid = (lo + hi) / 2u;
          if (s_list[lbase + mid] <= pend)
            lo = mid + 1u;
          else
            hi = mid;
        }
        n_in = lo;
      }
      need = int(n_in) - 1 + int(lane);
    }
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
    vec3 po = s_out[p];
    for (uint s = 0u; s < steps; s++) {
      vec4 up = subgroupShuffleUp(st, 1u);
      st = lane == 0u ? (s < cnt ? nst : vec4(0.0)) : up;
      uint s1 = min(s + 1u, last_k);
      vec4 nst1 = run_state(gbase, lbase, plo, cnt, s1, blk, cur, nxt);
      uint kn = uint(clamp(k + 1, 0, int(last_k)));
      uint pn = walk_pixel(lbase, plo, kn);
      vec4 pan = s_dl[pn];
      vec3 pon = s_out[pn];

      int px = int(p % GS_RASTER_TILE), py = int(p / GS_RASTER_TILE);
      bool on = has && k >= 0 && k <= int(last_k) && px >= x0 && px <= x1 && py >= y0 &&
                py <= y1 && pos < floatBitsToUint(pa.w);
      vec2 d = mean - vec2(float(ox + uint(px)) + 0.5, float(oy + uint(py)) + 0.5);
      float sigma = 0.5 * (cn.x * d.x * d.x + cn.z * d.y * d.y) + cn.y * d.x * d.y;
      on = on && sigma >= 0.0 && (SIGMA_SKIP == 0u || sigma < GS_SIGMA_SKIP);
      float G = exp(-max(sigma, 0.0)); // sigma >= 0 where on: exp(-sigma), finite elsewhere
      float raw = rgbo.w * G;
      float alpha = min(ALPHA_MAX, raw);
      on = on && alpha >= GS_ALPHA_MIN_F;
      float am = on ? alpha : 0.0;
      float T = st.w;
      float fac = on ? alpha * T : 0.0; // not am T: a pixel no lane of the run composites can
                                        // carry a state the forward never wrote (`rows`)
      gr[GS_G2D_RGB] += fac * pa.x;
      gr[GS_G2D_RGB + 1] += fac * pa.y;
      gr[GS_G2D_RGB + 2] += fac * pa.z;
      vec3 c1 = st.xyz + rgbo.xyz * fac;
      vec3 behind = (po - c1) / (1.0 - am);
      float dalpha = on && raw < ALPHA_MAX ? dot(rgbo.xyz * T - behind, pa.xyz) : 0.0;
      add_alpha_grad(gr, on ? G : 0.0, dalpha, rgbo.w, cn, d);
      st = vec4(c1, T * (1.0 - am));

      k++;
      p = pn;
      pa = pan;
      po = pon;
      nst = nst1;
    }
  } else {
    for (uint s = 0u; s < steps; s++) {
      vec4 up = subgroupShuffleUp(st, 1u);
      vec4 s0 = vec4(0.0);
      if (s < cnt) s0 = run_state(gbase, lbase, plo, cnt, s, blk, cur, nxt); // uniform
      st = lane == 0u ? s0 : up;
      if (!has || s < lane) continue;
      uint k = s - lane; // this lane's step of the walk
      if (k >= cnt) continue;
      uint p = walk_pixel(lbase, plo, k);
      int px = int(p % GS_RASTER_TILE), py = int(p / GS_RASTER_TILE);
      if (px < x0 || px > x1 || py < y0 || py > y1) continue;
      vec4 pa = s_dl[p];
      if (pos >= floatBitsToUint(pa.w)) continue;
      vec2 d = mean - vec2(float(ox + uint(px)) + 0.5, float(oy + uint(py)) + 0.5);
      float sigma = 0.5 * (cn.x * d.x * d.x + cn.z * d.y * d.y) + cn.y * d.x * d.y;
      if (sigma < 0.0) continue;
      if (SIGMA_SKIP != 0u && sigma >= GS_SIGMA_SKIP) continue;
      float G = exp(-sigma);
      float raw = rgbo.w * G;
      float alpha = min(ALPHA_MAX, raw);
      if (!(alpha >= GS_ALPHA_MIN_F)) continue;
      float T = st.w;
      float fac = alpha * T;
      gr[GS_G2D_RGB] += fac * pa.x;
      gr[GS_G2D_RGB + 1] += fac * pa.y;
      gr[GS_G2D_RGB + 2] += fac * pa.z;
      vec3 c1 = st.xyz + rgbo.xyz * fac;
      if (raw < ALPHA_MAX) { // where the alpha clamp is active alpha is flat
        vec3 behind = (s_out[p] - c1) / (1.0 - alpha);
        add_alpha_grad(gr, G, dot(rgbo.xyz * T - behind, pa.xyz), rgbo.w, cn, d);
      }
      st = vec4(c1, T * (1.0 - alpha));
    }
  }
  if (!has) return;
#ifdef GS_DET
  // Each lane's sums are in pixel order, so the rounded terms repeat exactly.
  fx_weigh(gr, pc.fx_scale, cn);
#endif
  uint gb = GS_G2D * id;
  for (uint k = 0u; k < 9u; k++)
    if (gr[k] != 0.0) grad_add(gb + k, gr[k]);
}
