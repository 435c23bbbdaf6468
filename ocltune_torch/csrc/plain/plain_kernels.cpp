// Plain OpenCL kernels of the backend: programs per device and set of element types, cached.
#include "ocltune_torch/csrc/plain/plain_kernels.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <string_view>
#include <tuple>

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <c10/util/Exception.h>

#include "harness/embedded_file.h"
#include "ocltune_torch/csrc/device/allocator.h"
#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/device/profiler.h"

namespace ocltune {
extern const EmbeddedFile kTorchKernelFiles[];
extern const std::size_t kTorchKernelFilesCount;
}  // namespace ocltune

namespace ocltune_torch {
namespace {

// How a dtype looks to the kernels: its storage type, the type values are computed in, and how one
// is loaded and stored. fp16 and bf16 are 16-bit patterns computed in fp32 (no cl_khr_fp16 needed);
// bool is a uchar 0 or 1; float64 is double (only where the device has cl_khr_fp64: plain_dtype).
struct PlainType {
  const char* storage;
  const char* value;
  const char* load;   // of (p)[i]
  const char* store;  // of v into (p)[i]
  const char* to;     // any value to this value type
  // A value of the value type rounded to this type's precision, still of the value type: the identity
  // but for fp16 and bf16, whose values are fp32 (for kernels that round each step as the CPU's
  // 16-bit arithmetic does: division with a rounding mode).
  const char* round;
  bool is_float;
  bool is_bool;
};

std::optional<PlainType> plain_type(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return PlainType{"float", "float", "((p)[i])", "((p)[i] = (v))", "((float)(v))", "(v)", true, false};
    case at::kHalf:
      return PlainType{"ushort",
                       "float",
                       "vload_half((i), (const global half*)(p))",
                       "vstore_half_rte((v), (i), (global half*)(p))",
                       "((float)(v))",
                       "round_to_half(v)",
                       true,
                       false};
    case at::kBFloat16:
      return PlainType{
          "ushort", "float", "bf16_to_float((p)[i])", "((p)[i] = float_to_bf16(v))", "((float)(v))", "round_to_bf16(v)",
          true,     false};
    case at::kDouble:
      return PlainType{"double", "double", "((p)[i])", "((p)[i] = (v))", "((double)(v))", "(v)", true, false};
    case at::kLong: return PlainType{"long", "long", "((p)[i])", "((p)[i] = (v))", "((long)(v))", "(v)", false, false};
    case at::kInt: return PlainType{"int", "int", "((p)[i])", "((p)[i] = (v))", "((int)(v))", "(v)", false, false};
    case at::kShort:
      return PlainType{"short", "short", "((p)[i])", "((p)[i] = (v))", "((short)(v))", "(v)", false, false};
    case at::kChar: return PlainType{"char", "char", "((p)[i])", "((p)[i] = (v))", "((char)(v))", "(v)", false, false};
    case at::kByte:
      return PlainType{"uchar", "uchar", "((p)[i])", "((p)[i] = (v))", "((uchar)(v))", "(v)", false, false};
    case at::kBool:
      return PlainType{"uchar", "uchar", "((p)[i])", "((p)[i] = (v))", "((uchar)((v) != 0))", "(v)", false, true};
    default: return std::nullopt;
  }
}

std::string_view kernel_file(const std::string& name) {
  for (std::size_t i = 0; i < ocltune::kTorchKernelFilesCount; ++i) {
    if (name == ocltune::kTorchKernelFiles[i].name) return ocltune::kTorchKernelFiles[i].text;
  }
  TORCH_INTERNAL_ASSERT(false, "ocltune_torch: no embedded kernel file ", name);
}

std::string type_defines(const TypeSlots& types) {
  std::string s;
  for (const auto& [slot, type] : types) {
    if (type == at::kDouble && s.find("cl_khr_fp64") == std::string::npos) {
      s = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + s;
    }
    const std::optional<PlainType> t = plain_type(type);
    TORCH_INTERNAL_ASSERT(t, "ocltune_torch: no plain kernel type for ", type);
    const std::string& x = slot;
    s += "#define " + x + "_S " + t->storage + "\n";
    s += "#define " + x + "_V " + t->value + "\n";
    s += "#define " + x + "_LOAD(p, i) " + t->load + "\n";
    s += "#define " + x + "_STORE(p, i, v) " + t->store + "\n";
    s += "#define TO_" + x + "(v) " + t->to + "\n";
    s += "#define " + x + "_ROUND(v) " + t->round + "\n";
    s += "#define " + x + "_FLOAT " + (t->is_float ? "1" : "0") + "\n";
    s += "#define " + x + "_BOOL " + (t->is_bool ? "1" : "0") + "\n";
  }
  return s;
}

std::string build_log(cl_program program, cl_device_id device) {
  std::size_t size = 0;
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// A CPU device (PoCL) compiles a program's kernels when they are first enqueued, and keeps them in
// its own on-disk cache; asking it for a program's binary would compile every kernel of the file.
cl_program build_from_source(int device, const std::string& file, const std::string& header,
                             const std::string& source) {
  const char* text = source.c_str();
  const std::size_t length = source.size();
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(device_context(device), 1, &text, &length, &err);
  check_cl(err, "clCreateProgramWithSource");
  cl_device_id id = device_runtime(device).device();
  err = clBuildProgram(program, 1, &id, "-cl-std=CL1.2", nullptr, nullptr);
  if (err != CL_SUCCESS) {
    const std::string log = build_log(program, id);
    clReleaseProgram(program);
    TORCH_CHECK(false, "ocltune_torch: building ocltune_torch/csrc/plain/kernels/", file, " failed (",
                cl_error_name(err), ") with\n", header, "build log:\n", log);
  }
  return program;
}

// A GPU's through the runtime's program cache: a program that any earlier process built for this
// device and driver loads from ocltune's on-disk binaries instead of compiling again (NVIDIA's
// compiler takes seconds per program, which every new process paid).
cl_program build_through_runtime(int device, const std::string& file, const std::string& header,
                                 const std::string& source) {
  try {
    return device_runtime(device).build_program(source, "-cl-std=CL1.2");
  } catch (const ocltune::api::Error& e) {
    TORCH_CHECK(false, "ocltune_torch: building ocltune_torch/csrc/plain/kernels/", file, " failed with\n", header,
                e.what());
  }
}

struct ProgramCache {
  std::mutex mutex;
  std::map<std::tuple<int, std::string, std::string>, cl_program> programs;  // never released (see device.cpp)
};

ProgramCache& program_cache() {
  static auto* cache = new ProgramCache();
  return *cache;
}

// Work items per launch: enough to fill the device, few enough that a CPU device does not spend its
// time starting work-groups (the kernels loop over the rest).
std::int64_t max_items(int device) {
  static std::mutex mutex;
  static std::map<int, std::int64_t> items;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = items.find(device);
  if (it != items.end()) return it->second;
  cl_device_id id = device_runtime(device).device();
  cl_uint units = 1;
  cl_device_type type = CL_DEVICE_TYPE_GPU;
  check_cl(clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, nullptr), "clGetDeviceInfo");
  check_cl(clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof(type), &type, nullptr), "clGetDeviceInfo");
  const std::int64_t per_unit = (type & CL_DEVICE_TYPE_CPU) ? 4 * 64 : 32 * 64;
  return items[device] = std::max<std::int64_t>(1, units) * per_unit;
}

constexpr std::size_t kLocalSize = 64;

std::atomic<std::int64_t> launch_count{0};
std::atomic<std::int64_t> build_count{0};
std::atomic<std::int64_t> build_ns{0};

}  // namespace

bool plain_dtype(at::ScalarType type) { return type != at::kDouble && plain_type(type).has_value(); }

bool plain_float64(int device) {
  static std::mutex mutex;
  static std::map<int, bool> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(device);
  if (it != known.end()) return it->second;
  cl_device_fp_config config = 0;
  check_cl(
      clGetDeviceInfo(device_runtime(device).device(), CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(config), &config, nullptr),
      "clGetDeviceInfo");
  return known[device] = config != 0;
}

bool plain_dtype(at::ScalarType type, int device) {
  return plain_dtype(type) || (type == at::kDouble && plain_float64(device));
}

void check_plain_dtype(at::ScalarType type, const char* op) {
  TORCH_CHECK(plain_dtype(type), "ocltune_torch: ", op, " does not support ", type,
              " on ocl (float32, float16, bfloat16, int64, int32, int16, int8, uint8, bool)");
}

bool plain_cpu_device(int device) {
  static std::mutex mutex;
  static std::map<int, bool> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(device);
  if (it != known.end()) return it->second;
  cl_device_type type = CL_DEVICE_TYPE_GPU;
  check_cl(clGetDeviceInfo(device_runtime(device).device(), CL_DEVICE_TYPE, sizeof(type), &type, nullptr),
           "clGetDeviceInfo");
  return known[device] = (type & CL_DEVICE_TYPE_CPU) != 0;
}

cl_program plain_program(int device, const std::string& file, const TypeSlots& types, const std::string& defines) {
  return plain_program(device, PlainFiles{file}, types, defines);
}

cl_program plain_program(int device, const PlainFiles& files, const TypeSlots& types, const std::string& defines) {
  TORCH_CHECK(!files.empty(), "ocltune_torch: plain_program without a file");
  const std::string header = type_defines(types) + (plain_cpu_device(device) ? "#define PLAIN_CPU 1\n" : "") + defines;
  std::string name = files.front();  // the files' names, joined: the cache key and what a build error names
  for (std::size_t i = 1; i < files.size(); ++i) name += " + " + files[i];
  ProgramCache& cache = program_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto key = std::make_tuple(device, name, header);
  auto it = cache.programs.find(key);
  if (it != cache.programs.end()) return it->second;
  std::string source = header + "#line 1\n" + std::string(kernel_file("plain_common.cl"));
  for (const std::string& file : files) source += "\n#line 1\n" + std::string(kernel_file(file));
  const auto start = std::chrono::steady_clock::now();
  cl_program program = plain_cpu_device(device) ? build_from_source(device, name, header, source)
                                                : build_through_runtime(device, name, header, source);
  const std::int64_t ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  build_ns += ns;
  ++build_count;
  // Which program a first step waited for, and how long (startup_stats() has only the sum).
  if (const char* log = std::getenv("OCLTUNE_TORCH_LOG_BUILDS"); log && *log == '1') {
    std::string what;
    for (const auto& [slot, type] : types) what += slot + "=" + std::string(c10::toString(type)) + " ";
    what += defines;
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::fprintf(stderr, "ocltune_torch: plain program %s built in %.1f ms (%s)\n", name.c_str(), ns * 1e-6,
                 what.c_str());
  }
  cache.programs.emplace(std::move(key), program);
  return program;
}

cl_program plain_elementwise_program(int device, const TypeSlots& types, const std::string& kernel) {
  // BINARY(NAME) defines NAME and NAME_scalar under KERNEL_NAME: a _scalar kernel names both guards
  // (the unary rsub_scalar and radd_scalar have guards of their own full names).
  const std::string suffix = "_scalar";
  std::string defines = "#define KERNEL_" + kernel + " 1\n";
  if (kernel.size() > suffix.size() && kernel.compare(kernel.size() - suffix.size(), suffix.size(), suffix) == 0) {
    defines += "#define KERNEL_" + kernel.substr(0, kernel.size() - suffix.size()) + " 1\n";
  }
  return plain_program(device, "plain_elementwise.cl", types, defines);
}

PlainLayout plain_layout_of(std::vector<std::int64_t> sizes, std::vector<std::vector<std::int64_t>> strides,
                            const std::vector<std::int64_t>& offsets, bool keep_order) {
  const std::size_t nd = sizes.size();
  std::vector<std::size_t> perm(nd);
  std::iota(perm.begin(), perm.end(), 0);
  if (!keep_order && !strides.empty()) {
    const std::vector<std::int64_t>& first = strides[0];
    std::stable_sort(perm.begin(), perm.end(),
                     [&](std::size_t a, std::size_t b) { return std::abs(first[a]) > std::abs(first[b]); });
  }
  // Merge adjacent dims where every operand allows it; drop dims of size 1.
  std::vector<std::int64_t> merged;
  std::vector<std::vector<std::int64_t>> merged_strides(strides.size());
  std::int64_t numel = 1;
  for (std::size_t k = 0; k < nd; ++k) {
    const std::size_t d = perm[k];
    numel *= sizes[d];
    if (sizes[d] == 1) continue;
    bool merge = !merged.empty();
    for (std::size_t t = 0; merge && t < strides.size(); ++t) {
      merge = merged_strides[t].back() == strides[t][d] * sizes[d];
    }
    if (merge) {
      merged.back() *= sizes[d];
      for (std::size_t t = 0; t < strides.size(); ++t) merged_strides[t].back() = strides[t][d];
    } else {
      merged.push_back(sizes[d]);
      for (std::size_t t = 0; t < strides.size(); ++t) merged_strides[t].push_back(strides[t][d]);
    }
  }
  TORCH_CHECK(merged.size() <= kPlainMaxDims, "ocltune_torch: a layout of ", merged.size(),
              " dims after merging; the plain kernels take up to ", kPlainMaxDims);
  PlainLayout layout;
  layout.shape.ndim = static_cast<cl_long>(merged.size());
  layout.shape.numel = numel;
  for (std::size_t d = 0; d < merged.size(); ++d) layout.shape.sizes[d] = merged[d];
  layout.operands.resize(strides.size());
  for (std::size_t t = 0; t < strides.size(); ++t) {
    layout.operands[t].offset = offsets[t];
    for (std::size_t d = 0; d < merged.size(); ++d) layout.operands[t].strides[d] = merged_strides[t][d];
  }
  return layout;
}

PlainLayout plain_layout(at::IntArrayRef sizes, const std::vector<const at::Tensor*>& tensors, bool keep_order) {
  std::vector<std::vector<std::int64_t>> strides;
  std::vector<std::int64_t> offsets;
  for (const at::Tensor* t : tensors) {
    TORCH_INTERNAL_ASSERT(t->sizes() == sizes, "ocltune_torch: plain_layout of tensors of other sizes");
    strides.emplace_back(t->strides().begin(), t->strides().end());
    offsets.push_back(element_offset(*t));
  }
  return plain_layout_of({sizes.begin(), sizes.end()}, std::move(strides), offsets, keep_order);
}

cl_mem kernel_buffer(const at::Tensor& t) {
  if (t.numel() == 0 || !t.has_storage() || t.storage().nbytes() == 0) {
    // A buffer the kernel never reads: one of the allocator's, kept for the process.
    static std::mutex mutex;
    static std::map<int, at::Tensor>* dummies = new std::map<int, at::Tensor>();
    std::lock_guard<std::mutex> lock(mutex);
    const int device = t.device().index();
    auto it = dummies->find(device);
    if (it == dummies->end()) it = dummies->emplace(device, at::empty({16}, t.options().dtype(at::kByte))).first;
    return resolve(it->second.const_data_ptr()).buffer;
  }
  return resolve(t.const_data_ptr()).buffer;
}

std::int64_t element_offset(const at::Tensor& t) {
  if (t.numel() == 0 || !t.has_storage() || t.storage().nbytes() == 0) return 0;
  const BufferRef b = resolve(t.const_data_ptr());
  const std::size_t item = t.element_size();
  TORCH_CHECK(b.offset % item == 0, "ocltune_torch: a tensor of ", t.scalar_type(), " at byte offset ", b.offset,
              " is not aligned to its element size");
  return static_cast<std::int64_t>(b.offset / item);
}

PlainLaunch::PlainLaunch(int device, cl_program program, const char* kernel) : device_(device), name_(kernel) {
  cl_int err = CL_SUCCESS;
  kernel_ = clCreateKernel(program, kernel, &err);
  TORCH_CHECK(err == CL_SUCCESS, "ocltune_torch: clCreateKernel(", kernel, ") failed: ", cl_error_name(err));
}

PlainLaunch::~PlainLaunch() {
  if (kernel_) clReleaseKernel(kernel_);
}

PlainLaunch& PlainLaunch::raw_arg(std::size_t size, const void* value) {
  const cl_int err = clSetKernelArg(kernel_, next_, size, value);
  TORCH_CHECK(err == CL_SUCCESS, "ocltune_torch: clSetKernelArg(", name_, ", ", next_,
              ") failed: ", cl_error_name(err));
  ++next_;
  return *this;
}

void PlainLaunch::run(std::int64_t items) {
  const std::int64_t wanted = std::clamp<std::int64_t>(items, 1, max_items(device_));
  const std::size_t global = (static_cast<std::size_t>(wanted) + kLocalSize - 1) / kLocalSize * kLocalSize;
  const std::size_t local = kLocalSize;
  // An event only while a profiler records (torch.profiler with ProfilerActivity.OCL).
  const bool observed = kernels_observed();
  cl_event event = nullptr;
  const cl_int err = clEnqueueNDRangeKernel(device_queue(device_), kernel_, 1, nullptr, &global, &local, 0, nullptr,
                                            observed ? &event : nullptr);
  if (event) {
    observe_plain_kernel(device_, name_, event);
    clReleaseEvent(event);
  }
  if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES) {
    TORCH_CHECK_WITH(OutOfMemoryError, false, "ocltune_torch: ", name_, ": ", cl_error_name(err));
  }
  TORCH_CHECK(err == CL_SUCCESS, "ocltune_torch: clEnqueueNDRangeKernel(", name_, ") failed: ", cl_error_name(err));
  launch_count.fetch_add(1, std::memory_order_relaxed);
}

std::int64_t plain_launches() { return launch_count.load(std::memory_order_relaxed); }
void reset_plain_launches() { launch_count.store(0, std::memory_order_relaxed); }

PlainBuilds plain_builds() { return {build_count.load(), build_ns.load() * 1e-9}; }

ScalarArg scalar_arg(const c10::Scalar& value, at::ScalarType type) {
  ScalarArg s;
  auto put = [&](auto v) {
    s.size = sizeof(v);
    std::memcpy(s.bytes, &v, sizeof(v));
  };
  switch (type) {
    case at::kFloat:
    case at::kHalf:
    case at::kBFloat16: put(value.to<float>()); break;
    case at::kDouble: put(value.to<double>()); break;
    case at::kLong: put(value.to<std::int64_t>()); break;
    case at::kInt: put(static_cast<std::int32_t>(value.to<std::int64_t>())); break;
    case at::kShort: put(static_cast<std::int16_t>(value.to<std::int64_t>())); break;
    case at::kChar: put(static_cast<std::int8_t>(value.to<std::int64_t>())); break;
    case at::kByte: put(static_cast<std::uint8_t>(value.to<std::int64_t>())); break;
    case at::kBool: put(static_cast<std::uint8_t>(value.to<bool>() ? 1 : 0)); break;
    default: TORCH_INTERNAL_ASSERT(false, "ocltune_torch: no plain scalar of ", type);
  }
  return s;
}

bool may_overlap(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined() || a.numel() == 0 || b.numel() == 0) return false;
  if (!a.has_storage() || !b.has_storage() || !a.storage().is_alias_of(b.storage())) return false;
  return at::get_overlap_status(a, b) != at::MemOverlapStatus::No;
}

at::Tensor new_flag(const at::Tensor& like) { return at::zeros({1}, like.options().dtype(at::kInt)); }

int read_flag(const at::Tensor& flag) { return flag.item<int>(); }

void run_plain_elementwise(const char* kernel, const at::Tensor& out, const std::vector<at::Tensor>& inputs,
                           const std::vector<const char*>& slots, at::ScalarType compute,
                           const std::vector<c10::Scalar>& scalars) {
  TORCH_INTERNAL_ASSERT(inputs.size() == slots.size());
  if (out.numel() == 0) return;
  const int device = out.device().index();
  TypeSlots types = {{"O", out.scalar_type()}, {"K", compute}, {"A", at::kBool}, {"B", at::kBool}, {"C", at::kBool}};
  std::vector<const at::Tensor*> tensors = {&out};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (auto& [slot, type] : types) {
      if (slot == slots[i]) type = inputs[i].scalar_type();
    }
    tensors.push_back(&inputs[i]);
  }
  const PlainLayout layout = plain_layout(out.sizes(), tensors);
  PlainLaunch launch(device, plain_elementwise_program(device, types, kernel), kernel);
  launch.arg(layout.shape).tensor(out).arg(layout.operands[0]);
  for (std::size_t i = 0; i < inputs.size(); ++i) launch.tensor(inputs[i]).arg(layout.operands[i + 1]);
  for (const c10::Scalar& s : scalars) launch << scalar_arg(s, compute);
  launch.run(layout.shape.numel);
}

}  // namespace ocltune_torch
