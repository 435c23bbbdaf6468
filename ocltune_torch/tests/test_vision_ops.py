"""Interpolation and torchvision's detection ops on ocl, against the CPU (issue 39's detection and
segmentation models): upsample_bilinear2d and upsample_nearest2d with their backward ops, and
torchvision's roi_align and nms. Then the models that need them, in eval, in strict mode:
deeplabv3_mobilenet_v3_large, fcn_resnet50 and fasterrcnn_mobilenet_v3_large_320_fpn at small sizes.
"""

import copy

import pytest
import torch
import torch.nn.functional as F

import ocltune_torch
from conftest import DEVICE, FLOAT_DTYPES, assert_close, rand

torchvision = pytest.importorskip("torchvision")
from torchvision.ops import nms, roi_align  # noqa: E402

pytestmark = pytest.mark.usefixtures("strict")  # conftest.py: no op may fall back to the CPU


# ---- interpolation ----

INTERPOLATIONS = [
    # (input shape, interpolate keyword arguments)
    ((2, 3, 5, 7), dict(size=(11, 13))),  # odd sizes up
    ((1, 2, 16, 16), dict(scale_factor=2)),  # the FPN / segmentation doubling
    ((1, 2, 9, 12), dict(size=(4, 5))),  # down
    ((2, 1, 1, 1), dict(size=(3, 4))),  # a single pixel
    ((1, 3, 7, 5), dict(scale_factor=(1.7, 0.6))),  # scales given, not sizes
    ((1, 1, 6, 6), dict(size=(6, 6))),  # equal sizes
]


@pytest.mark.parametrize("shape,kwargs", INTERPOLATIONS)
@pytest.mark.parametrize("mode", ["bilinear", "bilinear-corners", "nearest"])
def test_interpolate_forward_and_backward_match_cpu(shape, kwargs, mode):
    options = dict(mode="bilinear", align_corners=True) if mode == "bilinear-corners" else dict(mode=mode)
    if mode == "bilinear":
        options["align_corners"] = False
    x = rand(*shape, seed=1).requires_grad_()
    xd = x.detach().to(DEVICE).requires_grad_()
    y = F.interpolate(x, **kwargs, **options)
    yd = F.interpolate(xd, **kwargs, **options)
    assert_close(yd, y.detach())
    g = rand(*y.shape, seed=2)
    y.backward(g)
    yd.backward(g.to(DEVICE))
    assert_close(xd.grad, x.grad)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_interpolate_16_bit_and_strided_inputs(dtype):
    # A channels-last view and a stepped slice: the kernels take packed copies.
    x = rand(2, 3, 10, 8, dtype=dtype, seed=3)
    for view in (x.to(memory_format=torch.channels_last), x[:, :, ::2, 1:]):
        for mode in ("bilinear", "nearest"):
            want = F.interpolate(view.float(), size=(7, 9), mode=mode).to(dtype)
            got = F.interpolate(view.to(DEVICE), size=(7, 9), mode=mode)
            assert_close(got, want)


def test_upsample_out_into_a_strided_view():
    x = rand(1, 2, 4, 4, seed=4)
    out = torch.zeros(1, 2, 8, 16)
    out_d = out.to(DEVICE)
    torch._C._nn.upsample_bilinear2d(x, (8, 8), False, out=out[..., ::2])
    torch._C._nn.upsample_bilinear2d(x.to(DEVICE), (8, 8), False, out=out_d[..., ::2])
    assert_close(out_d, out)


def test_upsample_refuses_what_the_cpu_refuses():
    x = rand(1, 1, 4, 4).to(DEVICE)
    with pytest.raises(RuntimeError):
        F.interpolate(x, size=(0, 3), mode="bilinear")
    for mode in ("bilinear", "nearest"):  # no channels: "Non-empty 4D data tensor expected" on the CPU
        with pytest.raises(RuntimeError):
            F.interpolate(torch.zeros(2, 0, 4, 4), size=(8, 8), mode=mode)
        with pytest.raises(RuntimeError):
            F.interpolate(torch.zeros(2, 0, 4, 4, device=DEVICE), size=(8, 8), mode=mode)
    assert F.interpolate(torch.zeros(0, 2, 4, 4, device=DEVICE), size=(8, 8), mode="nearest").shape == (0, 2, 8, 8)
    assert (F.interpolate(x, size=(2, 2), mode="nearest").cpu() == x.cpu()[..., ::2, ::2]).all()


# ---- roi_align ----


def random_rois(k, batch, height, width, seed):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(k, 2, generator=g) * torch.tensor([width, height]) * 1.1 - 2  # some start outside
    wh = torch.rand(k, 2, generator=g) * torch.tensor([width, height]) * 0.6
    wh[0] = 0  # a degenerate box
    index = torch.randint(0, batch, (k, 1), generator=g).float()
    return torch.cat([index, xy, xy + wh], 1)


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [0, 2])
@pytest.mark.parametrize("scale", [1.0, 0.25])
def test_roi_align_matches_cpu(aligned, sampling_ratio, scale):
    x = rand(2, 3, 13, 17, seed=5)
    rois = random_rois(9, 2, 13 / scale, 17 / scale, seed=6)
    want = roi_align(x, rois, (5, 4), spatial_scale=scale, sampling_ratio=sampling_ratio, aligned=aligned)
    got = roi_align(x.to(DEVICE), rois.to(DEVICE), (5, 4), spatial_scale=scale, sampling_ratio=sampling_ratio,
                    aligned=aligned)
    assert_close(got, want)


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [0, 2])
@pytest.mark.parametrize("scale", [1.0, 0.25])
def test_roi_align_backward_matches_cpu(aligned, sampling_ratio, scale):
    # Overlapping RoIs of both images and a degenerate one: their bins share input pixels, which the
    # backward sums with atomics. The output gradient comes as a stepped view (a packed copy inside).
    x = rand(2, 3, 13, 17, seed=9).requires_grad_()
    xd = x.detach().to(DEVICE).requires_grad_()
    rois = random_rois(12, 2, 13 / scale, 17 / scale, seed=10)
    options = dict(spatial_scale=scale, sampling_ratio=sampling_ratio, aligned=aligned)
    y = roi_align(x, rois, (5, 4), **options)
    yd = roi_align(xd, rois.to(DEVICE), (5, 4), **options)
    g = rand(12, 3, 5, 8, seed=11)[..., ::2]
    y.backward(g)
    yd.backward(g.to(DEVICE))
    assert x.grad.abs().max() > 0
    assert_close(xd.grad, x.grad)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_roi_align_backward_16_bit_matches_the_float_result(dtype):
    # Summed in float and rounded once: the CPU's float gradient of the same 16-bit values, rounded.
    x = rand(1, 4, 12, 12, dtype=dtype, seed=12)
    rois = random_rois(6, 1, 12, 12, seed=13).to(dtype)
    g = rand(6, 4, 3, 3, dtype=dtype, seed=14)
    want = torch.ops.torchvision._roi_align_backward(g.float(), rois.float(), 1.0, 3, 3, 1, 4, 12, 12, 2, False)
    got = torch.ops.torchvision._roi_align_backward(g.to(DEVICE), rois.to(DEVICE), 1.0, 3, 3, 1, 4, 12, 12, 2, False)
    assert_close(got, want.to(dtype))


def test_roi_align_backward_bad_grad():
    rois = torch.tensor([[0.0, 1, 1, 4, 4]]).to(DEVICE)
    with pytest.raises(RuntimeError, match=r"grad must be \[K, C, pooled_height, pooled_width\]"):
        torch.ops.torchvision._roi_align_backward(torch.zeros(1, 2, 3, 3).to(DEVICE), rois, 1.0, 2, 2, 1, 2, 8, 8, 0,
                                                  False)
    empty = torch.ops.torchvision._roi_align_backward(torch.zeros(0, 2, 2, 2).to(DEVICE), torch.zeros(0, 5).to(DEVICE),
                                                      1.0, 2, 2, 1, 2, 8, 8, 0, False)
    assert empty.device.type == "ocl" and empty.shape == (1, 2, 8, 8) and not empty.cpu().any()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_roi_align_16_bit_matches_the_float_result(dtype):
    x = rand(1, 4, 12, 12, seed=7)
    rois = random_rois(6, 1, 12, 12, seed=8)
    want = roi_align(x.to(dtype).float(), rois.to(dtype).float(), (3, 3), sampling_ratio=2).to(dtype)
    got = roi_align(x.to(dtype).to(DEVICE), rois.to(dtype).to(DEVICE), (3, 3), sampling_ratio=2)
    assert_close(got, want)


def test_roi_align_no_rois_and_bad_rois():
    x = rand(1, 2, 8, 8).to(DEVICE)
    assert roi_align(x, torch.zeros(0, 5).to(DEVICE), (2, 2)).shape == (0, 2, 2, 2)
    with pytest.raises(RuntimeError, match=r"\[K, 5\]"):
        torch.ops.torchvision.roi_align(x, torch.zeros(3, 4).to(DEVICE), 1.0, 2, 2, 0, False)
    assert roi_align(x, torch.tensor([[0.0, 1, 1, 4, 4]]).to(DEVICE), (2, 2)).shape == (1, 2, 2, 2)


# ---- nms ----


def random_boxes(n, seed, clustered=True):
    g = torch.Generator().manual_seed(seed)
    centres = torch.rand(max(n // 8, 1), 2, generator=g) * 100
    pick = torch.randint(0, centres.shape[0], (n,), generator=g) if clustered else torch.arange(n) % centres.shape[0]
    xy = centres[pick] + torch.randn(n, 2, generator=g) * 4
    wh = 5 + torch.rand(n, 2, generator=g) * 20
    return torch.cat([xy, xy + wh], 1), torch.rand(n, generator=g)


@pytest.mark.parametrize("n", [1, 7, 64, 65, 300])
@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.7])
def test_nms_keeps_what_the_cpu_keeps(n, threshold):
    boxes, scores = random_boxes(n, seed=n)
    want = nms(boxes, scores, threshold)
    got = nms(boxes.to(DEVICE), scores.to(DEVICE), threshold)
    assert got.device.type == "ocl" and got.dtype == torch.int64
    assert torch.equal(got.cpu(), want), f"{got.cpu().tolist()} != {want.tolist()}"


def test_nms_threshold_at_an_iou_exactly():
    # IoU of these two boxes is exactly 0.5 in float: a threshold of 0.5 keeps both (ovr > threshold
    # suppresses), a threshold just below it suppresses one, as on the CPU.
    boxes = torch.tensor([[0.0, 0, 2, 1], [0.0, 0, 1, 1]])
    scores = torch.tensor([0.9, 0.8])
    for threshold in (0.5, 0.49999999999, 0.5000000001, 1.0 / 3.0):
        want = nms(boxes, scores, threshold)
        assert torch.equal(nms(boxes.to(DEVICE), scores.to(DEVICE), threshold).cpu(), want), threshold


def test_nms_empty_and_bad_input():
    empty = torch.zeros(0, 4).to(DEVICE)
    assert nms(empty, torch.zeros(0).to(DEVICE), 0.5).shape == (0,)
    with pytest.raises(RuntimeError, match="4 elements"):
        torch.ops.torchvision.nms(torch.zeros(3, 5).to(DEVICE), torch.zeros(3).to(DEVICE), 0.5)
    with pytest.raises(RuntimeError, match="same number"):
        torch.ops.torchvision.nms(torch.zeros(3, 4).to(DEVICE), torch.zeros(2).to(DEVICE), 0.5)
    boxes, scores = random_boxes(20, seed=9)
    assert torch.equal(nms(boxes.to(DEVICE), scores.to(DEVICE), 0.5).cpu(), nms(boxes, scores, 0.5))


# ---- the models, in eval ----


def close_to_cpu(ocl_value, cpu_value, atol):
    torch.testing.assert_close(ocl_value.cpu(), cpu_value, rtol=1e-3, atol=atol)


@pytest.mark.parametrize("name", ["deeplabv3_mobilenet_v3_large", "fcn_resnet50"])
def test_segmentation_models_in_eval(name):
    torch.manual_seed(0)
    model = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, num_classes=4,
                                                           aux_loss=False).eval()
    x = torch.rand(1, 3, 64, 64)
    with torch.no_grad():
        want = model(x)["out"]
        got = model.to(DEVICE)(x.to(DEVICE))["out"]
    assert got.device.type == "ocl" and got.shape == want.shape == (1, 4, 64, 64)
    close_to_cpu(got, want, atol=1e-3 * want.abs().max().item())


def test_fasterrcnn_in_eval():
    torch.manual_seed(0)
    model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
        weights=None, weights_backbone=None, num_classes=3, min_size=96, max_size=128, box_score_thresh=0.0).eval()
    images = [torch.rand(3, 90, 120), torch.rand(3, 100, 100)]
    with torch.no_grad():
        want = model(images)
        got = model.to(DEVICE)([i.to(DEVICE) for i in images])
    for g, w in zip(got, want):
        assert set(g) == {"boxes", "labels", "scores"} and g["boxes"].device.type == "ocl"
        # The same detections as the CPU (on PoCL they are bit-identical): nms and roi_align keep
        # what the CPU keeps.
        assert len(g["scores"]) == len(w["scores"]) > 0
        close_to_cpu(g["scores"], w["scores"], atol=1e-4)
        close_to_cpu(g["boxes"], w["boxes"], atol=1e-2)
        assert torch.equal(g["labels"].cpu(), w["labels"])


def test_fasterrcnn_training_step():
    # One training step in strict mode: roi_align's backward, smooth_l1_loss and the samplers'
    # index_fill_ on the device. The samplers draw random subsets (from each device's own generator);
    # with batches larger than there are anchors and proposals they take every one, so both sides sum
    # the same terms.
    torch.manual_seed(0)
    model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
        weights=None, weights_backbone=None, num_classes=3, min_size=96, max_size=128).train()
    for sampler in (model.rpn.fg_bg_sampler, model.roi_heads.fg_bg_sampler):
        sampler.batch_size_per_image = 1 << 20
    images = [torch.rand(3, 90, 120), torch.rand(3, 100, 100)]
    targets = [dict(boxes=torch.tensor([[10.0, 10, 50, 60], [30, 20, 90, 80]]), labels=torch.tensor([1, 2])),
               dict(boxes=torch.tensor([[5.0, 5, 40, 40]]), labels=torch.tensor([1]))]
    device_model = copy.deepcopy(model).to(DEVICE)
    want = model(images, targets)
    got = device_model([i.to(DEVICE) for i in images], [{k: v.to(DEVICE) for k, v in t.items()} for t in targets])
    assert set(got) == set(want) == {"loss_classifier", "loss_box_reg", "loss_objectness", "loss_rpn_box_reg"}
    for name in want:
        close_to_cpu(got[name], want[name].detach(), atol=1e-4)
    sum(want.values()).backward()
    sum(got.values()).backward()
    # Each gradient against its own largest element, floored at 1e-3 of the model's largest (issue 39's
    # rule: the gradients of near-dead parameters are rounding noise on both sides).
    device_params = dict(device_model.named_parameters())
    largest = max(p.grad.abs().max().item() for p in model.parameters() if p.grad is not None)
    for name, p in model.named_parameters():
        if p.grad is None:
            assert device_params[name].grad is None, name
            continue
        scale = max(p.grad.abs().max().item(), 1e-3 * largest)
        close_to_cpu(device_params[name].grad, p.grad, atol=1e-3 * scale)
