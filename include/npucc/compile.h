#pragma once

#include "npucc/memory_plan.h"
#include "npucc/model.h"
#include "npucc/train_mode.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npucc {

// `--input-shape "x:1,3,224,224;y:1,10"`, as in Ascend's ATC. A dim of -1 stays dynamic.
struct InputShape {
  std::string name;
  std::vector<int64_t> dims;
};
std::vector<InputShape> parse_input_shapes(const std::string& text);

enum class ExternalData {
  automatic, // only when the graph would not fit one protobuf (2 GiB)
  always,
};

// Where the weights of a compile that writes several graphs (high, low, emulation) go.
enum class WeightLayout {
  shared,         // one OUTDIR/weights.data, each distinct weight once, every graph refers to it
  self_contained, // each graph holds its own (as a single file up to 2 GiB)
};

// What a compile may replace in its output folder: the files an earlier npucc compile
// wrote there (its manifest.json lists them), or, with --force, any file of a name npucc
// writes (src/output/output_folder.h).
enum class OutputReplace { npucc_files, any };

// One output of one sample set as an accuracy function sees it: its ONNX element type's name
// ("float32", "float16", "int64", ...; runtime/tensor.h type_name) and its little-endian bytes,
// densely packed. Valid only during the call.
struct OutputTensor {
  std::string name;
  std::string type;
  std::vector<int64_t> shape;
  std::string_view bytes;
};

// A target the caller computes (the Python package's npucc.Target; npucc-compile(1),
// ACCURACY): --accuracy-target names it by its label, "check[LABEL]>=1" (a check: true or
// false per sample set) or "score[LABEL]>=X" / "score[LABEL]<=X" (a score per set, bounded on
// every set). The repair calls it once per sample set and per graph it measures, one call at a
// time, from the compiling thread, with the high graph's outputs and the low side's (the
// emulation graph's), in the graph's output order.
struct AccuracyFunction {
  std::string label;  // what the target's clause names: the caller's key, else its name
  std::string name;   // how messages name it ("my_module.word_error_rate")
  // The caller's name and version of what it computes, in the cache key through the target's
  // text; false: a compile with it is never cached (a function cannot be hashed).
  bool keyed = false;
  bool check = true;  // true: returns 1 (the set meets it) or 0; false: a score
  // The value on one sample set (NaN: undefined, never meets). Throws to fail the compile:
  // the message is the compile's error line, after the function's name.
  std::function<double(const std::vector<OutputTensor>& high,
                       const std::vector<OutputTensor>& low)>
      compute;
};

struct CompileOptions {
  std::filesystem::path model_path;
  std::filesystem::path output_dir;
  std::vector<InputShape> input_shapes;
  ExternalData external_data = ExternalData::automatic;
  WeightLayout weight_layout = WeightLayout::shared; // --self-contained: self_contained
  OutputReplace replace_output = OutputReplace::npucc_files; // not in the cache key
  // --target-opset: raise the model's ai.onnx opset to this before the passes (0: keep it;
  // then fast1 raises its low graph only, to opset 22: npucc-precision(7)).
  int64_t target_opset = 0;

  // --- precision (SPEC §1-2): accelerate_train_mode, precision modes, mixed precision ---
  // With a mode: high.onnx + low.onnx (+ emulation.onnx) in one compile.
  std::optional<AccelerateTrainMode> accelerate_train_mode;
  PrecisionOptions precision;
  std::string modify_mixlist;                // the JSON CONTENTS of --modify-mixlist (cache key)
  std::string modify_mixlist_source;         // its path, for messages only (not in the cache key)
  std::vector<std::string> keep_dtype_nodes; // --keep-dtype: node names, sorted, unique
  bool keep_io_types = true;                 // --no-keep-io-types clears it
  bool low_precision_weights = false;        // store trainable weights in the low type
  bool emit_emulation = false;               // also emulation.onnx (float32, Cast round trips)

  // --- accuracy (npucc-compile(1), ACCURACY): the low graph's drift, measured ---
  // --check-accuracy: run the high graph and the low graph's emulation in ONNX Runtime.
  bool check_accuracy = false;
  // --accuracy-target: "cosine>=0.9995,nonfinite<=0" (accuracy/target.h), canonical form;
  // empty for none. Implies the check; a low graph that misses it is repaired.
  std::string accuracy_target;
  // Not an option: the nodes the accuracy repair keeps float32 in the low graph (reason
  // "accuracy"), set by the compile itself. Not in the cache key (the target, samples and
  // runtime are).
  std::vector<std::string> accuracy_kept_nodes;
  // Not an option: the nodes the activation-range rule keeps float32 in the low graph (reason
  // "activation_range"), node name -> the numbers ("max 1.04e+05 > 65504"), set by the
  // compile itself from the high graph's values on --sample-inputs. Not in the cache key (the
  // samples and runtime are).
  std::map<std::string, std::string> activation_range_nodes;
  // Not an option: deny-list nodes the accuracy descent lowered in the low graph (it measured
  // the target still met with them low: accuracy/descent.h), set by the compile itself. Not
  // in the cache key (the target, samples and runtime are).
  std::vector<std::string> accuracy_lowered_nodes;
  // --sample-inputs: what they run on (test_data_set_* folders, .npz, folders of .npy);
  // none: random inputs from a fixed seed. In the cache key by content (their digest).
  std::vector<std::filesystem::path> sample_inputs;
  // --allow-nonfinite-samples: check with samples holding NaN or infinite values (refused
  // otherwise). In the cache key when set (it changes the report).
  bool allow_nonfinite_samples = false;
  // --validation-inputs: sets the accuracy repair's search never measures; the emitted low
  // graph must meet the target on them too. In the cache key by content, when given.
  std::vector<std::filesystem::path> validation_inputs;
  // The functions --accuracy-target's check[LABEL] and score[LABEL] clauses name (a program's
  // own, not an option: the Python package's npucc.Target). Each clause needs its function
  // and each function its clause. In the cache key through the target's text (the labels);
  // a compile with a function that is not keyed is not cached.
  std::vector<AccuracyFunction> accuracy_functions;
  // --accuracy-report nodes: also the per-value drift report (drift.json beside the
  // manifest; npucc-compile(1), DRIFT REPORT); empty for none. In the cache key when set.
  std::string accuracy_report;
  // --drift-threshold: the cosine below which the drift report calls a value out.
  double drift_threshold = 0.9999; // accuracy::k_default_drift_threshold

  // Empty: the default pipeline.
  std::vector<std::string> passes;
  ReadLimits limits;
};

struct PassSummary {
  std::string name;
  std::string unit;
  int64_t changed = 0;
};

struct WrittenFile {
  std::string file; // name inside the output folder
  std::string sha256;
  uint64_t bytes = 0;
};

struct CompiledGraph {
  std::string role;      // "high" (original precision), "low" (mixed precision)
  std::string precision; // "float32", "mixed_float16", ...
  std::string emulates;  // role "emulation": the precision of the graph it emulates
  // The graph's IR version and opsets as written (fast1's low graph and --target-opset
  // move them: npucc-precision(7)).
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets; // domain ("ai.onnx" for the default) -> version
  WrittenFile graph;
  std::vector<WrittenFile> external_data;
};

struct CompileResult {
  std::filesystem::path manifest_path;
  std::vector<CompiledGraph> graphs;
  std::vector<PassSummary> passes;
  MemoryPlan memory_plan;
  std::string model_sha256;
  // The model as read, before --target-opset.
  int64_t model_ir_version = 0;
  std::map<std::string, int64_t> model_opsets;
  // The manifest's "precision_report" / "high_precision_report" objects as JSON text
  // (empty when there is none); precision/report.h formats the short form.
  std::string precision_report;
  std::string high_precision_report;
  // The manifest's "accuracy" object as JSON text (--check-accuracy), else empty;
  // accuracy/check.h formats it.
  std::string accuracy_report;
  // --accuracy-report nodes: the drift report's document (drift.json) as JSON text, else
  // empty; accuracy/drift_report.h formats it.
  std::string drift_report;
};

// Every option that changes what a compile emits, in a canonical, stable text form
// (JSON with sorted keys). Part of the cache key and of the manifest: any new option
// that changes the output must be added here (file options by content, not path).
// accelerate_train_mode appears as its TYPE alone ("accelerate_train_mode_type"): the
// trigger and ratio decide when training switches graphs, not what the graphs hold. The
// cache key also leaves out options that are no-ops on the model (an --input-shape equal
// to the declared shape): see npucc-cache(1), KEY.
std::string canonical_options(const CompileOptions& options);

// Receives progress and --verbose lines; the library itself never prints.
using LogSink = std::function<void(const std::string&)>;

// A long write's progress: bytes of the compiled files written so far, of about `total`
// (an estimate until the last call, where the two are equal). Called by the thread that
// waits for the writers, about ten times a second, and once when they are done.
using WriteProgress = std::function<void(uint64_t written, uint64_t total)>;

// Reads, validates (ONNX checker, strict typed shape inference), optimises and writes
// the compiled graph(s) and manifest.json into options.output_dir. On error nothing is
// left in the output folder. Throws npucc::Error.
CompileResult compile(const CompileOptions& options, const LogSink& log = {},
                      const WriteProgress& write_progress = {});

// The same, for a model already read (by read_model(options.model_path)): the compile
// cache reads and hashes the model for its key, and a miss then compiles it without
// reading it again.
CompileResult compile(Model model, const CompileOptions& options, const LogSink& log = {},
                      const WriteProgress& write_progress = {});

} // namespace npucc
