// The cache key cannot be incomplete (issue 46): every row of the option table declares how
// it enters the key (config/option_table.h, KeyDeclaration), and this holds the key to the
// declaration. A keyed row varied changes the key; a row keyed by a file's digest changes it
// with the file's content and not with its path; a row not keyed leaves the key as it was,
// for one of the allowed reasons. The same for what no row names: the runtime's identity,
// and the schedule inside --accelerate-train-mode.
#include "config/option_table.h"
#include "key/cache_key.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>
#include <map>
#include <utility>

namespace {

namespace fs = std::filesystem;
using npucc::CompileOptions;
using npucc::config::KeyRole;
using npucc::config::NotKeyedReason;
using npucc::config::OptionRow;

// The model every request is keyed against: opset 17, one input x of shape [N, 3].
npucc::key::ModelIdentity model_identity() {
  npucc::key::ModelIdentity model;
  model.file_name = "m.onnx";
  model.bytes = 100;
  model.sha256 = std::string(64, 'a');
  npucc::key::KeyFacts facts;
  facts.opset = 17;
  facts.input_shapes["x"] = {std::nullopt, 3};
  model.facts = facts;
  return model;
}

std::string key_with(const CompileOptions& request, const std::string& runtime = "runtime A") {
  npucc::key::KeyDigests digests;
  digests.runtime = runtime;
  return npucc::key::key_of(request, model_identity(), digests).key;
}

// The fields of CompileOptions, counted as an aggregate initialiser counts them: the most
// arguments `CompileOptions{...}` accepts. A field is one more argument.
struct AnyField {
  template <class T> operator T() const; // never defined: only asked whether it converts
};
template <class T, class... Fields>
constexpr auto initialises(int) -> decltype(T{std::declval<Fields>()...}, true) {
  return true;
}
template <class T, class... Fields> constexpr bool initialises(...) { return false; }
template <class T, class... Fields> constexpr std::size_t field_count() {
  if constexpr (sizeof...(Fields) < 64 && initialises<T, Fields..., AnyField>(0)) {
    return field_count<T, Fields..., AnyField>();
  } else {
    return sizeof...(Fields);
  }
}

// Every field of the request and how the key covers it. Set by an option-table row: the
// first test case holds the row to its declaration. Set by no row (the program's own, or the
// compile's): the last test case varies it. A new field fails the static_assert below until
// it is listed here, so no field reaches the compile unseen by the key.
constexpr const char* k_fields_set_by_rows[] = {
    "input_shapes", "external_data", "weight_layout", "replace_output", "target_opset",
    "accelerate_train_mode", "precision", "modify_mixlist", "keep_dtype_nodes",
    "keep_io_types", "low_precision_weights", "emit_emulation", "check_accuracy",
    "accuracy_target", "sample_inputs", "allow_nonfinite_samples", "validation_inputs",
    "accuracy_report", "drift_threshold", "passes"};
constexpr const char* k_fields_set_by_no_row[] = {
    "model_path",             // the model is keyed by its identity (content), not its path
    "output_dir",             // where the outputs go: the same entry serves every folder
    "modify_mixlist_source",  // the mixlist's path, for messages: its contents are keyed
    "accuracy_kept_nodes",    // the compile's own result, from what is keyed
    "activation_range_nodes", // the compile's own result, from what is keyed
    "accuracy_lowered_nodes", // the compile's own result (the descent), from what is keyed
    "accuracy_functions",     // keyed by the target clauses' labels; unlabelled: not cached
    "limits"};                // max_tensor_bytes keyed; max_memory_bytes a limit (--max-memory)
static_assert(field_count<CompileOptions>() ==
                  std::size(k_fields_set_by_rows) + std::size(k_fields_set_by_no_row),
              "CompileOptions has a field this file does not list: add it to "
              "k_fields_set_by_rows or k_fields_set_by_no_row with how the key covers it");

// Two values of a row (texts, or for a file row the two contents of its file), and whether
// the row counts only when accuracy is checked (the request then checks it).
// An empty value stands for the row not given (a row with one value, such as
// --accuracy-report nodes); `given` names another row the request holds first, for a row
// that counts only beside it (--drift-threshold beside --accuracy-report nodes).
struct Variation {
  std::string a;
  std::string b;
  bool with_check = false;
  std::pair<std::string, std::string> given = {};
};

// Two values for each keyed row: a new keyed row needs its pair here, or the test fails
// naming it. Each pair differs where the key must see it (not a no-op on the model above).
const std::map<std::string, Variation>& variations() {
  static const std::map<std::string, Variation> table = {
      {"input-shape", {"x:1,3", "x:2,3"}},
      {"external-data", {"false", "true"}},
      {"self-contained", {"false", "true"}},
      {"passes", {"eliminate_dead_code", "topological_sort"}},
      {"target-opset", {"18", "19"}},
      {"accelerate-train-mode", {"fast|step|0.9", "fast1|step|0.9"}},
      {"precision-mode", {"force_fp16", "allow_mix_precision"}},
      {"precision-mode-v2", {"fp16", "mixed_float16"}},
      {"modify-mixlist", {R"({"black-list": {"to-add": ["Relu"]}})",
                          R"({"black-list": {"to-add": ["Add"]}})"}},
      {"keep-dtype", {"node_a\n", "node_b\n"}},
      {"keep-io-types", {"true", "false"}},
      {"low-precision-weights", {"false", "true"}},
      {"emit-emulation", {"false", "true"}},
      {"check-accuracy", {"false", "true"}},
      {"sample-inputs", {"samples A", "samples B", true}},
      {"allow-nonfinite-samples", {"false", "true", true}},
      {"validation-inputs", {"validation A", "validation B", true}},
      {"accuracy-target", {"cosine>=0.99", "cosine>=0.999"}},
      {"accuracy-report", {"", "nodes", true}},
      {"drift-threshold", {"0.9999", "0.99", true, {"accuracy-report", "nodes"}}},
  };
  return table;
}

// A value for each row not keyed that writes into the request.
const std::map<std::string, std::string>& unkeyed_values() {
  static const std::map<std::string, std::string> table = {
      {"force", "true"},
      {"max-memory", "1G"},
  };
  return table;
}

CompileOptions applied(const OptionRow& row, const std::string& text, bool with_check) {
  CompileOptions request;
  request.check_accuracy = with_check;
  row.apply(row, text, request);
  return request;
}

// The row applied to a file holding `content` at `path` (a .npz for the sample rows: they
// take one by its bytes, and its name, which names the set).
CompileOptions applied_file(const OptionRow& row, const fs::path& path, const std::string& content,
                            bool with_check) {
  npucc::util::write_file_atomic(path, content);
  return applied(row, path.string(), with_check);
}

// The request with the variation's other row (if any), then `text` for `row` (if given).
CompileOptions applied_in(const OptionRow& row, const std::string& text, const Variation& values) {
  CompileOptions request;
  request.check_accuracy = values.with_check;
  if (!values.given.first.empty()) {
    const OptionRow& other = *npucc::config::find_option(values.given.first);
    other.apply(other, values.given.second, request);
  }
  if (!text.empty()) {
    row.apply(row, text, request);
  }
  return request;
}

void check_keyed_by_value(const OptionRow& row, const Variation& values) {
  CHECK_MESSAGE(key_with(applied_in(row, values.a, values)) !=
                    key_with(applied_in(row, values.b, values)),
                "--" << row.name << " is declared keyed by value, but " << values.a << " and "
                     << values.b << " give one key");
}

void check_keyed_by_file(const OptionRow& row, const Variation& contents) {
  const fs::path folder = npucc::test::temp_dir("key-completeness-" + row.name);
  fs::create_directories(folder / "here");
  fs::create_directories(folder / "there");
  const fs::path here = folder / "here" / "set.npz";
  const fs::path there = folder / "there" / "set.npz";
  const std::string a = key_with(applied_file(row, here, contents.a, contents.with_check));
  const std::string b = key_with(applied_file(row, here, contents.b, contents.with_check));
  const std::string moved = key_with(applied_file(row, there, contents.a, contents.with_check));
  CHECK_MESSAGE(a != b, "--" << row.name << " is declared keyed by its file's digest, but two "
                                              "contents give one key");
  CHECK_MESSAGE(a == moved, "--" << row.name << " is declared keyed by its file's digest, but "
                                                "the same content elsewhere gives another key");
}

void check_not_keyed(const OptionRow& row) {
  CHECK_MESSAGE(row.key.reason != NotKeyedReason::none, "--" << row.name << ": no reason");
  CHECK_MESSAGE(!row.key.why.empty(), "--" << row.name << ": the reason says nothing");
  if (row.apply == nullptr) {
    return; // writes nothing into the request: read elsewhere (the cache's settings)
  }
  auto value = unkeyed_values().find(row.name);
  REQUIRE_MESSAGE(value != unkeyed_values().end(),
                  "--" << row.name << " writes into the request: give it a value in "
                                      "unkeyed_values()");
  CHECK_MESSAGE(key_with(applied(row, value->second, false)) == key_with(CompileOptions{}),
                "--" << row.name << " is declared not keyed ("
                     << npucc::config::not_keyed_reason_name(row.key.reason)
                     << "), but it changes the key");
}

} // namespace

TEST_SUITE("npucc::key completeness") {
  TEST_CASE("every row of the option table enters the key as it declares") {
    int keyed = 0;
    for (const OptionRow& row : npucc::config::option_table()) {
      CAPTURE(row.name);
      if (row.key.role == KeyRole::not_keyed) {
        check_not_keyed(row);
        continue;
      }
      ++keyed;
      CHECK_MESSAGE(row.key.reason == NotKeyedReason::none, "--" << row.name);
      REQUIRE_MESSAGE(bool(row.apply), "--" << row.name << " is keyed but sets nothing");
      auto values = variations().find(row.name);
      REQUIRE_MESSAGE(values != variations().end(),
                      "--" << row.name << " is keyed: give it two values in variations()");
      if (row.key.role == KeyRole::value) {
        check_keyed_by_value(row, values->second);
      } else {
        check_keyed_by_file(row, values->second);
      }
    }
    CHECK(keyed == static_cast<int>(variations().size())); // no stale pair
  }

  TEST_CASE("the schedule is not keyed, the runtime's identity is, with the check") {
    const OptionRow& mode = *npucc::config::find_option("accelerate-train-mode");
    CHECK(key_with(applied(mode, "fast|step|0.9", false)) ==
          key_with(applied(mode, "fast|step|0.8", false)));
    CHECK(key_with(applied(mode, "fast|step|0.9", false)) ==
          key_with(applied(mode, "fast|loss", false)));
    CompileOptions checked;
    checked.check_accuracy = true;
    CHECK(key_with(checked, "runtime A") != key_with(checked, "runtime B"));
    // Without the check no graph runs: the runtime is not part of the key.
    CHECK(key_with(CompileOptions{}, "runtime A") == key_with(CompileOptions{}, "runtime B"));
  }

  TEST_CASE("the fields no row sets reach the key as the ledger says") {
    const std::string plain = key_with(CompileOptions{});
    CompileOptions request;
    request.model_path = "elsewhere/m.onnx";
    request.output_dir = "elsewhere/out";
    request.modify_mixlist_source = "elsewhere/mixlist.json";
    request.accuracy_kept_nodes = {"node_a"};
    request.activation_range_nodes = {{"node_b", "max 1e+05 > 65504"}};
    request.accuracy_lowered_nodes = {"node_c"};
    request.limits.max_memory_bytes = 1;
    CHECK(key_with(request) == plain);
    CompileOptions smaller_tensors;
    smaller_tensors.limits.max_tensor_bytes = 1024;
    CHECK(key_with(smaller_tensors) != plain);
    // A function is keyed through the clause that names it: its label is in the target.
    CompileOptions first;
    first.accuracy_target = "check[rule_v1]";
    CompileOptions second = first;
    second.accuracy_target = "check[rule_v2]";
    CHECK(key_with(first) != key_with(second));
  }
}
