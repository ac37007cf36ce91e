#include "npucc/inspect.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <sstream>

namespace {

npucc::InspectReport sample_report(const npucc::InspectOptions& options = {}) {
  npucc::Model model;
  model.proto = npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.example" : 2], producer_name: "unit">
    sample (float[batch, 8] x) => (float[batch, 8] y) {
      k = Constant <value = float[8] {1, 2, 3, 4, 5, 6, 7, 8}> ()
      a = Add(x, k)
      b = com.example.Fancy(a)
      y = Relu(b)
    }
  )");
  model.proto.mutable_graph()->mutable_node(2)->set_name("fancy_one");
  model.path = "sample.onnx";
  model.file_bytes = 1234;
  model.sha256 = std::string(64, 'a');
  return npucc::inspect_model(std::move(model), options);
}

} // namespace

TEST_SUITE("npucc::inspect_report") {
  TEST_CASE("JSON follows the documented schema") {
    auto json = nlohmann::json::parse(npucc::inspect_report_json(sample_report()));
    CHECK(json["format"] == "npucc-inspect");
    CHECK(json["format_version"] == 1);
    CHECK(json["model"]["file"] == "sample.onnx");
    CHECK(json["model"]["bytes"] == 1234);
    CHECK(json["model"]["ir_version"] == 8);
    CHECK(json["model"]["producer"]["name"] == "unit");
    CHECK(json["model"]["opsets"]["ai.onnx"] == 17);
    CHECK(json["model"]["opsets"]["com.example"] == 2);
    CHECK(json["model"]["external_data"].empty());
    CHECK(json["graph"]["nodes"] == 4);
    CHECK(json["graph"]["main_graph_nodes"] == 4);
    CHECK(json["graph"]["subgraphs"] == 0);
    CHECK(json["graph"]["max_depth"] == 0);
    REQUIRE(json["ops"].size() == 4);
    for (const auto& op : json["ops"]) {
      CHECK(op["count"] == 1);
      CHECK(op.contains("domain"));
      CHECK(op["main_graph"] == 1);
      CHECK(op["subgraphs"] == 0);
    }
    CHECK(json["parameters"]["elements"] == 8);
    CHECK(json["parameters"]["bytes"] == 32);
    CHECK(json["parameters"]["constant"]["tensors"] == 1);
    CHECK(json["parameters"]["initializer"]["tensors"] == 0);
    REQUIRE(json["parameters"]["by_dtype"].size() == 1);
    CHECK(json["parameters"]["by_dtype"][0]["dtype"] == "float32");
    CHECK(json["parameters"]["by_dtype"][0]["source"] == "constant");
    REQUIRE(json["inputs"].size() == 1);
    CHECK(json["inputs"][0]["name"] == "x");
    CHECK(json["inputs"][0]["kind"] == "tensor");
    CHECK(json["inputs"][0]["shape"] == nlohmann::json::array({"batch", 8}));
    REQUIRE(json["unregistered_ops"].size() == 1);
    CHECK(json["unregistered_ops"][0]["op_type"] == "Fancy");
    CHECK(json["unregistered_ops"][0]["domain"] == "com.example");
    CHECK(json["unregistered_ops"][0]["opset"] == 2);
    CHECK(json["unregistered_ops"][0]["nodes"] ==
          nlohmann::json::array({"Fancy node \"fancy_one\""}));
    CHECK(json["memory_plan"]["available"] == false);
    CHECK(json["memory_plan"]["reason"].get<std::string>().find("batch") != std::string::npos);
    CHECK(json["input_shapes"].empty());
  }

  TEST_CASE("JSON survives names that are not UTF-8") {
    auto report = sample_report();
    report.graph_name = std::string("bad\xff\xfe", 5);
    auto json = nlohmann::json::parse(npucc::inspect_report_json(report));
    CHECK(json["model"]["graph_name"].get<std::string>().rfind("bad", 0) == 0);
  }

  TEST_CASE("text is aligned in columns") {
    auto text = npucc::inspect_report_text(sample_report());
    CHECK(text.find("model       sample.onnx\n") != std::string::npos);
    CHECK(text.find("nodes       4 (4 in the main graph, 0 in 0 subgraphs, max depth 0)") !=
          std::string::npos);
    CHECK(text.find("  op                 count  main  subgraphs\n") != std::string::npos);
    CHECK(text.find("  com.example.Fancy      1     1          0\n") != std::string::npos);
    CHECK(text.find("  constant  float32        1         8   32 B\n") != std::string::npos);
    CHECK(text.find("  x  float32  [batch, 8]\n") != std::string::npos);
    CHECK(text.find("com.example.Fancy (opset 2)  1  Fancy node \"fancy_one\"") !=
          std::string::npos);
    CHECK(text.find("memory plan: unavailable: ") != std::string::npos);
    // Every line of one table has the same column starts.
    std::istringstream lines(text);
    std::string line;
    std::vector<std::string> ops;
    bool in_ops = false;
    while (std::getline(lines, line)) {
      if (line == "ops") {
        in_ops = true;
      } else if (in_ops && line.empty()) {
        break;
      } else if (in_ops) {
        ops.push_back(line);
      }
    }
    REQUIRE(ops.size() == 5);
    for (const auto& row : ops) {
      CHECK(row.size() == ops[0].size());
    }
  }

  TEST_CASE("text escapes control characters in names") {
    auto report = sample_report();
    report.inputs[0].name = "x\n\x1b[2Jforged";
    report.graph_name = "g\r";
    auto text = npucc::inspect_report_text(report);
    CHECK(text.find('\x1b') == std::string::npos);
    CHECK(text.find('\r') == std::string::npos);
    CHECK(text.find("  x\\x0a\\x1b[2Jforged  float32") != std::string::npos);
  }

  TEST_CASE("text shows an available memory plan") {
    npucc::InspectOptions options;
    options.input_shapes = npucc::parse_input_shapes("x:2,8");
    auto report = sample_report(options);
    // Fancy has no schema, so its output stays untyped and planning stops there.
    CHECK_FALSE(report.memory_plan.available);
    CHECK(report.memory_plan.reason.find("\"b\"") != std::string::npos);
  }
}
