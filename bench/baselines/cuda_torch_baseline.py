# Reference figures from vendor libraries (cuBLAS, cuDNN) through PyTorch on an NVIDIA GPU.
# Copied from the team baseline folder (shared/baselines) so GPU runs can carry it; the fp16/bf16
# GEMM lines are ours (sixth session).
# Run it on the same GPU, in the same command as an ocltune benchmark, and compare ratios.
import torch, time
def bench(fn, reps=20):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts)//2]
dev = 'cuda'
print(torch.__version__, torch.cuda.get_device_name())
x = torch.empty(1 << 28, device=dev); y = torch.empty_like(x); x.normal_()
ms = bench(lambda: y.copy_(x)); print(f"copy 1 GiB: {ms:.3f} ms -> {2*x.numel()*4/ms/1e6:.1f} GB/s")
for tf32 in (False, True):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    for n in (256, 512, 1024, 2048, 4096, 8192):
        a = torch.randn(n, n, device=dev); b = torch.randn(n, n, device=dev)
        ms = bench(lambda: a @ b); print(f"cublas {'tf32' if tf32 else 'fp32'} n={n}: {ms:.3f} ms -> {2*n**3/ms/1e6:.1f} GFLOP/s")
# Half-precision GEMM (fp32 accumulation: reduced-precision reductions off), for ocltune's fp16/bf16 GEMM.
torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
for dtype in (torch.float16, torch.bfloat16):
    for n in (4096, 8192):
        a = torch.randn(n, n, device=dev, dtype=dtype); b = torch.randn(n, n, device=dev, dtype=dtype)
        ms = bench(lambda: a @ b); print(f"cublas {str(dtype).split('.')[1]} n={n}: {ms:.3f} ms -> {2*n**3/ms/1e6:.1f} GFLOP/s")
for tf32 in (False, True):
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    for (N, C, H, K, R, S) in ((32, 64, 56, 64, 3, 1), (32, 256, 56, 64, 1, 1), (32, 128, 28, 128, 3, 1), (32, 512, 7, 512, 3, 1)):
        xx = torch.randn(N, C, H, H, device=dev); w = torch.randn(K, C, R, R, device=dev)
        f = lambda: torch.nn.functional.conv2d(xx, w, padding=R//2, stride=S)
        ms = bench(f); flops = 2*N*K*H*H*C*R*R/(S*S)
        print(f"cudnn {'tf32' if tf32 else 'fp32'} conv N{N} C{C} H{H} K{K} R{R}: {ms:.3f} ms -> {flops/ms/1e6:.1f} GFLOP/s")
a = torch.randn(1 << 28, device=dev)
ms = bench(lambda: a.sum()); print(f"sum 1 GiB: {ms:.3f} ms -> {a.numel()*4/ms/1e6:.1f} GB/s")
ms = bench(lambda: torch.relu(a)); print(f"relu 1 GiB: {ms:.3f} ms -> {2*a.numel()*4/ms/1e6:.1f} GB/s")
m = torch.randn(8192, 8192, device=dev)
ms = bench(lambda: torch.softmax(m, dim=1)); print(f"softmax 8192x8192: {ms:.3f} ms -> {2*m.numel()*4/ms/1e6:.1f} GB/s")
