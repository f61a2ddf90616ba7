// tile_cull.glsl: which tiles of its rectangle a splat reaches (`tile_cull`), shared by
// tile_count.comp and emit_pairs.comp, which must agree on every splat's count to the pair.
//
// `box` (CULL = 0): every tile of the rectangle, the axis-aligned box of the ellipse where alpha
// can reach 1/255 (project_fwd). `ellipse` (CULL = 1): per tile row, only the columns the ellipse
// itself reaches. A thin splat at 45 degrees covers a diagonal band of its box; its other tiles
// hold pairs every pixel of which fails the alpha test, and the forward, the sort and both
// backwards pay for them. The test is conservative: a tile is left out only when no pixel centre
// in it can pass the alpha test (sigma <= ln(255 o), alpha = o exp(-sigma) >= 1/255), with
// margins for the rasteriser's own rounding, so the image, every pixel's contributors and every
// gradient sum are the same as with `box` (bit-exact; test_gpu_fwd and test_train check it).
//
// Per row of tiles, the band of pixel rows [16 ty, 16 ty + 16) - my (the tile's pixel centres lie
// half a pixel inside it) meets the ellipse 0.5 a dx^2 + b dx dy + 0.5 c dy^2 <= t in an x
// interval: for a fixed dy the ellipse spans dx = (-b dy -+ sqrt(2 a t - D dy^2)) / a (D = ac - b^2,
// the determinant of the conic). The right end is concave in dy, largest at the ellipse's
// rightmost point dy_r = -b sqrt(2 t / (D c)), the left end convex, smallest at -dy_r; clamped to
// the band they give the band's interval, and the tiles [floor(xl / 16), floor(xr / 16)] meet it.
//
// Margins: t = ln(255 o) (1 + 0.01 + 4e-6 ac / D) + 0.01. The rasteriser rounds sigma with an
// error that grows with its terms, which cancel for elongated splats (a dx^2 ~ t ac / D at the
// ellipse's ends), hence the term in ac / D; D itself is computed without cancellation (Kahan's
// fma trick); every quantity is `precise` so that both kernels compute the same bits. Splats one
// tile wide or tall keep their rectangle (nothing to cull), and so does any splat whose conic is
// not positive definite in floats.

// The including kernel declares CULL (constant_id GS_SPEC_TILE_CULL) before including this.

// Columns [lo, hi) of tile row ty that splat s reaches, inside its rectangle (x0, y0, x1, y1).
uvec2 gs_cull_row(gs_splat2d s, uvec4 r, uint ty) {
  uvec2 full = uvec2(r.x, r.z);
  if (CULL == 0u || r.z - r.x <= 1u || r.w - r.y <= 1u) return full;
  precise float a = s.conic[0], b = s.conic[1], c = s.conic[2];
  precise float bb = b * b;
  precise float bb_err = fma(-b, b, bb); // bb - b^2, exactly
  precise float det = fma(a, c, -bb) + bb_err;
  if (!(a > 0.0 && c > 0.0 && det > 0.0)) return full;
  precise float tau = log(s.opacity / GS_K_ALPHA_MIN);
  precise float t = tau * (1.01 + 4e-6 * (a * c / det)) + 0.01;
  precise float q = 2.0 * t;
  precise float ymax = sqrt(q * a / det);
  precise float band0 = float(ty * uint(GS_TILE_PX)) - s.mean2d[1];
  precise float band1 = band0 + float(GS_TILE_PX);
  precise float lo = max(band0, -ymax), hi = min(band1, ymax);
  if (!(lo <= hi)) return ymax >= 0.0 ? uvec2(r.x, r.x) : full; // misses the band (or NaN)
  precise float yr = -b * sqrt(q / (det * c));
  precise float dyr = clamp(yr, lo, hi), dyl = clamp(-yr, lo, hi);
  precise float xr = s.mean2d[0] + (-b * dyr + sqrt(max(q * a - det * dyr * dyr, 0.0))) / a;
  precise float xl = s.mean2d[0] + (-b * dyl - sqrt(max(q * a - det * dyl * dyl, 0.0))) / a;
  if (!(xl <= xr)) return full;
  precise float tl = floor(xl / float(GS_TILE_PX)), tr = floor(xr / float(GS_TILE_PX)) + 1.0;
  uint c0 = tl <= float(r.x) ? r.x : (tl >= float(r.z) ? r.z : uint(tl));
  uint c1 = tr <= float(r.x) ? r.x : (tr >= float(r.z) ? r.z : uint(tr));
  return uvec2(c0, max(c0, c1));
}

// The splat's rectangle (x0, y0, x1, y1) from its packed words.
uvec4 gs_cull_rect(gs_splat2d s) {
  return uvec4(s.rect[0] & 0xffffu, s.rect[0] >> 16, s.rect[1] & 0xffffu, s.rect[1] >> 16);
}
