"""torchvision's classification families on ocl in strict mode (no CPU fallback): one training step's
gradients and an eval forward, each as close to float64 as the CPU's own float32 is.

One model per family at a small size (batch 2; 64x64 where the network downsamples 32 times, so
its last batch norms see 8 values per channel, not 2). Random weights; nothing is downloaded.

Gradients are compared the way model_accuracy.py explains: each float32 run against a float64 run
that takes the same side of every ReLU and max-pool kink, so what is compared is rounding in the
smooth ops, where a lossy algorithm or a 16-bit intermediate would show. Per parameter, ocl's error
may be GRADIENT_FACTOR times the CPU's plus GRADIENT_FLOOR (both relative to the parameter's largest
float64 gradient, floored at 1e-3 of the network's largest). Measured on PoCL (2026-12-05, with
kinks replayed): the worst ratio over the families is 2.3 (googlenet).

OCLTUNE_ZOO=all runs every classification model torchvision lists at its family's size, not one
per family (not part of CI; its cost is not measured).
"""

import copy
import os

import pytest
import torch

import model_accuracy
from conftest import DEVICE

torchvision = pytest.importorskip("torchvision")

pytestmark = pytest.mark.usefixtures("strict")  # conftest.py: no op may fall back to the CPU

GRADIENT_FACTOR = 8
GRADIENT_FLOOR = 1e-5

# arch -> input size. One per family by default; the size is the smallest at which the network's
# deepest batch norm still normalises more than two values per channel at batch 2.
FAMILIES = {
    "alexnet": 64,
    "convnext_tiny": 32,
    "densenet121": 64,
    "efficientnet_b0": 64,
    "efficientnet_v2_s": 64,
    "googlenet": 32,
    "inception_v3": 107,
    "mnasnet0_5": 64,
    "mobilenet_v3_small": 64,
    "regnet_y_400mf": 64,
    "resnext50_32x4d": 64,
    "shufflenet_v2_x0_5": 64,
    "squeezenet1_0": 64,
    "swin_t": 64,
    "vgg11_bn": 64,
    "vit_b_32": 64,
}


def every_model():
    """Every classification model torchvision lists, at its family's size (maxvit's windows need 224,
    a ViT's image a multiple of its patch)."""
    sizes = {}
    for arch in torchvision.models.list_models(module=torchvision.models):
        family = next((f for f in FAMILIES if arch.split("_")[0] == f.split("_")[0]), None)
        sizes[arch] = FAMILIES.get(family, 64)
        if arch.startswith("maxvit"):
            sizes[arch] = 224
        elif arch.startswith("vit"):
            patch = int(arch.split("_")[-1])
            sizes[arch] = patch * max(2, 64 // patch)
    return sizes


ZOO = every_model() if os.environ.get("OCLTUNE_ZOO") == "all" else FAMILIES


def builder(arch, size):
    kwargs = {"num_classes": 10}
    if arch in ("googlenet", "inception_v3"):
        kwargs.update(aux_logits=False, init_weights=True)
    if arch.startswith("vit"):
        kwargs.update(image_size=size)
    return lambda: getattr(torchvision.models, arch)(**kwargs)


@pytest.mark.parametrize("arch", sorted(ZOO))
def test_training_gradients_as_close_to_float64_as_the_cpu(arch):
    size = ZOO[arch]
    x, target = model_accuracy.image_batch(2, size)
    rows, kinks = model_accuracy.gradient_errors(builder(arch, size), x, target, DEVICE)
    misses = [
        f"{name}: ocl {ocl:.3g} from its float64, the CPU {cpu:.3g}"
        for name, _, _, ocl, cpu in rows
        if ocl > GRADIENT_FACTOR * cpu + GRADIENT_FLOOR
    ]
    assert not misses, f"{arch} ({size}x{size}, kinks unlike float64: {kinks}):\n" + "\n".join(misses)


@pytest.mark.parametrize("arch", sorted(ZOO))
def test_eval_forward_as_close_to_float64_as_the_cpu(arch):
    size = ZOO[arch]
    torch.manual_seed(0)
    model = builder(arch, size)().eval()
    x, _ = model_accuracy.image_batch(2, size)
    with torch.no_grad():
        exact = copy.deepcopy(model).double()(x.double())
        cpu = model(x)
        ocl = copy.deepcopy(model).to(DEVICE)(x.to(DEVICE))
    assert ocl.device.type == "ocl"
    ocl_error = (ocl.cpu().double() - exact).abs().max().item()
    cpu_error = (cpu.double() - exact).abs().max().item()
    size_ = exact.abs().max().item()
    assert ocl_error <= GRADIENT_FACTOR * cpu_error + GRADIENT_FLOOR * size_, (
        f"{arch}: ocl is {ocl_error:.3g} from float64, the CPU {cpu_error:.3g} (size {size_:.3g})"
    )
