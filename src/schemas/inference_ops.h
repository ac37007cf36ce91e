#pragma once

#include "schemas/inference.h"

// npucc's own inference functions, one per kind of operator version (inference_table.cpp
// says which version uses which).
namespace npucc::schemas {

// inference_basic.cpp: type from input 0, shape from input 0 or broadcast of all inputs.
Inference same_as_first_input();
Inference elementwise_broadcast();
Inference optional_get_element();
Inference optional_has_element();
Inference regex_full_match();
Inference string_split();
Inference image_decoder();
Inference bit_cast();
Inference rms_normalization();
Inference cast();
Inference constant();

// inference_quantize.cpp: the output element type from output_dtype, a zero point or a scale.
Inference quantize_linear();
Inference dequantize_linear();

// inference_shapes.cpp: shapes computed from attributes and constant inputs.
Inference pad_with_axes();
Inference split_with_num_outputs();
Inference center_crop_pad();
Inference col2im();
Inference reduce_with_axes_input();

// inference_resize.cpp
Inference resize_with_axes();

// inference_conv.cpp: Conv-like output spatial dims.
Inference pool_with_dilations();
Inference max_pool_22();
// `infer`, then the ceil_mode rule on outputs [0, outputs): for ONNX 1.12's own pools too.
onnx::InferenceFunction with_ceil_mode_rule(onnx::InferenceFunction infer, size_t outputs);
Inference deform_conv();

// inference_sampling.cpp: grids, sampling and the DFT.
Inference affine_grid();
Inference dft_with_inputs();
Inference grid_sample();

// inference_attention.cpp
Inference attention();

// inference_ml.cpp: ai.onnx.ml opsets 4 and 5.
std::map<std::string, Inference> ml_inference_table();

} // namespace npucc::schemas
