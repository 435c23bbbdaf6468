// Elementwise ops: parameter space and launch plan (dimension merging, input addressing modes).
#include "ops/elementwise/elementwise.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include <fmt/format.h>

#include "harness/buffer_extent.h"
#include "harness/error.h"

namespace ocltune {
namespace {

std::int64_t at(const Config& c, const char* name) { return c.at(name); }

std::int64_t next_pow2(std::int64_t x) {
  std::int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

// The output's dims after dropping 1s and merging neighbours that every input walks contiguously,
// with each input's strides over them; innermost last. A broadcast dim has stride 0.
struct MergedLayout {
  std::vector<std::int64_t> dims;
  std::vector<std::vector<std::int64_t>> strides;  // per tensor operand
};

MergedLayout merge_dims(const ElementwiseShape& shape) {
  const std::vector<std::int64_t> out = shape.out_dims();
  const std::vector<const TensorOperand*> tensors = shape.tensors();
  MergedLayout m;
  m.strides.resize(tensors.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 1) continue;
    std::vector<std::int64_t> s(tensors.size());
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      const TensorOperand& op = *tensors[t];
      const std::int64_t lead = static_cast<std::int64_t>(out.size() - op.dims.size());
      const std::int64_t j = static_cast<std::int64_t>(i) - lead;
      s[t] = (j < 0 || op.dims[static_cast<std::size_t>(j)] == 1) ? 0
                                                                  : op.effective_strides()[static_cast<std::size_t>(j)];
    }
    // Merge into the previous (outer) dim when every input steps from one to the other seamlessly.
    bool merge = !m.dims.empty();
    for (std::size_t t = 0; merge && t < tensors.size(); ++t) merge = m.strides[t].back() == s[t] * out[i];
    if (merge) {
      m.dims.back() *= out[i];
      for (std::size_t t = 0; t < tensors.size(); ++t) m.strides[t].back() = s[t];
    } else {
      m.dims.push_back(out[i]);
      for (std::size_t t = 0; t < tensors.size(); ++t) m.strides[t].push_back(s[t]);
    }
  }
  if (m.dims.empty()) {
    m.dims.push_back(1);
    for (auto& s : m.strides) s.push_back(0);
  }
  return m;
}

// INk_MODE of kernels/elementwise.cl: 0 flat, 1 innermost stride 1, 2 innermost stride 0, 3 other.
int input_mode(const MergedLayout& m, const std::vector<std::int64_t>& strides) {
  bool flat = true;
  std::int64_t packed = 1;
  for (std::size_t i = m.dims.size(); i-- > 0;) {
    flat = flat && (strides[i] == packed || m.dims[i] == 1);
    packed *= m.dims[i];
  }
  if (flat) return 0;
  if (strides.back() == 1) return 1;
  return strides.back() == 0 ? 2 : 3;
}

void check_fits(const cl::Buffer& buffer, std::int64_t offset, std::int64_t extent, DType dtype, const char* what) {
  if (offset < 0) throw Error(fmt::format("elementwise: negative offset of {}", what));
  if (offset + extent > (std::int64_t{1} << 31) - 1)
    throw Error(fmt::format("elementwise: {} exceeds 2^31 elements", what));
  check_buffer_extent(buffer(), offset, extent, dtype_bytes(dtype), "elementwise", what);
}

}  // namespace

std::uint64_t division_magic(std::int64_t d) { return d < 2 ? 0 : UINT64_MAX / static_cast<std::uint64_t>(d) + 1; }

SearchSpace elementwise_space(const ElementwiseShape& shape, const DeviceInfo& device) {
  SearchSpace space("elementwise");
  space.add("VW", {1, 2, 4, 8, 16}, "elements per vector load and store")
      .add("ITEMS", {1, 2, 4, 8, 16}, "vectors per work-item per pass")
      .add("WG", {32, 64, 128, 256}, "work-group size")
      .add("GRID_STRIDE", {0, 8, 32, 128, 512}, "0: one pass; G: G work-groups loop over the tensor (grid-stride)")
      .add("CONTIG", {0, 1}, "a work-item's vectors are adjacent (1) or a work-group apart (0)")
      .add("ROWS", {0, 1}, "work-groups take tiles of one innermost row (1) or of the flat output (0)");
  const auto max_wg = static_cast<std::int64_t>(device.max_work_group_size);
  space.constrain("WG <= device max work-group size", {"WG"}, [=](const Config& c) { return at(c, "WG") <= max_wg; });
  space.constrain("CONTIG = 0 when ITEMS = 1 (they are the same kernel)", {"ITEMS", "CONTIG"},
                  [](const Config& c) { return at(c, "ITEMS") > 1 || at(c, "CONTIG") == 0; });
  // A work-group's tile larger than the tensor only idles work-items; a grid that covers the
  // tensor in one pass is the one-pass kernel with a loop around it.
  const std::int64_t n = std::max<std::int64_t>(shape.elements(), 1);
  const std::int64_t max_tile = std::max<std::int64_t>(next_pow2(n), 1024);
  space.constrain("VW * ITEMS * WG <= max(next_pow2(n), 1024)", {"VW", "ITEMS", "WG"},
                  [=](const Config& c) { return at(c, "VW") * at(c, "ITEMS") * at(c, "WG") <= max_tile; });
  // Row tiles only differ from flat ones when the output has rows (some input is not flat), and
  // should not be much longer than a row.
  const MergedLayout m = merge_dims(shape);
  const std::int64_t row = m.dims.size() > 1 ? m.dims.back() : 0;
  space.constrain("ROWS = 0 without rows; row tiles <= max(next_pow2(row), 256)", {"VW", "ITEMS", "WG", "ROWS"},
                  [=](const Config& c) {
                    if (at(c, "ROWS") == 0) return true;
                    return row > 0 &&
                           at(c, "VW") * at(c, "ITEMS") * at(c, "WG") <= std::max<std::int64_t>(next_pow2(row), 256);
                  });
  space.constrain("GRID_STRIDE = 0 or the grid loops at least twice", {"VW", "ITEMS", "WG", "GRID_STRIDE"},
                  [=](const Config& c) {
                    const std::int64_t g = at(c, "GRID_STRIDE");
                    return g == 0 || g * at(c, "VW") * at(c, "ITEMS") * at(c, "WG") < n;
                  });
  return space;
}

Config elementwise_default_config() {
  return {{"VW", 4}, {"ITEMS", 4}, {"WG", 64}, {"GRID_STRIDE", 0}, {"CONTIG", 0}, {"ROWS", 0}};
}

// docs/decisions/0036: a CPU (PoCL) wants 16-wide vectors, adjacent per work-item (x 1024 x 768
// add + gelu: 2.15 ms against 7.5 at the portable default); a GPU 256-wide work-groups of float4.
// Vectors per work-item shrink until the launch has the work-groups that fill the device.
Config elementwise_default_config(const ElementwiseShape& shape, const DeviceInfo& device) {
  const bool cpu = device.type == DeviceType::kCpu;
  const std::int64_t n = std::max<std::int64_t>(shape.elements(), 1);
  const std::int64_t max_tile = std::max<std::int64_t>(next_pow2(n), 1024);
  const auto max_wg = static_cast<std::int64_t>(device.max_work_group_size);
  const std::int64_t units = std::max<std::int64_t>(1, device.compute_units);
  std::int64_t vw = cpu ? 16 : 4, items = 4, wg = 32;
  if (!cpu) {
    for (std::int64_t v : {64, 128, 256}) {
      if (v <= max_wg) wg = v;
    }
  }
  if (wg > max_wg) return elementwise_default_config();  // a device below 32 work-items: nothing fits
  const std::int64_t wanted = cpu ? 8 * units : units * std::max<std::int64_t>(4, 2048 / wg);
  auto groups = [&] { return (n + vw * items * wg - 1) / (vw * items * wg); };
  while (items > 1 && (vw * items * wg > max_tile || groups() < wanted)) items /= 2;
  while (vw > 1 && vw * items * wg > max_tile) vw /= 2;
  return {{"VW", vw}, {"ITEMS", items}, {"WG", wg}, {"GRID_STRIDE", 0}, {"CONTIG", items > 1 && cpu ? 1 : 0},
          {"ROWS", 0}};
}

LaunchPlan elementwise_plan(const ElementwiseShape& shape, const ElementwiseOperands& o, const Config& config) {
  shape.validate();
  const std::vector<const TensorOperand*> tensors = shape.tensors();
  if (o.inputs.size() != tensors.size() || o.input_offsets.size() != tensors.size()) {
    throw Error(fmt::format("elementwise: {} tensor operands, {} buffers and {} offsets given", tensors.size(),
                            o.inputs.size(), o.input_offsets.size()));
  }
  const std::int64_t n = shape.elements();
  if (n == 0) return {};
  check_fits(o.out, o.out_offset, n, shape.dtype, "the output");
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    check_fits(o.inputs[t], o.input_offsets[t], tensors[t]->extent(), shape.dtype, "an input");
  }

  const MergedLayout m = merge_dims(shape);
  const std::size_t ndim = m.dims.size();
  auto dim = [&](std::size_t slot) {  // slot 0..3 of the right-aligned 4-D view
    return slot + ndim < 4 ? std::int64_t{1} : m.dims[slot + ndim - 4];
  };
  auto stride = [&](std::size_t t, std::size_t slot) {
    return slot + ndim < 4 ? std::int64_t{0} : m.strides[t][slot + ndim - 4];
  };

  KernelLaunch launch;
  launch.program.files = {"storage.cl", "elementwise_ops.cl", "elementwise.cl"};
  auto& defines = launch.program.defines;
  defines.push_back(dtype_define(shape.dtype));
  defines.emplace_back("NDIM", std::to_string(ndim));
  defines.emplace_back("STEPS", std::to_string(shape.steps.size()));
  defines.emplace_back("IN0_MODE", std::to_string(input_mode(m, m.strides[0])));
  launch.kernel = "elementwise";
  launch.args = {static_cast<cl_int>(n),
                 static_cast<cl_int>(dim(1)),
                 static_cast<cl_int>(dim(2)),
                 static_cast<cl_int>(dim(3)),
                 static_cast<cl_ulong>(division_magic(dim(1))),
                 static_cast<cl_ulong>(division_magic(dim(2))),
                 static_cast<cl_ulong>(division_magic(dim(3))),
                 o.out,
                 static_cast<cl_int>(o.out_offset)};
  auto push_tensor = [&](std::size_t t) {
    launch.args.emplace_back(o.inputs[t]);
    launch.args.emplace_back(static_cast<cl_int>(o.input_offsets[t]));
    for (std::size_t slot = 0; slot < 4; ++slot) launch.args.emplace_back(static_cast<cl_int>(stride(t, slot)));
  };
  push_tensor(0);
  std::size_t t = 1;
  for (std::size_t k = 0; k < shape.steps.size(); ++k) {
    const ElementwiseStep& s = shape.steps[k];
    const std::string prefix = fmt::format("STEP{}_", k + 1);
    defines.emplace_back(prefix + "OP", elementwise_op_define(s.op));
    defines.emplace_back(prefix + "ARG", s.tensor ? "1" : is_binary(s.op) ? "2" : "0");
    defines.emplace_back(prefix + "REV", s.reversed ? "1" : "0");
    if (s.tensor) {
      defines.emplace_back(fmt::format("IN{}_MODE", k + 1), std::to_string(input_mode(m, m.strides[t])));
      push_tensor(t++);
    } else if (is_binary(s.op)) {
      launch.args.emplace_back(static_cast<cl_float>(s.scalar));
    }
  }
  for (const auto& [name, value] : config) defines.emplace_back(name, std::to_string(value));

  const std::int64_t vw = at(config, "VW"), wg = at(config, "WG");
  const std::int64_t tile = wg * at(config, "ITEMS");
  const std::int64_t d3 = dim(3);
  std::int64_t groups =
      at(config, "ROWS") ? n / d3 * (((d3 + vw - 1) / vw + tile - 1) / tile) : ((n + vw - 1) / vw + tile - 1) / tile;
  if (at(config, "GRID_STRIDE") > 0) groups = std::min(groups, at(config, "GRID_STRIDE"));
  launch.global = cl::NDRange(static_cast<std::size_t>(groups * wg));
  launch.local = cl::NDRange(static_cast<std::size_t>(wg));
  return {{std::move(launch)}};
}

}  // namespace ocltune
