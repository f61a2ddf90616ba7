#!/usr/bin/env python3
"""gsplat_iter.py: the peer side of the iteration benchmark (bench/iter_bench.c is ours).

Runs exactly the workload of issue 4 with gsplat (fwd + bwd + Adam, L1 loss only, no densification,
200 timed iterations after 30 warm-up) so that both trainers are timed on the same GPU in one call:
N Gaussians with means uniform in [-1,1]^3, log-scales ln(0.01) + 0.3 randn, random unit
quaternions, opacity logit -1, SH degree 3 with coefficients 0.1 randn; a camera at distance 4
orbiting the z axis at height 1, looking at the origin, advancing 0.1 rad per iteration; 800x800,
fx = fy = 1111; a fixed random target image. gsplat itself is not part of this project: the lead
carries a checkout to the GPU machine and puts it on PYTHONPATH.

Prints one line per N: `gsplat N=... ms_per_iter=... (median of 200)`.
"""
import argparse
import importlib.util
import math
import sys
import time

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
    times = []
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for it in range(warmup + iters):
        vm = viewmat(0.1 * it, dev)[None]
        start.record()
        img, _, _ = rasterization(means, quats, torch.exp(log_scales), torch.sigmoid(opac), sh,
                                  vm, K[None], width, height, sh_degree=3)
        loss = (img[0] - target).abs().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        stop.record()
        torch.cuda.synchronize()
        if it >= warmup:
            times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2], sum(times) / len(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[100_000, 400_000, 1_000_000])
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--size", type=int, default=800)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ext", help="prebuilt gsplat_cuda*.so to load instead of compiling")
    a = ap.parse_args()
    if a.ext:
        spec = importlib.util.spec_from_file_location("gsplat_cuda", a.ext)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules["gsplat.csrc"] = mod  # gsplat imports gsplat.csrc before compiling one
    for n in a.n:
        t0 = time.time()
        med, mean = run(n, a.iters, a.warmup, a.size, a.size, a.seed)
        print(f"gsplat N={n} ms_per_iter={med:.3f} mean={mean:.3f} (median of {a.iters}, "
              f"{time.time() - t0:.1f} s total)", flush=True)


if __name__ == "__main__":
    main()
