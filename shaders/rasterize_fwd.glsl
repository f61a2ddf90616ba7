// rasterize_fwd.glsl: body of forward stage 7 (rasterize_fwd.comp; rasterize_fwd_bucket.comp
// also writes what the per-splat backward needs, see GS_BUCKETS below): one workgroup per 16x16 tile, one invocation per pixel.
// The tile's splats (sorted front to back) are staged in shared memory in batches of 256 and
// composited per pixel exactly as the contract in gs_types.h says (alpha = min(alpha_max, o e^-sigma),
// skip alpha < 1/255, stop before T drops under 1e-4). Outputs: colour + T * background, final T
// and the last contributor (position in the tile's range + 1, 0 = none).
// Variants (specialization constants): GS_SPEC_SIGMA_SKIP skips sigma >= 5.55 before the exp
// (bit-exact: such a splat always fails the alpha test); GS_SPEC_ACCUM_F16 rounds the colour
// accumulator to half precision after every step (the lab's f16 accumulator experiment);
// GS_SPEC_ALPHA_MAX is the alpha clamp (0.99 by default, gsplat's 0.999 for the recipe A/B), a
// constant so that the backward (rasterize_bwd.glsl) is built with the same value;
// GS_SPEC_FWD_STEP (`fwd_step`) picks the step: branches past a skipped splat (0), one
// straight-line step with masks and selects (1), or that step GROUP splats at a time (2: 4, 3: 8;
// `group`, `group8`): the alphas of all of them first, then composited in order; the same bits.
// GS_SPEC_FWD_CULL (`fwd_cull: rows`): each band of two pixel rows (a 32-wide subgroup's) steps
// only through the batch's splats whose box reaches the band (see s_band below); the same image.
// GS_SPEC_FWD_PREFETCH (`fwd_stage: prefetch`): each invocation loads its splat of the next
// batch into registers before the walk of this one (see Staged below); the same bits.
// GS_SPEC_FWD_ORDER (`fwd_order: dense_first`): the workgroups take the tiles in tile_order's
// order, the densest first, instead of row by row; each tile gets the same bits.
// GS_BUCKETS (rasterize_fwd_bucket.comp, `rasterize_bwd: splat`): before each run of BUCKET
// splats (positions 0, BUCKET, 2 BUCKET, ... of the tile's range) every pixel still compositing
// writes its state (colour so far, T) to bucket_state, and the tile's largest last contributor
// goes to tile_maxlast (gs_shared.h, "Buckets"). The image itself is the same bit for bit.
#extension GL_EXT_control_flow_attributes : require
#include "gs_common.glsl"
#include "splat_box.glsl"

layout(local_size_x = GS_RASTER_TILE, local_size_y = GS_RASTER_TILE) in;
layout(constant_id = GS_SPEC_SIGMA_SKIP) const uint SIGMA_SKIP = 0;
layout(constant_id = GS_SPEC_ACCUM_F16) const uint ACCUM_F16 = 0;
layout(constant_id = GS_SPEC_ALPHA_MAX) const float ALPHA_MAX = GS_K_ALPHA_MAX;
layout(constant_id = GS_SPEC_FWD_STEP) const uint STEP = 0u;
layout(constant_id = GS_SPEC_FWD_CULL) const uint CULL = 0u;
layout(constant_id = GS_SPEC_FWD_PREFETCH) const uint PREFETCH = 0u;
layout(constant_id = GS_SPEC_FWD_ORDER) const uint ORDER = 0u;

layout(std430, binding = 0) readonly buffer Splats { gs_splat2d splats[]; };
layout(std430, binding = 1) readonly buffer Vals { uint vals[]; };
layout(std430, binding = 2) readonly buffer Ranges { uint ranges[]; };
layout(std430, binding = 3) writeonly buffer Rgb { float out_rgb[]; };
layout(std430, binding = 4) writeonly buffer FinalT { float out_t[]; };
layout(std430, binding = 5) writeonly buffer Last { uint out_last[]; };
layout(push_constant, std430) uniform PC { gs_pc_raster pc; };
// `fwd_order: dense_first`: workgroup w rasterizes tile tile_order[w] (tile_order.comp); unread
// otherwise.
layout(std430, binding = 6) readonly buffer Order { uint tile_order[]; };
#ifdef GS_BUCKETS
layout(constant_id = GS_SPEC_BUCKET) const uint BUCKET = 32u;
layout(std430, binding = 7) readonly buffer TileBase { uint tile_base[]; };
layout(std430, binding = 8) writeonly buffer State { vec4 bucket_state[]; };
layout(std430, binding = 9) writeonly buffer TileMax { uint tile_maxlast[]; };
shared uint s_maxlast;
#endif

// A batch of splats: (mean x, mean y, opacity, -), (conic a, b, c, -), (r, g, b, -) as vec4 so that
// each is one 16-byte shared-memory read, broadcast to the whole workgroup (Staged below).
shared vec4 s_xyo[GS_RASTER_WG];
shared vec4 s_conic[GS_RASTER_WG];
shared vec4 s_rgb[GS_RASTER_WG];
shared uint s_done[2]; // finished pixels, ping-pong between batches

// `fwd_cull: rows`: for each parity (ping-pong between batches, as s_done), band of two tile rows
// and word of the batch, a bit per splat slot: the splat's box reaches the band. The box is the
// per-splat backward's (splat_box.glsl): the alpha >= 1/255 extent plus a pixel of margin for
// rounding. No pixel outside it composites the splat, so a band that steps only
// through its bits composites the same splats in the same order: the same image, T, last
// contributors and runs' states, bit for bit. The bits are set as the batch is staged.
const uint BANDS = uint(GS_RASTER_TILE) / 2u, WORDS = uint(GS_RASTER_WG) / 32u;
const uint BAND_ELEMS = CULL != 0u ? 2u * BANDS * WORDS : 1u;
shared uint s_band[BAND_ELEMS];

// What a batch stages of one splat: (mean x, mean y, opacity, -), (conic a, b, c, -),
// (r, g, b, -), and the 2D covariance's diagonal for the band marks.
struct Staged {
  vec4 xyo, conic, rgb;
  vec2 cov;
};

// The splat of pair k (k < end; else zeros, never staged).
Staged fetch(uint k, uint end) {
  Staged st;
  st.xyo = st.conic = st.rgb = vec4(0.0);
  st.cov = vec2(0.0);
  if (k < end) {
    uint id = vals[k];
    st.xyo = vec4(splats[id].mean2d[0], splats[id].mean2d[1], splats[id].opacity, 0.0);
    st.conic = vec4(splats[id].conic[0], splats[id].conic[1], splats[id].conic[2], 0.0);
    st.rgb = vec4(splats[id].rgb[0], splats[id].rgb[1], splats[id].rgb[2], 0.0);
    st.cov = vec2(splats[id].cov2d[0], splats[id].cov2d[2]);
  }
  return st;
}

// Sets slot's bit in the bands (of parity par) that the box of splat st reaches; (ox, oy) is the
// tile's first pixel. A box that is not a number reaches every band.
void mark_bands(Staged st, uint slot, uint par, uint ox, uint oy) {
  vec2 e = splat_extent(st.xyo.z, st.cov.x, st.cov.y);
  vec2 m = st.xyo.xy - vec2(float(ox), float(oy));
  int b0 = 0, b1 = int(BANDS) - 1;
  if (!any(isnan(vec4(e, m)))) {
    ivec4 box = splat_box(m, e);
    if (box.z > box.w) return; // reaches no pixel centre of the tile
    b0 = box.z / 2, b1 = box.w / 2;
  }
  for (int b = b0; b <= b1; b++)
    atomicOr(s_band[(par * BANDS + uint(b)) * WORDS + slot / 32u], 1u << (slot % 32u));
}

// Rounds to the nearest half-precision value (ties to even), in integer arithmetic so that no
// compiler can fold it away (a packHalf2x16/unpackHalf2x16 round trip was removed as an identity
// by one driver). Magnitudes past the half range become infinity, as in half arithmetic.
float round_half1(float x) {
  uint u = floatBitsToUint(x);
  uint sgn = u & 0x80000000u;
  uint a = u & 0x7fffffffu;
  if (a >= 0x477ff000u) return uintBitsToFloat(sgn | 0x7f800000u);
  if (a < 0x38800000u) {
    // Half subnormals: multiples of 2^-24 (scaling by powers of two is exact).
    float q = roundEven(uintBitsToFloat(a) * 16777216.0) * (1.0 / 16777216.0);
    return uintBitsToFloat(sgn | floatBitsToUint(q));
  }
  a = (a + 0xfffu + ((a >> 13) & 1u)) & ~0x1fffu;
  return uintBitsToFloat(sgn | a);
}

vec3 round_half(vec3 v) { return vec3(round_half1(v.x), round_half1(v.y), round_half1(v.z)); }

// The splat's sigma at offset (dx, dy) from its mean (conic a, b, c), in one order of operations
// for both steps, so that they composite the same bits.
float conic_sigma(vec3 cn, float dx, float dy) {
  return 0.5 * (cn.x * dx * dx + cn.z * dy * dy) + cn.y * dx * dy;
}

// Before the splat at position q of the tile's range: a run's first splat (GS_BUCKETS) gets this
// pixel's state (colour so far, T) in bucket_state; sbase is the tile's first run (~0: none). In
// the plain forward it does nothing.
void keep_state(uint q, uint sbase, uint tid, vec3 C, float T) {
#ifdef GS_BUCKETS
  if (q % BUCKET == 0u && sbase != ~0u)
    bucket_state[(sbase + q / BUCKET) * uint(GS_RASTER_WG) + tid] = vec4(C, T);
#endif
}

// The branch step: the batch's splat j (tile position q) onto this pixel. True when the splat
// would take T under GS_K_T_MIN: the pixel is done and the splat not composited.
bool branch_step(uint j, uint q, float pxc, float pyc, inout vec3 C, inout float T,
                 inout uint last) {
  vec4 xyo = s_xyo[j];
  float dx = xyo.x - pxc, dy = xyo.y - pyc;
  float sigma = conic_sigma(s_conic[j].xyz, dx, dy);
  if (sigma < 0.0) return false;
  if (SIGMA_SKIP != 0u && sigma >= GS_SIGMA_SKIP) return false;
  float a = xyo.z * exp(-sigma);
  float alpha = a < ALPHA_MAX ? a : ALPHA_MAX;
  if (!(alpha >= GS_K_ALPHA_MIN)) return false;
  float nt = T * (1.0 - alpha);
  if (nt < GS_K_T_MIN) return true;
  C += s_rgb[j].xyz * alpha * T;
  if (ACCUM_F16 != 0u) C = round_half(C);
  T = nt;
  last = q + 1u;
  return false;
}

// `fwd_step: select`, its first half: the alpha of splat (xyo, cn) at the pixel, and in ok whether
// it composites there. Every test of the branch form becomes a mask (a NaN sigma passes
// `!(sigma < 0)` there too).
float select_alpha(vec4 xyo, vec4 cn, float pxc, float pyc, out bool ok) {
  float dx = xyo.x - pxc, dy = xyo.y - pyc;
  float sigma = conic_sigma(cn.xyz, dx, dy);
  float a = xyo.z * exp(-sigma);
  float alpha = a < ALPHA_MAX ? a : ALPHA_MAX;
  ok = !(sigma < 0.0) && (SIGMA_SKIP == 0u || !(sigma >= GS_SIGMA_SKIP)) &&
       alpha >= GS_K_ALPHA_MIN;
  return alpha;
}

// Its second half: a splat (alpha, colour rgb, tile position q) that composites (ok) onto the
// pixel, the colour, T and last contributor selected. True when it would take T under
// GS_K_T_MIN: the pixel is done and the splat not composited.
bool select_take(bool ok, float alpha, vec3 rgb, uint q, inout vec3 C, inout float T,
                 inout uint last) {
  float nt = T * (1.0 - alpha);
  bool stop = ok && nt < GS_K_T_MIN;
  bool take = ok && !stop;
  vec3 cnew = C + rgb * alpha * T;
  if (ACCUM_F16 != 0u) cnew = round_half(cnew);
  C = take ? cnew : C;
  T = take ? nt : T;
  last = take ? q + 1u : last;
  return stop;
}

// `fwd_step: select`: the step as one basic block, with the splat's values (xyo, cn, rgb) already
// loaded, so each pixel gets the same bits as the branch form. True when the pixel is done.
bool select_step(vec4 xyo, vec4 cn, vec4 rgb, uint q, float pxc, float pyc, inout vec3 C,
                 inout float T, inout uint last) {
  bool ok;
  float alpha = select_alpha(xyo, cn, pxc, pyc, ok);
  return select_take(ok, alpha, rgb.xyz, q, C, T, last);
}

// `fwd_step: group` / `group8`: GROUP splats at once (batch slots j[0] .. j[n - 1], tile
// positions q0 + j; n >= 1, unused slots repeat j[0]). Their alphas are computed first
// (select_alpha), so that the loads, exps and multiplies of the group overlap instead of each
// step waiting on the last one's (a dense tile's pixels walk thousands of splats one after
// another: the length of that walk, not the work in it, is what the forward waits for). Then they
// are composited in order (select_take; none after a stop), so each pixel gets the same bits as
// select. True when the pixel is done.
const uint GROUP = STEP == 3u ? 8u : 4u;
bool group_step(uint j[8], uint n, uint q0, float pxc, float pyc, inout vec3 C, inout float T,
                inout uint last) {
  float al[8];
  bool ok[8];
  [[unroll]] for (uint u = 0u; u < GROUP; u++) {
    al[u] = select_alpha(s_xyo[j[u]], s_conic[j[u]], pxc, pyc, ok[u]);
    ok[u] = ok[u] && u < n;
  }
  bool stop = false;
  [[unroll]] for (uint u = 0u; u < GROUP; u++)
    stop = select_take(ok[u] && !stop, al[u], s_rgb[j[u]].xyz, q0 + j[u], C, T, last) || stop;
  return stop;
}

void main() {
  uint tid = gl_LocalInvocationIndex;
  uint tx = gl_WorkGroupID.x, ty = gl_WorkGroupID.y;
  if (ORDER != 0u) {
    // A grid of at least tiles_x tiles_y workgroups, row by row.
    uint w = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (w >= pc.tiles_x * pc.tiles_y) return; // the whole workgroup: before any barrier
    uint t = tile_order[w];
    tx = t % pc.tiles_x;
    ty = t / pc.tiles_x;
  }
  uint tile = ty * pc.tiles_x + tx;
  uint ox = tx * GS_RASTER_TILE, oy = ty * GS_RASTER_TILE; // the tile's first pixel
  uint px = ox + gl_LocalInvocationID.x;
  uint py = oy + gl_LocalInvocationID.y;
  bool inside = px < pc.width && py < pc.height;
  float pxc = float(px) + 0.5, pyc = float(py) + 0.5;
  uint start = ranges[2u * tile], end = ranges[2u * tile + 1u];
  if (end < start) end = start;
  bool done = !inside;
  float T = 1.0;
  vec3 C = vec3(0.0);
  uint last = 0u;
  if (tid < 2u) s_done[tid] = 0u;
  if (CULL != 0u) {
    if (tid < BAND_ELEMS) s_band[tid] = 0u;
    barrier(); // cleared before the first batch marks its bands
  }
#ifdef GS_BUCKETS
  if (tid == 0u) s_maxlast = 0u;
  uint sbase = tile_base[tile]; // ~0: no runs (an empty tile)
#else
  uint sbase = ~0u;
#endif
  uint par = 0u;
  // `fwd_stage: prefetch`: this invocation's splat of the next batch, loaded before the walk of
  // the current one so that the two dependent loads (pair, then splat) wait behind the walk.
  Staged next;
  if (PREFETCH != 0u) next = fetch(start + tid, end);
  for (uint batch = start; batch < end; batch += GS_RASTER_WG) {
    uint k = batch + tid;
    if (k < end) {
      Staged st = PREFETCH != 0u ? next : fetch(k, end);
      s_xyo[tid] = st.xyo;
      s_conic[tid] = st.conic;
      s_rgb[tid] = st.rgb;
      if (CULL != 0u) mark_bands(st, tid, par, ox, oy);
    }
    barrier();
    if (PREFETCH != 0u) next = fetch(batch + uint(GS_RASTER_WG) + tid, end);
    // The next batch's bands: nobody reads them until it, and its marks come after this batch's
    // closing barrier.
    if (CULL != 0u && tid < BANDS * WORDS) s_band[(par ^ 1u) * BANDS * WORDS + tid] = 0u;
    uint cnt = min(uint(GS_RASTER_WG), end - batch);
    uint q0 = batch - start; // the batch's first tile position
    if (CULL != 0u || STEP >= 2u) {
      // Chunks of a run's length (BUCKET, at most a word), so that every run's first position
      // gets its state; in a chunk, only the splats marked for this pixel's band (fwd_cull:
      // rows) or all of the batch's (off, with fwd_step: group).
#ifdef GS_BUCKETS
      uint ch = BUCKET < 32u ? BUCKET : 32u;
#else
      uint ch = 32u;
#endif
      uint chmask = ch >= 32u ? ~0u : (1u << ch) - 1u;
      uint band = gl_LocalInvocationID.y / 2u;
      for (uint c = 0u; c < cnt && !done; c += ch) {
        keep_state(q0 + c, sbase, tid, C, T);
        uint bits = CULL != 0u ? s_band[(par * BANDS + band) * WORDS + c / 32u] >> (c % 32u)
                               : (cnt - c >= 32u ? ~0u : (1u << (cnt - c)) - 1u);
        bits &= chmask;
        if (STEP >= 2u) {
          // The next GROUP marked splats at a time.
          while (bits != 0u && !done) {
            uint j[8], n = 0u, j0 = c + uint(findLSB(bits));
            [[unroll]] for (uint u = 0u; u < GROUP; u++) {
              bool has = bits != 0u;
              j[u] = has ? c + uint(findLSB(bits)) : j0;
              n += has ? 1u : 0u;
              bits &= bits - 1u;
            }
            done = group_step(j, n, q0, pxc, pyc, C, T, last);
          }
          continue;
        }
        while (bits != 0u) {
          uint j = c + uint(findLSB(bits));
          bits &= bits - 1u;
          done = STEP == 0u ? branch_step(j, q0 + j, pxc, pyc, C, T, last)
                            : select_step(s_xyo[j], s_conic[j], s_rgb[j], q0 + j, pxc, pyc, C,
                                          T, last);
          if (done) break;
        }
      }
    } else if (STEP == 0u) {
      for (uint j = 0u; j < cnt && !done; j++) {
        keep_state(q0 + j, sbase, tid, C, T);
        done = branch_step(j, q0 + j, pxc, pyc, C, T, last);
      }
    } else {
      // `fwd_step: select`: the next splat's three loads are issued before this step's
      // arithmetic.
      vec4 xyo = s_xyo[0], cn = s_conic[0], rgb = s_rgb[0];
      for (uint j = 0u; j < cnt && !done; j++) {
        keep_state(q0 + j, sbase, tid, C, T);
        uint jn = min(j + 1u, uint(GS_RASTER_WG) - 1u);
        vec4 xyo_n = s_xyo[jn], cn_n = s_conic[jn], rgb_n = s_rgb[jn];
        done = select_step(xyo, cn, rgb, q0 + j, pxc, pyc, C, T, last);
        xyo = xyo_n;
        cn = cn_n;
        rgb = rgb_n;
      }
    }
    // Stop once every pixel of the tile is finished. The counter of this batch was cleared during
    // the previous one, so one barrier both publishes the count and ends the batch's reads.
    if (done) atomicAdd(s_done[par], 1u);
    barrier();
    if (s_done[par] == uint(GS_RASTER_WG)) break;
    if (tid == 0u) s_done[par ^ 1u] = 0u;
    par ^= 1u;
  }
#ifdef GS_BUCKETS
  barrier();
  if (last != 0u) atomicMax(s_maxlast, last);
  barrier();
  if (tid == 0u) tile_maxlast[tile] = s_maxlast;
#endif
  if (inside) {
    uint p = py * pc.width + px;
    out_rgb[3u * p] = C.x + T * pc.background[0];
    out_rgb[3u * p + 1u] = C.y + T * pc.background[1];
    out_rgb[3u * p + 2u] = C.z + T * pc.background[2];
    out_t[p] = T;
    out_last[p] = last;
  }
}
