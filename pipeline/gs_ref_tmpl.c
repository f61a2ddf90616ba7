/* gs_ref_tmpl.c: the reference math, written once over a `REAL` type. Not compiled on its own:
 * gs_ref.c includes it twice, once with REAL = float (the oracle GPU kernels are compared
 * against) and once with REAL = double (for finite-difference gradient checks). The including
 * file defines:
 *   REAL, K(x) (a literal as REAL, so float code never silently widens to double),
 *   EXP SQRT CEIL FLOOR FABS (the math functions of that precision),
 *   FN(name) (the public name of a function), SFN(name) (a file-local name),
 *   MODEL CAMERA SPLAT SGRAD FRAME (the struct types of that precision).
 * It undefines them all at its end, so the next instantiation starts clean.
 * The conventions every function follows are written in gs_ref.h. */

/* ---- Frame ---------------------------------------------------------------------------------- */

int FN(gs_ref_frame_new)(uint32_t count, const CAMERA *cam, const struct gs_ref_opts *opts,
                         FRAME **out, struct sw_err *err) {
  *out = NULL;
  if (!cam || !opts) return sw_err_set(err, SW_EINVAL, "gs_ref: camera and options are required");
  if (cam->width == 0 || cam->height == 0 || cam->width > 16384 || cam->height > 16384)
    return sw_err_set(err, SW_EINVAL, "gs_ref: image size %ux%u out of range 1..16384", cam->width,
                      cam->height);
  if (opts->sh_degree > 3)
    return sw_err_set(err, SW_EINVAL, "gs_ref: SH degree %u above 3", opts->sh_degree);
  float alpha_max = gs_alpha_max_resolve(opts->alpha_max);
  if (alpha_max == 0.0f)
    return sw_err_set(err, SW_EINVAL, "gs_ref: alpha_max %g outside [%g, %g]",
                      (double)opts->alpha_max, (double)GS_ALPHA_MAX_LO, (double)GS_ALPHA_MAX_HI);
  FRAME *f = calloc(1, sizeof *f);
  if (!f) return sw_err_set(err, SW_ENOMEM, "gs_ref: out of memory for a frame");
  size_t px = (size_t)cam->width * cam->height;
  f->width = cam->width;
  f->height = cam->height;
  f->tiles_x = (cam->width + GS_TILE - 1) / GS_TILE;
  f->tiles_y = (cam->height + GS_TILE - 1) / GS_TILE;
  f->count = count;
  f->sh_degree = opts->sh_degree;
  f->alpha_max = (REAL)alpha_max;
  for (int c = 0; c < 3; c++) f->background[c] = (REAL)opts->background[c];
  f->splats = calloc(count ? count : 1, sizeof *f->splats);
  f->ranges = calloc((size_t)f->tiles_x * f->tiles_y * 2, sizeof *f->ranges);
  f->rgb = calloc(px * 3, sizeof *f->rgb);
  f->final_t = calloc(px, sizeof *f->final_t);
  f->last = calloc(px, sizeof *f->last);
  if (!f->splats || !f->ranges || !f->rgb || !f->final_t || !f->last) {
    FN(gs_ref_frame_destroy)(&f);
    return sw_err_set(err, SW_ENOMEM, "gs_ref: out of memory for a %ux%u frame of %u splats",
                      cam->width, cam->height, count);
  }
  *out = f;
  return 0;
}

void FN(gs_ref_frame_destroy)(FRAME **frame) {
  if (!frame || !*frame) return;
  FRAME *f = *frame;
  free(f->splats);
  free(f->keys);
  free(f->ids);
  free(f->ranges);
  free(f->rgb);
  free(f->final_t);
  free(f->last);
  free(f);
  *frame = NULL;
}

/* ---- Spherical harmonics -------------------------------------------------------------------- */

/* The real SH basis up to degree 3 in direction d (unit), and, when db != NULL, its derivative
 * with respect to each component of d (treated as independent; normalisation is chained by the
 * caller). Only the first (degree + 1)^2 entries are written. */
static void SFN(sh_basis)(const REAL d[3], uint32_t degree, REAL b[16], REAL db[16][3]) {
  REAL x = d[0], y = d[1], z = d[2];
  REAL xx = x * x, yy = y * y, zz = z * z;
  b[0] = K(SH_C0);
  if (db) db[0][0] = db[0][1] = db[0][2] = K(0.0);
  if (degree < 1) return;
  b[1] = -K(SH_C1) * y;
  b[2] = K(SH_C1) * z;
  b[3] = -K(SH_C1) * x;
  if (db) {
    REAL c1 = K(SH_C1);
    REAL d1[3][3] = {{0, -c1, 0}, {0, 0, c1}, {-c1, 0, 0}};
    memcpy(db[1], d1, sizeof d1);
  }
  if (degree < 2) return;
  b[4] = K(SH_C2_0) * x * y;
  b[5] = K(SH_C2_1) * y * z;
  b[6] = K(SH_C2_2) * (K(2.0) * zz - xx - yy);
  b[7] = K(SH_C2_3) * x * z;
  b[8] = K(SH_C2_4) * (xx - yy);
  if (db) {
    REAL d2[5][3] = {
        {K(SH_C2_0) * y, K(SH_C2_0) * x, 0},
        {0, K(SH_C2_1) * z, K(SH_C2_1) * y},
        {K(-2.0) * K(SH_C2_2) * x, K(-2.0) * K(SH_C2_2) * y, K(4.0) * K(SH_C2_2) * z},
        {K(SH_C2_3) * z, 0, K(SH_C2_3) * x},
        {K(2.0) * K(SH_C2_4) * x, K(-2.0) * K(SH_C2_4) * y, 0},
    };
    memcpy(db[4], d2, sizeof d2);
  }
  if (degree < 3) return;
  b[9] = K(SH_C3_0) * y * (K(3.0) * xx - yy);
  b[10] = K(SH_C3_1) * x * y * z;
  b[11] = K(SH_C3_2) * y * (K(4.0) * zz - xx - yy);
  b[12] = K(SH_C3_3) * z * (K(2.0) * zz - K(3.0) * xx - K(3.0) * yy);
  b[13] = K(SH_C3_4) * x * (K(4.0) * zz - xx - yy);
  b[14] = K(SH_C3_5) * z * (xx - yy);
  b[15] = K(SH_C3_6) * x * (xx - K(3.0) * yy);
  if (db) {
    REAL d3[7][3] = {
        {K(6.0) * K(SH_C3_0) * x * y, K(SH_C3_0) * (K(3.0) * xx - K(3.0) * yy), 0},
        {K(SH_C3_1) * y * z, K(SH_C3_1) * x * z, K(SH_C3_1) * x * y},
        {K(-2.0) * K(SH_C3_2) * x * y, K(SH_C3_2) * (K(4.0) * zz - xx - K(3.0) * yy),
         K(8.0) * K(SH_C3_2) * y * z},
        {K(-6.0) * K(SH_C3_3) * x * z, K(-6.0) * K(SH_C3_3) * y * z,
         K(SH_C3_3) * (K(6.0) * zz - K(3.0) * xx - K(3.0) * yy)},
        {K(SH_C3_4) * (K(4.0) * zz - K(3.0) * xx - yy), K(-2.0) * K(SH_C3_4) * x * y,
         K(8.0) * K(SH_C3_4) * x * z},
        {K(2.0) * K(SH_C3_5) * x * z, K(-2.0) * K(SH_C3_5) * y * z, K(SH_C3_5) * (xx - yy)},
        {K(SH_C3_6) * (K(3.0) * xx - K(3.0) * yy), K(-6.0) * K(SH_C3_6) * x * y, 0},
    };
    memcpy(db[9], d3, sizeof d3);
  }
}

/* ---- Projection ----------------------------------------------------------------------------- */

/* Quantities of one splat's projection that backward needs again (recomputed, not stored). */
struct SFN(proj_ctx) {
  REAL t[3];      /* camera-space mean */
  REAL q[4];      /* normalised quaternion w x y z */
  REAL qnorm;     /* norm of the stored quaternion */
  REAL rot[3][3]; /* rotation of the quaternion */
  REAL s[3];      /* scales */
  REAL m3[3][3];  /* rot * diag(s): Sigma = m3 m3^T */
  REAL w[3][3];   /* camera rotation (viewmat's upper left) */
  REAL ccam[3][3];
  REAL j[2][3]; /* EWA Jacobian, at tj */
  REAL tj[2];   /* camera x, y for the Jacobian: clamped to the widened field of view */
  int free_[2]; /* 1 where tj is t (inside the clamp): J depends on x (y) there, not outside */
  REAL dir[3];  /* unit view direction mean - campos */
  REAL vnorm;   /* |mean - campos| */
};

static void SFN(quat_to_rot)(const REAL q[4], REAL r[3][3]) {
  REAL w = q[0], x = q[1], y = q[2], z = q[3];
  r[0][0] = K(1.0) - K(2.0) * (y * y + z * z);
  r[0][1] = K(2.0) * (x * y - w * z);
  r[0][2] = K(2.0) * (x * z + w * y);
  r[1][0] = K(2.0) * (x * y + w * z);
  r[1][1] = K(1.0) - K(2.0) * (x * x + z * z);
  r[1][2] = K(2.0) * (y * z - w * x);
  r[2][0] = K(2.0) * (x * z - w * y);
  r[2][1] = K(2.0) * (y * z + w * x);
  r[2][2] = K(1.0) - K(2.0) * (x * x + y * y);
}

/* Computes the 3D part of the projection of splat i. Returns 0 when the splat is in front of
 * the near plane with a usable quaternion, else -1 (culled). */
static int SFN(proj_setup)(const MODEL *m, uint32_t i, const CAMERA *cam,
                           struct SFN(proj_ctx) * c) {
  const REAL *p = m->means + 3 * (size_t)i;
  const REAL *v = cam->viewmat;
  for (int r = 0; r < 3; r++) {
    c->t[r] = v[4 * r + 0] * p[0] + v[4 * r + 1] * p[1] + v[4 * r + 2] * p[2] + v[4 * r + 3];
    for (int k = 0; k < 3; k++) c->w[r][k] = v[4 * r + k];
  }
  if (!(c->t[2] > K(GS_NEAR_Z))) return -1;
  const REAL *qr = m->quats + 4 * (size_t)i;
  c->qnorm = SQRT(qr[0] * qr[0] + qr[1] * qr[1] + qr[2] * qr[2] + qr[3] * qr[3]);
  if (!(c->qnorm > K(0.0)))
    return -1; /* a zero quaternion has no rotation: nothing sensible to draw */
  for (int k = 0; k < 4; k++) c->q[k] = qr[k] / c->qnorm;
  SFN(quat_to_rot)(c->q, c->rot);
  for (int k = 0; k < 3; k++) c->s[k] = EXP(m->log_scales[3 * (size_t)i + k]);
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++) c->m3[r][k] = c->rot[r][k] * c->s[k];
  REAL sigma[3][3], ws[3][3];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++)
      sigma[r][k] =
          c->m3[r][0] * c->m3[k][0] + c->m3[r][1] * c->m3[k][1] + c->m3[r][2] * c->m3[k][2];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++)
      ws[r][k] = c->w[r][0] * sigma[0][k] + c->w[r][1] * sigma[1][k] + c->w[r][2] * sigma[2][k];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++)
      c->ccam[r][k] = ws[r][0] * c->w[k][0] + ws[r][1] * c->w[k][1] + ws[r][2] * c->w[k][2];
  REAL z = c->t[2], iz = K(1.0) / z;
  /* The Jacobian is taken at x/z, y/z clamped to the field of view widened by 30% of its
   * half-width on each side (as gsplat and the Inria code do): a splat near the camera plane but
   * far off-screen would otherwise get a 2D covariance stretched across the whole image. */
  REAL fov_x = K(0.5) * (REAL)cam->width / cam->fx, fov_y = K(0.5) * (REAL)cam->height / cam->fy;
  REAL lim[2][2] = {{-(cam->cx / cam->fx + K(0.3) * fov_x),
                     ((REAL)cam->width - cam->cx) / cam->fx + K(0.3) * fov_x},
                    {-(cam->cy / cam->fy + K(0.3) * fov_y),
                     ((REAL)cam->height - cam->cy) / cam->fy + K(0.3) * fov_y}};
  for (int a = 0; a < 2; a++) {
    REAL u = c->t[a] * iz;
    c->free_[a] = u >= lim[a][0] && u <= lim[a][1];
    c->tj[a] = z * (u < lim[a][0] ? lim[a][0] : u > lim[a][1] ? lim[a][1] : u);
  }
  c->j[0][0] = cam->fx * iz;
  c->j[0][1] = K(0.0);
  c->j[0][2] = -cam->fx * c->tj[0] * iz * iz;
  c->j[1][0] = K(0.0);
  c->j[1][1] = cam->fy * iz;
  c->j[1][2] = -cam->fy * c->tj[1] * iz * iz;
  REAL dv[3];
  for (int k = 0; k < 3; k++) dv[k] = p[k] - cam->campos[k];
  c->vnorm = SQRT(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2]);
  for (int k = 0; k < 3; k++) c->dir[k] = c->vnorm > K(0.0) ? dv[k] / c->vnorm : K(0.0);
  return 0;
}

/* cov2d = J ccam J^T + dilation, as (xx, xy, yy). */
static void SFN(cov2d)(const struct SFN(proj_ctx) * c, REAL out[3]) {
  REAL jc[2][3];
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 3; k++)
      jc[r][k] =
          c->j[r][0] * c->ccam[0][k] + c->j[r][1] * c->ccam[1][k] + c->j[r][2] * c->ccam[2][k];
  REAL xx = jc[0][0] * c->j[0][0] + jc[0][1] * c->j[0][1] + jc[0][2] * c->j[0][2];
  REAL xy = jc[0][0] * c->j[1][0] + jc[0][1] * c->j[1][1] + jc[0][2] * c->j[1][2];
  REAL yy = jc[1][0] * c->j[1][0] + jc[1][1] * c->j[1][1] + jc[1][2] * c->j[1][2];
  out[0] = xx + K(GS_DILATION);
  out[1] = xy;
  out[2] = yy + K(GS_DILATION);
}

/* Tile range [lo, hi) covered by [centre - r, centre + r] on an axis of `tiles` tiles. */
static void SFN(tile_span)(REAL centre, REAL r, uint32_t tiles, uint32_t *lo, uint32_t *hi) {
  REAL a = FLOOR((centre - r) / K(GS_TILE));
  REAL b = FLOOR((centre + r) / K(GS_TILE)) + K(1.0);
  REAL n = (REAL)tiles;
  *lo = a < K(0.0) ? 0 : a > n ? tiles : (uint32_t)a;
  *hi = b < K(0.0) ? 0 : b > n ? tiles : (uint32_t)b;
}

static void SFN(project_one)(const MODEL *m, uint32_t i, const CAMERA *cam, const FRAME *f,
                             SPLAT *s) {
  memset(s, 0, sizeof *s);
  struct SFN(proj_ctx) c;
  if (SFN(proj_setup)(m, i, cam, &c) != 0) return;
  REAL cov[3];
  SFN(cov2d)(&c, cov);
  REAL det = cov[0] * cov[2] - cov[1] * cov[1];
  if (!(det > K(0.0))) return;
  /* The box where alpha can reach 1/255: o exp(-sigma) >= 1/255 inside the ellipse
   * sigma <= e^2 / 2 with e = sqrt(2 ln(255 o)), whose bounding box is e sqrt(cov_xx) by
   * e sqrt(cov_yy) (e at most 3.33, its value at o = 1). Splats with o < 1/255 can never pass the
   * alpha test and are culled. */
  REAL o = K(1.0) / (K(1.0) + EXP(-m->opacity[i]));
  if (!(o >= K(GS_ALPHA_MIN))) return;
  REAL e = SQRT(K(2.0) * LOG(o / K(GS_ALPHA_MIN)));
  e = e < K(3.33) ? e : K(3.33);
  REAL rx = CEIL(e * SQRT(cov[0])), ry = CEIL(e * SQRT(cov[2]));
  if (!(rx < K(16777216.0) && ry < K(16777216.0))) /* non-finite or absurd: degenerate */
    return;
  REAL iz = K(1.0) / c.t[2];
  REAL mx = cam->fx * c.t[0] * iz + cam->cx;
  REAL my = cam->fy * c.t[1] * iz + cam->cy;
  uint32_t x0, x1, y0, y1;
  SFN(tile_span)(mx, rx, f->tiles_x, &x0, &x1);
  SFN(tile_span)(my, ry, f->tiles_y, &y0, &y1);
  if (x1 <= x0 || y1 <= y0) return;
  REAL rf = rx > ry ? rx : ry;
  s->mean2d[0] = mx;
  s->mean2d[1] = my;
  memcpy(s->cov2d, cov, sizeof cov);
  s->conic[0] = cov[2] / det;
  s->conic[1] = -cov[1] / det;
  s->conic[2] = cov[0] / det;
  s->depth = c.t[2];
  s->radius = (int32_t)rf;
  s->rect[0] = x0;
  s->rect[1] = y0;
  s->rect[2] = x1;
  s->rect[3] = y1;
  s->tiles_touched = (x1 - x0) * (y1 - y0);
  REAL b[16];
  SFN(sh_basis)(c.dir, f->sh_degree, b, NULL);
  uint32_t nk = (f->sh_degree + 1) * (f->sh_degree + 1);
  const REAL *sh = m->sh + (size_t)GS_SH_COEFFS * 3 * i;
  for (int ch = 0; ch < 3; ch++) {
    REAL v = K(0.0);
    for (uint32_t k = 0; k < nk; k++) v += b[k] * sh[3 * k + ch];
    v += K(0.5);
    s->clamped[ch] = v < K(0.0);
    s->rgb[ch] = v < K(0.0) ? K(0.0) : v;
  }
  s->opacity = o;
}

int FN(gs_ref_project)(const MODEL *m, const CAMERA *cam, FRAME *f, struct sw_err *err) {
  if (!m || !cam || !f)
    return sw_err_set(err, SW_EINVAL, "gs_ref_project: model, camera and frame are required");
  if (m->count != f->count)
    return sw_err_set(err, SW_EINVAL, "gs_ref_project: model has %u splats, frame %u", m->count,
                      f->count);
  if (cam->width != f->width || cam->height != f->height)
    return sw_err_set(err, SW_EINVAL, "gs_ref_project: camera %ux%u, frame %ux%u", cam->width,
                      cam->height, f->width, f->height);
  for (uint32_t i = 0; i < m->count; i++) SFN(project_one)(m, i, cam, f, &f->splats[i]);
  return 0;
}

/* ---- Binning -------------------------------------------------------------------------------- */

int FN(gs_ref_bin)(FRAME *f, struct sw_err *err) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < f->count; i++) total += f->splats[i].tiles_touched;
  if (total > UINT32_MAX)
    return sw_err_set(err, SW_EINVAL, "gs_ref_bin: %llu (splat, tile) pairs exceed 2^32",
                      (unsigned long long)total);
  struct ref_pair *pairs = malloc((total ? total : 1) * sizeof *pairs);
  uint64_t *keys = malloc((total ? total : 1) * sizeof *keys);
  uint32_t *ids = malloc((total ? total : 1) * sizeof *ids);
  if (!pairs || !keys || !ids) {
    free(pairs);
    free(keys);
    free(ids);
    return sw_err_set(err, SW_ENOMEM, "gs_ref_bin: out of memory for %llu pairs",
                      (unsigned long long)total);
  }
  uint32_t n = 0;
  for (uint32_t i = 0; i < f->count; i++) {
    const SPLAT *s = &f->splats[i];
    if (s->tiles_touched == 0) continue;
    float depth = (float)s->depth;
    uint32_t dbits;
    memcpy(&dbits, &depth, sizeof dbits);
    for (uint32_t ty = s->rect[1]; ty < s->rect[3]; ty++)
      for (uint32_t tx = s->rect[0]; tx < s->rect[2]; tx++) {
        uint64_t tile = (uint64_t)ty * f->tiles_x + tx;
        pairs[n].key = tile << 32 | dbits;
        pairs[n].id = i;
        pairs[n].seq = n;
        n++;
      }
  }
  qsort(pairs, n, sizeof *pairs, ref_pair_cmp);
  memset(f->ranges, 0, (size_t)f->tiles_x * f->tiles_y * 2 * sizeof *f->ranges);
  for (uint32_t k = 0; k < n; k++) {
    keys[k] = pairs[k].key;
    ids[k] = pairs[k].id;
    uint32_t tile = (uint32_t)(pairs[k].key >> 32);
    if (k == 0 || (uint32_t)(pairs[k - 1].key >> 32) != tile) f->ranges[2 * tile] = k;
    f->ranges[2 * tile + 1] = k + 1;
  }
  free(pairs);
  free(f->keys);
  free(f->ids);
  f->keys = keys;
  f->ids = ids;
  f->n_pairs = n;
  return 0;
}

/* ---- Rasterize ------------------------------------------------------------------------------ */

/* Alpha of splat s at pixel centre (pxc, pyc) under the clamp alpha_max, with the Gaussian
 * falloff and offsets for backward. Returns 0 when the splat is skipped at this pixel (sigma < 0
 * or alpha < 1/255). */
static int SFN(splat_alpha)(const SPLAT *s, REAL alpha_max, REAL pxc, REAL pyc, REAL *alpha,
                            REAL *g, REAL *dx, REAL *dy) {
  *dx = s->mean2d[0] - pxc;
  *dy = s->mean2d[1] - pyc;
  REAL sigma =
      K(0.5) * (s->conic[0] * *dx * *dx + s->conic[2] * *dy * *dy) + s->conic[1] * *dx * *dy;
  if (sigma < K(0.0)) return 0;
  *g = EXP(-sigma);
  REAL a = s->opacity * *g;
  *alpha = a < alpha_max ? a : alpha_max;
  return *alpha >= K(GS_ALPHA_MIN);
}

void FN(gs_ref_rasterize)(FRAME *f) {
  for (uint32_t ty = 0; ty < f->tiles_y; ty++)
    for (uint32_t tx = 0; tx < f->tiles_x; tx++) {
      uint32_t tile = ty * f->tiles_x + tx;
      uint32_t start = f->ranges[2 * tile], end = f->ranges[2 * tile + 1];
      for (uint32_t py = ty * GS_TILE; py < (ty + 1) * GS_TILE && py < f->height; py++)
        for (uint32_t px = tx * GS_TILE; px < (tx + 1) * GS_TILE && px < f->width; px++) {
          REAL pxc = (REAL)px + K(0.5), pyc = (REAL)py + K(0.5);
          REAL t = K(1.0), col[3] = {0, 0, 0};
          uint32_t last = 0;
          for (uint32_t k = start; k < end; k++) {
            const SPLAT *s = &f->splats[f->ids[k]];
            REAL alpha, g, dx, dy;
            if (!SFN(splat_alpha)(s, f->alpha_max, pxc, pyc, &alpha, &g, &dx, &dy)) continue;
            REAL next_t = t * (K(1.0) - alpha);
            if (next_t < K(GS_T_MIN)) break;
            for (int c = 0; c < 3; c++) col[c] += s->rgb[c] * alpha * t;
            t = next_t;
            last = k - start + 1;
          }
          size_t p = (size_t)py * f->width + px;
          for (int c = 0; c < 3; c++) f->rgb[3 * p + c] = col[c] + t * f->background[c];
          f->final_t[p] = t;
          f->last[p] = last;
        }
    }
}

int FN(gs_ref_forward)(const MODEL *m, const CAMERA *cam, const struct gs_ref_opts *opts,
                       FRAME **out, struct sw_err *err) {
  *out = NULL;
  if (!m) return sw_err_set(err, SW_EINVAL, "gs_ref_forward: model is required");
  FRAME *f;
  int rc = FN(gs_ref_frame_new)(m->count, cam, opts, &f, err);
  if (rc == 0) rc = FN(gs_ref_project)(m, cam, f, err);
  if (rc == 0) rc = FN(gs_ref_bin)(f, err);
  if (rc != 0) {
    FN(gs_ref_frame_destroy)(&f);
    return rc;
  }
  FN(gs_ref_rasterize)(f);
  *out = f;
  return 0;
}

/* ---- Loss: SSIM and L1 ---------------------------------------------------------------------- */

/* Separable zero-padded "same" convolution of a w x h plane with the normalised 11-tap Gaussian
 * (sigma 1.5): gs_metrics' blur in this precision (SSIM_BLUR). The kernel is symmetric, so this
 * is also its own transpose (which backward relies on). */
int FN(gs_ref_ssim_padded)(const REAL *a, const REAL *b, uint32_t w, uint32_t h, int padding,
                           double *ssim, REAL *dssim_da, struct sw_err *err) {
  if (!a || !b || !ssim || w == 0 || h == 0)
    return sw_err_set(err, SW_EINVAL, "gs_ref_ssim: empty image or missing buffer");
  if (padding != GS_SSIM_SAME && padding != GS_SSIM_VALID)
    return sw_err_set(err, SW_EINVAL, "gs_ref_ssim: unknown padding %d", padding);
  /* VALID: the map covers only pixels whose window lies inside the image; the others add
   * nothing to the mean and get zero derivatives, which the transposed blur below then spreads
   * only from interior pixels. */
  const uint32_t border = padding == GS_SSIM_VALID ? GS_SSIM_HALF : 0;
  if (w <= 2 * border || h <= 2 * border)
    return sw_err_set(err, SW_EINVAL,
                      "gs_ref_ssim: padding valid needs images of at least 11x11, not %ux%u", w, h);
  size_t n = (size_t)w * h;
  size_t n_map = (size_t)(w - 2 * border) * (h - 2 * border);
  enum { X, Y, MU1, MU2, S11, S22, S12, TMP, GA, GB, GC, NPLANES };
  REAL *buf = malloc(n * NPLANES * sizeof *buf);
  if (!buf) return sw_err_set(err, SW_ENOMEM, "gs_ref_ssim: out of memory for %ux%u", w, h);
  REAL *pl[NPLANES];
  for (int k = 0; k < NPLANES; k++) pl[k] = buf + (size_t)k * n;
  const REAL c1 = K(SSIM_C1), c2 = K(SSIM_C2);
  const REAL inv_n = K(1.0) / (REAL)(3 * n_map);
  double total = 0.0;
  for (int ch = 0; ch < 3; ch++) {
    for (size_t p = 0; p < n; p++) {
      pl[X][p] = a[3 * p + ch];
      pl[Y][p] = b[3 * p + ch];
    }
    SSIM_BLUR(pl[X], pl[MU1], pl[TMP], w, h);
    SSIM_BLUR(pl[Y], pl[MU2], pl[TMP], w, h);
    /* Second moments: convolve the products in place of scratch planes, then centre them. */
    for (size_t p = 0; p < n; p++) pl[GA][p] = pl[X][p] * pl[X][p];
    SSIM_BLUR(pl[GA], pl[S11], pl[TMP], w, h);
    for (size_t p = 0; p < n; p++) pl[GA][p] = pl[Y][p] * pl[Y][p];
    SSIM_BLUR(pl[GA], pl[S22], pl[TMP], w, h);
    for (size_t p = 0; p < n; p++) pl[GA][p] = pl[X][p] * pl[Y][p];
    SSIM_BLUR(pl[GA], pl[S12], pl[TMP], w, h);
    for (size_t p = 0; p < n; p++) {
      size_t px = p % w, py = p / w;
      if (px < border || px >= w - border || py < border || py >= h - border) {
        pl[GA][p] = pl[GB][p] = pl[GC][p] = K(0.0);
        continue;
      }
      REAL mu1 = pl[MU1][p], mu2 = pl[MU2][p];
      REAL s11 = pl[S11][p] - mu1 * mu1, s22 = pl[S22][p] - mu2 * mu2;
      REAL s12 = pl[S12][p] - mu1 * mu2;
      REAL n1 = K(2.0) * mu1 * mu2 + c1, n2 = K(2.0) * s12 + c2;
      REAL d1 = mu1 * mu1 + mu2 * mu2 + c1, d2 = s11 + s22 + c2;
      REAL s = (n1 * n2) / (d1 * d2);
      total += (double)s;
      /* Partial derivatives of this pixel's SSIM w.r.t. mu1, sigma1^2 and sigma12, already
       * divided by the number of terms of the mean. */
      pl[GA][p] = ((K(2.0) * mu2 * n2) / (d1 * d2) - s * K(2.0) * mu1 / d1) * inv_n;
      pl[GB][p] = (-s / d2) * inv_n;
      pl[GC][p] = (K(2.0) * n1 / (d1 * d2)) * inv_n;
    }
    if (!dssim_da) continue;
    /* dS/dx = conv(GA - 2 GB mu1 - GC mu2) + 2 x conv(GB) + y conv(GC): the chain rule through
     * mu1 = conv(x), sigma1^2 = conv(x^2) - mu1^2, sigma12 = conv(x y) - mu1 mu2. The planes
     * no longer needed (S11, S22, S12) hold the results. */
    for (size_t p = 0; p < n; p++)
      pl[S22][p] = pl[GA][p] - K(2.0) * pl[GB][p] * pl[MU1][p] - pl[GC][p] * pl[MU2][p];
    SSIM_BLUR(pl[S22], pl[S11], pl[TMP], w, h);
    SSIM_BLUR(pl[GB], pl[S22], pl[TMP], w, h);
    SSIM_BLUR(pl[GC], pl[S12], pl[TMP], w, h);
    for (size_t p = 0; p < n; p++)
      dssim_da[3 * p + ch] = pl[S11][p] + K(2.0) * pl[X][p] * pl[S22][p] + pl[Y][p] * pl[S12][p];
  }
  free(buf);
  *ssim = total / (double)(3 * n_map);
  return 0;
}

int FN(gs_ref_ssim)(const REAL *a, const REAL *b, uint32_t w, uint32_t h, double *ssim,
                    REAL *dssim_da, struct sw_err *err) {
  return FN(gs_ref_ssim_padded)(a, b, w, h, GS_SSIM_SAME, ssim, dssim_da, err);
}

int FN(gs_ref_loss_padded)(const REAL *img, const REAL *target, uint32_t w, uint32_t h, REAL lambda,
                           int padding, double *loss, REAL *dl_dimg, struct sw_err *err) {
  if (!img || !target || !loss || w == 0 || h == 0)
    return sw_err_set(err, SW_EINVAL, "gs_ref_loss: empty image or missing buffer");
  if (!(lambda >= K(0.0) && lambda <= K(1.0)))
    return sw_err_set(err, SW_EINVAL, "gs_ref_loss: SSIM weight %g outside [0, 1]", (double)lambda);
  size_t nv = (size_t)w * h * 3;
  double ssim;
  int rc = FN(gs_ref_ssim_padded)(img, target, w, h, padding, &ssim, dl_dimg, err);
  if (rc != 0) return rc;
  double l1 = 0.0;
  const REAL inv_n = K(1.0) / (REAL)nv;
  for (size_t k = 0; k < nv; k++) {
    REAL d = img[k] - target[k];
    l1 += (double)FABS(d);
    if (dl_dimg) {
      REAL sign = d > K(0.0) ? K(1.0) : d < K(0.0) ? K(-1.0) : K(0.0);
      dl_dimg[k] = (K(1.0) - lambda) * sign * inv_n - lambda * dl_dimg[k];
    }
  }
  l1 /= (double)nv;
  *loss = (1.0 - (double)lambda) * l1 + (double)lambda * (1.0 - ssim);
  return 0;
}

int FN(gs_ref_loss)(const REAL *img, const REAL *target, uint32_t w, uint32_t h, REAL lambda,
                    double *loss, REAL *dl_dimg, struct sw_err *err) {
  return FN(gs_ref_loss_padded)(img, target, w, h, lambda, GS_SSIM_SAME, loss, dl_dimg, err);
}

/* ---- Rasterize backward --------------------------------------------------------------------- */

int FN(gs_ref_rasterize_backward)(const FRAME *f, const REAL *dl_drgb, SGRAD *out,
                                  struct sw_err *err) {
  if (!f || !dl_drgb || !out)
    return sw_err_set(err, SW_EINVAL, "gs_ref_rasterize_backward: missing buffer");
  memset(out, 0, (size_t)f->count * sizeof *out);
  for (uint32_t ty = 0; ty < f->tiles_y; ty++)
    for (uint32_t tx = 0; tx < f->tiles_x; tx++) {
      uint32_t tile = ty * f->tiles_x + tx;
      uint32_t start = f->ranges[2 * tile];
      for (uint32_t py = ty * GS_TILE; py < (ty + 1) * GS_TILE && py < f->height; py++)
        for (uint32_t px = tx * GS_TILE; px < (tx + 1) * GS_TILE && px < f->width; px++) {
          size_t p = (size_t)py * f->width + px;
          REAL pxc = (REAL)px + K(0.5), pyc = (REAL)py + K(0.5);
          const REAL *g = dl_drgb + 3 * p;
          /* Walking back to front, t is the transmittance in front of the current splat
           * (recovered by dividing out its 1 - alpha) and acc the colour of everything behind
           * it, background included, normalised by the transmittance behind it. */
          REAL t = f->final_t[p];
          REAL acc[3] = {f->background[0], f->background[1], f->background[2]};
          for (uint32_t k = start + f->last[p]; k-- > start;) {
            uint32_t id = f->ids[k];
            const SPLAT *s = &f->splats[id];
            REAL alpha, gauss, dx, dy;
            if (!SFN(splat_alpha)(s, f->alpha_max, pxc, pyc, &alpha, &gauss, &dx, &dy)) continue;
            t = t / (K(1.0) - alpha);
            REAL dalpha = K(0.0);
            for (int c = 0; c < 3; c++) {
              out[id].rgb[c] += alpha * t * g[c];
              dalpha += (s->rgb[c] - acc[c]) * g[c];
              acc[c] = s->rgb[c] * alpha + (K(1.0) - alpha) * acc[c];
            }
            dalpha *= t;
            if (!(s->opacity * gauss < f->alpha_max))
              continue; /* alpha is clamped here: flat in opacity and position */
            out[id].opacity += gauss * dalpha;
            REAL dsigma = -s->opacity * gauss * dalpha;
            out[id].conic[0] += K(0.5) * dx * dx * dsigma;
            out[id].conic[1] += dx * dy * dsigma;
            out[id].conic[2] += K(0.5) * dy * dy * dsigma;
            out[id].mean2d[0] += (s->conic[0] * dx + s->conic[1] * dy) * dsigma;
            out[id].mean2d[1] += (s->conic[1] * dx + s->conic[2] * dy) * dsigma;
          }
        }
    }
  return 0;
}

/* ---- Projection backward -------------------------------------------------------------------- */

/* dL/dq (normalised quaternion) from dL/dR, R = quat_to_rot(q). */
static void SFN(rot_backward)(const REAL q[4], const REAL gr[3][3], REAL gq[4]) {
  REAL w = q[0], x = q[1], y = q[2], z = q[3];
  REAL two = K(2.0), four = K(4.0);
  gq[0] = two * (-z * gr[0][1] + y * gr[0][2] + z * gr[1][0] - x * gr[1][2] - y * gr[2][0] +
                 x * gr[2][1]);
  gq[1] = two * (y * gr[0][1] + z * gr[0][2] + y * gr[1][0] - w * gr[1][2] + z * gr[2][0] +
                 w * gr[2][1]) -
          four * x * (gr[1][1] + gr[2][2]);
  gq[2] = two * (x * gr[0][1] + w * gr[0][2] + x * gr[1][0] + z * gr[1][2] - w * gr[2][0] +
                 z * gr[2][1]) -
          four * y * (gr[0][0] + gr[2][2]);
  gq[3] = two * (-w * gr[0][1] + x * gr[0][2] + w * gr[1][0] + y * gr[1][2] + x * gr[2][0] +
                 y * gr[2][1]) -
          four * z * (gr[0][0] + gr[1][1]);
}

static void SFN(project_backward_one)(const MODEL *m, uint32_t i, const CAMERA *cam, const FRAME *f,
                                      const SGRAD *sg, MODEL *grad) {
  const SPLAT *s = &f->splats[i];
  struct SFN(proj_ctx) c;
  if (s->radius == 0 || SFN(proj_setup)(m, i, cam, &c) != 0) return;
  REAL *gmean = grad->means + 3 * (size_t)i;

  /* Opacity: through the sigmoid. */
  grad->opacity[i] = sg->opacity * s->opacity * (K(1.0) - s->opacity);

  /* Colour: SH coefficients up to the active degree, and the view direction to the mean. */
  REAL b[16], db[16][3];
  SFN(sh_basis)(c.dir, f->sh_degree, b, db);
  uint32_t nk = (f->sh_degree + 1) * (f->sh_degree + 1);
  const REAL *sh = m->sh + (size_t)GS_SH_COEFFS * 3 * i;
  REAL *gsh = grad->sh + (size_t)GS_SH_COEFFS * 3 * i;
  REAL gc[3], gdir[3] = {0, 0, 0};
  for (int ch = 0; ch < 3; ch++) gc[ch] = s->clamped[ch] ? K(0.0) : sg->rgb[ch];
  for (uint32_t k = 0; k < nk; k++) {
    REAL wsum = K(0.0);
    for (int ch = 0; ch < 3; ch++) {
      gsh[3 * k + ch] = b[k] * gc[ch];
      wsum += sh[3 * k + ch] * gc[ch];
    }
    for (int d = 0; d < 3; d++) gdir[d] += wsum * db[k][d];
  }
  if (c.vnorm > K(0.0)) {
    REAL dot = gdir[0] * c.dir[0] + gdir[1] * c.dir[1] + gdir[2] * c.dir[2];
    for (int d = 0; d < 3; d++) gmean[d] += (gdir[d] - c.dir[d] * dot) / c.vnorm;
  }

  /* Conic (a, b, c) -> cov2d: dL/dcov = -conic G conic with G the symmetric matrix gradient
   * [[ga, gb/2], [gb/2, gc]] (b sits in both off-diagonal entries). */
  REAL cn[2][2] = {{s->conic[0], s->conic[1]}, {s->conic[1], s->conic[2]}};
  REAL gcn[2][2] = {{sg->conic[0], K(0.5) * sg->conic[1]}, {K(0.5) * sg->conic[1], sg->conic[2]}};
  REAL tmp2[2][2], gcov[2][2];
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 2; k++) tmp2[r][k] = cn[r][0] * gcn[0][k] + cn[r][1] * gcn[1][k];
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 2; k++) gcov[r][k] = -(tmp2[r][0] * cn[0][k] + tmp2[r][1] * cn[1][k]);

  /* cov2d = J ccam J^T + 0.3 I: dL/dccam = J^T G J, dL/dJ = 2 G J ccam. */
  REAL gj_t[2][3], gccam[3][3], gj[2][3];
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 3; k++)
      gj_t[r][k] = gcov[r][0] * c.j[0][k] + gcov[r][1] * c.j[1][k]; /* G J */
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++) gccam[r][k] = c.j[0][r] * gj_t[0][k] + c.j[1][r] * gj_t[1][k];
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 3; k++)
      gj[r][k] = K(2.0) * (gj_t[r][0] * c.ccam[0][k] + gj_t[r][1] * c.ccam[1][k] +
                           gj_t[r][2] * c.ccam[2][k]);

  /* ccam = W Sigma W^T: dL/dSigma = W^T dL/dccam W. */
  REAL tmp3[3][3], gsig[3][3];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++)
      tmp3[r][k] = c.w[0][r] * gccam[0][k] + c.w[1][r] * gccam[1][k] + c.w[2][r] * gccam[2][k];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++)
      gsig[r][k] = tmp3[r][0] * c.w[0][k] + tmp3[r][1] * c.w[1][k] + tmp3[r][2] * c.w[2][k];

  /* Sigma = M M^T with M = R diag(s): dL/dM = 2 dL/dSigma M (dL/dSigma is symmetric). */
  REAL gm3[3][3], grot[3][3];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++)
      gm3[r][k] =
          K(2.0) * (gsig[r][0] * c.m3[0][k] + gsig[r][1] * c.m3[1][k] + gsig[r][2] * c.m3[2][k]);
  REAL *gls = grad->log_scales + 3 * (size_t)i;
  for (int k = 0; k < 3; k++) {
    REAL gs = K(0.0);
    for (int r = 0; r < 3; r++) {
      grot[r][k] = gm3[r][k] * c.s[k];
      gs += gm3[r][k] * c.rot[r][k];
    }
    gls[k] = gs * c.s[k]; /* s = exp(log s) */
  }
  REAL gq[4];
  SFN(rot_backward)(c.q, grot, gq);
  REAL qdot = gq[0] * c.q[0] + gq[1] * c.q[1] + gq[2] * c.q[2] + gq[3] * c.q[3];
  REAL *gquat = grad->quats + 4 * (size_t)i;
  for (int k = 0; k < 4; k++) gquat[k] = (gq[k] - c.q[k] * qdot) / c.qnorm;

  /* Camera-space mean t: through the 2D mean and through the Jacobian J(tj). Inside the clamp
   * J02 = -fx x / z^2; outside it J02 = -fx L / z with L the limit, which has no x and half the
   * z derivative. */
  REAL tx = c.t[0], ty = c.t[1], iz = K(1.0) / c.t[2];
  REAL iz2 = iz * iz, iz3 = iz2 * iz;
  REAL jx = c.tj[0], jy = c.tj[1];
  REAL kx = c.free_[0] ? K(2.0) : K(1.0), ky = c.free_[1] ? K(2.0) : K(1.0);
  REAL gt[3];
  gt[0] = sg->mean2d[0] * cam->fx * iz - (c.free_[0] ? gj[0][2] * cam->fx * iz2 : K(0.0));
  gt[1] = sg->mean2d[1] * cam->fy * iz - (c.free_[1] ? gj[1][2] * cam->fy * iz2 : K(0.0));
  gt[2] = -sg->mean2d[0] * cam->fx * tx * iz2 - sg->mean2d[1] * cam->fy * ty * iz2 -
          gj[0][0] * cam->fx * iz2 + gj[0][2] * kx * cam->fx * jx * iz3 - gj[1][1] * cam->fy * iz2 +
          gj[1][2] * ky * cam->fy * jy * iz3;
  for (int d = 0; d < 3; d++) gmean[d] += c.w[0][d] * gt[0] + c.w[1][d] * gt[1] + c.w[2][d] * gt[2];
}

int FN(gs_ref_project_backward)(const MODEL *m, const CAMERA *cam, const FRAME *f, const SGRAD *sg,
                                MODEL *grad, struct sw_err *err) {
  if (!m || !cam || !f || !sg || !grad)
    return sw_err_set(err, SW_EINVAL, "gs_ref_project_backward: missing argument");
  if (m->count != f->count)
    return sw_err_set(err, SW_EINVAL, "gs_ref_project_backward: model has %u splats, frame %u",
                      m->count, f->count);
  size_t n = m->count;
  memset(grad->means, 0, 3 * n * sizeof *grad->means);
  memset(grad->log_scales, 0, 3 * n * sizeof *grad->log_scales);
  memset(grad->quats, 0, 4 * n * sizeof *grad->quats);
  memset(grad->opacity, 0, n * sizeof *grad->opacity);
  memset(grad->sh, 0, (size_t)GS_SH_COEFFS * 3 * n * sizeof *grad->sh);
  grad->count = m->count;
  for (uint32_t i = 0; i < m->count; i++) SFN(project_backward_one)(m, i, cam, f, &sg[i], grad);
  return 0;
}

/* The parameters of this instantiation end here. */
#undef REAL
#undef K
#undef EXP
#undef SQRT
#undef LOG
#undef CEIL
#undef FLOOR
#undef FABS
#undef FN
#undef SFN
#undef MODEL
#undef CAMERA
#undef SPLAT
#undef SGRAD
#undef FRAME
#undef SSIM_BLUR
