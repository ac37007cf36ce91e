#include "check/validate.h"
#include "npucc/error.h"
#include "opset/raise_opset.h"
#include "opset/version_steps.h"
#include "schemas/registry.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <set>

using npucc::opset::raise_opset;

namespace {

// Parsed, typed (the adapters read types), raised, then checked and typed again.
enum class CheckFirst { yes, no };

onnx::ModelProto raised(const std::string& text, int64_t target,
                        CheckFirst check_first = CheckFirst::yes) {
  auto model = npucc::test::parse_text_model(text);
  if (check_first == CheckFirst::yes) {
    npucc::check::check_and_infer(model, npucc::check::Checker::before);
  }
  raise_opset(model, target);
  INFO(model.DebugString());
  CHECK_NOTHROW(npucc::check::check_and_infer(model, npucc::check::Checker::after));
  return model;
}

const onnx::NodeProto& node_of(const onnx::ModelProto& model, const std::string& op) {
  for (const auto& node : model.graph().node()) {
    if (node.op_type() == op) {
      return node;
    }
  }
  FAIL("no " << op);
  throw 0;
}

bool has_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) {
      return true;
    }
  }
  return false;
}

std::string attribute_s(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) {
      return attribute.s();
    }
  }
  return {};
}

} // namespace

TEST_SUITE("npucc::opset::raise_opset") {
  TEST_CASE("Reduce* and Squeeze/Unsqueeze axes become inputs; opset and IR version move") {
    auto model = raised(R"(
      <ir_version: 7, opset_import: ["" : 12]>
      g (float[2,3,1] x) => (float[2,1] y, float[2,1,3] z) {
        m = ReduceMean <axes = [1]> (x)
        y = Squeeze <axes = [2]> (m)
        s = ReduceSum <axes = [2], keepdims = 0> (x)
        z = Unsqueeze <axes = [1]> (s)
      }
    )",
                        22);
    CHECK(npucc::opset::default_opset(model) == 22);
    CHECK(model.ir_version() == 10);
    for (const char* op : {"ReduceMean", "Squeeze", "ReduceSum", "Unsqueeze"}) {
      INFO(op);
      const auto& node = node_of(model, op);
      CHECK(node.input_size() == 2);
      CHECK(!has_attribute(node, "axes"));
    }
  }

  TEST_CASE("Split: split attribute -> input at 13, num_outputs at 18 when none is given") {
    auto model = raised(R"(
      <ir_version: 7, opset_import: ["" : 11]>
      g (float[6] x) => (float[2] a, float[4] b, float[3] c, float[3] d) {
        a, b = Split <split = [2, 4]> (x)
        c, d = Split (x)
      }
    )",
                        18);
    int with_input = 0;
    int with_count = 0;
    for (const auto& node : model.graph().node()) {
      if (node.op_type() == "Split") {
        with_input += node.input_size() == 2 ? 1 : 0;
        with_count += has_attribute(node, "num_outputs") ? 1 : 0;
      }
    }
    CHECK(with_input == 1);
    CHECK(with_count == 1);
  }

  TEST_CASE("Slice, TopK, Clip, Pad, Dropout: attributes become inputs") {
    auto model = raised(R"(
      <ir_version: 4, opset_import: ["" : 9]>
      g (float[4,6] x) => (float[2,6] s, float[4,2] v, int64[4,2] i, float[4,6] c, float[6,6] p,
                          float[4,6] d) {
        s = Slice <starts = [1], ends = [3], axes = [0]> (x)
        v, i = TopK <k = 2> (x)
        c = Clip <min = -1.0, max = 1.0> (x)
        p = Pad <pads = [1, 0, 1, 0], value = 0.5> (x)
        d = Dropout <ratio = 0.25> (x)
      }
    )",
                        13);
    CHECK(node_of(model, "Slice").input_size() == 4);
    CHECK(node_of(model, "TopK").input_size() == 2);
    CHECK(node_of(model, "Clip").input_size() == 3);
    CHECK(node_of(model, "Pad").input_size() == 3);
    CHECK(node_of(model, "Dropout").input_size() == 2);
  }

  TEST_CASE("Softmax-11: the last axis keeps one node, another axis flattens and reshapes") {
    auto last = raised(R"(
      <ir_version: 6, opset_import: ["" : 11]>
      g (float[2,3,4] x) => (float[2,3,4] y) { y = Softmax <axis = 2> (x) }
    )",
                       13);
    CHECK(last.graph().node_size() == 1);
    auto inner = raised(R"(
      <ir_version: 6, opset_import: ["" : 11]>
      g (float[2,3,4] x) => (float[2,3,4] y) { y = LogSoftmax (x) }
    )",
                        13);
    std::vector<std::string> ops;
    for (const auto& node : inner.graph().node()) {
      ops.push_back(node.op_type());
    }
    CHECK(ops == std::vector<std::string>{"Shape", "Flatten", "LogSoftmax", "Reshape"});
    CHECK(inner.graph().node(3).output(0) == "y");
  }

  TEST_CASE("GridSample-20 mode names; RoiAlign-16 keeps its old coordinate mode") {
    auto model = raised(R"(
      <ir_version: 8, opset_import: ["" : 16]>
      g (float[1,1,4,4] x, float[1,2,2,2] grid) => (float[1,1,2,2] y) {
        y = GridSample <mode = "bilinear"> (x, grid)
      }
    )",
                        20);
    CHECK(attribute_s(node_of(model, "GridSample"), "mode") == "linear");
    auto roi = raised(R"(
      <ir_version: 6, opset_import: ["" : 10]>
      g (float[1,1,4,4] x, float[1,4] rois, int64[1] index) => (float[1,1,1,1] y) {
        y = RoiAlign (x, rois, index)
      }
    )",
                      16);
    CHECK(attribute_s(node_of(roi, "RoiAlign"), "coordinate_transformation_mode") ==
          "output_half_pixel");
  }

  TEST_CASE("GroupNormalization-18 -> 21: per-group scale and bias repeated per channel") {
    auto model = raised(R"(
      <ir_version: 8, opset_import: ["" : 18]>
      g (float[1,4,3] x, float[2] s, float[2] b) => (float[1,4,3] y) {
        y = GroupNormalization <num_groups = 2> (x, s, b)
      }
    )",
                        21, CheckFirst::no); // npucc's checker refuses the deprecated -18
    const auto& norm = node_of(model, "GroupNormalization");
    CHECK(norm.input(1) != "s");
    CHECK(norm.input(2) != "b");
  }

  TEST_CASE("DFT-17 -> 20: axis attribute -> input, written out") {
    auto model = raised(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[1,8,1] x) => (float[1,8,2] y) { y = DFT <axis = 1> (x) }
    )",
                        20);
    const auto& dft = node_of(model, "DFT");
    CHECK(dft.input_size() == 3);
    CHECK(dft.input(1).empty());
    CHECK(!has_attribute(dft, "axis"));
  }

  TEST_CASE("refusals name the op, the versions and the reason") {
    auto refuses = [](const std::string& text, int64_t target, const std::string& want) {
      auto model = npucc::test::parse_text_model(text);
      npucc::check::check_and_infer(model, npucc::check::Checker::before);
      CHECK_THROWS_WITH_AS(raise_opset(model, target), doctest::Contains(want.c_str()),
                           npucc::Error);
    };
    refuses(R"(
      <ir_version: 5, opset_import: ["" : 10]>
      g (float[1,1,4,4] x) => (float[1,1,2,2] y) {
        s = Constant <value = float[4] {1, 1, 0.5, 0.5}> ()
        y = Resize (x, s)
      }
    )",
            13,
            "cannot raise Resize (ai.onnx) from version 10 to 11: nearest mode on a resize "
            "not known to upsample");
    refuses(R"(
      <ir_version: 3, opset_import: ["" : 8]>
      g (float[1,2,3] x, float[2,3] s) => (float[1,2,3] y, float[2,3] m, float[2,3] v,
                                           float[2,3] a, float[2,3] b) {
        y, m, v, a, b = BatchNormalization <spatial = 0> (x, s, s, s, s)
      }
    )",
            9, "spatial = 0 (per-activation statistics) with training outputs");
    refuses(R"(
      <ir_version: 7, opset_import: ["" : 13]>
      g (float[1,2,2] x, float[2] s) => (float[1,2,2] y, float[2] m, float[2] v, float[2] a,
                                          float[2] b) {
        y, m, v, a, b = BatchNormalization (x, s, s, s, s)
      }
    )",
            14, "BatchNormalization");
    refuses(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2] x) => (float[2] y) { y = Relu (x) }
    )",
            13, "only raises opsets");
    refuses(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2] x) => (float[2] y) { y = Relu (x) }
    )",
            27, "up to opset 26");
  }

  TEST_CASE("the classics: Upsample-7 becomes Resize, MaxPool-8, Sum-8, LRN carried") {
    auto model = raised(R"(
      <ir_version: 3, opset_import: ["" : 7]>
      g (float[1,2,3,3] x) => (float[1,2,6,6] y, float[1,2,6,6] z) {
        u = Upsample <scales = [1.0, 1.0, 2.0, 2.0]> (x)
        l = Upsample <mode = "linear", scales = [1.0, 1.0, 2.0, 2.0]> (x)
        n = LRN <size = 3> (u)
        p = MaxPool <kernel_shape = [1, 1]> (n)
        y = Sum (p, l)
        z = Identity (l)
      }
    )",
                        22);
    int resizes = 0;
    for (const auto& node : model.graph().node()) {
      if (node.op_type() != "Resize") {
        continue;
      }
      ++resizes;
      CHECK(node.input_size() == 3);
      CHECK(attribute_s(node, "coordinate_transformation_mode") == "asymmetric");
      const bool nearest = attribute_s(node, "mode") != "linear";
      CHECK(attribute_s(node, "nearest_mode") == (nearest ? "floor" : ""));
      CHECK(!has_attribute(node, "scales"));
    }
    CHECK(resizes == 2);
  }

  TEST_CASE("BatchNormalization-7: spatial dropped, per-activation written as its formula") {
    auto model = raised(R"(
      <ir_version: 3, opset_import: ["" : 7]>
      g (float[1,2,3] x, float[2] c, float[2,3] a) => (float[1,2,3] y, float[1,2,3] z) {
        y = BatchNormalization <spatial = 1> (x, c, c, c, c)
        z = BatchNormalization <spatial = 0, epsilon = 0.001> (x, a, a, a, a)
      }
    )",
                        22);
    int normalisations = 0;
    for (const auto& node : model.graph().node()) {
      if (node.op_type() == "BatchNormalization") {
        ++normalisations;
        CHECK(!has_attribute(node, "spatial"));
      }
    }
    CHECK(normalisations == 1);
    const auto& last = model.graph().node(model.graph().node_size() - 1);
    CHECK(last.op_type() == "Add");
    CHECK(last.output(0) == "z");
  }

  TEST_CASE("Dropout-7's read mask is cast from bool back to the data's type") {
    auto model = raised(R"(
      <ir_version: 3, opset_import: ["" : 7]>
      g (float[2] x) => (float[2] z) {
        y, mask = Dropout <ratio = 0.25> (x)
        z = Mul (y, mask)
      }
    )",
                        22);
    const auto& dropout = node_of(model, "Dropout");
    CHECK(dropout.output(1) != "mask");
    const auto& cast = node_of(model, "Cast");
    CHECK(cast.input(0) == dropout.output(1));
    CHECK(cast.output(0) == "mask");
    CHECK(cast.attribute(0).i() == onnx::TensorProto::FLOAT);
  }

  TEST_CASE("bodies are raised with their graph") {
    auto model = raised(R"(
      <ir_version: 7, opset_import: ["" : 12]>
      g (bool c, float[2,1] x) => (float[2] y) {
        y = If (c) <
          then_branch = t () => (float[2] a) { a = Squeeze <axes = [1]> (x) },
          else_branch = e () => (float[2] b) { b = Squeeze <axes = [1]> (x) }>
      }
    )",
                        13);
    const auto& branch = node_of(model, "If").attribute(0).g();
    CHECK(branch.node(branch.node_size() - 1).input_size() == 2);
  }
}

TEST_SUITE("npucc::opset::version_steps") {
  TEST_CASE("every version change of ai.onnx 9 to 26 is carried except the known ones") {
    std::set<std::string> ops;
    for (const auto& schema : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
      if (schema.domain().empty()) {
        ops.insert(schema.Name());
      }
    }
    std::set<std::string> refused;
    int carried = 0;
    for (const auto& op : ops) {
      const onnx::OpSchema* before = nullptr;
      for (int version = 1; version <= npucc::opset::k_max_target_opset; ++version) {
        const auto* after = npucc::schemas::find_schema(op, version, "");
        if (after == nullptr || after->SinceVersion() != version) {
          continue;
        }
        if (before != nullptr && version >= 9) {
          auto step = npucc::opset::version_step(op, *before, *after);
          if (step.kind == npucc::opset::StepKind::refuse) {
            refused.insert(op + "-" + std::to_string(version));
          } else {
            ++carried;
          }
        }
        before = after;
      }
    }
    // Scatter was deprecated (ScatterElements is another op); Scan-9 dropped its batch axis.
    CHECK(refused == std::set<std::string>{"Scan-9", "Scatter-11"});
    CHECK(carried > 300);
  }
}
