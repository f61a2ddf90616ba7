#!/usr/bin/env python3
"""gsplat_iter.py: the peer side of the iteration benchmark (bench/iter_bench.c is ours).

Runs exactly the workload of issue 4 with gsplat (fwd + bwd + Adam, L1 loss only, no densification,
200 timed iterations after 30 warm-up) so that both trainers are timed on the same GPU in one call:
N Gaussians with means uniform in [-1,1]^3, log-scales ln(0.01) + 0.3 randn, random unit
quaternions, opacity logit -1, SH degree 3 with coefficients 0.1 randn; a camera at distance 4
orbiting the z axis at height 1, looking at the origin, advancing 0.1 rad per iteration; 800x800,
fx = fy = 1111; a fixed random target image. gsplat itself is not part of this project: the lead
carries a checkout to the GPU machine and puts it on PYTHONPATH.

With --ply FILE --scene DIR it replays a real workload instead, as iter_bench does: the splats of
a trained model (a standard 3DGS PLY, e.g. splat-train's checkpoint-7000.ply) seen by the scene's
training cameras in turn (transforms_train.json, every 8th view held out, gsplat_train.py's loader),
each view's image as the target, white background.

Prints one line per N: `gsplat N=... ms_per_iter=... (median of 200)`.
"""
import argparse
import importlib.util
import math
import os
import sys
import time

import numpy as np
import torch


def viewmat(theta, device):
    c = torch.tensor([4 * math.cos(theta), 4 * math.sin(theta), 1.0], device=device)
    f = -c / c.norm()
    up = torch.tensor([0.0, 0.0, 1.0], device=device)
    r = torch.linalg.cross(f, up)
    r = r / r.norm()
    d = torch.linalg.cross(f, r)
    m = torch.eye(4, device=device)
    m[0, :3], m[1, :3], m[2, :3] = r, d, f
    m[:3, 3] = -(m[:3, :3] @ c)
    return m


def timed(opt, iters, warmup, setup, loss_of):
    """Median and mean ms of iterations loss_of(setup(it)) + backward + Adam step, timed with CUDA
    events from the loss to the step (setup, e.g. building the camera, is outside)."""
    times = []
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for it in range(warmup + iters):
        x = setup(it)
        start.record()
        loss = loss_of(x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        stop.record()
        torch.cuda.synchronize()
        if it >= warmup:
            times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2], sum(times) / len(times)


def read_ply(path):
    """A standard 3DGS PLY (binary little endian, float properties) as gsplat's parameters."""
    with open(path, "rb") as f:
        names, n = [], 0
        while True:
            line = f.readline().decode("ascii").strip()
            if line.startswith("element vertex"):
                n = int(line.split()[2])
            elif line.startswith("property"):
                if line.split()[1] != "float":
                    raise SystemExit(f"{path}: only float properties are read ({line})")
                names.append(line.split()[2])
            elif line == "end_header":
                break
        data = np.frombuffer(f.read(4 * n * len(names)), dtype="<f4").reshape(n, len(names))
    col = {k: i for i, k in enumerate(names)}

    def cols(prefix, count):
        return torch.from_numpy(data[:, [col[f"{prefix}{i}"] for i in range(count)]].copy())

    rest = cols("f_rest_", 45).reshape(n, 3, 15).transpose(1, 2)  # channel-major in the file
    sh = torch.cat([cols("f_dc_", 3)[:, None, :], rest], 1)
    return {
        "means": torch.from_numpy(data[:, [col["x"], col["y"], col["z"]]].copy()),
        "log_scales": cols("scale_", 3), "quats": cols("rot_", 4),
        "opac": torch.from_numpy(data[:, col["opacity"]].copy()), "sh": sh,
    }


def run_replay(ply, scene, iters, warmup):
    from gsplat import rasterization

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gsplat_train import load_scene

    dev = torch.device("cuda")
    sc = load_scene(scene, 8, dev)
    p = {k: v.to(dev).contiguous().requires_grad_() for k, v in read_ply(ply).items()}
    n = p["means"].shape[0]
    opt = torch.optim.Adam(list(p.values()), lr=1e-3, eps=1e-15, fused=True)
    K, w, h = sc["K"][None], sc["w"], sc["h"]
    views, imgs = sc["train_views"], sc["train_imgs"]

    def loss_of(v):
        # White background composited through the alpha, as gsplat_train.py does (gsplat's
        # `backgrounds` argument takes other shapes in 1.5.3 and in main).
        img, alpha, _ = rasterization(p["means"], p["quats"], torch.exp(p["log_scales"]),
                                      torch.sigmoid(p["opac"]), p["sh"], views[v][None], K, w, h,
                                      sh_degree=3)
        return (img[0] + (1.0 - alpha[0]) - imgs[v]).abs().mean()

    med, mean = timed(opt, iters, warmup, lambda it: it % views.shape[0], loss_of)
    return n, med, mean


def run(n, iters, warmup, width, height, seed):
    from gsplat import rasterization

    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(seed)
    means = (torch.rand(n, 3, device=dev, generator=g) * 2 - 1).requires_grad_()
    log_scales = (math.log(0.01) + 0.3 * torch.randn(n, 3, device=dev, generator=g)).requires_grad_()
    q = torch.randn(n, 4, device=dev, generator=g)
    quats = (q / q.norm(dim=1, keepdim=True)).requires_grad_()
    opac = torch.full((n,), -1.0, device=dev).requires_grad_()
    sh = (0.1 * torch.randn(n, 16, 3, device=dev, generator=g)).requires_grad_()
    target = torch.rand(height, width, 3, device=dev, generator=g)
    K = torch.tensor([[1111.0, 0, width / 2], [0, 1111.0, height / 2], [0, 0, 1]], device=dev)
    opt = torch.optim.Adam([means, log_scales, quats, opac, sh], lr=1e-3, eps=1e-15, fused=True)

    def loss_of(vm):
        img, _, _ = rasterization(means, quats, torch.exp(log_scales), torch.sigmoid(opac), sh,
                                  vm, K[None], width, height, sh_degree=3)
        return (img[0] - target).abs().mean()

    return timed(opt, iters, warmup, lambda it: viewmat(0.1 * it, dev)[None], loss_of)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[100_000, 400_000, 1_000_000])
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--size", type=int, default=800)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ext", help="prebuilt gsplat_cuda*.so to load instead of compiling")
    ap.add_argument("--ply", help="replay this model (with --scene) instead of random Gaussians")
    ap.add_argument("--scene", help="NeRF-synthetic scene whose training views --ply is seen by")
    a = ap.parse_args()
    if a.ext:
        spec = importlib.util.spec_from_file_location("gsplat_cuda", a.ext)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules["gsplat.csrc"] = mod  # gsplat imports gsplat.csrc before compiling one
    if a.ply:
        t0 = time.time()
        n, med, mean = run_replay(a.ply, a.scene, a.iters, a.warmup)
        print(f"gsplat replay {a.ply} N={n} ms_per_iter={med:.3f} mean={mean:.3f} (median of "
              f"{a.iters}, {time.time() - t0:.1f} s total)", flush=True)
        return
    for n in a.n:
        t0 = time.time()
        med, mean = run(n, a.iters, a.warmup, a.size, a.size, a.seed)
        print(f"gsplat N={n} ms_per_iter={med:.3f} mean={mean:.3f} (median of {a.iters}, "
              f"{time.time() - t0:.1f} s total)", flush=True)


if __name__ == "__main__":
    main()
