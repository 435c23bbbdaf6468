"""torch.compile on ocl: ``torch.compile(model, backend="ocltune")``.

A Dynamo backend over AOTAutograd. The forward and backward graphs it is given (aten ops, after
functionalization) run on ocl as eager does, except for five rewrites (lower()): in inference graphs
an eval batch norm after a convolution is folded into the convolution's weight and bias
(``ocltune::fold_batch_norm``, one kernel over the weight); a convolution followed by relu, relu6,
gelu or sigmoid becomes one ``ocltune::conv2d_act`` (the conv2d family applies the activation in its
output pass); a linear layer (addmm with a bias row) followed by relu or relu6 becomes one
``ocltune::addmm_act`` (the GEMM family's epilogue); each chain of up to four elementwise ops becomes one
``ocltune::elementwise_chain`` call: one kernel of the elementwise family instead of one kernel per
op, the intermediate values kept in registers (decisions 0058, 0062, 0073); and a sum, mean, amax,
amin or layer norm of such a chain (or of one elementwise op) becomes one ``ocltune::reduce_prologue``
or ``ocltune::layer_norm_prologue``: the chain applied as the kernel reads its input (decision 0074). A chain is a run of ops in which each op's
value is used only by the next one; its tensors are ocl tensors of one floating dtype (float32,
float16, bfloat16) whose shapes broadcast to the chain's result. Everything else in the graph (and
every graph break) runs eagerly on ocl, so a graph the pass cannot fuse computes what eager computes.

Inductor, torch.compile's default backend, has no code generator for ocl: ``torch.compile(model)``
on an ocl model fails with an error that names ``backend="ocltune"``.

Nothing here is imported with ``import ocltune_torch`` itself (Dynamo and Inductor take seconds to
import): the backend is registered when torch.compile first imports Dynamo's registry.
"""

import importlib.abc
import importlib.util
import operator
import os
import sys

import torch

__all__ = ["backend", "lower", "fold_batch_norms", "fuse_conv_epilogues", "fuse_linear_epilogues",
           "fuse_elementwise_chains", "fuse_prologues", "MAX_STEPS"]

MAX_STEPS = 4  # the elementwise family's chain length (OCLTUNE_ELEMENTWISE_MAX_STEPS)
_MAX_RANK = 4  # the family's dimensions (the C++ op merges dims; 4 before merging is always safe)
_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
_aten = torch.ops.aten


def _unary(name):
    return lambda node: (name, None)


def _gelu(node):
    approximate = node.kwargs.get("approximate", node.args[1] if len(node.args) > 1 else "none")
    return {"none": ("gelu", None), "tanh": ("gelu_tanh", None)}.get(approximate)


def _relu6(node):
    """hardtanh(x, 0, 6), which eager ocl runs as the family's relu6; other bounds are not fused."""
    low = node.args[1] if len(node.args) > 1 else node.kwargs.get("min_val", -1.0)
    high = node.args[2] if len(node.args) > 2 else node.kwargs.get("max_val", 1.0)
    return ("relu6", None) if (low, high) == (0, 6) else None


def _scalar_arg(index, name, default=None, extra=None):
    """An op whose second argument is a number the family takes as its scalar (leaky_relu's slope)."""

    def step(node):
        args = list(node.args)
        value = args[index] if len(args) > index else node.kwargs.get("value", default)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return None
        if extra and not extra(node):
            return None
        return (name, float(value))

    return step


def _elu_plain(node):
    # elu(x, alpha, scale=1, input_scale=1): the family's elu has PyTorch's scale and input_scale 1.
    return all(float(v) == 1.0 for v in list(node.args[2:4]) + [node.kwargs.get(k, 1) for k in ("scale", "input_scale")])


def _softplus_default(node):
    threshold = node.args[2] if len(node.args) > 2 else node.kwargs.get("threshold", 20)
    return float(threshold) == 20.0  # the family's softplus: PyTorch's default threshold


# Unary ops and ops with a number parameter: aten overload -> (the node -> (family op, scalar or None)).
_UNARY = {
    _aten.relu.default: _unary("relu"),
    _aten.sigmoid.default: _unary("sigmoid"),
    _aten.tanh.default: _unary("tanh"),
    _aten.silu.default: _unary("silu"),
    _aten.exp.default: _unary("exp"),
    _aten.log.default: _unary("log"),
    _aten.sqrt.default: _unary("sqrt"),
    _aten.rsqrt.default: _unary("rsqrt"),
    _aten.neg.default: _unary("neg"),
    _aten.abs.default: _unary("abs"),
    _aten.hardswish.default: _unary("hardswish"),
    _aten.hardsigmoid.default: _unary("hardsigmoid"),
    _aten.gelu.default: _gelu,
    _aten.hardtanh.default: _relu6,
    _aten.leaky_relu.default: _scalar_arg(1, "leaky_relu", default=0.01),
    _aten.elu.default: _scalar_arg(1, "elu", default=1.0, extra=_elu_plain),
    _aten.softplus.default: _scalar_arg(1, "softplus", default=1.0, extra=_softplus_default),
}

# Binary ops: aten overload -> family op; the second operand a tensor or a number. add and sub only
# with alpha 1.
_BINARY = {
    _aten.add.Tensor: "add",
    _aten.add.Scalar: "add",
    _aten.sub.Tensor: "sub",
    _aten.sub.Scalar: "sub",
    _aten.mul.Tensor: "mul",
    _aten.mul.Scalar: "mul",
    _aten.div.Tensor: "div",
    _aten.div.Scalar: "div",
    _aten.maximum.default: "maximum",
    _aten.minimum.default: "minimum",
}
_WITH_ALPHA = {_aten.add.Tensor, _aten.add.Scalar, _aten.sub.Tensor, _aten.sub.Scalar}

# Backward of activations: (grad, saved) -> the family's *_grad op, a the gradient, b the saved
# forward input (or output for sigmoid and tanh), as eager ocl computes them.
_GRAD = {
    _aten.sigmoid_backward.default: "sigmoid_grad",
    _aten.tanh_backward.default: "tanh_grad",
    _aten.silu_backward.default: "silu_grad",
    _aten.hardswish_backward.default: "hardswish_grad",
    _aten.hardsigmoid_backward.default: "hardsigmoid_grad",
}


def _grad_step(node):
    """(family op) of a backward node, or None."""
    if node.target in _GRAD:
        return _GRAD[node.target]
    if node.target == _aten.threshold_backward.default and len(node.args) >= 3 and node.args[2] == 0:
        return "relu_grad"
    if node.target == _aten.gelu_backward.default:
        approximate = node.kwargs.get("approximate", node.args[2] if len(node.args) > 2 else "none")
        return {"none": "gelu_grad", "tanh": "gelu_tanh_grad"}.get(approximate)
    return None


def _value(node):
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return value if isinstance(value, torch.Tensor) else None


def _fits(node, dtype):
    """An ocl tensor of `dtype` and a rank the family can take, as the node's meta says. Its sizes may be
    symbolic (dynamic shapes): the rank is static, and the fused ops take any element count (a chain
    whose result is larger than one kernel indexes runs in slices)."""
    value = _value(node)
    return value is not None and value.device.type == "ocl" and value.dtype == dtype and value.dim() <= _MAX_RANK


def _rewritten(gm, count):
    """Checks the graph and regenerates its code after `count` rewrites (none: left as it was); returns count."""
    if count:
        gm.graph.lint()
        gm.recompile()
    return count


class _Step:
    """One op of a chain: the family op, the node it replaces, and its operand."""

    def __init__(self, node, op, operand=None, scalar=0.0, reversed_=False):
        self.node, self.op, self.operand, self.scalar, self.reversed = node, op, operand, scalar, reversed_


def _as_step(node, running):
    """`node` as a step whose running value is `running` (one of its inputs), or None."""
    if node.op != "call_function":
        return None
    if node.target in _UNARY:
        if node.args[0] is not running:
            return None
        found = _UNARY[node.target](node)
        return _Step(node, found[0], scalar=found[1] or 0.0) if found else None
    if node.target in _BINARY:
        if len(node.args) < 2 or any(k != "alpha" for k in node.kwargs):
            return None
        if node.target in _WITH_ALPHA and node.kwargs.get("alpha", 1) != 1:
            return None
        a, b = node.args[0], node.args[1]
        if (a is running) == (b is running):
            return None  # the running value on both sides (x * x) or on neither
        other, reversed_ = (b, False) if a is running else (a, True)
        if isinstance(other, torch.fx.Node):
            return _Step(node, _BINARY[node.target], operand=other, reversed_=reversed_)
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return _Step(node, _BINARY[node.target], scalar=float(other), reversed_=reversed_)
        return None
    op = _grad_step(node)
    if op is not None and not node.kwargs.keys() - {"approximate"}:
        grad, saved = node.args[0], node.args[1]
        if (grad is running) == (saved is running):
            return None
        # The family computes op(a=gradient, b=saved); with the saved value running, reversed.
        return _Step(node, op, operand=saved if grad is running else grad, reversed_=grad is not running)
    return None


def _head(node):
    """The first step of a chain starting at `node`: (its running input, the step), or None."""
    if node.op != "call_function" or not node.args or not isinstance(node.args[0], torch.fx.Node):
        return None
    first = node.args[0]
    step = _as_step(node, first)
    return (first, step) if step is not None else None


def _chain_from(node):
    """The longest chain (input, steps) that starts at `node`, or None."""
    head = _head(node)
    if head is None:
        return None
    start, step = head
    value = _value(node)
    if value is None or value.dtype not in _DTYPES:
        return None
    dtype = value.dtype
    steps = [step]
    while len(steps) < MAX_STEPS:
        last = steps[-1].node
        users = list(last.users)
        if len(users) != 1:
            break
        step = _as_step(users[0], last)
        if step is None:
            break
        steps.append(step)
    tensors = [start] + [s.operand for s in steps if s.operand is not None]
    # Every tensor, and every value the chain computes, an ocl tensor of the chain's dtype whose shape
    # broadcasts to the result's (an intermediate broadcast would otherwise change the result's shape).
    while steps:
        result = _value(steps[-1].node)
        ok = all(_fits(t, dtype) for t in tensors) and all(_fits(s.node, dtype) for s in steps)
        if ok and result is not None:
            try:
                shape = torch.broadcast_shapes(*[_value(t).shape for t in tensors],
                                               *[_value(s.node).shape for s in steps])
            except RuntimeError:
                shape = None
            if shape == result.shape:
                return start, steps
        steps.pop()
        tensors = [start] + [s.operand for s in steps if s.operand is not None]
    return None


def fuse_elementwise_chains(gm: torch.fx.GraphModule) -> int:
    """Replaces each chain of two or more elementwise ops in `gm` by one ocltune::elementwise_chain
    call; returns how many chains it fused."""
    graph = gm.graph
    fused = 0
    taken = set()
    for node in list(graph.nodes):
        if node in taken or node.op != "call_function":
            continue
        found = _chain_from(node)
        if found is None or len(found[1]) < 2:
            continue
        start, steps = found
        last = steps[-1].node
        with graph.inserting_before(last):
            call = graph.call_function(torch.ops.ocltune.elementwise_chain.default, (
                start, [s.op for s in steps], [s.operand for s in steps], [s.scalar for s in steps],
                [int(s.reversed) for s in steps]))
        call.meta.update(last.meta)
        last.replace_all_uses_with(call)
        for s in reversed(steps):
            graph.erase_node(s.node)
        taken.update(s.node for s in steps)
        fused += 1
    return _rewritten(gm, fused)


# ---- convolution epilogues ----

_CONVOLUTION = _aten.convolution.default
_BATCH_NORM_EVAL = _aten._native_batch_norm_legit_no_training.default


def _epilogue(node):
    """The activation the conv2d family fuses after its bias that `node` computes, or None."""
    if node.op != "call_function":
        return None
    if node.target == _aten.relu.default:
        return "relu"
    if node.target == _aten.sigmoid.default:
        return "sigmoid"
    if node.target == _aten.hardtanh.default:
        return "relu6" if _relu6(node) else None
    if node.target == _aten.gelu.default:
        found = _gelu(node)
        return "gelu" if found and found[0] == "gelu" else None
    return None


def _activation_after(act, source, producer):
    """The name of the activation (_epilogue) that `act` computes on `source`, in the dtype of
    `producer`'s value (the op it would be fused into), or None."""
    name = _epilogue(act) if act is not None else None
    if name is None or act.args[0] is not source or _value(act) is None or _value(act).dtype != _value(producer).dtype:
        return None
    return name


def _plain_conv(node):
    """A 2-D convolution the conv2d family runs forward: not transposed, no output padding, 4-D ocl
    float tensors of one dtype, static shapes."""
    if node.op != "call_function" or node.target != _CONVOLUTION or len(node.args) < 9:
        return False
    x, w, _, _, _, _, transposed, output_padding, _ = node.args[:9]
    value = _value(node)
    return (not transposed and all(p == 0 for p in output_padding) and value is not None and value.dim() == 4
            and value.dtype in _DTYPES and _fits(node, value.dtype) and _fits(x, value.dtype) and _fits(w, value.dtype))


def _replace_pair(graph, first, last, target, args):
    """Replaces `last` and `first`, its input used by nothing else, by one call of `target` with `args`,
    which stands where `last` stood (its meta value and users)."""
    with graph.inserting_before(last):
        call = graph.call_function(target, args)
    call.meta.update(last.meta)
    last.replace_all_uses_with(call)
    graph.erase_node(last)
    graph.erase_node(first)
    return call


def _only_user(node):
    users = list(node.users)
    return users[0] if len(users) == 1 else None


def _hinted_numel(node) -> int | None:
    """A node's element count from its meta value (a dynamic size at its example's value); None if unknown."""
    value = _value(node)
    if value is None:
        return None
    numel = value.numel()
    if isinstance(numel, torch.SymInt):
        return numel.node.hint
    return int(numel)


def _folding_pays(weight, conv) -> bool:
    """Whether folding moves fewer bytes than the batch norm it removes: the fold reads and writes the
    weight at every call, the batch norm reads and writes the convolution's output. Measured on PoCL
    (resnet18, batch 2 at 32x32), folding every batch norm made the inference step 1.6x slower: the
    fold moved 11 M weights per step to spare passes over a few thousand activations."""
    weights, outputs = _hinted_numel(weight), _hinted_numel(conv)
    return weights is not None and outputs is not None and weights < outputs


def fold_batch_norms(gm: torch.fx.GraphModule) -> int:
    """Inference graphs: each eval-mode batch norm whose input is a convolution used by nothing else
    is folded into that convolution's weight and bias (w * s and (b - mean) * s + beta, with s =
    gamma / sqrt(var + eps)): one ocltune::fold_batch_norm kernel over the weight at every call, from
    the parameters as they are then, instead of the batch norm's pass over the activations, where the
    weight is the smaller of the two (_folding_pays). Returns how many it folded."""
    graph = gm.graph
    folded = 0
    for bn in list(graph.nodes):
        if bn.op != "call_function" or bn.target != _BATCH_NORM_EVAL or bn.kwargs:
            continue
        conv, gamma, beta, mean, var, _momentum, eps = bn.args
        if not isinstance(conv, torch.fx.Node) or not _plain_conv(conv) or _only_user(conv) is not bn:
            continue
        outputs = list(bn.users)
        if not all(u.target is operator.getitem and u.args[1] == 0 for u in outputs):
            continue  # saved statistics in use (not in eval graphs)
        dtype = _value(conv).dtype
        if any(t is not None and (_value(t) is None or _value(t).dtype != dtype) for t in (gamma, beta, mean, var)):
            continue
        x, w, b = conv.args[:3]
        if not _folding_pays(w, conv):
            continue
        with graph.inserting_before(conv):
            folded_pair = graph.call_function(torch.ops.ocltune.fold_batch_norm.default,
                                              (w, b, gamma, beta, mean, var, eps))
            weight = graph.call_function(operator.getitem, (folded_pair, 0))
            bias = graph.call_function(operator.getitem, (folded_pair, 1))
            fused = graph.call_function(_CONVOLUTION, (x, weight, bias, *conv.args[3:]))
        # The folded weight and bias have the weight's dtype and device, the weight's and the mean's
        # shapes (the later passes read them from the meta values).
        weight.meta["val"] = w.meta.get("val")
        bias.meta["val"] = mean.meta.get("val")
        fused.meta.update(conv.meta)
        for u in outputs:
            u.replace_all_uses_with(fused)
            graph.erase_node(u)
        graph.erase_node(bn)
        graph.erase_node(conv)
        folded += 1
    return _rewritten(gm, folded)


def fuse_conv_epilogues(gm: torch.fx.GraphModule) -> int:
    """Each 2-D convolution whose only user is an activation the conv2d family fuses (relu, relu6,
    gelu, sigmoid) becomes one ocltune::conv2d_act call: the activation applied in the convolution's
    output pass, one kernel and one write of the output fewer. Returns how many it fused."""
    graph = gm.graph
    fused = 0
    for conv in list(graph.nodes):
        if not _plain_conv(conv):
            continue
        act = _only_user(conv)
        name = _activation_after(act, conv, conv)
        if name is None:
            continue
        x, w, b, stride, padding, dilation, _, _, groups = conv.args[:9]
        _replace_pair(graph, conv, act, torch.ops.ocltune.conv2d_act.default,
                      (x, w, b, list(stride), list(padding), list(dilation), groups, name))
        fused += 1
    return _rewritten(gm, fused)


# ---- linear epilogues ----

_ADDMM = _aten.addmm.default
_VIEWS = (_aten.view.default, _aten._unsafe_view.default, _aten.reshape.default)


def _linear(node):
    """A linear layer's addmm (self + mat1 @ mat2, beta and alpha 1) on 2-D ocl float tensors of one dtype."""
    if node.op != "call_function" or node.target != _ADDMM or node.kwargs or len(node.args) != 3:
        return False
    value = _value(node)
    return (value is not None and value.dim() == 2 and value.dtype in _DTYPES and _fits(node, value.dtype)
            and all(_fits(t, value.dtype) for t in node.args))


# The activations worth applying in the GEMM's epilogue. Measured on an H100 (decision 0073), the
# epilogue of a large GEMM runs at the GEMM's low occupancy: gelu there cost 21 us on a bf16
# 3152x3072x768 product and 52 us in fp32, more than its own elementwise pass over the output
# (13-26 us); relu and relu6 cost a max and a min.
_LINEAR_ACTIVATIONS = ("relu", "relu6")


def fuse_linear_epilogues(gm: torch.fx.GraphModule) -> int:
    """Each linear layer (addmm) whose only user is relu or relu6 (_LINEAR_ACTIVATIONS), directly or
    through the view that restores a 3-D input's batch dims, becomes one ocltune::addmm_act call: the
    bias and the activation applied as the GEMM stores its result, one kernel and one pass over the
    output fewer. This applies to training graphs too: relu's backward reads its output. Returns how
    many it fused."""
    graph = gm.graph
    fused = 0
    for addmm in list(graph.nodes):
        if not _linear(addmm):
            continue
        view = _only_user(addmm)
        if view is not None and view.op == "call_function" and view.target in _VIEWS and view.args[0] is addmm:
            act = _only_user(view)
            source = view
        else:
            act, source, view = view, addmm, None
        name = _activation_after(act, source, addmm)
        if name not in _LINEAR_ACTIVATIONS:
            continue
        with graph.inserting_before(act):
            call = graph.call_function(torch.ops.ocltune.addmm_act.default, (*addmm.args, name))
            call.meta.update(addmm.meta)
            result = call if view is None else graph.call_function(view.target, (call, *view.args[1:]), view.kwargs)
        if view is not None:
            result.meta.update(act.meta)
        act.replace_all_uses_with(result)
        graph.erase_node(act)
        if view is not None:
            graph.erase_node(view)
        graph.erase_node(addmm)
        fused += 1
    return _rewritten(gm, fused)


# ---- reduction prologues ----

# Reductions the reduce family runs with a prologue: aten overload -> ocltune::reduce_prologue's kind.
_REDUCTIONS = {
    _aten.sum.dim_IntList: "sum",
    _aten.sum.default: "sum",
    _aten.mean.dim: "mean",
    _aten.mean.default: "mean",
    _aten.amax.default: "amax",
    _aten.amin.default: "amin",
}


def _reduction(node):
    """(kind, input, dim, keepdim) of a sum, mean, amax or amin without a dtype= cast, or None."""
    if node.op != "call_function" or node.target not in _REDUCTIONS or not node.args:
        return None
    if set(node.kwargs) - {"dim", "keepdim", "dtype"} or node.kwargs.get("dtype") is not None:
        return None
    args = list(node.args)
    dim = args[1] if len(args) > 1 else node.kwargs.get("dim")
    keepdim = args[2] if len(args) > 2 else node.kwargs.get("keepdim", False)
    if node.target in (_aten.sum.default, _aten.mean.default):
        dim, keepdim = None, False
    if not isinstance(args[0], torch.fx.Node) or not isinstance(keepdim, bool):
        return None
    if dim is not None and not (isinstance(dim, (list, tuple)) and all(isinstance(d, int) for d in dim)):
        return None
    return _REDUCTIONS[node.target], args[0], (list(dim) if dim is not None else None), keepdim


def _chain_steps(node):
    """The chain `node` computes as (input, ops, operands, scalars, reversed): an
    ocltune::elementwise_chain call, or one elementwise op; None for anything else."""
    if node.op != "call_function":
        return None
    if node.target is torch.ops.ocltune.elementwise_chain.default:
        start, ops, operands, scalars, reversed_ = node.args
        return start, list(ops), list(operands), list(scalars), list(reversed_)
    head = _head(node)
    if head is None:
        return None
    start, step = head
    return start, [step.op], [step.operand], [step.scalar], [int(step.reversed)]


_LAYER_NORM = _aten.native_layer_norm.default


def _prologue_reader(node):
    """What reads its input through a prologue: (input, target, the arguments after the chain's, kind)
    for a reduction (_reduction) or a layer norm (native_layer_norm, kind "layer_norm"); None otherwise."""
    found = _reduction(node)
    if found is not None:
        kind, source, dim, keepdim = found
        return source, torch.ops.ocltune.reduce_prologue.default, (kind, dim, keepdim), kind
    if node.op == "call_function" and node.target == _LAYER_NORM and not node.kwargs and len(node.args) == 5:
        source, normalized_shape, weight, bias, eps = node.args
        if isinstance(source, torch.fx.Node):
            return source, torch.ops.ocltune.layer_norm_prologue.default, (list(normalized_shape), weight, bias,
                                                                           eps), "layer_norm"
    return None


def fuse_prologues(gm: torch.fx.GraphModule) -> dict:
    """Each sum, mean, amax, amin or layer norm whose input is an elementwise chain (an
    ocltune::elementwise_chain call after fuse_elementwise_chains, or a single elementwise op) used by
    nothing else becomes one ocltune::reduce_prologue or ocltune::layer_norm_prologue call: the chain
    applied as the kernel reads its inputs, so that its result is never written and read back
    (mean(relu(x)), layer_norm(x + residual) in inference graphs; in training graphs the layer norm's
    input is saved for its backward, a second user). The chain's tensors must all have its result's
    shape and dtype (the kernel reads them at the input's index, without broadcasting). Returns how
    many it fused: {"reductions": n, "layer_norms": m}."""
    graph = gm.graph
    fused = {"reductions": 0, "layer_norms": 0}
    for reader in list(graph.nodes):
        found = _prologue_reader(reader)
        if found is None:
            continue
        source, target, rest, kind = found
        chain = _chain_steps(source)
        if chain is None or _only_user(source) is not reader:
            continue
        start, ops, operands, scalars, reversed_ = chain
        value = _value(source)
        if value is None or value.dtype not in _DTYPES:
            continue
        if kind != "layer_norm" and (_value(reader) is None or _value(reader).dtype != value.dtype):
            continue
        tensors = [start] + [t for t in operands if t is not None]
        if not all(_fits(t, value.dtype) and _value(t).shape == value.shape for t in tensors):
            continue
        _replace_pair(graph, source, reader, target, (start, ops, operands, scalars, reversed_, *rest))
        fused["layer_norms" if kind == "layer_norm" else "reductions"] += 1
    _rewritten(gm, sum(fused.values()))
    return fused


# The convolution passes are off unless asked for ($OCLTUNE_COMPILE_CONV_EPILOGUES=1, or this flag):
# measured on an H100 (docs/PERFORMANCE.md, resnet50 batch 32), compiled inference took 18.45 ms with
# them against 11.85 ms without, although a fused convolution now runs the plain one's row (decision
# 0062's update); why is not known yet.
CONV_EPILOGUES = os.environ.get("OCLTUNE_COMPILE_CONV_EPILOGUES", "0") == "1"


# The linear pass is on unless turned off ($OCLTUNE_COMPILE_LINEAR_EPILOGUES=0, or this flag): the
# GEMM's epilogue is not part of its shape key, so a fused linear layer runs the row of its product,
# as eager's addmm does (decision 0073).
LINEAR_EPILOGUES = os.environ.get("OCLTUNE_COMPILE_LINEAR_EPILOGUES", "1") == "1"


# The prologue pass is on unless turned off ($OCLTUNE_COMPILE_PROLOGUES=0, or this flag): it only
# removes the chain's store and the reader's load of it.
PROLOGUES = os.environ.get("OCLTUNE_COMPILE_PROLOGUES", "1") == "1"


def lower(gm: torch.fx.GraphModule) -> dict:
    """The passes over one captured graph, in order; returns what each did."""
    folded = fold_batch_norms(gm) if CONV_EPILOGUES else 0
    epilogues = fuse_conv_epilogues(gm) if CONV_EPILOGUES else 0
    linear = fuse_linear_epilogues(gm) if LINEAR_EPILOGUES else 0
    chains = fuse_elementwise_chains(gm)
    prologues = fuse_prologues(gm) if PROLOGUES else {"reductions": 0, "layer_norms": 0}
    return {"batch_norms_folded": folded, "conv_epilogues": epilogues, "linear_epilogues": linear,
            "elementwise_chains": chains, "reduction_prologues": prologues["reductions"],
            "layer_norm_prologues": prologues["layer_norms"]}


def _compile_graph(gm, example_inputs):
    from functorch.compile import make_boxed_func

    lower(gm)
    return make_boxed_func(gm.forward)


def backend(gm, example_inputs):
    """The Dynamo backend (``torch.compile(model, backend="ocltune")``; the function itself works too)."""
    from torch._dynamo.backends.common import aot_autograd

    return aot_autograd(fw_compiler=_compile_graph, bw_compiler=_compile_graph)(gm, example_inputs)


# ---- registration, when PyTorch imports the modules concerned ----

_REFUSAL = ('ocltune_torch: torch.compile\'s default backend (Inductor) cannot generate code for "ocl" devices; '
            'compile with torch.compile(model, backend="ocltune")')


def _register_backend(registry) -> None:
    # Only the registry's own function: list_backends() would import the rest of Dynamo while it is
    # still being imported.
    try:
        registry.register_backend(backend, name="ocltune")
    except AssertionError:  # registered already (the module was reloaded)
        pass


def _refuse_inductor(common) -> None:
    """Inductor on ocl tensors: a clear error instead of KeyError: 'ocl' deep in its code generation."""

    class Refuse(type):  # whatever Inductor asks of the scheduling or wrapper class: the refusal
        def __getattr__(cls, name):
            raise RuntimeError(_REFUSAL)

    class Refusal(metaclass=Refuse):
        def __init__(self, *args, **kwargs):
            raise RuntimeError(_REFUSAL)

    if common.get_scheduling_for_device("ocl") is None:
        common.register_backend_for_device("ocl", Refusal, Refusal)
    if "ocl" not in common.device_op_overrides_dict:
        common.register_device_op_overrides("ocl", common.DeviceOpOverrides())


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs `callback(module)` right after `name` is first imported (now, if it already is)."""

    def __init__(self, name, callback):
        self.name, self.callback = name, callback

    def install(self):
        if self.name in sys.modules:
            self._run(sys.modules[self.name])
        else:
            sys.meta_path.insert(0, self)

    def _run(self, module):
        try:
            self.callback(module)
        except Exception as e:  # noqa: BLE001  (a private PyTorch API that moved must not break imports)
            import warnings

            warnings.warn(f"ocltune_torch: could not register with {self.name}: {e}", stacklevel=2)

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_register(module):
            exec_module(module)
            self._run(module)

        spec.loader.exec_module = exec_then_register
        return spec


def install() -> None:
    _AfterImport("torch._dynamo.backends.registry", _register_backend).install()
    _AfterImport("torch._inductor.codegen.common", _refuse_inductor).install()
