#include "accuracy/samples.h"

#include "accuracy/metrics.h"

#include "accuracy/sample_formats.h"
#include "npucc/error.h"
#include "util/file_io.h"
#include "util/sha256.h"
#include "util/strings.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <set>

namespace npucc::accuracy {

namespace fs = std::filesystem;

namespace {

// A loaded set: its tensors and the file each came from.
struct RawSet {
  std::string source;
  std::vector<runtime::Tensor> tensors;
  std::vector<std::string> files;
};

// The tensors of one file of a set, by its layout.
void parse_file(const SampleSetFiles& set, const fs::path& file, const std::string& bytes,
                const std::vector<ModelInput>& inputs, RawSet& raw) {
  const std::string name = file.string();
  if (set.layout == SetLayout::npz) {
    for (auto& tensor : parse_npz(bytes, name)) {
      raw.tensors.push_back(std::move(tensor));
      raw.files.push_back(name);
    }
    return;
  }
  runtime::Tensor tensor = set.layout == SetLayout::npy_folder
                               ? parse_npy(bytes, file.stem().string(), name)
                               : parse_tensor_proto(bytes, name);
  if (tensor.name.empty()) { // an unnamed TensorProto: the input at its position
    const int64_t index = tensor_proto_index(file);
    if (index < 0 || index >= static_cast<int64_t>(inputs.size())) {
      throw Error(name + ": an unnamed tensor at position " + std::to_string(index) +
                  ", and the model has " + std::to_string(inputs.size()) + " input(s)");
    }
    tensor.name = inputs[static_cast<size_t>(index)].name;
  }
  raw.tensors.push_back(std::move(tensor));
  raw.files.push_back(name);
}

// Reads a set's files once each; `digest` receives the SHA-256 of the bytes read.
RawSet read_set(const SampleSetFiles& set, const std::vector<ModelInput>& inputs,
                std::string& digest) {
  RawSet raw{set.source, {}, {}};
  util::Sha256 hash;
  for (const auto& file : set.files) {
    const std::string bytes = util::read_file(file);
    hash.update(std::to_string(bytes.size()) + "\n");
    hash.update(bytes);
    parse_file(set, file, bytes, inputs, raw);
  }
  digest = hash.hex_digest();
  return raw;
}

std::string expected_form(const ModelInput& input) {
  std::string dims;
  for (size_t i = 0; i < input.dims.size(); ++i) {
    dims += (i ? "," : "") + (input.dims[i] < 0 ? std::string("?") : std::to_string(input.dims[i]));
  }
  return runtime::type_name(input.type) + "[" + dims + "]";
}

bool fits(const runtime::Tensor& tensor, const ModelInput& input) {
  if (tensor.type != input.type || tensor.shape.size() != input.dims.size()) {
    return false;
  }
  for (size_t i = 0; i < input.dims.size(); ++i) {
    if (input.dims[i] >= 0 && input.dims[i] != tensor.shape[i]) {
      return false;
    }
  }
  return true;
}

std::string input_names(const std::vector<ModelInput>& inputs) {
  std::string names;
  for (const auto& input : inputs) {
    names += (names.empty() ? "" : ", ") + input.name;
  }
  return names;
}

// The set's tensors in the order of the model's inputs, each checked against its input;
// `files` receives the file each came from.
runtime::TensorSet fit_set(RawSet raw, const std::vector<ModelInput>& inputs,
                           std::vector<std::string>& files) {
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < raw.tensors.size(); ++i) {
    const auto& name = raw.tensors[i].name;
    auto input = std::find_if(inputs.begin(), inputs.end(), [&](auto& in) { return in.name == name; });
    if (input == inputs.end()) {
      throw Error(raw.files[i] + ": '" + name + "' is not an input of the model (its inputs: " +
                  input_names(inputs) + ")");
    }
    if (!by_name.emplace(name, i).second) {
      throw Error(raw.files[i] + ": gives input '" + name + "' a second time");
    }
    if (!fits(raw.tensors[i], *input)) {
      throw Error(raw.files[i] + ": input '" + name + "' is " +
                  runtime::describe(raw.tensors[i].type, raw.tensors[i].shape) +
                  ", the model expects " + expected_form(*input));
    }
  }
  runtime::TensorSet set;
  for (const auto& input : inputs) {
    auto found = by_name.find(input.name);
    if (found == by_name.end()) {
      throw Error(raw.source + ": gives no value for input '" + input.name + "' (" +
                  expected_form(input) + ")");
    }
    set.push_back(std::move(raw.tensors[found->second]));
    files.push_back(raw.files[found->second]);
  }
  return set;
}

// A set holding a NaN or an infinite value is refused in one line naming the file, the
// input and the counts: no figure compares outputs computed from it.
void refuse_nonfinite(const runtime::TensorSet& set, const std::vector<std::string>& files,
                      const std::vector<ModelInput>& inputs, const std::string& option) {
  for (size_t i = 0; i < set.size() && i < inputs.size() && i < files.size(); ++i) {
    if (!runtime::is_float_type(set[i].type)) {
      continue;
    }
    const auto [nan, infinite] = count_nonfinite(set[i]);
    if (nan + infinite > 0) {
      throw Error(option + " " + files[i] + ": input '" + inputs[i].name + "' holds " +
                      std::to_string(nan) + " NaN and " + std::to_string(infinite) +
                      " infinite value(s) of " +
                      std::to_string(runtime::element_count(set[i].shape)) +
                      ": no figure compares outputs computed from them",
                  "fix the sample, or give --allow-nonfinite-samples to check with it");
    }
  }
}

} // namespace

std::vector<ModelInput> model_inputs(const onnx::GraphProto& graph) {
  std::set<std::string> initializers;
  for (const auto& init : graph.initializer()) {
    initializers.insert(init.name());
  }
  std::vector<ModelInput> inputs;
  for (const auto& value : graph.input()) {
    if (initializers.count(value.name()) != 0) {
      continue;
    }
    ModelInput input;
    input.name = value.name();
    const auto& tensor = value.type().tensor_type();
    input.type = tensor.elem_type();
    for (const auto& dim : tensor.shape().dim()) {
      input.dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    }
    inputs.push_back(std::move(input));
  }
  return inputs;
}

Samples load_samples(const std::vector<fs::path>& paths, const std::vector<ModelInput>& inputs,
                     const std::string& option, SampleBudget budget, bool allow_nonfinite) {
  Samples samples;
  samples.origin = "samples";
  samples.option = option;
  samples.allow_nonfinite = allow_nonfinite;
  samples.inputs = inputs;
  samples.budget = budget;
  samples.files = walk_samples(paths, option);
  uint64_t bytes = 0;
  for (const auto& set : samples.files) {
    samples.sources.push_back(set.source);
    bytes += set.bytes;
  }
  if (bytes <= budget.held_bytes) {
    samples.sets = samples.load(0, samples.count());
  }
  return samples;
}

std::vector<runtime::TensorSet> Samples::load(size_t first, size_t last) const {
  if (held()) {
    return {sets.begin() + static_cast<std::ptrdiff_t>(first),
            sets.begin() + static_cast<std::ptrdiff_t>(last)};
  }
  read_digests.resize(files.size());
  std::vector<runtime::TensorSet> out;
  for (size_t i = first; i < last; ++i) {
    std::string digest;
    RawSet raw = read_set(files[i], inputs, digest);
    if (read_digests[i].empty()) {
      read_digests[i] = digest;
    } else if (read_digests[i] != digest) {
      throw Error(files[i].source + ": the sample set changed while npucc was running it",
                  "leave the samples alone during a compile, then compile again");
    }
    std::vector<std::string> input_files;
    out.push_back(fit_set(std::move(raw), inputs, input_files));
    if (!allow_nonfinite) {
      refuse_nonfinite(out.back(), input_files, inputs, option);
    }
  }
  return out;
}

std::vector<std::pair<size_t, size_t>> Samples::batches() const {
  std::vector<std::pair<size_t, size_t>> out;
  if (held()) {
    out.emplace_back(0, sets.size());
    return out;
  }
  uint64_t bytes = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    if (out.empty() || bytes + files[i].bytes > budget.batch_bytes) {
      out.emplace_back(i, i);
      bytes = 0;
    }
    bytes += files[i].bytes;
    out.back().second = i + 1;
  }
  return out;
}

namespace {

// Samples read as `samples` are, holding no set yet.
Samples no_sets_like(const Samples& samples) {
  Samples out;
  out.origin = samples.origin;
  out.inputs = samples.inputs;
  out.budget = samples.budget;
  out.option = samples.option;
  out.allow_nonfinite = samples.allow_nonfinite;
  return out;
}

} // namespace

Samples hold_out(Samples& samples) {
  Samples held = no_sets_like(samples);
  if (samples.count() < k_holdout_minimum) {
    return held;
  }
  const bool in_memory = samples.held();
  Samples kept = no_sets_like(samples);
  for (size_t i = 0; i < samples.count(); ++i) {
    Samples& to = i % k_holdout_every == k_holdout_every - 1 ? held : kept;
    to.sources.push_back(std::move(samples.sources[i]));
    if (i < samples.files.size()) {
      to.files.push_back(std::move(samples.files[i]));
    }
    if (in_memory) {
      to.sets.push_back(std::move(samples.sets[i]));
    }
  }
  samples = std::move(kept);
  return held;
}

Samples random_samples(const std::vector<ModelInput>& inputs) {
  std::mt19937_64 generator(0x6e70756363); // fixed: the same inputs on every run and machine
  runtime::TensorSet set;
  for (const auto& input : inputs) {
    for (int64_t dim : input.dims) {
      if (dim < 0) {
        throw Error("--check-accuracy: input '" + input.name + "' has a dynamic dim (" +
                        expected_form(input) + ") and there are no samples to size it",
                    "fix it with --input-shape, or give --sample-inputs");
      }
    }
    runtime::Tensor tensor{input.name, input.type, input.dims, {}};
    const size_t size = runtime::element_size(input.type);
    if (size == 0) {
      throw Error("--check-accuracy: input '" + input.name + "' is of " +
                  runtime::type_name(input.type) + ", for which npucc makes no random values",
                  "give --sample-inputs");
    }
    const auto count = static_cast<size_t>(runtime::element_count(input.dims));
    tensor.bytes.resize(count * size);
    for (size_t i = 0; i < count; ++i) {
      // Drawn in the same order whatever the type (std:: distributions differ between
      // standard libraries; these do not).
      const uint64_t bits = generator();
      if (input.type == onnx::TensorProto::FLOAT || input.type == onnx::TensorProto::DOUBLE) {
        const double value = static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0;
        if (size == 4) {
          const auto narrowed = static_cast<float>(value);
          std::memcpy(tensor.bytes.data() + i * 4, &narrowed, 4);
        } else {
          std::memcpy(tensor.bytes.data() + i * 8, &value, 8);
        }
      } else if (runtime::is_float_type(input.type)) {
        throw Error("--check-accuracy: input '" + input.name + "' is of " +
                        runtime::type_name(input.type) + ", for which npucc makes no random values",
                    "give --sample-inputs");
      } else {
        tensor.bytes[i * size] = static_cast<char>(bits >> 63); // 0 or 1, little-endian
      }
    }
    set.push_back(std::move(tensor));
  }
  Samples samples;
  samples.origin = "random";
  samples.inputs = inputs;
  samples.sets.push_back(std::move(set));
  samples.sources.push_back("random");
  return samples;
}

std::string samples_digest(const std::vector<fs::path>& paths, const std::string& option) {
  util::Sha256 hash;
  for (const auto& set : walk_samples(paths, option)) {
    hash.update(std::string("set ") + std::to_string(static_cast<int>(set.layout)) + "\n");
    for (size_t i = 0; i < set.files.size(); ++i) {
      const std::string contents = util::read_file(set.files[i]);
      hash.update(set.names[i] + "\n" + std::to_string(contents.size()) + "\n");
      hash.update(contents);
    }
  }
  return hash.hex_digest();
}

} // namespace npucc::accuracy
