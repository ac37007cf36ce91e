#include "schemas/inference_ops.h"
#include "schemas/inference_util.h"

namespace npucc::schemas {

namespace {

using onnx::InferenceContext;
using Dim = onnx::TensorShapeProto::Dimension;

constexpr size_t k_q = 0;
constexpr size_t k_k = 1;
constexpr size_t k_v = 2;
constexpr size_t k_past_key = 4;

Dim value_dim(std::optional<int64_t> value) {
  Dim dim;
  if (value) {
    dim.set_dim_value(*value);
  }
  return dim;
}

std::optional<int64_t> optional_attribute(InferenceContext& ctx, const char* name) {
  const auto* attribute = ctx.getAttribute(name);
  if (attribute == nullptr || !attribute->has_i()) {
    return std::nullopt;
  }
  return attribute->i();
}

// What one of Q, K, V says, 4-D (batch, heads, sequence, head size) or 3-D (batch, sequence,
// heads * head size, with the heads from an attribute).
struct Projection {
  bool known = false; // a shape of rank 3 or 4
  bool four_d = false;
  Dim batch, heads, sequence, head_size;
};

Projection projection(InferenceContext& ctx, size_t input, std::optional<int64_t> heads) {
  Projection p;
  if (!onnx::hasInputShape(ctx, input)) {
    return p;
  }
  const auto& shape = onnx::getInputShape(ctx, input);
  if (shape.dim_size() != 3 && shape.dim_size() != 4) {
    fail_shape_inference("Attention: Q, K and V must be 3-D or 4-D, input ", input, " has rank ",
                         shape.dim_size());
  }
  p.known = true;
  p.four_d = shape.dim_size() == 4;
  p.batch = shape.dim(0);
  if (p.four_d) {
    p.heads = shape.dim(1);
    p.sequence = shape.dim(2);
    p.head_size = shape.dim(3);
    return p;
  }
  p.heads = value_dim(heads);
  p.sequence = shape.dim(1);
  const auto hidden = dim_value(shape.dim(2));
  if (hidden && heads && *heads > 0) {
    if (*hidden % *heads != 0) {
      fail_shape_inference("Attention: hidden size ", *hidden, " of input ", input,
                           " is not a multiple of ", *heads, " heads");
    }
    p.head_size.set_dim_value(*hidden / *heads);
  }
  return p;
}

Dim product(const Dim& a, const Dim& b) {
  const auto x = dim_value(a);
  const auto y = dim_value(b);
  return value_dim(x && y ? std::optional<int64_t>(*x * *y) : std::nullopt);
}

// total_sequence_length = past_sequence_length + kv_sequence_length.
Dim total_sequence(InferenceContext& ctx, const Dim& kv_sequence) {
  if (!has_input(ctx, k_past_key)) {
    return kv_sequence;
  }
  if (!onnx::hasInputShape(ctx, k_past_key) ||
      onnx::getInputShape(ctx, k_past_key).dim_size() != 4) {
    return Dim();
  }
  const auto past = dim_value(onnx::getInputShape(ctx, k_past_key).dim(2));
  const auto now = dim_value(kv_sequence);
  return value_dim(past && now ? std::optional<int64_t>(*past + *now) : std::nullopt);
}

void set_shape(InferenceContext& ctx, size_t output, std::initializer_list<Dim> dims) {
  auto* shape = fresh_output_shape(ctx, output);
  for (const auto& dim : dims) {
    *shape->add_dim() = dim;
  }
}

// A batch dim from the first of Q, K, V that has one.
Dim batch_of(const Projection& q, const Projection& k, const Projection& v) {
  for (const auto* p : {&q, &k, &v}) {
    if (p->known && (p->batch.has_dim_value() || p->batch.has_dim_param())) {
      return p->batch;
    }
  }
  return Dim();
}

void infer_attention(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, k_q, 0);
  const size_t outputs = ctx.getNumOutputs();
  // present_key is K's type (T1), present_value V's (T2), qk_matmul_output Q's (T1).
  const size_t type_source[] = {k_q, k_k, k_v, k_q};
  for (size_t i = 1; i < outputs && i < 4; ++i) {
    onnx::propagateElemTypeFromInputToOutput(ctx, type_source[i], i);
  }
  const auto q_heads = optional_attribute(ctx, "q_num_heads");
  const auto kv_heads = optional_attribute(ctx, "kv_num_heads");
  const auto q = projection(ctx, k_q, q_heads);
  const auto k = projection(ctx, k_k, kv_heads);
  const auto v = projection(ctx, k_v, kv_heads);
  const Dim batch = batch_of(q, k, v);
  const Dim total = k.known ? total_sequence(ctx, k.sequence) : Dim();
  if (q.known) {
    if (q.four_d) {
      set_shape(ctx, 0, {batch, q.heads, q.sequence, v.head_size});
    } else {
      set_shape(ctx, 0, {batch, q.sequence, product(q.heads, v.head_size)});
    }
  }
  if (outputs > 1 && ctx.getOutputType(1) != nullptr && k.known) {
    set_shape(ctx, 1, {batch, k.heads, total, k.head_size});
  }
  if (outputs > 2 && ctx.getOutputType(2) != nullptr && v.known && k.known) {
    set_shape(ctx, 2, {batch, v.heads, total, v.head_size});
  }
  if (outputs > 3 && ctx.getOutputType(3) != nullptr && q.known) {
    set_shape(ctx, 3, {batch, q.heads, q.sequence, total});
  }
}

} // namespace

// Attention 23 to 25 (24 added nonpad_kv_seqlen, 25 the window sizes: neither changes shapes).
Inference attention() {
  return {infer_attention, {}};
}

} // namespace npucc::schemas
