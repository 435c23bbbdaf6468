// Tuned rows from a database as untrusted input: validation against the ops' parameter spaces, and
// the shape description the runtime's nearest-shape lookup measures distances on.
#include "runtime/tuned_rows.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "db/transfer.h"
#include "harness/error.h"
#include "ops/family.h"

namespace ocltune {

CheckedRow check_row(const BestRow& row, const DeviceInfo& device, std::optional<double> copy_bandwidth_gbs) {
  const OpFamily* family = find_family(row.op);
  if (!family) throw Error(fmt::format("unknown op '{}'", printable(row.op, 40)));
  const nlohmann::json shape = nlohmann::json::parse(row.shape_json, nullptr, false);
  if (shape.is_discarded()) throw Error("shape_json is not valid JSON");
  if (!shape.is_object()) throw Error("shape_json is not a JSON object");
  if (shape.contains("op") && shape["op"] != row.op) throw Error("shape_json names another op");
  CheckedRow checked;
  try {
    checked.problem = family->from_json(shape);
  } catch (const Error& e) {
    throw Error(fmt::format("shape_json: {}", printable(e.what(), 300)));
  }
  const Problem& p = *checked.problem;
  if (p.shape_key() != row.shape_key) {
    throw Error(fmt::format("shape_key does not match its shape_json (which gives '{}')", printable(p.shape_key())));
  }
  if (dtype_name(p.dtype()) != row.dtype)
    throw Error(fmt::format("dtype '{}' is not the shape's ({})", printable(row.dtype, 16), dtype_name(p.dtype())));
  if (math_name(p.math()) != row.math)
    throw Error(fmt::format("math '{}' is not the shape's ({})", printable(row.math, 16), math_name(p.math())));
  const nlohmann::json params = nlohmann::json::parse(row.params_json, nullptr, false);
  if (params.is_discarded()) throw Error("params_json is not valid JSON");
  try {
    checked.config = config_from_json(params);
  } catch (const Error& e) {
    throw Error(fmt::format("params_json: {}", printable(e.what(), 300)));
  }
  // A row from before a parameter was added is read as what it ran: the parameter's first value.
  const SearchSpace space = p.space(device);
  if (std::optional<Config> completed = space.complete(checked.config)) {
    checked.config = std::move(*completed);
  } else {
    throw Error(fmt::format("configuration {} is outside the {} space: {}", printable(to_string(checked.config), 200),
                            printable(row.op, 40), printable(space.check(checked.config), 300)));
  }
  if (const std::string why = time_problem(row.median_ns, p.bytes(), copy_bandwidth_gbs); !why.empty())
    throw Error(why);
  return checked;
}

std::string row_problem(const BestRow& row, const DeviceInfo& device, std::optional<double> copy_bandwidth_gbs) {
  try {
    check_row(row, device, copy_bandwidth_gbs);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

DeviceInfo device_from_row(const DeviceRow& row) {
  DeviceInfo d;
  d.platform_name = row.platform_name;
  d.platform_version = row.platform_version;
  d.name = row.device_name;
  d.vendor = row.vendor;
  d.driver_version = row.driver_version;
  d.type = parse_device_type(row.device_type);
  const auto clamp = [](std::int64_t v) { return static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)); };
  d.compute_units = static_cast<std::uint32_t>(std::min<std::uint64_t>(clamp(row.compute_units), UINT32_MAX));
  d.clock_mhz = static_cast<std::uint32_t>(std::min<std::uint64_t>(clamp(row.clock_mhz), UINT32_MAX));
  d.global_mem_bytes = clamp(row.global_mem_bytes);
  d.local_mem_bytes = clamp(row.local_mem_bytes);
  d.max_work_group_size = static_cast<std::size_t>(clamp(row.max_work_group_size));
  d.max_work_item_sizes = {d.max_work_group_size, d.max_work_group_size, d.max_work_group_size};
  d.capabilities_known = false;
  return d;
}

namespace {

bool is_size_list(const std::string& name, const nlohmann::json& value) {
  if ((name != "dims" && name != "x") || !value.is_array() || value.empty()) return false;
  return std::all_of(value.begin(), value.end(), [](const nlohmann::json& v) { return v.is_number_integer(); });
}

}  // namespace

ShapeInfo shape_info(const nlohmann::json& shape) {
  ShapeInfo info;
  if (!shape.is_object()) return info;
  // nlohmann's object iterates in key order, so dimensions line up between shapes of equal match.
  for (const auto& [name, value] : shape.items()) {
    if (value.is_number_integer()) {
      const double v = value.is_number_unsigned() ? static_cast<double>(value.get<std::uint64_t>())
                                                  : static_cast<double>(value.get<std::int64_t>());
      info.log2_dims.push_back(std::log2(std::max(v, 1.0)));
      info.match += name + ";";
    } else if (is_size_list(name, value)) {
      // A tensor's sizes (reduce, softmax, norm: "dims"; elementwise: "x"): one dimension each, the
      // rank must match. Other integer lists ("axes") name positions and must be equal.
      info.match += fmt::format("{}[{}];", name, value.size());
      for (const auto& v : value) info.log2_dims.push_back(std::log2(std::max(v.get<double>(), 1.0)));
    } else if (!value.is_number()) {
      info.match += name + "=" + value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ";";
    }
    // Non-integer numbers (GEMM's alpha, beta) are per-call scalars: they neither match nor measure.
  }
  return info;
}

double shape_distance(const ShapeInfo& a, const ShapeInfo& b) {
  if (a.match != b.match || a.log2_dims.size() != b.log2_dims.size()) return std::numeric_limits<double>::infinity();
  double sum = 0;
  for (std::size_t i = 0; i < a.log2_dims.size(); ++i) {
    const double d = a.log2_dims[i] - b.log2_dims[i];
    sum += d * d;
  }
  return std::sqrt(sum);
}

}  // namespace ocltune
