#pragma once
// What each fuzz target does with one input, shared with the regression test
// (tests/unit/test_fuzz_regressions.cpp) so every kept input replays exactly the
// path that once failed. npucc::Error is an accepted refusal; anything else (a
// crash, a sanitizer report, another exception type escaping, an "internal error"
// refusal, a round trip that does not hold) is a bug.

#include "cache/entry_format.h"
#include "config/toml_subset.h"
#include "config/value.h"
#include "npucc/compile.h"
#include "npucc/config.h"
#include "npucc/error.h"
#include "npucc/model.h"
#include "npucc/schedule.h"
#include "npucc/train_mode.h"
#include "pipeline/manifest_reader.h"
#include "precision/keep_dtype.h"
#include "precision/op_lists.h"
#include "util/file_io.h"
#include "util/sha256.h"
#include "util/strings.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace npucc::fuzz {

// A refusal that is npucc's own bug ("internal error: the optimised graph is
// invalid", ...) or a broken invariant: escapes as a non-Error exception, which
// libFuzzer reports as a crash and the regression test as a failure.
inline void bug(const std::string& what) {
  throw std::logic_error("fuzz: " + what);
}

inline void refuse_internal_errors(const Error& error) {
  if (std::string(error.what()).find("internal error") != std::string::npos) {
    bug(error.what());
  }
}

// A scratch folder per process. model/ holds the external data a fuzzed model may
// point at (fixed contents, so every input replays the same way): weights.bin,
// sub/more.bin, and outside.bin, a symlink that leads out of the model's folder.
// out/ receives each compile's output.
class Workspace {
public:
  static const Workspace& get() {
    static const Workspace workspace;
    return workspace;
  }
  ~Workspace() {
    std::error_code ec;
    std::filesystem::remove_all(m_root, ec);
  }
  std::filesystem::path model_path() const { return m_root / "model" / "model.onnx"; }
  std::filesystem::path output_dir() const { return m_root / "out"; }

private:
  Workspace()
      : m_root(std::filesystem::temp_directory_path() /
               ("npucc-fuzz-" + std::to_string(::getpid()))) {
    namespace fs = std::filesystem;
    fs::create_directories(m_root / "model" / "sub");
    std::string weights(4096, '\0');
    for (size_t i = 0; i < weights.size(); ++i) {
      weights[i] = static_cast<char>((i * 37 + 11) & 0xff);
    }
    util::write_file_atomic(m_root / "model" / "weights.bin", weights);
    util::write_file_atomic(m_root / "model" / "sub" / "more.bin", weights.substr(0, 256));
    util::write_file_atomic(m_root / "secret.bin", weights.substr(0, 512));
    fs::create_symlink(m_root / "secret.bin", m_root / "model" / "outside.bin");
  }
  std::filesystem::path m_root;
};

// The precision options a compile runs with: picked by the model's hash, so one
// corpus reaches every rewrite and each input always replays with the same options.
inline void choose_precision(const Model& model, CompileOptions& options) {
  const char digit = model.sha256.empty() ? '0' : model.sha256[0];
  const int choice = (digit >= 'a' ? digit - 'a' + 10 : digit - '0') % 6;
  switch (choice) {
  case 0:
    break; // the configured precision only: one float32 graph
  case 1:
    options.accelerate_train_mode = parse_accelerate_train_mode("fast|step|0.9");
    options.emit_emulation = true;
    break;
  case 2:
    options.accelerate_train_mode = parse_accelerate_train_mode("fast1|loss|1.05");
    options.low_precision_weights = true;
    break;
  case 3:
    options.precision.precision_mode = "allow_fp32_to_fp16";
    break;
  case 4:
    options.precision.precision_mode_v2 = "fp16";
    options.keep_io_types = false;
    break;
  default:
    options.precision.precision_mode_v2 = "mixed_bfloat16";
    options.modify_mixlist = R"({"black-list": {"to-add": ["MatMul"]},)"
                             R"( "white-list": {"to-remove": ["Conv"]}})";
    if (model.proto.graph().node_size() > 0 && !model.proto.graph().node(0).name().empty()) {
      options.keep_dtype_nodes = {model.proto.graph().node(0).name()};
    }
    break;
  }
}

// Everything a model file reaches: protobuf parsing, version, nesting and tensor
// checks, external-data resolution (inside the workspace's model folder), then the
// real compile: input shapes, the ONNX checker, shape inference, the pass pipeline,
// the memory plan, the precision rewrite (high/low/emulation graphs), writing the
// graphs and the manifest. Returns true when the model got all the way through.
inline bool feed_model_reader(const uint8_t* data, size_t size) {
  const Workspace& workspace = Workspace::get();
  std::string bytes(reinterpret_cast<const char*>(data), size);
  CompileOptions options;
  options.model_path = workspace.model_path();
  options.output_dir = workspace.output_dir();
  options.limits.max_tensor_bytes = uint64_t{64} << 20; // keep the fuzzer's memory bounded
  options.limits.max_memory_bytes = uint64_t{256} << 20;
  try {
    Model model = parse_model(bytes, options.model_path, options.limits);
    choose_precision(model, options);
    compile(std::move(model), options);
    return true;
  } catch (const Error& error) {
    refuse_internal_errors(error);
    return false;
  }
}

// A cache entry's header (entry.npucc): parsed; a header that parses must serialize
// back to text that parses to the same header.
inline void check_entry_header(const std::string& text) {
  cache::ParsedHeader parsed = cache::parse_header(text);
  if (parsed.problem != cache::HeaderProblem::none) {
    if (parsed.error.empty()) {
      bug("a refused header gives no reason");
    }
    return;
  }
  for (const auto& file : parsed.header.files) {
    if (!cache::is_plain_file_name(file.name) || file.sha256.size() != 64) {
      bug("a parsed header lists file \"" + file.name + "\"");
    }
  }
  (void)parsed.header.total_bytes();
  std::string again = cache::serialize_header(parsed.header);
  cache::ParsedHeader reparsed = cache::parse_header(again);
  if (reparsed.problem != cache::HeaderProblem::none ||
      cache::serialize_header(reparsed.header) != again) {
    bug("a parsed header does not survive serialize + parse: " + reparsed.error);
  }
}

// The input as it is, and with its "end" checksum line replaced by the right one: a
// mutated header almost never has a matching SHA-256, and without the fix-up the
// fuzzer would never get past the checksum to the fields.
inline void feed_cache_entry(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  check_entry_header(text);
  std::string body = text;
  size_t end = body.rfind("\nend ");
  if (end != std::string::npos) {
    body.resize(end + 1);
  } else if (!body.empty() && body.back() != '\n') {
    body += '\n';
  }
  check_entry_header(body + "end " + util::sha256_hex(body) + "\n");
}

// A cached manifest.json, read back as a cache hit does.
inline void feed_manifest(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    // As restate_request parses it: bad JSON is a discarded value, not an exception.
    pipeline::parse_cached_manifest(nlohmann::json::parse(text, nullptr, false),
                                    "fuzz-input/manifest.json", "");
  } catch (const Error&) {
  }
}

// Numbers as `npucc schedule` reads them from flags and STEP_NOW/LOSS_NOW.
inline int64_t schedule_integer(const std::string& text) {
  int64_t value = 0;
  if (!util::parse_int64(text, value)) {
    throw usage_error("not a whole number");
  }
  return value;
}

inline double schedule_real(const std::string& text) {
  double value = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) {
    throw usage_error("not a number");
  }
  return value;
}

// accelerate_train_mode: a value that parses must print canonically and parse back
// to the same mode; its switch threshold must be computable.
inline void feed_train_mode(const std::string& text) {
  AccelerateTrainMode mode = parse_accelerate_train_mode(text);
  AccelerateTrainMode again = parse_accelerate_train_mode(mode.to_string());
  if (again.to_string() != mode.to_string() || again.ratio != mode.ratio || again.low != mode.low ||
      again.trigger != mode.trigger) {
    bug("accelerate_train_mode \"" + text + "\" does not round-trip");
  }
  if (mode.trigger == SwitchTrigger::step) {
    for (int64_t total : {int64_t{1}, int64_t{10000}, INT64_MAX}) {
      int64_t step = step_to_switch(total, mode.ratio);
      if (step < 0 || step > total) {
        bug("step_to_switch out of range for \"" + text + "\"");
      }
    }
  } else {
    (void)loss_to_switch(1.0, mode.ratio);
  }
}

// "MODE\nA\nB[\nC]": a schedule report (step, total_step, iterations_per_loop, or
// loss, final_loss) fed to a PrecisionSchedule, as `npucc schedule` does.
inline void feed_schedule(const std::string& text) {
  auto lines = util::split(text, '\n');
  if (lines.size() < 3) {
    return;
  }
  PrecisionSchedule schedule(parse_accelerate_train_mode(lines[0]));
  if (schedule.mode().trigger == SwitchTrigger::step) {
    int64_t per_loop = lines.size() > 3 ? schedule_integer(lines[3]) : 1;
    schedule.report_step(schedule_integer(lines[1]), schedule_integer(lines[2]), per_loop);
  } else {
    schedule.report_loss(schedule_real(lines[1]), schedule_real(lines[2]));
  }
}

// precision_mode "\n" precision_mode_v2 ["\n" accelerate_train_mode].
inline void feed_precision_options(const std::string& text) {
  auto lines = util::split(text, '\n');
  PrecisionOptions options;
  options.precision_mode = lines.empty() ? "" : lines[0];
  options.precision_mode_v2 = lines.size() > 1 ? lines[1] : "";
  std::optional<AccelerateTrainMode> mode;
  if (lines.size() > 2) {
    mode = parse_accelerate_train_mode(lines[2]);
  }
  validate_precision_options(options, mode);
}

inline void feed_mixlist(const std::string& text) {
  auto edit = precision::parse_mixlist(text, "fuzz.json");
  for (LowPrecision low : {LowPrecision::float16, LowPrecision::bfloat16}) {
    precision::OpLists lists = precision::default_op_lists(low);
    precision::apply_mixlist(lists, edit);
  }
}

inline void feed_keep_dtype(const std::string& text) {
  auto names = precision::parse_keep_dtype(text);
  if (!std::is_sorted(names.begin(), names.end()) ||
      std::adjacent_find(names.begin(), names.end()) != names.end()) {
    bug("--keep-dtype names are not sorted and unique");
  }
  for (const auto& name : names) {
    if (name.empty() || name != util::trim(name)) {
      bug("--keep-dtype kept an empty or untrimmed name");
    }
  }
}

// A config file (TOML subset): each known key's value validated as load_config does.
inline void feed_config(const std::string& text) {
  const GetEnv no_env = [](const std::string&) { return std::optional<std::string>(); };
  for (const auto& entry : config::parse_toml_subset(text, "fuzz.toml")) {
    for (const auto& info : settings_table()) {
      if (info.key == entry.key) {
        config::check_value(info, entry.value, "fuzz.toml", "/fuzz", no_env);
      }
    }
  }
  (void)parse_size_setting(text, "fuzz");
}

// The option parsers that take free text; the first byte picks the parser, so one
// corpus covers them all (seeds: tests/fuzz/seeds/fuzz_options.sh).
inline void feed_options(const uint8_t* data, size_t size) {
  if (size == 0) {
    return;
  }
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 8) {
    case 0:
      parse_input_shapes(text);
      break;
    case 1:
      parse_memory_size(text);
      break;
    case 2:
      feed_train_mode(text);
      break;
    case 3:
      feed_precision_options(text);
      break;
    case 4:
      feed_mixlist(text);
      break;
    case 5:
      feed_keep_dtype(text);
      break;
    case 6:
      feed_schedule(text);
      break;
    default:
      feed_config(text);
      break;
    }
  } catch (const Error&) {
  }
}

} // namespace npucc::fuzz
