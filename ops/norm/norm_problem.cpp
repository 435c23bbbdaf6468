// Normalisation as tunable Problems: random inputs, float64 references, verification of every output.
#include "ops/norm/norm_problem.h"

#include <algorithm>
#include <cmath>

#include "harness/session.h"
#include "ops/norm/norm_reference.h"

namespace ocltune {
namespace {

class NormEvaluation : public Evaluation {
 public:
  NormEvaluation(Session& session, const NormShape& shape, const NormInstance& instance);
  LaunchPlan plan(const Config& config) override { return norm_plan(shape_, operands_, config, workspace_); }
  void reset() override;
  VerifyResult verify() override;

 private:
  StoredTensor& tensor(const std::string& name);
  TensorRef ref(StoredTensor& t) { return {t.buffer(session_.context()), t.offset()}; }

  Session& session_;
  NormShape shape_;
  Workspace workspace_;
  NormTensors t_;
  NormOperands operands_;
  NormReference reference_;
  std::vector<std::string> inputs_, outputs_;  // outputs_ are restored by reset(), in-out ones included
};

StoredTensor& NormEvaluation::tensor(const std::string& name) {
  if (name == "x") return t_.x;
  if (name == "dy") return t_.dy;
  if (name == "gamma") return t_.gamma;
  if (name == "beta") return t_.beta;
  if (name == "mean") return t_.mean;
  if (name == "rstd") return t_.rstd;
  if (name == "running_mean") return t_.running_mean;
  if (name == "running_var") return t_.running_var;
  if (name == "y") return t_.y;
  if (name == "dx") return t_.dx;
  if (name == "dgamma") return t_.dgamma;
  return t_.dbeta;
}

NormEvaluation::NormEvaluation(Session& session, const NormShape& shape, const NormInstance& instance)
    : session_(session), shape_(shape), workspace_(session.context()) {
  shape.validate();
  const bool batch = is_batch_norm(shape.kind), backward = is_backward(shape.kind);
  const std::int64_t e = shape.elements(), off = instance.offset;
  const std::int64_t params = batch ? shape.channels() : shape.n();  // gamma, beta, dgamma, dbeta
  const std::int64_t stats = batch ? shape.channels() : shape.rows();
  const DType dt = shape.dtype;
  // Inputs: x off-centre (mean about 1), so that subtracting the mean matters.
  t_.x = StoredTensor(dt, e, off);
  if (instance.shift != 0) {
    t_.x.fill_uniform(31, instance.shift - 1.0f, instance.shift + 1.0f);
  } else {
    t_.x.fill_uniform(31, -1.0f, 3.0f);
  }
  t_.gamma = StoredTensor(dt, params, off);
  t_.gamma.fill_uniform(33, 0.5f, 1.5f);
  t_.mean = StoredTensor(DType::kFp32, stats, off);
  t_.rstd = StoredTensor(DType::kFp32, stats, off);
  const std::int64_t segment = batch ? shape.batch() * shape.plane() : shape.n();
  if (backward) {
    t_.dy = StoredTensor(dt, e, off);
    t_.dy.fill_uniform(32);
    if (instance.specials) inject_specials(t_.dy, 37, 3 * segment);
    fill_saved_statistics(shape, t_);
    t_.dx = StoredTensor(dt, e, off);
    t_.dgamma = StoredTensor(dt, params, off);
    t_.dbeta = StoredTensor(dt, params, off);
    inputs_ = {"dy", "x", "gamma", "mean", "rstd"};
    outputs_ = {"dx", "dgamma", "dbeta"};
  } else {
    if (instance.specials) inject_specials(t_.x, 37, 3 * segment);
    t_.beta = StoredTensor(dt, params, off);
    t_.beta.fill_uniform(34);
    t_.y = StoredTensor(dt, e, off);
    for (std::size_t p = 0; p < shape.prologue.tensors(); ++p) {
      t_.prologue.emplace_back(dt, e, off);
      t_.prologue.back().fill_uniform(41 + p);
    }
    inputs_ = {"x", "gamma", "beta"};
    outputs_ = {"y", "mean", "rstd"};
    if (batch) {
      t_.running_mean = StoredTensor(DType::kFp32, stats, off);
      t_.running_mean.fill_uniform(35, -0.5f, 0.5f);
      t_.running_var = StoredTensor(DType::kFp32, stats, off);
      t_.running_var.fill_uniform(36, 0.5f, 1.5f);
      outputs_.insert(outputs_.end(), {"running_mean", "running_var"});
    }
  }
  for (const std::string& name : outputs_) {
    StoredTensor& out = tensor(name);
    if (name != "running_mean" && name != "running_var") out.fill(kUnwrittenSentinel);
  }
  reference_ = norm_reference(shape, t_);

  NormOperands& o = operands_;
  for (const std::string& name : inputs_) tensor(name).buffer(session.context());
  for (const std::string& name : outputs_) tensor(name).buffer(session.context());
  auto bind = [&](const std::string& name, TensorRef& r) {
    if (std::find(inputs_.begin(), inputs_.end(), name) != inputs_.end() ||
        std::find(outputs_.begin(), outputs_.end(), name) != outputs_.end()) {
      r = ref(tensor(name));
    }
  };
  bind("x", o.x);
  bind("dy", o.dy);
  bind("gamma", o.gamma);
  bind("beta", o.beta);
  bind("mean", o.mean);
  bind("rstd", o.rstd);
  bind("running_mean", o.running_mean);
  bind("running_var", o.running_var);
  bind("y", o.y);
  bind("dx", o.dx);
  bind("dgamma", o.dgamma);
  bind("dbeta", o.dbeta);
  for (const std::string& name : inputs_) tensor(name).upload(session.queue());
  for (StoredTensor& p : t_.prologue) {
    o.prologue.tensors.push_back(p.buffer(session.context()));
    o.prologue.offsets.push_back(off);
    p.upload(session.queue());
  }
  reset();
}

void NormEvaluation::reset() {
  for (const std::string& name : outputs_) tensor(name).upload(session_.queue());
}

VerifyResult NormEvaluation::verify() {
  VerifyResult total;
  for (const std::string& name : outputs_) {
    const StoredTensor& t = tensor(name);
    const OutputReference& out = reference_.outputs.at(name);
    std::vector<float> after = t.read_values(session_.queue());
    if (out.any_non_finite) {
      for (const Expected& e : out.expected) {
        if (std::isinf(e.value) && !std::isfinite(after[e.index])) after[e.index] = static_cast<float>(e.value);
      }
    }
    merge_result(total, verify_output(after, t.values(), out.expected, reference_.tolerance, out.written), name);
  }
  return total;
}

}  // namespace

NormProblem::NormProblem(NormShape shape, NormInstance instance) : shape_(std::move(shape)), instance_(instance) {
  shape_.validate();
}

std::vector<std::string> NormProblem::kernel_files() const {
  return {"storage.cl", "reduce_vec.cl", "elementwise_ops.cl", "prologue.cl",
          is_batch_norm(shape_.kind) ? "norm_batch.cl" : "norm_layer.cl"};
}

std::unique_ptr<Evaluation> NormProblem::instantiate(Session& session) const {
  return std::make_unique<NormEvaluation>(session, shape_, instance_);
}

}  // namespace ocltune
