#pragma once

namespace npucc::schemas {

// Teaches ONNX 1.12's type-string tables the element types added by IR versions 9 to 13
// (float8 x4, uint4/int4, float4e2m1, float8e8m0, uint2/int2), so that schemas may name
// them ("tensor(float8e4m3fn)") and its checker and inference can print them. Idempotent.
void register_type_names();

} // namespace npucc::schemas
