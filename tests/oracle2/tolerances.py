"""Per op: how far onnx.reference's low-precision result may be from npucc's emulation, and
why; and the ops a run cannot judge, each with its reason (printed by compare_reference.py).

The distance is counted in steps of the low type: adjacent float16 (or bfloat16) values are
one step apart, so a tolerance of 1 allows the two evaluators to round one float32 result to
neighbouring low values. NaN must meet NaN and an infinity the same infinity, always.
"""

# An op whose result both evaluators compute in float32 and round to the low type once: the
# same low value, bit for bit (0 steps).
EXACT = "one rounding of the same float32 result: bit-exact"

# op or (op, mode) -> (steps, scale, reason). Ops not named here are EXACT: (0, "output").
# A difference d at an element is allowed when d <= steps * (the low type's spacing at the
# element's scale), at least |reference|. Scales: "output": |reference|; "unit": the largest
# |input| of the output's shape at that element, or 1; "row": the largest |output| of the
# row (last axis); "abs_sum": the float32 model's output on |inputs| (for a sum of
# products, the sum of |products|: the classic bound on the rounding error of a sum is
# n * u * sum|terms|, u the unit roundoff).
# Reasons the reference rounds more often than the emulation (which rounds each op's float32
# result once, as a device kernel does):
COMPOSITE = ("onnx.reference writes it as several NumPy operations in the low type (for "
             "example 1/(1+exp(-x))), each rounded; the emulation rounds the float32 result once")
NEAR_ONE = (COMPOSITE + "; its formula passes through 1 + f or exp(x) - 1, so the reference's "
            "error is a step of the low type at max(|x|, 1), not at a small result")
ALPHA = "onnx.reference rounds the float attribute alpha to the low type first; ORT uses it as float32"
SUMS = ("the reference adds in the low type, rounding each partial sum (n terms: up to n - 1 "
        "roundings, each half a step at the sum of |terms|); the emulation sums in float32")
TOLERANCE = {
    "Sigmoid": (2, "output", COMPOSITE),
    "Softsign": (2, "output", COMPOSITE),
    "HardSwish": (2, "output", COMPOSITE + " (x * HardSigmoid(x))"),
    "Swish": (2, "output", COMPOSITE + " (x * sigmoid(alpha x))"),
    "Mish": (2, "unit", NEAR_ONE + " (x * tanh(log(1 + exp(x))))"),
    "Elu": (2, "unit", NEAR_ONE + "; ORT's float32 exp(x) - 1 is 0 for |x| < 2^-24"),
    "Selu": (2, "unit", NEAR_ONE + "; ORT's float32 exp(x) - 1 is 0 for |x| < 2^-24"),
    "Gelu": (4, "unit", NEAR_ONE + " (its ONNX function body: 0.5 x (1 + erf(x / sqrt 2)), or "
                        "the tanh form: 1 + tanh(...) cancels in the low type for x < -2)"),
    "LeakyRelu": (1, "output", ALPHA),
    "Sum": (2, "abs_sum", SUMS + " (3 inputs: 2 roundings against 1)"),
    "Mean": (4, "abs_sum", SUMS + ", then divides (3 inputs: 3 roundings against 1, the "
                         "partial sums up to 3 times the mean: 2 steps of it each)"),
    "AveragePool": (8, "abs_sum", SUMS + " (3x3 window: n - 1 = 8 roundings; float16 means "
                                  "sum in float32 in NumPy, bfloat16 ones in bfloat16)"),
    "GlobalAveragePool": (35, "abs_sum", SUMS + " (6x6: n - 1 = 35)"),
    "Gemm": (3, "abs_sum", "alpha A B + beta C: the reference rounds the product, alpha times "
                           "it, beta C and the sum (3 more roundings than the emulation)"),
    "Conv": (2, "abs_sum", "im2col, then one matrix product (NumPy sums in float32 for both low "
                           "types and rounds once), then the bias added with a second rounding"),
    "ConvTranspose": (4, "abs_sum", "a matrix product over the input channels, rounded once, then "
                                    "col2im adds the up to 4 overlapping 3x3 windows (stride 2) "
                                    "in the low type, each add rounded"),
    "RNN": (2, "unit", "recurrence: the reference rounds W x, R h, their sum and the bias "
                       "each time step and feeds the rounded state back; outputs in [-1, 1]"),
    "GRU": (4, "unit", "recurrence as RNN, three gates and the reset product"),
    "LSTM": (4, "unit", "recurrence as RNN, four gates and the cell state"),
    "Attention": (8, "row", "softmax(Q K^T / sqrt d) V: the reference rounds the scores, the "
                            "exponentials, their sum and each weighted sum of V in the low type"),
    "RotaryEmbedding": (2, "row", "x cos - y sin: the reference rounds both products and "
                                  "the difference (cancellation: a step at the row's scale)"),
}

# (op, mode) -> why npucc keeps the op float32 there (the case then checks that it does, and
# fails once npucc lowers it, so the entry is removed and the op judged).
NO_BFLOAT16 = "its schema (every version to opset 25) takes no bfloat16: kept float32 (reason schema)"
NOT_LOWERED = {
    ("Celu", "fast"): "Celu-12's schema takes float32 only: kept float32 (reason schema)",
    ("Celu", "fast1"): "Celu-12's schema takes float32 only: kept float32 (reason schema)",
    ("Einsum", "fast1"): "Einsum-12: " + NO_BFLOAT16,
    ("ReverseSequence", "fast1"): "ReverseSequence-10: " + NO_BFLOAT16,
    ("Upsample", "fast1"): (
        "Upsample exists to opset 9 only (deprecated at 10), where no schema takes bfloat16 "
        "(Cast to bfloat16 is opset 13): the graph stays float32 (reason inputs_float32)"),
    ("InstanceNormalization", "fast"): (
        "in the infer list, but its scale and B are pinned float32 (statistics) and its schema "
        "ties them to the input's type, so it always stays float32 (reason schema)"),
    ("InstanceNormalization", "fast1"): (
        "in the infer list, but its scale and B are pinned float32 (statistics) and its schema "
        "ties them to the input's type, so it always stays float32 (reason schema)"),
}

# op -> the op npucc writes in its place before lowering (judged as that op).
REWRITTEN = {"Dropout": "Identity (an inference Dropout is an Identity: fold pass)"}

# (op, mode) -> why onnx.reference cannot run the op at that low type.
REFERENCE_LIMITS = {}


def tolerance_for(op, mode):
    return TOLERANCE.get((op, mode), TOLERANCE.get(op, (0, "output", EXACT)))
