#include "output/output_folder.h"
#include "npucc/error.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>

namespace fs = std::filesystem;
using npucc::output::OutputFolder;

namespace {

// Publishes `names` (each holding its own name) into options.output_dir.
void publish(const npucc::CompileOptions& options, const std::vector<std::string>& names) {
  OutputFolder output(options);
  for (const auto& name : names) {
    npucc::util::write_file_atomic(output.staging() / name, name);
  }
  output.publish();
}

std::string manifest_listing(const std::vector<std::string>& files) {
  std::string graphs;
  for (const auto& file : files) {
    graphs +=
        std::string(graphs.empty() ? "" : ",") + R"({"file":")" + file + R"(","external_data":[]})";
  }
  return R"({"format":"npucc-manifest","graphs":[)" + graphs + "]}";
}

} // namespace

TEST_SUITE("npucc::output::OutputFolder") {
  TEST_CASE("a compile removes what the earlier one's manifest listed, and nothing else") {
    npucc::CompileOptions options;
    options.output_dir = npucc::test::temp_dir("out") / "o";
    fs::create_directories(options.output_dir);
    npucc::util::write_file_atomic(options.output_dir / "notes.txt", "mine");
    {
      OutputFolder first(options);
      npucc::util::write_file_atomic(first.staging() / "high.onnx", "a");
      npucc::util::write_file_atomic(first.staging() / "low.onnx", "a");
      npucc::util::write_file_atomic(first.staging() / "manifest.json",
                                     manifest_listing({"high.onnx", "low.onnx"}));
      first.publish();
    }
    {
      OutputFolder second(options);
      npucc::util::write_file_atomic(second.staging() / "high.onnx", "b");
      npucc::util::write_file_atomic(second.staging() / "manifest.json",
                                     manifest_listing({"high.onnx"}));
      second.publish();
    }
    CHECK_FALSE(fs::exists(options.output_dir / "low.onnx"));
    CHECK(npucc::util::read_file(options.output_dir / "high.onnx") == "b");
    CHECK(npucc::util::read_file(options.output_dir / "notes.txt") == "mine");
  }

  TEST_CASE("a file of npucc's names that no manifest lists is refused unless forced") {
    npucc::CompileOptions options;
    options.output_dir = npucc::test::temp_dir("out") / "o";
    fs::create_directories(options.output_dir);
    npucc::util::write_file_atomic(options.output_dir / "high.onnx", "someone's");
    CHECK_THROWS_WITH_AS(OutputFolder{options},
                         doctest::Contains("not written by an npucc compile"), npucc::Error);
    CHECK(npucc::util::read_file(options.output_dir / "high.onnx") == "someone's");
    options.replace_output = npucc::OutputReplace::any;
    publish(options, {"high.onnx"});
    CHECK(npucc::util::read_file(options.output_dir / "high.onnx") == "high.onnx");
  }

  TEST_CASE("the model is never an output, under any name") {
    npucc::CompileOptions options;
    options.output_dir = npucc::test::temp_dir("out") / "o";
    fs::create_directories(options.output_dir);
    npucc::util::write_file_atomic(options.output_dir / "high.onnx", "model");
    options.model_path = options.output_dir / "high.onnx";
    options.replace_output = npucc::OutputReplace::any;
    CHECK_THROWS_WITH_AS(OutputFolder{options}, doctest::Contains("input file is also an output"),
                         npucc::Error);
    fs::path linked = options.output_dir.parent_path() / "linked.onnx";
    fs::create_hard_link(options.output_dir / "high.onnx", linked);
    options.model_path = linked;
    CHECK_THROWS_WITH_AS(OutputFolder{options}, doctest::Contains("input file is also an output"),
                         npucc::Error);
  }
}
