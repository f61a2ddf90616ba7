// splat_box.glsl: a splat's box in a tile, shared by rasterize_bwd_splat.glsl (each lane's box:
// the pixels its walk looks at) and rasterize_fwd.glsl (`fwd_cull: rows`: the bands a splat
// reaches), which must agree on it: a pixel the forward composites a splat onto is one the
// backward looks at. iter_bench's run_stats mirrors it on the host (splat_box there).
//
// alpha = o exp(-sigma) >= 1/255 needs sigma <= ln(255 o), and sigma >= dy^2 / (2 cov_yy) for any
// dx (dx^2 / (2 cov_xx) likewise), so every pixel centre the splat composites onto lies within
// |dx| <= sqrt(2 ln(255 o) cov_xx), |dy| <= sqrt(2 ln(255 o) cov_yy) of its mean; the box adds a
// pixel of margin for the rasteriser's rounding.

// The extents (ex, ey) above for opacity o and the 2D covariance's diagonal.
vec2 splat_extent(float o, float cov_xx, float cov_yy) {
  float s2 = 2.0 * max(log(255.0 * o), 0.0);
  return vec2(sqrt(s2 * max(cov_xx, 0.0)), sqrt(s2 * max(cov_yy, 0.0)));
}

// The box of a splat with mean m (relative to the tile's first pixel) and extents e, in tile
// pixels, inclusive: (x0, x1, y0, y1), clamped to the tile; no rows (y0 > y1) when it reaches no
// pixel centre of the tile.
ivec4 splat_box(vec2 m, vec2 e) {
  ivec4 b;
  b.x = int(clamp(floor(m.x - e.x) - 1.0, 0.0, float(GS_RASTER_TILE)));
  b.y = int(clamp(ceil(m.x + e.x) + 1.0, -1.0, float(GS_RASTER_TILE - 1)));
  b.z = int(clamp(floor(m.y - e.y) - 1.0, 0.0, float(GS_RASTER_TILE)));
  b.w = int(clamp(ceil(m.y + e.y) + 1.0, -1.0, float(GS_RASTER_TILE - 1)));
  if (b.x > b.y) b.z = GS_RASTER_TILE, b.w = -1;
  return b;
}
