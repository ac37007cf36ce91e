#include "schemas/checker.h"
#include "schemas/registry.h"

#include <cstdlib>
#include <doctest/doctest.h>
#include <fstream>
#include <onnx/defs/parser.h>
#include <onnx/shape_inference/implementation.h>
#include <string>

// npucc's shape inference of the operator versions of opsets 18 to 26 on small models.
// With NPUCC_ORT_SHAPE_CASES=DIR, the cases given a name are also written there (NAME.onnx,
// and NAME.json with the shapes inferred here) for tests/tools/ort_shape_check.js, which runs
// them in ONNX Runtime and compares the real output shapes.
namespace {

// ONNX names the unknown dims of graph outputs "unk__N": shown as "?" like any unknown dim.
bool unknown(const onnx::TensorShapeProto::Dimension& dim) {
  return !dim.has_dim_value() && (!dim.has_dim_param() || dim.dim_param().rfind("unk__", 0) == 0);
}

std::string text_of(const onnx::TensorShapeProto& shape) {
  std::string text = "[";
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto& dim = shape.dim(i);
    text += i == 0 ? "" : ",";
    text += unknown(dim)          ? "?"
            : dim.has_dim_value() ? std::to_string(dim.dim_value())
                                  : dim.dim_param();
  }
  return text + "]";
}

const onnx::TypeProto* type_of(const onnx::ModelProto& model, const std::string& name) {
  for (const auto& info : model.graph().output()) {
    if (info.name() == name) {
      return &info.type();
    }
  }
  for (const auto& info : model.graph().value_info()) {
    if (info.name() == name) {
      return &info.type();
    }
  }
  return nullptr;
}

// "[2,3,?]" (? an unknown dim, a name a symbolic one), or "none" without a shape.
std::string shape(const onnx::ModelProto& model, const std::string& name) {
  const auto* type = type_of(model, name);
  if (type == nullptr || !type->tensor_type().has_shape()) {
    return "none";
  }
  return text_of(type->tensor_type().shape());
}

int32_t elem_type(const onnx::ModelProto& model, const std::string& name) {
  const auto* type = type_of(model, name);
  return type == nullptr ? 0 : type->tensor_type().elem_type();
}

void write_ort_case(const std::string& name, const onnx::ModelProto& original,
                    const onnx::ModelProto& inferred) {
  const char* dir = std::getenv("NPUCC_ORT_SHAPE_CASES");
  if (dir == nullptr || name.empty()) {
    return;
  }
  std::ofstream(std::string(dir) + "/" + name + ".onnx", std::ios::binary)
      << original.SerializeAsString();
  std::string json = "{";
  for (const auto& output : inferred.graph().output()) {
    json += (json.size() > 1 ? ", \"" : "\"") + output.name() + "\": \"" +
            shape(inferred, output.name()) + "\"";
  }
  std::ofstream(std::string(dir) + "/" + name + ".json") << json << "}\n";
}

onnx::ModelProto parse(const char* text) {
  onnx::ModelProto model;
  auto status = onnx::OnnxParser::Parse(model, text);
  REQUIRE_MESSAGE(status.IsOK(), status.ErrorMessage());
  return model;
}

// Checks and infers a model. The graph outputs' declared shapes are dropped before inference,
// so what `shape` reports is what inference found.
onnx::ModelProto infer(onnx::ModelProto model, const std::string& ort_name = "") {
  npucc::schemas::check_model(model); // wants every graph output to have a shape
  for (auto& output : *model.mutable_graph()->mutable_output()) {
    output.mutable_type()->mutable_tensor_type()->clear_shape();
  }
  const onnx::ModelProto original = model;
  onnx::ShapeInferenceOptions options(/*check_type=*/true, /*strict_mode=*/1,
                                      /*data_prop=*/true);
  onnx::shape_inference::InferShapes(model, &npucc::schemas::registry(), options);
  write_ort_case(ort_name, original, model);
  return model;
}

onnx::ModelProto infer(const char* text, const std::string& ort_name = "") {
  return infer(parse(text), ort_name);
}

// Makes initializer `name` a one-byte tensor of `type`: how a test writes float8 and 4-bit
// values, which ONNX 1.12's text parser cannot.
void retype_initializer(onnx::ModelProto& model, const std::string& name, int32_t type) {
  for (auto& tensor : *model.mutable_graph()->mutable_initializer()) {
    if (tensor.name() == name) {
      tensor.clear_int32_data();
      tensor.clear_float_data();
      tensor.set_data_type(type);
      tensor.set_raw_data(std::string(1, '\x01'));
    }
  }
}

} // namespace

TEST_SUITE("npucc::schemas::Inference") {
  TEST_CASE("Reduce* 18 and 20 read axes from their input") {
    auto model = infer(R"(
      <ir_version: 10, opset_import: ["" : 20]>
      g (float[2,3,4] x) => (float a, float b, float c, bool d, float e)
        <int64[1] axes = {-2}, int64[0] none = {}> {
        a = ReduceMean <keepdims = 1> (x, axes)
        b = ReduceL2 <keepdims = 0> (x, axes)
        c = ReduceLogSumExp <keepdims = 0> (x)
        xb = Cast <to = 9> (x)
        d = ReduceMax <keepdims = 0> (xb, axes)
        e = ReduceProd <noop_with_empty_axes = 1> (x, none)
      }
    )",
                       "reduce_axes_input");
    CHECK(shape(model, "a") == "[2,1,4]");
    CHECK(shape(model, "b") == "[2,4]");
    CHECK(shape(model, "c") == "[]");
    CHECK(shape(model, "d") == "[2,4]");
    CHECK(elem_type(model, "d") == onnx::TensorProto::BOOL);
    CHECK(shape(model, "e") == "[2,3,4]");
  }

  TEST_CASE("Reduce-20 with axes from a Constant's value_ints") {
    auto model = infer(R"(
      <ir_version: 10, opset_import: ["" : 21]>
      g (float[2,3,4] x) => (float y) {
        axes = Constant <value_ints = [0, -1]> ()
        y = ReduceMax <keepdims = 0> (x, axes)
      }
    )",
                       "reduce_constant_value_ints");
    CHECK(shape(model, "y") == "[3]");
  }

  TEST_CASE("inherited versions read constant inputs that data propagation knows") {
    auto model = infer(R"(
      <ir_version: 10, opset_import: ["" : 24]>
      g (float[2,3,4] x, float[6,4] like) => (float u, float r, float t, int64 i) {
        axes = Constant <value_ints = [0, -1]> ()
        u = Unsqueeze (x, axes)
        to = Shape (like)
        r = Reshape (x, to)
        k = Constant <value_ints = [2]> ()
        t, i = TopK (x, k)
      }
    )",
                       "inherited_propagated_inputs");
    CHECK(shape(model, "u") == "[1,2,3,4,1]");
    CHECK(shape(model, "r") == "[6,4]");
    CHECK(shape(model, "t") == "[2,3,2]");
  }

  TEST_CASE("Reduce-18 with axes known only at run time leaves the shape open") {
    auto model = infer(R"(
      <ir_version: 10, opset_import: ["" : 18]>
      g (float[2,3,4] x, int64[1] axes) => (float y) {
        y = ReduceMin <keepdims = 0> (x, axes)
      }
    )");
    CHECK(elem_type(model, "y") == onnx::TensorProto::FLOAT);
    CHECK(shape(model, "y") != "[]");
  }

  TEST_CASE("versions inherited from ONNX 1.12 keep its shapes") {
    auto model = infer(R"(
      <ir_version: 10, opset_import: ["" : 24]>
      g (float[3,5,1] x) => (float values, int64 indices, int64 last, int64 clamped, int64 none,
                             float filled, float dropped, bool mask, float squeezed,
                             float unsqueezed, float reshaped, float flat, float moved)
        <int64[1] k = {2}, int64[2] dims = {2, 4}, int64[1] axes = {2}, int64[2] new_axes = {0, -1},
         int64[2] to = {0, -1}, float ratio = {0.25}> {
        values, indices = TopK <axis = 1> (x, k)
        last = Shape <start = -1> (x)
        clamped = Shape <start = -5, end = 9> (x)
        none = Shape <start = 2, end = 1> (x)
        filled = ConstantOfShape <value = float[1] {1.0}> (dims)
        dropped, mask = Dropout (x, ratio)
        squeezed = Squeeze (x, axes)
        unsqueezed = Unsqueeze (x, new_axes)
        reshaped = Reshape (x, to)
        flat = Flatten <axis = 2> (x)
        moved = Transpose <perm = [2, 0, 1]> (x)
      }
    )",
                       "inherited_opset_24");
    CHECK(shape(model, "values") == "[3,2,1]");
    CHECK(shape(model, "indices") == "[3,2,1]");
    CHECK(shape(model, "last") == "[1]");
    CHECK(shape(model, "clamped") == "[3]");
    CHECK(shape(model, "none") == "[0]");
    CHECK(shape(model, "filled") == "[2,4]");
    CHECK(shape(model, "mask") == "[3,5,1]");
    CHECK(shape(model, "squeezed") == "[3,5]");
    CHECK(shape(model, "unsqueezed") == "[1,3,5,1,1]");
    CHECK(shape(model, "reshaped") == "[3,5]");
    CHECK(shape(model, "flat") == "[15,1]");
    CHECK(shape(model, "moved") == "[1,3,5]");
    auto qlinear = infer(R"(
      <ir_version: 10, opset_import: ["" : 21]>
      g (uint8[2,3,4] a, int8[4,5] b) => (uint8 y)
        <float sa = {0.5}, uint8 za = {1}, float sb = {0.25}, int8 zb = {0}, float sy = {1.0},
         uint8 zy = {2}> {
        y = QLinearMatMul (a, sa, za, b, sb, zb, sy, zy)
      }
    )",
                         "qlinear_matmul_21");
    CHECK(shape(qlinear, "y") == "[2,3,5]");
  }

  TEST_CASE("inherited versions accept the types they widened to") {
    // float8 and int4 values are intermediates or retyped initializers: ONNX 1.12's text
    // parser has no names for them, and no float16 literals (the scales are Cast to float16)
    auto model = parse(R"(
      <ir_version: 10, opset_import: ["" : 21]>
      g (float[2,3] x, uint8[2,4] a, uint8[4,5] b) => (uint8 y)
        <float scale = {0.5}, uint8 za = {1}, uint8 zb = {0}, uint8 zy = {2}, uint8 like = {0},
         uint8 f8_zero = {0}, int64[1] dims = {7}, int64[1] two = {2}> {
        half = Cast <to = 10> (scale)
        f8 = Cast <to = 17> (x)
        i4 = Cast <to = 22, saturate = 0> (x)
        i4_like = CastLike (x, like)
        q8 = QuantizeLinear (x, scale, f8_zero)
        zeros = ConstantOfShape <value = float[1] {0.0}> (dims)
        y = QLinearMatMul (a, half, za, b, half, zb, half, zy)
        c4 = Constant <value = float[2] {0.0, 0.0}> ()
        r4 = Reshape (c4, two)
      }
    )");
    retype_initializer(model, "like", 22);
    retype_initializer(model, "f8_zero", 19);
    for (int node : {5, 7}) {
      auto* value = model.mutable_graph()->mutable_node(node)->mutable_attribute(0)->mutable_t();
      value->clear_float_data();
      value->set_data_type(node == 5 ? 18 : 21); // float8e4m3fnuz; uint4 (2 in one byte)
      value->set_raw_data(std::string(1, '\0'));
    }
    model = infer(model);
    CHECK(elem_type(model, "f8") == 17);
    CHECK(shape(model, "f8") == "[2,3]");
    CHECK(elem_type(model, "i4") == 22);
    CHECK(elem_type(model, "i4_like") == 22);
    CHECK(shape(model, "i4_like") == "[2,3]");
    CHECK(elem_type(model, "q8") == 19);
    CHECK(shape(model, "q8") == "[2,3]");
    CHECK(elem_type(model, "zeros") == 18);
    CHECK(shape(model, "zeros") == "[7]");
    CHECK(shape(model, "y") == "[2,5]");
    CHECK(elem_type(model, "c4") == 21);
    CHECK(elem_type(model, "r4") == 21);
    CHECK(shape(model, "r4") == "[2]");
  }

  TEST_CASE("Pad 18 to 25 with an axes input") {
    SUBCASE("negative axis, int64") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[2,3,4] x) => (float y) <int64[2] pads = {1, 2}, int64[1] axes = {-1}> {
          y = Pad (x, pads, , axes)
        }
      )",
                         "pad_negative_axis");
      CHECK(shape(model, "y") == "[2,3,7]");
    }
    SUBCASE("pads and axes from Constant nodes, as exporters write them") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 23]>
        g (float[2,3,4] x) => (float y) {
          pads = Constant <value = int64[4] {1, 0, 2, 3}> ()
          axes = Constant <value_ints = [0, 2]> ()
          y = Pad <mode = "edge"> (x, pads, , axes)
        }
      )",
                         "pad_constant_nodes");
      CHECK(shape(model, "y") == "[5,3,7]");
    }
    SUBCASE("opset 18's Constant-13 is ONNX 1.12's: its value_ints stay unknown") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[2,3,4] x) => (float y) <int64[2] pads = {1, 1}> {
          axes = Constant <value_ints = [1]> ()
          y = Pad (x, pads, , axes)
        }
      )");
      CHECK(shape(model, "y") == "[?,?,?]");
    }
    SUBCASE("int32 axes, reflect mode, opset 21") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 21]>
        g (float[4,3,5] x) => (float y) <int64[4] pads = {1, 2, 1, 0}, int32[2] axes = {0, 2}> {
          y = Pad <mode = "reflect"> (x, pads, , axes)
        }
      )");
      // ONNX Runtime 1.30 cannot load this model: its ONNX's Pad inference reads axes as
      // int64 only ("ParseData type mismatch"), though Tind allows int32.
      CHECK(shape(model, "y") == "[6,3,7]");
    }
    SUBCASE("no axes: all dims, negative pads crop") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 25]>
        g (float[2,3,4] x) => (float y) <int64[6] pads = {0, 1, -1, 0, 2, -1}, float v = {1.5}> {
          y = Pad (x, pads, v)
        }
      )",
                         "pad_all_axes_crop");
      CHECK(shape(model, "y") == "[2,6,2]");
    }
    SUBCASE("symbolic dims outside the padded axes stay") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 19]>
        g (float[N,3] x) => (float y) <int64[2] pads = {2, 1}, int64[1] axes = {1}> {
          y = Pad <mode = "wrap"> (x, pads, , axes)
        }
      )");
      CHECK(shape(model, "y") == "[N,6]");
    }
    SUBCASE("pads known only at run time: the padded axes are unknown") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[2,3,4] x, int64[2] pads) => (float y) <int64[1] axes = {1}> {
          y = Pad (x, pads, , axes)
        }
      )");
      CHECK(shape(model, "y") == "[2,?,4]");
    }
    SUBCASE("axes known only at run time: every dim is unknown") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[2,3,4] x, int64[1] axes) => (float y) <int64[2] pads = {1, 1}> {
          y = Pad (x, pads, , axes)
        }
      )");
      CHECK(shape(model, "y") == "[?,?,?]");
    }
    SUBCASE("an input of unknown rank: the rank from pads, without axes") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[6] x, int64[K] to) => (float y) <int64[6] pads = {1, 1, 1, 1, 1, 1}> {
          r = Reshape (x, to)
          y = Pad (r, pads)
        }
      )");
      CHECK(shape(model, "y") == "[?,?,?]");
    }
    SUBCASE("pads of the wrong length are refused") {
      CHECK_THROWS(infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[2,3,4] x) => (float y) <int64[4] pads = {1, 1, 1, 1}, int64[1] axes = {1}> {
          y = Pad (x, pads, , axes)
        }
      )"));
    }
  }

  TEST_CASE("Split-18") {
    SUBCASE("num_outputs, uneven: ceil-sized chunks, the last smaller") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[2,7] x) => (float a, float b, float c) {
          a, b, c = Split <axis = -1, num_outputs = 3> (x)
        }
      )",
                         "split_uneven");
      CHECK(shape(model, "a") == "[2,3]");
      CHECK(shape(model, "b") == "[2,3]");
      CHECK(shape(model, "c") == "[2,1]");
    }
    SUBCASE("num_outputs, even") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[6,N] x) => (float a, float b) {
          a, b = Split <num_outputs = 2> (x)
        }
      )");
      CHECK(shape(model, "a") == "[3,N]");
      CHECK(shape(model, "b") == "[3,N]");
    }
    SUBCASE("split input") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[2,7] x) => (float a, float b) <int64[2] split = {2, 5}> {
          a, b = Split <axis = 1> (x, split)
        }
      )",
                         "split_input");
      CHECK(shape(model, "a") == "[2,2]");
      CHECK(shape(model, "b") == "[2,5]");
    }
    SUBCASE("split known only at run time: the axis is unknown") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[2,7] x, int64[2] split) => (float a, float b) {
          a, b = Split <axis = 1> (x, split)
        }
      )");
      CHECK(shape(model, "a") == "[2,?]");
      CHECK(shape(model, "b") == "[2,?]");
    }
    SUBCASE("an unknown dim at the axis stays unknown") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[2,N] x) => (float a, float b) {
          a, b = Split <axis = 1, num_outputs = 2> (x)
        }
      )");
      CHECK(shape(model, "a") == "[2,?]");
    }
    SUBCASE("inconsistent splits are refused") {
      CHECK_THROWS(infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[2,7] x) => (float a, float b) {
          a, b = Split <axis = 1, num_outputs = 3> (x)
        }
      )"));
      CHECK_THROWS(infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[2,7] x) => (float a, float b) <int64[2] split = {2, 4}> {
          a, b = Split <axis = 1> (x, split)
        }
      )"));
      // ceil(5 / 4) = 2: three chunks of 2 leave nothing for the fourth (ORT fails at run time)
      CHECK_THROWS(infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[2,5] x) => (float a, float b, float c, float d) {
          a, b, c, d = Split <axis = 1, num_outputs = 4> (x)
        }
      )"));
      // Split-18 needs the split input or num_outputs (Split-13 split evenly without)
      CHECK_THROWS_WITH(infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[2,6] x) => (float a, float b) {
          a, b = Split <axis = 1> (x)
        }
      )"),
                        doctest::Contains("num_outputs"));
    }
  }
  TEST_CASE("Resize 18 and 19") {
    SUBCASE("scales with axes") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[1,3,4,6] x) => (float y) <float[2] scales = {2.0, 0.5}> {
          y = Resize <axes = [2, 3]> (x, , scales)
        }
      )",
                         "resize_scales_axes");
      CHECK(shape(model, "y") == "[1,3,8,3]");
    }
    SUBCASE("scales of every axis, rounding down") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[1,3,5,7] x) => (float y) <float[4] scales = {1.0, 1.0, 1.5, 0.6}> {
          y = Resize <mode = "linear"> (x, , scales)
        }
      )",
                         "resize_scales_floor");
      CHECK(shape(model, "y") == "[1,3,7,4]");
    }
    SUBCASE("sizes, stretch, negative axis") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[1,3,4,6] x) => (float y) <int64[1] sizes = {10}> {
          y = Resize <axes = [-1]> (x, , , sizes)
        }
      )",
                         "resize_sizes_stretch");
      CHECK(shape(model, "y") == "[1,3,4,10]");
    }
    SUBCASE("sizes, not_larger and not_smaller keep the aspect ratio") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[1,3,4,6] x) => (float a, float b) <int64[2] sizes = {8, 8}> {
          a = Resize <axes = [2, 3], keep_aspect_ratio_policy = "not_larger"> (x, , , sizes)
          b = Resize <axes = [2, 3], keep_aspect_ratio_policy = "not_smaller"> (x, , , sizes)
        }
      )",
                         "resize_aspect_ratio");
      CHECK(shape(model, "a") == "[1,3,5,8]");
      CHECK(shape(model, "b") == "[1,3,8,12]");
    }
    SUBCASE("antialias and Resize-19's half_pixel_symmetric do not change the shape") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 19]>
        g (float[1,3,8,6] x) => (float a, float b) <float[2] scales = {0.5, 0.5}> {
          a = Resize <mode = "linear", antialias = 1, axes = [2, 3]> (x, , scales)
          b = Resize <mode = "cubic", coordinate_transformation_mode = "half_pixel_symmetric",
                      axes = [2, 3]> (x, , scales)
        }
      )",
                         "resize_antialias_19");
      CHECK(shape(model, "a") == "[1,3,4,3]");
      CHECK(shape(model, "b") == "[1,3,4,3]");
    }
    SUBCASE("tf_crop_and_resize: the roi does not change the shape (ONNX Runtime agrees)") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[1,1,4,6] x) => (float y)
          <float[4] roi = {0.0, 0.0, 0.5, 0.5}, float[2] scales = {2.0, 2.0}> {
          y = Resize <coordinate_transformation_mode = "tf_crop_and_resize", axes = [2, 3],
                      mode = "linear"> (x, roi, scales)
        }
      )",
                         "resize_tf_crop_roi");
      CHECK(shape(model, "y") == "[1,1,8,12]");
    }
    SUBCASE("an empty scales beside sizes, as Resize-13 exporters write it") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[1,3,4,6] x) => (float y)
          <float[0] roi = {}, float[0] scales = {}, int64[4] sizes = {1, 3, 2, 9}> {
          y = Resize (x, roi, scales, sizes)
        }
      )");
      CHECK(shape(model, "y") == "[1,3,2,9]");
    }
    SUBCASE("sizes known only at run time: the resized axes are unknown") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[N,3,4,6] x, int64[2] sizes) => (float y) {
          y = Resize <axes = [2, 3]> (x, , , sizes)
        }
      )");
      CHECK(shape(model, "y") == "[N,3,?,?]");
    }
    SUBCASE("sizes computed from another tensor's shape (data propagation)") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 19]>
        g (float[1,3,4,6] x, float[2,2,9,5] like) => (float y) {
          sizes = Shape <start = -2> (like)
          y = Resize <axes = [2, 3]> (x, , , sizes)
        }
      )",
                         "resize_sizes_from_shape");
      CHECK(shape(model, "y") == "[1,3,9,5]");
    }
    SUBCASE("not_larger with an unknown input dim leaves the resized axes unknown") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[1,3,H,6] x) => (float y) <int64[2] sizes = {8, 8}> {
          y = Resize <axes = [2, 3], keep_aspect_ratio_policy = "not_larger"> (x, , , sizes)
        }
      )");
      CHECK(shape(model, "y") == "[1,3,?,?]");
    }
    SUBCASE("sizes of the wrong length are refused") {
      CHECK_THROWS(infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[1,3,4,6] x) => (float y) <int64[3] sizes = {8, 8, 8}> {
          y = Resize <axes = [2, 3]> (x, , , sizes)
        }
      )"));
    }
  }

  TEST_CASE("CenterCropPad-18") {
    SUBCASE("crop one axis and pad another") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[5,7,3] x) => (float y) <int64[2] shape = {4, 9}> {
          y = CenterCropPad <axes = [0, 1]> (x, shape)
        }
      )",
                         "center_crop_pad_axes");
      CHECK(shape(model, "y") == "[4,9,3]");
    }
    SUBCASE("negative axis") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[5,7,3] x) => (float y) <int64[1] shape = {2}> {
          y = CenterCropPad <axes = [-1]> (x, shape)
        }
      )",
                         "center_crop_pad_negative");
      CHECK(shape(model, "y") == "[5,7,2]");
    }
    SUBCASE("int32 shape") {
      // ONNX Runtime 1.30 cannot run this one: the function body it expands CenterCropPad
      // into mixes the int32 shape with int64 dims ("Max bound to different types").
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[5,7,3] x) => (float y) <int32[2] shape = {8, 1}> {
          y = CenterCropPad <axes = [1, 2]> (x, shape)
        }
      )");
      CHECK(shape(model, "y") == "[5,8,1]");
    }
    SUBCASE("no axes: every dim") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[N,7,3] x) => (float y) <int64[3] shape = {3, 3, 3}> {
          y = CenterCropPad (x, shape)
        }
      )");
      CHECK(shape(model, "y") == "[3,3,3]");
    }
    SUBCASE("shape known only at run time") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[5,7,3] x, int64[2] shape) => (float y) {
          y = CenterCropPad <axes = [0, 1]> (x, shape)
        }
      )");
      CHECK(shape(model, "y") == "[?,?,3]");
    }
  }

  TEST_CASE("Col2Im-18") {
    SUBCASE("C from input dim 1 / prod(block_shape), spatial dims from image_shape") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[1,8,4] x) => (float y) <int64[2] image = {3, 3}, int64[2] block = {2, 2}> {
          y = Col2Im (x, image, block)
        }
      )",
                         "col2im");
      CHECK(shape(model, "y") == "[1,2,3,3]");
    }
    SUBCASE("strides and pads do not change the shape") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[2,6,9] x) => (float y) <int64[2] image = {5, 5}, int64[2] block = {1, 3}> {
          y = Col2Im <strides = [2, 2], pads = [0, 1, 0, 1]> (x, image, block)
        }
      )",
                         "col2im_strides");
      CHECK(shape(model, "y") == "[2,2,5,5]");
    }
    SUBCASE("image_shape known only at run time: rank from its length") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[N,8,4] x, int64[2] image) => (float y) <int64[2] block = {2, 2}> {
          y = Col2Im (x, image, block)
        }
      )");
      CHECK(shape(model, "y") == "[N,2,?,?]");
    }
    SUBCASE("a channel count that prod(block_shape) does not divide is refused") {
      CHECK_THROWS(infer(R"(
        <ir_version: 10, opset_import: ["" : 18]>
        g (float[1,6,4] x) => (float y) <int64[2] image = {3, 3}, int64[2] block = {2, 2}> {
          y = Col2Im (x, image, block)
        }
      )"));
    }
  }

  TEST_CASE("pools with dilations: AveragePool 19/22, LpPool 18/22") {
    auto model = infer(R"(
      <ir_version: 10, opset_import: ["" : 22]>
      g (float[1,1,7,7] x) => (float a, float b, float c) {
        a = LpPool <kernel_shape = [3, 3], dilations = [2, 2]> (x)
        b = LpPool <kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1> (x)
        c = AveragePool <kernel_shape = [2, 2], dilations = [2, 2], strides = [2, 2]> (x)
      }
    )",
                       "pools_dilations");
    CHECK(shape(model, "a") == "[1,1,3,3]");
    CHECK(shape(model, "b") == "[1,1,4,4]");
    CHECK(shape(model, "c") == "[1,1,3,3]");
    auto lp18 = infer(R"(
      <ir_version: 10, opset_import: ["" : 18]>
      g (float[1,2,9,8] x) => (float y) {
        y = LpPool <kernel_shape = [3, 2], dilations = [3, 2], p = 1> (x)
      }
    )",
                      "lppool18_dilations");
    CHECK(shape(lp18, "y") == "[1,2,3,6]");
  }

  TEST_CASE("pools at opsets 18 to 22 drop a ceil_mode window that starts in the padding") {
    // 4 + 1 padding, kernel 2, stride 2: windows at 0 and 2; one at 4 would see only padding
    // (ONNX 1.12's formula for MaxPool-12 says 3, ONNX Runtime gives 2).
    auto model = infer(R"(
      <ir_version: 10, opset_import: ["" : 22]>
      g (float[1,1,4,5] x) => (float a, int64 i, float b, float c) {
        a, i = MaxPool <kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 1, 1],
                        ceil_mode = 1> (x)
        b = AveragePool <kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 1, 1],
                         ceil_mode = 1> (x)
        c = LpPool <kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 1, 1], ceil_mode = 1> (x)
      }
    )",
                       "pools_ceil_mode_edge");
    CHECK(shape(model, "a") == "[1,1,2,3]");
    CHECK(shape(model, "i") == "[1,1,2,3]");
    CHECK(shape(model, "b") == "[1,1,2,3]");
    CHECK(shape(model, "c") == "[1,1,2,3]");
    auto average_19 = infer(R"(
      <ir_version: 10, opset_import: ["" : 19]>
      g (float[1,1,5] x) => (float y) {
        y = AveragePool <kernel_shape = [1], strides = [3], ceil_mode = 1> (x)
      }
    )",
                            "average_pool_19_ceil_valid");
    CHECK(shape(average_19, "y") == "[1,1,2]");
  }

  TEST_CASE("ONNX 1.12's own pools (opsets 10 to 17) get the same ceil_mode rule") {
    auto model = infer(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[1,1,4,5] x) => (float a, int64 i, float b, float c) {
        a, i = MaxPool <kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 1, 1],
                        ceil_mode = 1> (x)
        b = AveragePool <kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 1, 1],
                         ceil_mode = 1> (x)
        c = MaxPool <kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 1, 1]> (x)
      }
    )",
                       "pools_ceil_mode_edge_17");
    CHECK(shape(model, "a") == "[1,1,2,3]");
    CHECK(shape(model, "i") == "[1,1,2,3]");
    CHECK(shape(model, "b") == "[1,1,2,3]");
    CHECK(shape(model, "c") == "[1,1,2,3]");
    auto at_10 = infer(R"(
      <ir_version: 5, opset_import: ["" : 10]>
      g (float[1,1,5] x) => (float y) {
        y = MaxPool <kernel_shape = [1], strides = [3], ceil_mode = 1> (x)
      }
    )",
                       "max_pool_10_ceil_valid");
    CHECK(shape(at_10, "y") == "[1,1,2]");
  }

  TEST_CASE("DeformConv 19 and 22: Conv's shape") {
    SUBCASE("strides and pads, kernel from W") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 19]>
        g (float[1,2,5,5] x, float[4,2,3,3] w, float[1,18,3,3] offset) => (float y) {
          y = DeformConv <strides = [2, 2], pads = [1, 1, 1, 1]> (x, w, offset)
        }
      )",
                         "deform_conv_strides");
      CHECK(shape(model, "y") == "[1,4,3,3]");
    }
    SUBCASE("dilations, bias and mask, opset 22") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 22]>
        g (float[2,2,6,6] x, float[3,2,2,2] w, float[2,8,4,4] offset, float[3] b,
           float[2,4,4,4] mask) => (float y) {
          y = DeformConv <dilations = [2, 2]> (x, w, offset, b, mask)
        }
      )",
                         "deform_conv_dilations");
      CHECK(shape(model, "y") == "[2,3,4,4]");
    }
    SUBCASE("symbolic batch") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 22]>
        g (float[N,2,5,5] x, float[4,2,3,3] w, float[N,18,3,3] offset) => (float y) {
          y = DeformConv (x, w, offset)
        }
      )");
      CHECK(shape(model, "y") == "[N,4,3,3]");
    }
  }
  TEST_CASE("AffineGrid-20") {
    SUBCASE("2-D: [N, H, W, 2]") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[2,2,3] theta) => (float y) <int64[4] size = {2, 3, 4, 5}> {
          y = AffineGrid (theta, size)
        }
      )",
                         "affine_grid_2d");
      CHECK(shape(model, "y") == "[2,4,5,2]");
    }
    SUBCASE("3-D: [N, D, H, W, 3]") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[1,3,4] theta) => (float y) <int64[5] size = {1, 1, 2, 3, 4}> {
          y = AffineGrid <align_corners = 1> (theta, size)
        }
      )",
                         "affine_grid_3d");
      CHECK(shape(model, "y") == "[1,2,3,4,3]");
    }
    SUBCASE("size known only at run time: N from theta, the rest from size's length") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[N,2,3] theta, int64[4] size) => (float y) {
          y = AffineGrid (theta, size)
        }
      )");
      CHECK(shape(model, "y") == "[N,?,?,2]");
    }
  }

  TEST_CASE("DFT-20 with axis and dft_length inputs") {
    SUBCASE("real input, default axis -2: a complex output") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[2,8,1] x) => (float y) {
          y = DFT (x)
        }
      )",
                         "dft_real");
      CHECK(shape(model, "y") == "[2,8,2]");
    }
    SUBCASE("onesided forward: floor(n / 2) + 1") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[2,8,1] x) => (float y) {
          y = DFT <onesided = 1> (x)
        }
      )",
                         "dft_onesided");
      CHECK(shape(model, "y") == "[2,5,2]");
    }
    SUBCASE("axis 0 and dft_length as constant inputs, complex input") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[4,3,2] x) => (float y) <int64 length = {6}, int64 axis = {0}> {
          y = DFT (x, length, axis)
        }
      )",
                         "dft_axis_length");
      CHECK(shape(model, "y") == "[6,3,2]");
    }
    SUBCASE("negative axis, int32 dft_length shorter than the signal") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[4,3,5,1] x) => (float y) <int32 length = {3}, int64 axis = {-4}> {
          y = DFT <inverse = 1> (x, length, axis)
        }
      )",
                         "dft_negative_axis");
      CHECK(shape(model, "y") == "[3,3,5,2]");
    }
    SUBCASE("IRFFT: a real signal of 2 * (n - 1)") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[2,5,2] x) => (float y) {
          y = DFT <onesided = 1, inverse = 1> (x)
        }
      )",
                         "dft_irfft");
      CHECK(shape(model, "y") == "[2,8,1]");
    }
    SUBCASE("inverse of a real signal: complex output") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[2,5,1] x) => (float y) {
          y = DFT <inverse = 1> (x)
        }
      )",
                         "dft_inverse_real");
      CHECK(shape(model, "y") == "[2,5,2]");
    }
    SUBCASE("one-sided: RFFT needs a real input, IRFFT a complex one (ONNX Runtime agrees)") {
      CHECK_THROWS_WITH(infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[2,8,2] x) => (float y) {
          y = DFT <onesided = 1> (x)
        }
      )"),
                        doctest::Contains("real input"));
      CHECK_THROWS_WITH(infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[2,5,1] x) => (float y) {
          y = DFT <onesided = 1, inverse = 1> (x)
        }
      )"),
                        doctest::Contains("complex input"));
    }
    SUBCASE("axis known only at run time: only the last dim is known") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[2,8,1] x, int64 axis) => (float y) {
          y = DFT (x, , axis)
        }
      )");
      CHECK(shape(model, "y") == "[?,?,2]");
    }
    SUBCASE("dft_length known only at run time: the signal axis is unknown") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[2,8,1] x, int64 length) => (float y) {
          y = DFT (x, length)
        }
      )");
      CHECK(shape(model, "y") == "[2,?,2]");
    }
    SUBCASE("the last dim is not a valid axis, and holds 1 or 2") {
      CHECK_THROWS(infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[2,8,2] x) => (float y) <int64 axis = {-1}> {
          y = DFT (x, , axis)
        }
      )"));
      CHECK_THROWS(infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[2,8,3] x) => (float y) {
          y = DFT (x)
        }
      )"));
    }
  }

  TEST_CASE("GridSample 20 and 22, N-D") {
    SUBCASE("2-D") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[1,3,4,4] x, float[1,6,7,2] grid) => (float y) {
          y = GridSample (x, grid)
        }
      )",
                         "grid_sample_2d");
      CHECK(shape(model, "y") == "[1,3,6,7]");
    }
    SUBCASE("3-D, opset 22") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 22]>
        g (float[1,2,4,4,4] x, float[1,2,3,5,3] grid) => (float y) {
          y = GridSample <mode = "nearest"> (x, grid)
        }
      )",
                         "grid_sample_3d");
      CHECK(shape(model, "y") == "[1,2,2,3,5]");
    }
    SUBCASE("symbolic batch through an Identity") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 20]>
        g (float[N,3,4,4] x, float[N,6,7,2] grid) => (float y) {
          g2 = Identity (grid)
          y = GridSample (x, g2)
        }
      )");
      CHECK(shape(model, "y") == "[N,3,6,7]");
    }
  }

  TEST_CASE("Attention 23 to 25") {
    SUBCASE("4-D Q, K, V") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 23]>
        g (float[2,4,3,8] q, float[2,4,5,8] k, float[2,4,5,6] v) => (float y) {
          y = Attention (q, k, v)
        }
      )",
                         "attention_4d");
      CHECK(shape(model, "y") == "[2,4,3,6]");
    }
    SUBCASE("3-D with q_num_heads and kv_num_heads (grouped-query)") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 23]>
        g (float[2,3,32] q, float[2,5,16] k, float[2,5,12] v) => (float y, float pk, float pv,
                                                                   float qk) {
          y, pk, pv, qk = Attention <q_num_heads = 4, kv_num_heads = 2> (q, k, v)
        }
      )",
                         "attention_3d_gqa");
      CHECK(shape(model, "y") == "[2,3,24]");
      CHECK(shape(model, "pk") == "[2,2,5,8]");
      CHECK(shape(model, "pv") == "[2,2,5,6]");
      CHECK(shape(model, "qk") == "[2,4,3,5]");
    }
    SUBCASE("past_key and past_value: present is the concatenation") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 23]>
        g (float[1,2,1,8] q, float[1,2,1,8] k, float[1,2,1,8] v, float[1,2,4,8] past_k,
           float[1,2,4,8] past_v) => (float y, float pk, float pv, float qk) {
          y, pk, pv, qk = Attention <is_causal = 1> (q, k, v, , past_k, past_v)
        }
      )",
                         "attention_past");
      CHECK(shape(model, "y") == "[1,2,1,8]");
      CHECK(shape(model, "pk") == "[1,2,5,8]");
      CHECK(shape(model, "pv") == "[1,2,5,8]");
      CHECK(shape(model, "qk") == "[1,2,1,5]");
    }
    SUBCASE("Attention-24 with nonpad_kv_seqlen and a mask") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 24]>
        g (float[2,4,3,8] q, float[2,4,6,8] k, float[2,4,6,8] v, bool[3,6] mask)
          => (float y) <int64[2] seqlen = {6, 4}> {
          y = Attention (q, k, v, mask, , , seqlen)
        }
      )",
                         "attention_24_nonpad");
      CHECK(shape(model, "y") == "[2,4,3,8]");
    }
    SUBCASE("Attention-25 with window sizes, 3-D, symbolic batch") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 25]>
        g (float[B,3,16] q, float[B,3,16] k, float[B,3,16] v) => (float y, float qk) {
          y, , , qk = Attention <q_num_heads = 2, kv_num_heads = 2, left_window_size = 1>
            (q, k, v)
        }
      )");
      CHECK(shape(model, "y") == "[B,3,16]");
      CHECK(shape(model, "qk") == "[B,2,3,3]");
    }
    SUBCASE("3-D without q_num_heads: the hidden size is unknown") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 23]>
        g (float[2,3,16] q, float[2,3,16] k, float[2,3,16] v) => (float y) {
          y = Attention (q, k, v)
        }
      )");
      CHECK(shape(model, "y") == "[2,3,?]");
    }
    SUBCASE("past with an unknown length: total_sequence_length unknown") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["" : 23]>
        g (float[1,2,1,8] q, float[1,2,1,8] k, float[1,2,1,8] v, float[1,2,P,8] past_k,
           float[1,2,P,8] past_v) => (float y, float pk, float pv) {
          y, pk, pv = Attention (q, k, v, , past_k, past_v)
        }
      )");
      CHECK(shape(model, "y") == "[1,2,1,8]");
      CHECK(shape(model, "pk") == "[1,2,?,8]");
    }
  }
  TEST_CASE("ai.onnx.ml LabelEncoder-4") {
    SUBCASE("keys_tensor and values_tensor: Y takes the values' type") {
      // ONNX Runtime 1.30 has no LabelEncoder-4 kernel for int32 -> int16
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["ai.onnx.ml" : 4]>
        g (int32[2,3] x) => (int16 y) {
          y = ai.onnx.ml.LabelEncoder <keys_tensor = int32[3] {1, 2, 3},
                                       values_tensor = int16[3] {10, 20, 30},
                                       default_tensor = int16[1] {-1}> (x)
        }
      )");
      CHECK(shape(model, "y") == "[2,3]");
      CHECK(elem_type(model, "y") == onnx::TensorProto::INT16);
    }
    SUBCASE("int64 keys_tensor, float values_tensor (a pair ONNX Runtime implements)") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["ai.onnx.ml" : 4]>
        g (int64[4,2] x) => (float y) {
          y = ai.onnx.ml.LabelEncoder <keys_tensor = int64[2] {1, 2},
                                       values_tensor = float[2] {0.5, 1.5}> (x)
        }
      )",
                         "label_encoder_4_tensors");
      CHECK(shape(model, "y") == "[4,2]");
      CHECK(elem_type(model, "y") == onnx::TensorProto::FLOAT);
    }
    SUBCASE("double keys (a type ONNX added to version 4 later)") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["ai.onnx.ml" : 4]>
        g (double[3] x) => (int64 y) {
          y = ai.onnx.ml.LabelEncoder <keys_tensor = double[2] {1.0, 2.0}, values_int64s = [3, 4]>
            (x)
        }
      )",
                         "label_encoder_4_double");
      CHECK(shape(model, "y") == "[3]");
      CHECK(elem_type(model, "y") == onnx::TensorProto::INT64);
    }
    SUBCASE("list attributes, at ml opset 5") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["ai.onnx.ml" : 5]>
        g (string[N] x) => (int64 y) {
          y = ai.onnx.ml.LabelEncoder <keys_strings = ["a", "b"], values_int64s = [5, 6]> (x)
        }
      )",
                         "label_encoder_4_lists");
      CHECK(shape(model, "y") == "[N]");
      CHECK(elem_type(model, "y") == onnx::TensorProto::INT64);
    }
    SUBCASE("an input of another type than the keys is refused") {
      CHECK_THROWS(infer(R"(
        <ir_version: 10, opset_import: ["ai.onnx.ml" : 4]>
        g (int64[2] x) => (float y) {
          y = ai.onnx.ml.LabelEncoder <keys_strings = ["a"], values_floats = [1.0]> (x)
        }
      )"));
    }
  }

  TEST_CASE("ai.onnx.ml TreeEnsemble-5, and the tree ensembles it deprecates") {
    SUBCASE("Y is [N, n_targets] of X's type") {
      auto model = infer(R"(
        <ir_version: 10, opset_import: ["ai.onnx.ml" : 5]>
        g (float[3,2] x) => (float y) {
          y = ai.onnx.ml.TreeEnsemble <n_targets = 2, tree_roots = [0], nodes_featureids = [0],
                nodes_modes = uint8[1] {0}, nodes_splits = float[1] {0.5},
                nodes_truenodeids = [0], nodes_falsenodeids = [1], nodes_trueleafs = [1],
                nodes_falseleafs = [1], leaf_targetids = [0, 1],
                leaf_weights = float[2] {1.0, 2.0}> (x)
        }
      )",
                         "tree_ensemble_5");
      CHECK(shape(model, "y") == "[3,2]");
      CHECK(elem_type(model, "y") == onnx::TensorProto::FLOAT);
    }
    SUBCASE("split values of another type than X are refused") {
      CHECK_THROWS(infer(R"(
        <ir_version: 10, opset_import: ["ai.onnx.ml" : 5]>
        g (double[3,2] x) => (double y) {
          y = ai.onnx.ml.TreeEnsemble <n_targets = 1, tree_roots = [0], nodes_featureids = [0],
                nodes_modes = uint8[1] {0}, nodes_splits = float[1] {0.5},
                nodes_truenodeids = [0], nodes_falsenodeids = [0], nodes_trueleafs = [1],
                nodes_falseleafs = [1], leaf_targetids = [0],
                leaf_weights = double[1] {1.0}> (x)
        }
      )"));
    }
    SUBCASE("TreeEnsembleRegressor: ml opset 3 and 4 have it, 5 deprecates it") {
      const std::string text = R"(
        <ir_version: 10, opset_import: ["ai.onnx.ml" : ML]>
        g (float[3,2] x) => (float y) {
          y = ai.onnx.ml.TreeEnsembleRegressor <n_targets = 1, nodes_treeids = [0],
                nodes_nodeids = [0], nodes_featureids = [0], nodes_modes = ["LEAF"],
                nodes_values = [0.0], nodes_truenodeids = [0], nodes_falsenodeids = [0],
                target_treeids = [0], target_nodeids = [0], target_ids = [0],
                target_weights = [1.0]> (x)
        }
      )";
      const auto at = [&](const char* ml) {
        return std::string(text).replace(text.find("ML"), 2, ml);
      };
      CHECK(elem_type(infer(at("4").c_str()), "y") == onnx::TensorProto::FLOAT);
      CHECK_THROWS_WITH(infer(at("5").c_str()), doctest::Contains("deprecated"));
    }
  }
  TEST_CASE("opsets 20 to 26: the versions whose output has an input's shape") {
    auto model = infer(R"(
      <ir_version: 10, opset_import: ["" : 24]>
      g (float[2,4,3,3] x, float[1,2,3,8] q, int64[1,3] positions, float[1,2,6,8] past,
         float[1,2,2,8] update, int64[1] at, float[2,4] plain)
        => (float gn, float rms, float rope, float swish, float scattered, float gelu,
            float mish, uint8 quantized, float dequantized)
        <float[4] scale = {1.0, 1.0, 1.0, 1.0}, float[4] bias = {0.0, 0.0, 0.0, 0.0},
         float[8] rms_scale = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}, float[4,4] cos = {
           1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0},
         float[2,2] block_scale = {0.5, 0.5, 0.25, 0.25}, uint8[2,4] q8 = {1, 2, 3, 4, 5, 6, 7, 8}> {
        gn = GroupNormalization <num_groups = 2> (x, scale, bias)
        rms = RMSNormalization (q, rms_scale)
        rope = RotaryEmbedding (q, cos, cos, positions)
        swish = Swish <alpha = 1.5> (x)
        scattered = TensorScatter (past, update, at)
        gelu = Gelu <approximate = "tanh"> (x)
        mish = Mish (x)
        quantized = QuantizeLinear <axis = 1, block_size = 2> (plain, block_scale)
        dequantized = DequantizeLinear <axis = 1, block_size = 2> (q8, block_scale)
      }
    )",
                       "same_shape_opset_24");
    CHECK(shape(model, "gn") == "[2,4,3,3]");
    CHECK(shape(model, "rms") == "[1,2,3,8]");
    CHECK(shape(model, "rope") == "[1,2,3,8]");
    CHECK(shape(model, "swish") == "[2,4,3,3]");
    CHECK(shape(model, "scattered") == "[1,2,6,8]");
    CHECK(shape(model, "gelu") == "[2,4,3,3]");
    CHECK(shape(model, "mish") == "[2,4,3,3]");
    CHECK(shape(model, "quantized") == "[2,4]");
    CHECK(shape(model, "dequantized") == "[2,4]");
    auto at_26 = infer(R"(
      <ir_version: 13, opset_import: ["" : 26]>
      g (float[2,3] x) => (float product, int32 bits) <int64 axis = {1}> {
        product = CumProd (x, axis)
        bits = BitCast <to = 6> (x)
      }
    )",
                       "same_shape_opset_26");
    CHECK(shape(at_26, "product") == "[2,3]");
    CHECK(shape(at_26, "bits") == "[2,3]");
    CHECK(elem_type(at_26, "bits") == onnx::TensorProto::INT32);
  }
  // Many small variants for ONNX Runtime to check (tests/tools/ort_shape_check.js): scales on
  // rounding edges, aspect-ratio policies, uneven splits, ceil_mode windows. Here each must
  // infer every dim.
  TEST_CASE("sweeps over rounding edges, for ONNX Runtime") {
    const char* policies[] = {"stretch", "not_larger", "not_smaller"};
    const char* scales[] = {"0.3", "0.6", "0.7", "1.1", "1.3", "2.5", "0.333", "1.75"};
    int count = 0;
    // Positive axes with the aspect-ratio policies: with axes [-2, -1], ONNX Runtime 1.30's
    // kernel returns the input unresized for not_larger/not_smaller (its own ONNX inference
    // expects the resized shape, as npucc does): a runtime bug, not a shape to follow.
    for (int in : {5, 7, 9, 13}) {
      for (const char* scale : scales) {
        const std::string text = "<ir_version: 10, opset_import: [\"\" : 19]>\n"
                                 "g (float[1,2," +
                                 std::to_string(in) +
                                 ",6] x) => (float y)"
                                 " <float[2] scales = {" +
                                 scale + ", " + scale +
                                 "}> {\n"
                                 "  y = Resize <axes = [2, 3]> (x, , scales)\n}";
        auto model = infer(text.c_str(), "sweep_resize_scales_" + std::to_string(count++));
        CHECK(shape(model, "y").find('?') == std::string::npos);
      }
      for (const char* policy : policies) {
        const std::string text = "<ir_version: 10, opset_import: [\"\" : 18]>\n"
                                 "g (float[1,2," +
                                 std::to_string(in) +
                                 ",6] x) => (float y)"
                                 " <int64[2] sizes = {10, 9}> {\n"
                                 "  y = Resize <axes = [2, 3], keep_aspect_ratio_policy = \"" +
                                 policy + "\"> (x, , , sizes)\n}";
        auto model = infer(text.c_str(), "sweep_resize_sizes_" + std::to_string(count++));
        CHECK(shape(model, "y").find('?') == std::string::npos);
      }
    }
    for (int dim : {4, 7, 10, 11}) {
      for (int parts : {2, 3, 4}) {
        if ((dim + parts - 1) / parts * (parts - 1) >= dim) {
          continue; // nothing left for the last chunk: refused (tested above)
        }
        std::string outputs, names;
        for (int i = 0; i < parts; ++i) {
          outputs += std::string(i ? ", " : "") + "float o" + std::to_string(i);
          names += std::string(i ? ", " : "") + "o" + std::to_string(i);
        }
        const std::string text = "<ir_version: 10, opset_import: [\"\" : 18]>\n"
                                 "g (float[3," +
                                 std::to_string(dim) + "] x) => (" + outputs + ") {\n  " + names +
                                 " = Split <axis = 1, num_outputs = " + std::to_string(parts) +
                                 "> (x)\n}";
        auto model = infer(text.c_str(), "sweep_split_" + std::to_string(count++));
        CHECK(shape(model, "o0").find('?') == std::string::npos);
      }
    }
    for (int in : {5, 6, 7, 8}) {
      for (const char* pool : {"MaxPool", "AveragePool", "LpPool"}) {
        const std::string text = "<ir_version: 10, opset_import: [\"\" : 22]>\n"
                                 "g (float[1,1," +
                                 std::to_string(in) +
                                 "] x) => (float y) {\n"
                                 "  y = " +
                                 pool +
                                 " <kernel_shape = [2], strides = [3], pads = [1, 1], "
                                 "ceil_mode = 1> (x)\n}";
        auto model = infer(text.c_str(), "sweep_pool_" + std::to_string(count++));
        CHECK(shape(model, "y").find('?') == std::string::npos);
      }
    }
  }
  TEST_CASE("sweeps over Attention and DFT forms, for ONNX Runtime") {
    int count = 0;
    for (int q_heads : {2, 4}) {
      for (int kv_heads : {1, 2}) {
        for (int past : {0, 3}) {
          const auto n = [](int v) { return std::to_string(v); };
          const std::string past_inputs = past ? ", float[2," + n(kv_heads) + "," + n(past) +
                                                     ",4] pk, float[2," + n(kv_heads) + "," +
                                                     n(past) + ",6] pv"
                                               : "";
          const std::string text = "<ir_version: 10, opset_import: [\"\" : 23]>\n"
                                   "g (float[2,3," +
                                   n(q_heads * 4) + "] q, float[2,5," + n(kv_heads * 4) +
                                   "] k, float[2,5," + n(kv_heads * 6) + "] v" + past_inputs +
                                   ") => (float y, float present_k, float present_v, float qk) {\n"
                                   "  y, present_k, present_v, qk = Attention <q_num_heads = " +
                                   n(q_heads) + ", kv_num_heads = " + n(kv_heads) + "> (q, k, v" +
                                   (past ? ", , pk, pv" : "") + ")\n}";
          auto model = infer(text.c_str(), "sweep_attention_" + std::to_string(count++));
          CHECK(shape(model, "y") == "[2,3," + n(q_heads * 6) + "]");
          CHECK(shape(model, "qk") == "[2," + n(q_heads) + ",3," + n(5 + past) + "]");
        }
      }
    }
    for (int dim : {6, 7}) {
      for (int length : {0, 4, 9}) {
        for (int mode = 0; mode < 3; ++mode) { // full, RFFT, IRFFT
          const int last = mode == 2 ? 2 : 1;
          const std::string attributes = mode == 0   ? ""
                                         : mode == 1 ? "<onesided = 1>"
                                                     : "<onesided = 1, inverse = 1>";
          const std::string inputs = length ? "(x, n)" : "(x)";
          const std::string text = "<ir_version: 10, opset_import: [\"\" : 20]>\n"
                                   "g (float[3," +
                                   std::to_string(dim) + "," + std::to_string(last) +
                                   "] x) => (float y) <int64 n = {" + std::to_string(length) +
                                   "}> {\n  y = DFT " + attributes + " " + inputs + "\n}";
          auto model = infer(text.c_str(), "sweep_dft_" + std::to_string(count++));
          CHECK(shape(model, "y").find('?') == std::string::npos);
        }
      }
    }
  }
}
