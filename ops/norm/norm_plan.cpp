// Normalisation: the launch plans of layer_norm and batch_norm, forward and backward.
#include <fmt/format.h>

#include "core/stored_tensor.h"
#include "harness/error.h"
#include "ops/norm/norm.h"

namespace ocltune {
namespace {

std::int64_t at(const Config& c, const char* name) { return c.at(name); }

cl_long off(const TensorRef& t) { return static_cast<cl_long>(t.offset); }

KernelLaunch launch_of(const NormShape& shape, const Config& config, const char* file, const char* kernel,
                       std::int64_t groups) {
  KernelLaunch k;
  k.program.files = {"storage.cl", "reduce_vec.cl", "elementwise_ops.cl", "prologue.cl", file};
  k.program.defines = {dtype_define(shape.dtype), {"BACKWARD", is_backward(shape.kind) ? "1" : "0"}};
  for (const auto& [name, value] : config) k.program.defines.emplace_back(name, std::to_string(value));
  k.kernel = kernel;
  const std::int64_t wgs = at(config, "WGS");
  k.global = cl::NDRange(static_cast<std::size_t>(groups * wgs));
  k.local = cl::NDRange(static_cast<std::size_t>(wgs));
  return k;
}

void check_refs(const NormShape& shape, std::initializer_list<const TensorRef*> refs) {
  for (const TensorRef* r : refs) {
    if (!(*r).buffer()) throw Error(fmt::format("{}: a required buffer is missing", norm_kind_name(shape.kind)));
    if (r->offset < 0) throw Error(fmt::format("{}: negative buffer offset", norm_kind_name(shape.kind)));
  }
}

LaunchPlan layer_plan(const NormShape& s, const NormOperands& o, const Config& config, Workspace& workspace) {
  LaunchPlan plan;
  const std::int64_t rows = s.rows(), n = s.n(), per_group = at(config, "ROWS");
  const std::int64_t groups = (rows + per_group - 1) / per_group;
  if (s.kind == NormKind::kLayer) {
    check_refs(s, {&o.x, &o.gamma, &o.beta, &o.y, &o.mean, &o.rstd});
    if (rows == 0) return plan;
    const auto wpr_it = config.find("WPR");
    const std::int64_t wpr = wpr_it == config.end() ? 0 : wpr_it->second;
    KernelLaunch k;
    if (wpr > 0) {
      // Rows in registers: WGS / WPR rows per work-group at a time, ROWS times.
      const std::int64_t wgs = at(config, "WGS"), vw = at(config, "VW");
      const std::int64_t rows_per_group = per_group * (wgs / wpr);
      k = launch_of(s, config, "norm_layer.cl", "layer_norm", (rows + rows_per_group - 1) / rows_per_group);
      k.program.defines.emplace_back("NV", std::to_string(layer_norm_vectors_per_item(n, wpr, vw)));
      // Whole-vector accesses need every row start VW-aligned: buffers themselves are aligned to
      // CL_DEVICE_MEM_BASE_ADDR_ALIGN, at least the largest vector type.
      const bool aligned = n % vw == 0 && o.x.offset % vw == 0 && o.y.offset % vw == 0 && o.gamma.offset % vw == 0 &&
                           o.beta.offset % vw == 0;
      k.program.defines.emplace_back("ALIGNED", aligned ? "1" : "0");
    } else {
      k = launch_of(s, config, "norm_layer.cl", "layer_norm", groups);
    }
    k.args = {static_cast<cl_int>(rows),
              static_cast<cl_int>(n),
              static_cast<cl_float>(s.eps),
              o.x.buffer,
              off(o.x),
              o.gamma.buffer,
              off(o.gamma),
              o.beta.buffer,
              off(o.beta),
              o.y.buffer,
              off(o.y),
              o.mean.buffer,
              off(o.mean),
              o.rstd.buffer,
              off(o.rstd)};
    if (!s.prologue.empty()) s.prologue.add_to(k, o.prologue, o.x.buffer);
    plan.kernels.push_back(std::move(k));
    return plan;
  }
  check_refs(s, {&o.dy, &o.x, &o.mean, &o.rstd, &o.gamma, &o.dx, &o.dgamma, &o.dbeta});
  const cl::Buffer partial = workspace.get(static_cast<std::size_t>(2 * std::max<std::int64_t>(1, groups) * n) * 4, 0);
  if (rows > 0) {
    KernelLaunch k = launch_of(s, config, "norm_layer.cl", "layer_norm_backward", groups);
    k.args = {static_cast<cl_int>(rows),
              static_cast<cl_int>(n),
              o.dy.buffer,
              off(o.dy),
              o.x.buffer,
              off(o.x),
              o.mean.buffer,
              off(o.mean),
              o.rstd.buffer,
              off(o.rstd),
              o.gamma.buffer,
              off(o.gamma),
              o.dx.buffer,
              off(o.dx),
              partial};
    plan.kernels.push_back(std::move(k));
  }
  // With no rows the sums are empty: dgamma = dbeta = 0, as in PyTorch.
  KernelLaunch g =
      launch_of(s, config, "norm_layer.cl", "layer_norm_param_grads", (n + at(config, "WGS") - 1) / at(config, "WGS"));
  g.args = {static_cast<cl_int>(groups),
            static_cast<cl_int>(n),
            partial,
            o.dgamma.buffer,
            off(o.dgamma),
            o.dbeta.buffer,
            off(o.dbeta)};
  plan.kernels.push_back(std::move(g));
  return plan;
}

LaunchPlan batch_plan(const NormShape& s, const NormOperands& o, const Config& config, Workspace& workspace) {
  LaunchPlan plan;
  const std::int64_t n = s.batch(), c = s.channels(), hw = s.plane();
  const std::int64_t split = at(config, "SPLIT"), wgs = at(config, "WGS"), per_group = at(config, "ROWS");
  const bool fused = at(config, "FUSED") != 0;
  const std::int64_t channel_groups = (c + wgs - 1) / wgs;
  const std::int64_t apply_groups = (n * c + per_group - 1) / per_group;
  const auto dims = [&] {
    return std::vector<KernelArg>{static_cast<cl_int>(n), static_cast<cl_int>(c), static_cast<cl_int>(hw)};
  };
  if (s.kind == NormKind::kBatch) {
    check_refs(s, {&o.x, &o.gamma, &o.beta, &o.y, &o.mean, &o.rstd, &o.running_mean, &o.running_var});
    const cl::Buffer partial = workspace.get(static_cast<std::size_t>(c * split * 3) * 4, 0);
    KernelLaunch k = launch_of(s, config, "norm_batch.cl", "batch_norm_stats", c * split);
    k.args = dims();
    const std::vector<KernelArg> rest = {static_cast<cl_float>(s.eps),
                                         static_cast<cl_float>(s.momentum),
                                         o.x.buffer,
                                         off(o.x),
                                         o.gamma.buffer,
                                         off(o.gamma),
                                         o.beta.buffer,
                                         off(o.beta),
                                         o.y.buffer,
                                         off(o.y),
                                         o.mean.buffer,
                                         off(o.mean),
                                         o.rstd.buffer,
                                         off(o.rstd),
                                         o.running_mean.buffer,
                                         off(o.running_mean),
                                         o.running_var.buffer,
                                         off(o.running_var),
                                         partial};
    k.args.insert(k.args.end(), rest.begin(), rest.end());
    plan.kernels.push_back(std::move(k));
    if (split > 1) {
      KernelLaunch m = launch_of(s, config, "norm_batch.cl", "batch_norm_combine", channel_groups);
      m.args = {static_cast<cl_int>(c),
                static_cast<cl_float>(s.eps),
                static_cast<cl_float>(s.momentum),
                partial,
                o.mean.buffer,
                off(o.mean),
                o.rstd.buffer,
                off(o.rstd),
                o.running_mean.buffer,
                off(o.running_mean),
                o.running_var.buffer,
                off(o.running_var)};
      plan.kernels.push_back(std::move(m));
    }
    if (!fused) {
      KernelLaunch a = launch_of(s, config, "norm_batch.cl", "batch_norm_apply", apply_groups);
      a.args = dims();
      const std::vector<KernelArg> more = {o.x.buffer,    off(o.x),    o.gamma.buffer, off(o.gamma),
                                           o.beta.buffer, off(o.beta), o.y.buffer,     off(o.y),
                                           o.mean.buffer, off(o.mean), o.rstd.buffer,  off(o.rstd)};
      a.args.insert(a.args.end(), more.begin(), more.end());
      plan.kernels.push_back(std::move(a));
    }
    return plan;
  }
  check_refs(s, {&o.dy, &o.x, &o.mean, &o.rstd, &o.gamma, &o.dx, &o.dgamma, &o.dbeta});
  const cl::Buffer partial = workspace.get(static_cast<std::size_t>(c * split * 2) * 4, 0);
  const cl::Buffer sums = workspace.get(static_cast<std::size_t>(c * 2) * 4, 1);
  KernelLaunch k = launch_of(s, config, "norm_batch.cl", "batch_norm_backward_stats", c * split);
  k.args = dims();
  const std::vector<KernelArg> rest = {o.dy.buffer,  off(o.dy),     o.x.buffer,      off(o.x),       o.mean.buffer,
                                       off(o.mean),  o.rstd.buffer, off(o.rstd),     o.gamma.buffer, off(o.gamma),
                                       o.dx.buffer,  off(o.dx),     o.dgamma.buffer, off(o.dgamma),  o.dbeta.buffer,
                                       off(o.dbeta), sums,          partial};
  k.args.insert(k.args.end(), rest.begin(), rest.end());
  plan.kernels.push_back(std::move(k));
  if (split > 1) {
    KernelLaunch m = launch_of(s, config, "norm_batch.cl", "batch_norm_backward_combine", channel_groups);
    m.args = {static_cast<cl_int>(c), partial, sums, o.dgamma.buffer, off(o.dgamma), o.dbeta.buffer, off(o.dbeta)};
    plan.kernels.push_back(std::move(m));
  }
  if (!fused) {
    KernelLaunch a = launch_of(s, config, "norm_batch.cl", "batch_norm_backward_apply", apply_groups);
    a.args = dims();
    const std::vector<KernelArg> more = {o.dy.buffer, off(o.dy),     o.x.buffer,  off(o.x),       o.mean.buffer,
                                         off(o.mean), o.rstd.buffer, off(o.rstd), o.gamma.buffer, off(o.gamma),
                                         sums,        o.dx.buffer,   off(o.dx)};
    a.args.insert(a.args.end(), more.begin(), more.end());
    plan.kernels.push_back(std::move(a));
  }
  return plan;
}

}  // namespace

LaunchPlan norm_plan(const NormShape& shape, const NormOperands& operands, const Config& config, Workspace& workspace) {
  shape.validate();
  return is_batch_norm(shape.kind) ? batch_plan(shape, operands, config, workspace)
                                   : layer_plan(shape, operands, config, workspace);
}

}  // namespace ocltune
