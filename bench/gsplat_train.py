#!/usr/bin/env python3
"""gsplat_train.py: the peer side of the Lego training comparison (ours: `splat-train train`).

Trains a NeRF-synthetic scene (or an instant-ngp transforms.json capture such as the fox,
prepared as splat-train prepares it: load_transforms) with gsplat 1.5.3 (its `rasterization` and `DefaultStrategy`) on the
recipe of gsplat's examples/simple_trainer.py, so that both trainers run on the same GPU, with the
same split and the same background, in one device call:

- views: transforms_train.json; every 8th view (index % 8 == 0) held out for evaluation, the rest
  trained on (splat-train's `holdout_every: 8`); RGBA composited onto white for the targets, the
  render composited onto white through its alpha;
- cameras: Blender camera-to-world (OpenGL axes) turned into OpenCV axes, fx = fy =
  W / (2 tan(camera_angle_x / 2)), principal point at the image centre;
- scene scale 1.1 x the largest distance of a training camera centre from their mean;
- init: `random` (gsplat's: 100k points uniform in a cube of half-size 3 x scene scale) or
  `aabb` (splat-train's default: the same count in [-1.3, 1.3]^3); log-scale from the mean squared
  distance to the 3 nearest neighbours, opacity 0.1, colours uniform as SH dc, quaternions
  uniform [0, 1)^4 as in simple_trainer;
- Adam per group (means 1.6e-4 x scene scale with ExponentialLR to 0.01 at the last step,
  scales 5e-3, quats 1e-3, opacities 5e-2, sh0 2.5e-3, shN 2.5e-3 / 20, eps 1e-15);
- loss 0.8 L1 + 0.2 (1 - SSIM), SSIM with an 11x11 Gaussian window (sigma 1.5) and padding
  "valid" as fused-ssim computes it (fused-ssim itself is not installed on the GPU machine, so the
  SSIM here is a separable convolution in PyTorch: the same values, a little slower);
- one SH degree per 1,000 steps, DefaultStrategy with its defaults (which in 1.5.3 never resets
  opacities), a new random permutation of the training views each epoch;
- evaluation: PSNR of the clamped render on every held-out view, averaged over views.

gsplat is not part of this project: the lead carries a checkout (and optionally a prebuilt
extension, see --ext) to the GPU machine. Prints progress lines and one final JSON line:
{"trainer": "gsplat", "iterations", "train_s", "psnr_db", "splats_final", "splats_mean", ...}.
"""
import argparse
import importlib.util
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def load_ext(path):
    """Use a prebuilt gsplat_cuda extension instead of compiling one (gsplat imports gsplat.csrc first)."""
    spec = importlib.util.spec_from_file_location("gsplat_cuda", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules["gsplat.csrc"] = mod


def read_png_rgba(path):
    from PIL import Image

    im = Image.open(path).convert("RGBA")
    return np.asarray(im, dtype=np.float32) / 255.0


def read_rgb(path):
    from PIL import Image, ImageOps

    im = ImageOps.exif_transpose(Image.open(path)).convert("RGB")
    return np.asarray(im, dtype=np.float32) / 255.0


def undistort(rgb, fx, fy, cx, cy, k, p):
    """The pinhole image with the same fx, fy, cx, cy: each output pixel centre takes the bilinear
    sample of the captured image where the OpenCV lens model (k1..k4, p1, p2) sends its ray,
    edge-clamped; the forward model only, as splat-train's loader does (gs_scene_undistort.c)."""
    h, w = rgb.shape[:2]
    u, v = np.meshgrid(np.arange(w) + 0.5, np.arange(h) + 0.5)
    x, y = (u - cx) / fx, (v - cy) / fy
    r2 = x * x + y * y
    radial = 1 + r2 * (k[0] + r2 * (k[1] + r2 * (k[2] + r2 * k[3])))
    xd = x * radial + 2 * p[0] * x * y + p[1] * (r2 + 2 * x * x)
    yd = y * radial + p[0] * (r2 + 2 * y * y) + 2 * p[1] * x * y
    sx = np.clip(fx * xd + cx - 0.5, 0, w - 1)
    sy = np.clip(fy * yd + cy - 0.5, 0, h - 1)
    x0, y0 = np.floor(sx).astype(np.int64), np.floor(sy).astype(np.int64)
    x1, y1 = np.minimum(x0 + 1, w - 1), np.minimum(y0 + 1, h - 1)
    tx, ty = (sx - x0)[..., None], (sy - y0)[..., None]
    top = rgb[y0, x0] * (1 - tx) + rgb[y0, x1] * tx
    bot = rgb[y1, x0] * (1 - tx) + rgb[y1, x1] * tx
    return (top * (1 - ty) + bot * ty).astype(np.float32)


def load_transforms(root, holdout_every, resolution_scale, device):
    """An instant-ngp / nerfstudio transforms.json capture, prepared as splat-train prepares it
    (docs/scenes.md): frames in file order, missing images skipped, every holdout_every-th kept
    frame held out; each image undistorted at its stored size, then box-averaged by
    resolution_scale with the intrinsics divided; the world moved so that the training cameras'
    centroid is the origin and scaled so that the farthest is at distance 1."""
    with open(os.path.join(root, "transforms.json")) as f:
        meta = json.load(f)
    images, c2ws, missing, Ks = [], [], [], []
    s = resolution_scale
    for fr in meta["frames"]:
        path = os.path.join(root, fr["file_path"])
        if not os.path.isfile(path):
            missing.append(fr["file_path"])
            continue
        g = lambda key, default=None: fr.get(key, meta.get(key, default))
        rgb = read_rgb(path)
        h, w = rgb.shape[:2]
        fx = g("fl_x") or 0.5 * w / math.tan(0.5 * g("camera_angle_x"))
        fy = g("fl_y") or fx
        cx, cy = g("cx", w / 2.0), g("cy", h / 2.0)
        k = [g("k1", 0.0), g("k2", 0.0), g("k3", 0.0), g("k4", 0.0)]
        pp = [g("p1", 0.0), g("p2", 0.0)]
        if any(k) or any(pp):
            rgb = undistort(rgb, fx, fy, cx, cy, k, pp)
        if s > 1:
            hh, ww = h // s, w // s
            rgb = rgb[: hh * s, : ww * s].reshape(hh, s, ww, s, 3).mean((1, 3))
        Ks.append((fx / s, fy / s, cx / s, cy / s))
        images.append(rgb)
        m = np.array(fr["transform_matrix"], dtype=np.float64)
        m[:3, 1:3] *= -1.0
        c2ws.append(m)
    if missing:
        print(json.dumps({"missing_frames": len(missing)}), file=sys.stderr)
    if len(set(Ks)) != 1:
        raise SystemExit("gsplat_train.py: per-frame intrinsics are not supported here")
    fx, fy, cx, cy = Ks[0]
    h, w = images[0].shape[:2]
    K = torch.tensor([[fx, 0, cx], [0, fy, cy], [0, 0, 1]], dtype=torch.float32)
    idx = np.arange(len(images))
    test = idx % holdout_every == 0
    c2w = np.stack(c2ws)
    centroid = c2w[~test, :3, 3].mean(0)
    c2w[:, :3, 3] -= centroid
    c2w[:, :3, 3] /= np.linalg.norm(c2w[~test, :3, 3], axis=1).max()
    views = torch.from_numpy(np.linalg.inv(c2w)).float()
    imgs = torch.from_numpy(np.stack(images))
    centres = c2w[~test, :3, 3]
    scale = 1.1 * np.linalg.norm(centres - centres.mean(0), axis=1).max()
    return {
        "train_views": views[~test].to(device), "train_imgs": imgs[~test].to(device),
        "test_views": views[test].to(device), "test_imgs": imgs[test].to(device),
        "K": K.to(device), "w": w, "h": h, "scene_scale": float(scale),
    }


def load_scene(root, holdout_every, device):
    with open(os.path.join(root, "transforms_train.json")) as f:
        meta = json.load(f)
    frames = meta["frames"]
    images, c2ws = [], []
    for fr in frames:
        p = os.path.join(root, fr["file_path"])
        if not p.endswith(".png"):
            p += ".png"
        rgba = read_png_rgba(p)
        rgb = rgba[..., :3] * rgba[..., 3:4] + (1.0 - rgba[..., 3:4])
        images.append(rgb)
        m = np.array(fr["transform_matrix"], dtype=np.float64)
        m[:3, 1:3] *= -1.0  # OpenGL (y up, z back) -> OpenCV (y down, z forward)
        c2ws.append(m)
    h, w = images[0].shape[:2]
    fx = 0.5 * w / math.tan(0.5 * meta["camera_angle_x"])
    K = torch.tensor([[fx, 0, w / 2.0], [0, fx, h / 2.0], [0, 0, 1]], dtype=torch.float32)
    idx = np.arange(len(frames))
    test = idx % holdout_every == 0
    c2w = np.stack(c2ws)
    views = torch.from_numpy(np.linalg.inv(c2w)).float()
    imgs = torch.from_numpy(np.stack(images))
    centres = c2w[~test, :3, 3]
    scale = 1.1 * np.linalg.norm(centres - centres.mean(0), axis=1).max()
    return {
        "train_views": views[~test].to(device), "train_imgs": imgs[~test].to(device),
        "test_views": views[test].to(device), "test_imgs": imgs[test].to(device),
        "K": K.to(device), "w": w, "h": h, "scene_scale": float(scale),
    }


def knn_mean_sq(points, k=3, chunk=4096):
    out = torch.empty(points.shape[0], device=points.device)
    for i in range(0, points.shape[0], chunk):
        d = torch.cdist(points[i:i + chunk], points)
        v, _ = torch.topk(d, k + 1, dim=1, largest=False)
        out[i:i + chunk] = (v[:, 1:] ** 2).mean(1)
    return out


def gauss_window(size=11, sigma=1.5, device="cuda"):
    x = torch.arange(size, dtype=torch.float32, device=device) - size // 2
    g = torch.exp(-(x * x) / (2 * sigma * sigma))
    return g / g.sum()


def ssim_valid(a, b, g):
    """Mean SSIM over the pixels whose 11x11 window lies inside the image; a, b: [1, 3, H, W]."""
    c = a.shape[1]
    gh = g.view(1, 1, 1, -1).repeat(c, 1, 1, 1)
    gv = g.view(1, 1, -1, 1).repeat(c, 1, 1, 1)

    def blur(x):
        return F.conv2d(F.conv2d(x, gh, groups=c), gv, groups=c)

    mu_a, mu_b = blur(a), blur(b)
    saa = blur(a * a) - mu_a * mu_a
    sbb = blur(b * b) - mu_b * mu_b
    sab = blur(a * b) - mu_a * mu_b
    c1, c2 = 0.01 ** 2, 0.03 ** 2
    m = ((2 * mu_a * mu_b + c1) * (2 * sab + c2)) / ((mu_a * mu_a + mu_b * mu_b + c1) * (saa + sbb + c2))
    return m.mean()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scene", required=True)
    ap.add_argument("--iterations", type=int, default=7000)
    ap.add_argument("--init", choices=["random", "aabb"], default="random")
    ap.add_argument("--init-points", type=int, default=100_000)
    ap.add_argument("--init-extent", type=float, default=3.0,
                    help="random init: a cube of half-size init-extent x scene scale (gsplat's 3)")
    ap.add_argument("--background", choices=["white", "black"], default="white")
    ap.add_argument("--resolution-scale", type=int, default=1,
                    help="transforms.json captures: box-average the images by this factor")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--holdout-every", type=int, default=8)
    ap.add_argument("--ssim-lambda", type=float, default=0.2)
    ap.add_argument("--scene-scale", type=float, default=0.0,
                    help="override the scene scale (0: 1.1 x the largest camera distance from their mean)")
    ap.add_argument("--report-every", type=int, default=500)
    ap.add_argument("--ext", help="prebuilt gsplat_cuda*.so to load instead of compiling")
    ap.add_argument("--checkpoints", default="",
                    help="iterations (comma separated) at which the held-out PSNR is measured "
                         "with the clock stopped, as splat-train's checkpoints")
    args = ap.parse_args()

    if args.ext:
        load_ext(args.ext)
    from gsplat import rasterization
    from gsplat.strategy import DefaultStrategy

    dev = torch.device("cuda")
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    if os.path.exists(os.path.join(args.scene, "transforms_train.json")):
        sc = load_scene(args.scene, args.holdout_every, dev)
    else:
        sc = load_transforms(args.scene, args.holdout_every, args.resolution_scale, dev)
    scale = args.scene_scale if args.scene_scale > 0 else sc["scene_scale"]

    n = args.init_points
    if args.init == "random":
        pts = args.init_extent * scale * (torch.rand(n, 3, device=dev) * 2 - 1)
    else:
        pts = 1.3 * (torch.rand(n, 3, device=dev) * 2 - 1)
    log_s = torch.log(torch.sqrt(knn_mean_sq(pts))).unsqueeze(1).repeat(1, 3)
    rgb = torch.rand(n, 3, device=dev)
    c0 = 0.28209479177387814
    params = torch.nn.ParameterDict({
        "means": torch.nn.Parameter(pts),
        "scales": torch.nn.Parameter(log_s),
        "quats": torch.nn.Parameter(torch.rand(n, 4, device=dev)),
        "opacities": torch.nn.Parameter(torch.logit(torch.full((n,), 0.1, device=dev))),
        "sh0": torch.nn.Parameter(((rgb - 0.5) / c0).unsqueeze(1)),
        "shN": torch.nn.Parameter(torch.zeros(n, 15, 3, device=dev)),
    })
    lrs = {"means": 1.6e-4 * scale, "scales": 5e-3, "quats": 1e-3, "opacities": 5e-2,
           "sh0": 2.5e-3, "shN": 2.5e-3 / 20}
    opts = {k: torch.optim.Adam([{"params": params[k], "lr": lr, "name": k}], eps=1e-15,
                                betas=(0.9, 0.999)) for k, lr in lrs.items()}
    sched = torch.optim.lr_scheduler.ExponentialLR(opts["means"], gamma=0.01 ** (1.0 / args.iterations))
    strategy = DefaultStrategy(verbose=False)
    strategy.check_sanity(params, opts)
    state = strategy.initialize_state(scene_scale=scale)
    win = gauss_window(device=dev)
    K = sc["K"][None]
    w, h = sc["w"], sc["h"]
    ntrain = sc["train_views"].shape[0]

    def render(view, deg):
        colors, alphas, info = rasterization(
            params["means"], params["quats"], torch.exp(params["scales"]),
            torch.sigmoid(params["opacities"]), torch.cat([params["sh0"], params["shN"]], 1),
            view[None], K, w, h, sh_degree=deg, near_plane=0.01, far_plane=1e10,
            packed=False, absgrad=False, rasterize_mode="classic")
        return (colors + (1.0 - alphas) if args.background == "white" else colors), info

    print(json.dumps({"trainer": "gsplat", "scene_scale": scale, "train_views": ntrain,
                      "test_views": int(sc["test_views"].shape[0]), "init": args.init}), flush=True)
    def evaluate(iters):
        psnrs = []
        with torch.no_grad():
            for i in range(sc["test_views"].shape[0]):
                img, _ = render(sc["test_views"][i], min((iters - 1) // 1000, 3))
                mse = ((img[0].clamp(0, 1) - sc["test_imgs"][i]) ** 2).mean()
                psnrs.append((-10 * torch.log10(mse)).item())
        return round(sum(psnrs) / len(psnrs), 3)

    checkpoints = sorted({int(c) for c in args.checkpoints.split(",") if c.strip()})
    paused = 0.0  # seconds spent in checkpoint evaluations, off the training clock
    order = torch.randperm(ntrain).tolist()
    splat_sum = 0
    torch.cuda.synchronize()
    t0 = time.time()
    for step in range(args.iterations):
        if not order:
            order = torch.randperm(ntrain).tolist()
        v = order.pop()
        deg = min(step // 1000, 3)
        img, info = render(sc["train_views"][v], deg)
        strategy.step_pre_backward(params, opts, state, step, info)
        gt = sc["train_imgs"][v][None]
        l1 = (img - gt).abs().mean()
        ssim = ssim_valid(img.permute(0, 3, 1, 2), gt.permute(0, 3, 1, 2), win)
        loss = (1 - args.ssim_lambda) * l1 + args.ssim_lambda * (1 - ssim)
        loss.backward()
        for o in opts.values():
            o.step()
            o.zero_grad(set_to_none=True)
        sched.step()
        strategy.step_post_backward(params, opts, state, step, info, packed=False)
        splat_sum += params["means"].shape[0]
        if step + 1 in checkpoints and step + 1 < args.iterations:
            torch.cuda.synchronize()
            t_stop = time.time()
            print(json.dumps({"checkpoint": step + 1, "train_s": round(t_stop - t0 - paused, 2),
                              "psnr_db": evaluate(step + 1),
                              "splats": params["means"].shape[0]}), flush=True)
            paused += time.time() - t_stop
        if (step + 1) % args.report_every == 0:
            print(json.dumps({"iter": step + 1, "splats": params["means"].shape[0],
                              "loss": round(loss.item(), 5), "t": round(time.time() - t0 - paused, 2)}), flush=True)
    torch.cuda.synchronize()
    train_s = time.time() - t0 - paused

    psnr_db = evaluate(args.iterations)
    print(json.dumps({"trainer": "gsplat", "iterations": args.iterations, "train_s": round(train_s, 2),
                      "psnr_db": psnr_db,
                      "splats_final": params["means"].shape[0],
                      "splats_mean": round(splat_sum / args.iterations), "init": args.init}), flush=True)


if __name__ == "__main__":
    main()
