#include "npucc/error.h"
#include "npucc/train_mode.h"

#include <doctest/doctest.h>
#include <string>

using npucc::AccelerateTrainMode;
using npucc::LowPrecision;
using npucc::parse_accelerate_train_mode;
using npucc::PrecisionOptions;
using npucc::SwitchTrigger;
using npucc::validate_precision_options;

namespace {

// The error message and exit status for a rejected value.
std::string rejection(const std::string& text) {
  try {
    parse_accelerate_train_mode(text);
  } catch (const npucc::Error& error) {
    CHECK(error.status() == npucc::ExitStatus::usage);
    return error.what();
  }
  FAIL("accepted: " << text);
  return {};
}

std::string rejection(const PrecisionOptions& options,
                      const std::optional<AccelerateTrainMode>& mode) {
  try {
    validate_precision_options(options, mode);
  } catch (const npucc::Error& error) {
    CHECK(error.status() == npucc::ExitStatus::usage);
    return error.what();
  }
  FAIL("accepted: " << options.precision_mode << " / " << options.precision_mode_v2);
  return {};
}

} // namespace

TEST_SUITE("npucc::AccelerateTrainMode") {
  TEST_CASE("parses the fields and fills the default ratio") {
    SUBCASE("fast|step takes 0.9") {
      auto mode = parse_accelerate_train_mode("fast|step");
      CHECK(mode.low == LowPrecision::float16);
      CHECK(mode.trigger == SwitchTrigger::step);
      CHECK(mode.ratio == 0.9);
      CHECK(mode.to_string() == "fast|step|0.9");
    }
    SUBCASE("an empty third field takes the default") {
      CHECK(parse_accelerate_train_mode("fast|step|").ratio == 0.9);
      CHECK(parse_accelerate_train_mode("fast1|loss|").ratio == 1.05);
    }
    SUBCASE("fast1|loss takes 1.05") {
      auto mode = parse_accelerate_train_mode("fast1|loss");
      CHECK(mode.low == LowPrecision::bfloat16);
      CHECK(mode.trigger == SwitchTrigger::loss);
      CHECK(mode.ratio == 1.05);
      CHECK(mode.type_name() == "fast1");
      CHECK(mode.trigger_name() == "loss");
      CHECK(mode.to_string() == "fast1|loss|1.05");
    }
    SUBCASE("explicit ratios, canonical text") {
      CHECK(parse_accelerate_train_mode("fast|step|0.5").ratio == 0.5);
      CHECK(parse_accelerate_train_mode("fast|step|0.50").to_string() == "fast|step|0.5");
      CHECK(parse_accelerate_train_mode("fast1|loss|1.1").ratio == 1.1);
      CHECK(parse_accelerate_train_mode("fast1|loss|1.10").to_string() == "fast1|loss|1.1");
      CHECK(parse_accelerate_train_mode("fast|loss|1.5").to_string() == "fast|loss|1.5");
      CHECK(parse_accelerate_train_mode("fast|step|.25").ratio == 0.25);
    }
    SUBCASE("canonical text parses back to the same mode") {
      for (const char* text : {"fast|step|0.33", "fast1|loss|1.01", "fast|step|0.2"}) {
        auto mode = parse_accelerate_train_mode(text);
        auto again = parse_accelerate_train_mode(mode.to_string());
        CHECK(again.ratio == mode.ratio);
        CHECK(again.to_string() == mode.to_string());
      }
    }
  }

  TEST_CASE("ratio boundaries are exact") {
    for (const char* accepted :
         {"fast|step|0.2", "fast|step|0.9", "fast|step|0.90", "fast|step|00.2", "fast1|loss|1.01",
          "fast1|loss|1.5", "fast1|loss|1.500"}) {
      CAPTURE(accepted);
      CHECK_NOTHROW(parse_accelerate_train_mode(accepted));
    }
    for (const char* rejected :
         {"fast|step|0.19", "fast|step|0.91", "fast|step|0.9000001", "fast|step|0.1",
          "fast|step|1.6", "fast|step|1.05", "fast1|loss|1.0", "fast1|loss|1", "fast1|loss|1.51",
          "fast1|loss|1.009", "fast1|loss|0.9"}) {
      CAPTURE(rejected);
      const std::string message = rejection(rejected);
      CHECK(message.find("out of range") != std::string::npos);
      CHECK(message.find("RATIO") != std::string::npos);
    }
    CHECK(rejection("fast|step|0.95").find("allowed for step: 0.2 to 0.9 (default 0.9)") !=
          std::string::npos);
    CHECK(rejection("fast|loss|2").find("allowed for loss: 1.01 to 1.5 (default 1.05)") !=
          std::string::npos);
  }

  TEST_CASE("non-numbers are rejected, naming the field and the value") {
    for (const char* text :
         {"fast|step|0.9abc", "fast|step|nan", "fast|step|inf", "fast|step|0x0.8p0",
          "fast|step|9e-1", "fast|step|+0.5", "fast|step|-0.5", "fast|step|0.5.1", "fast|step|.",
          "fast|step|1.", "fast|step|abc", "fast|step|0,5"}) {
      CAPTURE(text);
      const std::string message = rejection(text);
      CHECK(message.find("RATIO (field 3)") != std::string::npos);
      CHECK(message.find("not a plain decimal number") != std::string::npos);
      CHECK(message.find("0.2 to 0.9") != std::string::npos);
    }
    CHECK(rejection("fast|step|0.9abc").find("\"0.9abc\"") != std::string::npos);
  }

  TEST_CASE("unknown words are rejected with the allowed values") {
    std::string message = rejection("fastxx|step");
    CHECK(message.find("TYPE (field 1) is \"fastxx\"") != std::string::npos);
    CHECK(message.find("allowed: fast, fast1") != std::string::npos);
    CHECK(message.find("did you mean \"fast\"") != std::string::npos);

    message = rejection("fast|stepxx");
    CHECK(message.find("TRIGGER (field 2) is \"stepxx\"") != std::string::npos);
    CHECK(message.find("allowed: step, loss") != std::string::npos);
    CHECK(message.find("did you mean \"step\"") != std::string::npos);

    CHECK(rejection("FAST|step").find("TYPE") != std::string::npos); // case matters
    CHECK(rejection("fast2|step").find("TYPE") != std::string::npos);
    CHECK(rejection("|step").find("TYPE (field 1) is \"\"") != std::string::npos);
    CHECK(rejection("fast||0.9").find("TRIGGER (field 2) is \"\"") != std::string::npos);
  }

  TEST_CASE("field count") {
    for (const char* text : {"fast", "fast|step|0.9|x", "fast|step||", "|||"}) {
      CAPTURE(text);
      CHECK(rejection(text).find("two or three fields") != std::string::npos);
    }
    CHECK(rejection("").find("empty value") != std::string::npos);
    CHECK(rejection("fast").find("got 1 field") != std::string::npos);
    CHECK(rejection("fast|step|0.9|x").find("got 4 fields") != std::string::npos);
  }

  TEST_CASE("whitespace is rejected and the message says so") {
    for (const char* text :
         {" fast|step", "fast |step", "fast| step", "fast|step |0.9", "fast|step| 0.9",
          "fast|step|0.9 ", "fast|step|0.9\n", "fa st|step", "fast|step|\t"}) {
      CAPTURE(text);
      const std::string message = rejection(text);
      CHECK(message.find("whitespace is not allowed") != std::string::npos);
    }
    CHECK(rejection("fast| step").find("TRIGGER (field 2) is \" step\"") != std::string::npos);
    CHECK(rejection("fast| step").find("allowed: step, loss") != std::string::npos);
    CHECK(rejection(" fast|step").find("allowed: fast, fast1") != std::string::npos);
  }
}

TEST_SUITE("npucc::validate_precision_options") {
  const AccelerateTrainMode fast{LowPrecision::float16, SwitchTrigger::step, 0.9};

  TEST_CASE("every valid value is accepted alone") {
    for (const char* value :
         {"force_fp32", "allow_fp32_to_fp16", "force_fp16", "must_keep_origin_dtype",
          "allow_mix_precision", "cube_fp16in_fp32out", "allow_mix_precision_fp16",
          "allow_mix_precision_bf16", "allow_fp32_to_bf16"}) {
      CAPTURE(value);
      CHECK_NOTHROW(validate_precision_options({value, ""}, std::nullopt));
    }
    for (const char* value :
         {"fp16", "origin", "cube_fp16in_fp32out", "mixed_float16", "mixed_bfloat16"}) {
      CAPTURE(value);
      CHECK_NOTHROW(validate_precision_options({"", value}, std::nullopt));
    }
    CHECK_NOTHROW(validate_precision_options({}, std::nullopt));
    CHECK_NOTHROW(validate_precision_options({}, fast));
  }

  TEST_CASE("unknown values list the valid ones and suggest the closest") {
    std::string message = rejection({"allow_fp32_to_fp61", ""}, std::nullopt);
    CHECK(message.find("precision_mode \"allow_fp32_to_fp61\"") != std::string::npos);
    CHECK(message.find("force_fp32, allow_fp32_to_fp16") != std::string::npos);
    CHECK(message.find("did you mean \"allow_fp32_to_fp16\"") != std::string::npos);

    message = rejection({"", "mixed_float61"}, std::nullopt);
    CHECK(message.find("precision_mode_v2 \"mixed_float61\"") != std::string::npos);
    CHECK(message.find("fp16, origin, cube_fp16in_fp32out, mixed_float16, mixed_bfloat16") !=
          std::string::npos);
    CHECK(message.find("did you mean \"mixed_float16\"") != std::string::npos);

    // A v1 value given as v2 is unknown there.
    CHECK(rejection({"", "force_fp32"}, std::nullopt).find("precision_mode_v2") !=
          std::string::npos);
    CHECK(rejection({"mixed_hif8", ""}, std::nullopt).find("did you mean") == std::string::npos);
  }

  TEST_CASE("precision_mode and precision_mode_v2 together are an error on their own") {
    const std::string message = rejection({"allow_fp32_to_fp16", "origin"}, std::nullopt);
    CHECK(message.find("\"allow_fp32_to_fp16\"") != std::string::npos);
    CHECK(message.find("\"origin\"") != std::string::npos);
    CHECK(message.find("cannot be combined") != std::string::npos);
    CHECK_THROWS_AS(validate_precision_options({"allow_fp32_to_fp16", "origin"}, fast),
                    npucc::Error);
  }

  TEST_CASE("compatibility with accelerate_train_mode") {
    for (const char* value : {"allow_fp32_to_fp16", "must_keep_origin_dtype"}) {
      CAPTURE(value);
      CHECK_NOTHROW(validate_precision_options({value, ""}, fast));
    }
    CHECK_NOTHROW(validate_precision_options({"", "origin"}, fast));
    for (const char* value :
         {"force_fp32", "force_fp16", "allow_mix_precision", "cube_fp16in_fp32out",
          "allow_mix_precision_fp16", "allow_mix_precision_bf16", "allow_fp32_to_bf16"}) {
      CAPTURE(value);
      const std::string message = rejection({value, ""}, fast);
      CHECK(message.find("accelerate_train_mode \"fast|step|0.9\"") != std::string::npos);
      CHECK(message.find(std::string("precision_mode \"") + value + "\"") != std::string::npos);
      CHECK(message.find("may only be empty, allow_fp32_to_fp16, must_keep_origin_dtype") !=
            std::string::npos);
    }
    for (const char* value : {"fp16", "cube_fp16in_fp32out", "mixed_float16", "mixed_bfloat16"}) {
      CAPTURE(value);
      const std::string message = rejection({"", value}, fast);
      CHECK(message.find(std::string("precision_mode_v2 \"") + value + "\"") != std::string::npos);
      CHECK(message.find("may only be empty, origin") != std::string::npos);
    }
    // Without an accelerate mode the same values are fine.
    CHECK_NOTHROW(validate_precision_options({"force_fp16", ""}, std::nullopt));
  }

  TEST_CASE("a conflict names where each value came from") {
    try {
      validate_precision_options({"force_fp16", ""}, fast,
                                 {"--accelerate-train-mode", "opts.json: precision_mode", ""});
      FAIL("expected an error");
    } catch (const npucc::Error& e) {
      CHECK(std::string(e.what()).find("accelerate_train_mode \"fast|step|0.9\" (from "
                                       "--accelerate-train-mode) cannot be combined with "
                                       "precision_mode \"force_fp16\" (from opts.json: "
                                       "precision_mode)") == 0);
    }
    try {
      validate_precision_options({"force_fp16", "fp16"}, std::nullopt,
                                 {"", "NPUCC_PRECISION_MODE", "config.toml:3"});
      FAIL("expected an error");
    } catch (const npucc::Error& e) {
      CHECK(std::string(e.what()) == "precision_mode \"force_fp16\" (from NPUCC_PRECISION_MODE) "
                                     "and precision_mode_v2 \"fp16\" (from config.toml:3) "
                                     "cannot be combined");
    }
  }
}
