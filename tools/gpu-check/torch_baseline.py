#!/usr/bin/env python3
"""The library a user would pick instead, measured in the same device call as
`gpukit bench`: matmul through cuBLAS (torch.matmul, TF32 off so f32 is f32) and fused
attention (torch.nn.functional.scaled_dot_product_attention), at the sizes of
`gpukit bench` on a GPU. Prints one line per case: name, size, ms, rate."""
import time

try:
    import torch
except ImportError:
    print("torch not available: no baseline")
    raise SystemExit(0)

if not torch.cuda.is_available():
    print("torch sees no CUDA device: no baseline")
    raise SystemExit(0)

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = torch.device("cuda:0")


def median_ms(f, reps):
    f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2] * 1e3


print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
for dtype, label in [(torch.float32, "matmul f32 (cuBLAS)"), (torch.float64, "matmul f64 (cuBLAS)")]:
    for n in (1024, 4096):
        a = torch.full((n, n), 0.5, dtype=dtype, device=dev)
        b = torch.full((n, n), 0.25, dtype=dtype, device=dev)
        ms = median_ms(lambda: torch.matmul(a, b), 3)
        print(f"{label:<28} {f'{n}^3':<12} {ms:>10.3f} {2 * n**3 / ms / 1e6:>10.2f} GFLOP/s")

heads, n, hd = 16, 1024, 64
q = torch.full((1, heads, n, hd), 0.01, device=dev)
k = torch.full((1, heads, n, hd), 0.02, device=dev)
v = torch.full((1, heads, n, hd), 0.03, device=dev)
ms = median_ms(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v), 3)
name = "attention f32 (torch sdpa)"
print(f"{name:<28} {f'h{heads} n{n} d{hd}':<12} {ms:>10.3f} {4 * heads * n * n * hd / ms / 1e6:>10.2f} GFLOP/s")
