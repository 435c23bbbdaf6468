# Does cuBLAS's TF32 GEMM on this GPU round its fp32 operands to TF32 (to nearest) or truncate them
# (the tensor cores ignore the low 13 bits)? Positive operands make the difference visible: both
# truncations lower every product, so the error of truncation is a bias, not noise.
import torch
torch.manual_seed(0)
torch.backends.cuda.matmul.allow_tf32 = True
print(torch.cuda.get_device_name())
def tf32_truncate(x):
    return (x.view(torch.int32) & ~0x1FFF).view(torch.float32)
def tf32_round(x):  # to nearest, ties away from zero (cvt.rna)
    i = x.view(torch.int32)
    return ((i + 0x1000) & ~0x1FFF).view(torch.float32)
for lo in (0.0, -1.0):
    for n in (1024, 4096):
        a = torch.rand(n, n, device='cuda') * (1 - lo) + lo
        b = torch.rand(n, n, device='cuda') * (1 - lo) + lo
        c = (a @ b).double()
        scale = a.double().abs() @ b.double().abs()
        for name, f in (("round", tf32_round), ("truncate", tf32_truncate), ("exact", lambda x: x)):
            ref = f(a).double() @ f(b).double()
            err = ((c - ref).abs() / scale)
            print(f"operands in [{lo}, 1) n={n}: cuBLAS vs {name:8s} inputs: max {err.max().item():.3e} mean {err.mean().item():.3e}")
