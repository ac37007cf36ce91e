#include "accuracy/samples.h"

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

const char* const k_layouts =
    "give a folder of test_data_set_*/input_*.pb, a .npz, or a folder of .npy files named "
    "after the model's inputs";

// A loaded set: its tensors and the file each came from.
struct RawSet {
  std::string source;
  std::vector<runtime::Tensor> tensors;
  std::vector<std::string> files;
};

std::vector<fs::path> sorted_entries(const fs::path& folder) {
  std::vector<fs::path> entries;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    entries.push_back(it->path());
  }
  if (error) {
    throw Error(folder.string() + ": cannot list the folder: " + error.message());
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

bool has_suffix(const fs::path& path, const char* suffix) {
  return path.extension() == suffix && fs::is_regular_file(path);
}

// input_N.pb -> N, or -1.
int64_t input_index(const fs::path& file) {
  const std::string name = file.filename().string();
  if (name.rfind("input_", 0) != 0 || file.extension() != ".pb") {
    return -1;
  }
  const std::string digits = name.substr(6, name.size() - 9);
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return -1;
  }
  return std::stoll(digits);
}

RawSet read_test_data_set(const fs::path& folder, const std::vector<ModelInput>& inputs) {
  RawSet set{folder.string(), {}, {}};
  std::map<int64_t, fs::path> files;
  for (const auto& entry : sorted_entries(folder)) {
    if (int64_t index = input_index(entry); index >= 0) {
      files[index] = entry;
    }
  }
  for (const auto& [index, file] : files) {
    runtime::Tensor tensor = read_tensor_proto(file);
    if (tensor.name.empty()) {
      if (index >= static_cast<int64_t>(inputs.size())) {
        throw Error(file.string() + ": an unnamed tensor at position " + std::to_string(index) +
                    ", and the model has " + std::to_string(inputs.size()) + " input(s)");
      }
      tensor.name = inputs[static_cast<size_t>(index)].name;
    }
    set.tensors.push_back(std::move(tensor));
    set.files.push_back(file.string());
  }
  return set;
}

RawSet read_npz_set(const fs::path& file) {
  RawSet set{file.string(), read_npz(file), {}};
  set.files.assign(set.tensors.size(), file.string());
  return set;
}

RawSet read_npy_folder(const fs::path& folder) {
  RawSet set{folder.string(), {}, {}};
  for (const auto& entry : sorted_entries(folder)) {
    if (has_suffix(entry, ".npy")) {
      set.tensors.push_back(
          parse_npy(util::read_file(entry), entry.stem().string(), entry.string()));
      set.files.push_back(entry.string());
    }
  }
  return set;
}

void read_path(const fs::path& path, const std::vector<ModelInput>& inputs,
               std::vector<RawSet>& sets) {
  if (has_suffix(path, ".npz")) {
    sets.push_back(read_npz_set(path));
    return;
  }
  if (!fs::is_directory(path)) {
    throw Error("--sample-inputs " + path.string() + ": " +
                    (fs::exists(path) ? "not a folder or a .npz file" : "no such file or folder"),
                k_layouts);
  }
  const auto entries = sorted_entries(path);
  const size_t before = sets.size();
  for (const auto& entry : entries) {
    if (fs::is_directory(entry) && entry.filename().string().rfind("test_data_set_", 0) == 0) {
      sets.push_back(read_test_data_set(entry, inputs));
    }
  }
  if (sets.size() == before &&
      std::any_of(entries.begin(), entries.end(), [](auto& e) { return input_index(e) >= 0; })) {
    sets.push_back(read_test_data_set(path, inputs));
  }
  if (sets.size() == before) {
    for (const auto& entry : entries) {
      if (has_suffix(entry, ".npz")) {
        sets.push_back(read_npz_set(entry));
      }
    }
  }
  if (sets.size() == before &&
      std::any_of(entries.begin(), entries.end(), [](auto& e) { return has_suffix(e, ".npy"); })) {
    sets.push_back(read_npy_folder(path));
  }
  if (sets.size() == before) {
    throw Error("--sample-inputs " + path.string() + ": no samples in the folder", k_layouts);
  }
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

// The set's tensors in the order of the model's inputs, each checked against its input.
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

Samples load_samples(const std::vector<fs::path>& paths, const std::vector<ModelInput>& inputs) {
  std::vector<RawSet> raw;
  for (const auto& path : paths) {
    read_path(path, inputs, raw);
  }
  Samples samples;
  samples.origin = "samples";
  for (auto& set : raw) {
    samples.sources.push_back(set.source);
    samples.files.emplace_back();
    samples.sets.push_back(fit_set(std::move(set), inputs, samples.files.back()));
  }
  return samples;
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
  samples.sets.push_back(std::move(set));
  samples.sources.push_back("random");
  return samples;
}

std::string samples_digest(const std::vector<fs::path>& paths) {
  util::Sha256 hash;
  for (const auto& path : paths) {
    if (!fs::exists(path)) {
      throw Error("--sample-inputs " + path.string() + ": no such file or folder", k_layouts);
    }
    std::vector<fs::path> files;
    if (fs::is_directory(path)) {
      for (const auto& entry : fs::recursive_directory_iterator(path)) {
        if (entry.is_regular_file()) {
          files.push_back(entry.path());
        }
      }
    } else {
      files.push_back(path);
    }
    std::sort(files.begin(), files.end());
    hash.update("path\n");
    for (const auto& file : files) {
      const std::string relative =
          file == path ? file.filename().string() : fs::relative(file, path).string();
      const std::string contents = util::read_file(file);
      hash.update(relative + "\n" + std::to_string(contents.size()) + "\n");
      hash.update(contents);
    }
  }
  return hash.hex_digest();
}

} // namespace npucc::accuracy
