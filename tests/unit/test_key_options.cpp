#include "output/manifest.h"
#include "key/key_options.h"
#include "passes/registry.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using npucc::CompileOptions;
using npucc::key::key_options;
using npucc::key::KeyOptions;

namespace {

// x: fully declared; n: a named batch dim; u: a scalar; w: an initializer.
onnx::ModelProto model_at(int opset) {
  return npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : )" +
                                       std::to_string(opset) + R"(]>
    g (float[1,3] x, float[N,3] n, float u, float[3] w) => (float[1,3] y) <float[3] w = {1,2,3}> {
      a = Add(x, w)
      b = Add(n, w)
      y = Add(a, b)
    }
  )");
}

CompileOptions with_mode(const std::string& mode) {
  CompileOptions options;
  options.accelerate_train_mode = npucc::parse_accelerate_train_mode(mode);
  return options;
}

std::vector<std::string> omitted_names(const KeyOptions& keyed) {
  std::vector<std::string> names;
  for (const auto& omission : keyed.not_in_key) {
    names.push_back(omission.name);
  }
  return names;
}

KeyOptions with_shape(const onnx::ModelProto& model, const std::string& shapes) {
  CompileOptions options;
  options.input_shapes = npucc::parse_input_shapes(shapes);
  return key_options(options, model);
}

} // namespace

TEST_SUITE("npucc::key::KeyOptions") {
  TEST_CASE("the schedule is not part of the key; the type is") {
    const auto model = model_at(17);
    const KeyOptions step_09 = key_options(with_mode("fast|step|0.9"), model);
    CHECK(key_options(with_mode("fast|step|0.8"), model).canonical == step_09.canonical);
    CHECK(key_options(with_mode("fast|loss"), model).canonical == step_09.canonical);
    CHECK(key_options(with_mode("fast|step"), nullptr).canonical == step_09.canonical);
    CHECK(key_options(with_mode("fast1|step|0.9"), model).canonical != step_09.canonical);
    CHECK(key_options(CompileOptions{}, model).canonical != step_09.canonical);
    auto options = nlohmann::json::parse(step_09.canonical);
    CHECK(options["precision"]["accelerate_train_mode_type"] == "fast");
    CHECK(step_09.canonical.find("step") == std::string::npos);

    REQUIRE(step_09.not_in_key.size() == 1);
    CHECK(step_09.not_in_key[0].name == "schedule");
    CHECK(step_09.not_in_key[0].value == "fast|step|0.9");
    CHECK(step_09.not_in_key[0].why.find("written at materialisation") != std::string::npos);
    CHECK(key_options(CompileOptions{}, model).not_in_key.empty());
  }

  TEST_CASE("an --input-shape equal to the declared shape is not part of the key") {
    const auto model = model_at(17);
    const std::string plain = key_options(CompileOptions{}, model).canonical;

    SUBCASE("the declared dims, or -1 for any of them: a no-op") {
      for (std::string shapes : {"x:1,3", "x:-1,3", "x:-1,-1", "n:-1,3", "u:"}) {
        CAPTURE(shapes);
        KeyOptions keyed = with_shape(model, shapes);
        CHECK(keyed.canonical == plain);
        REQUIRE(omitted_names(keyed) == std::vector<std::string>{"input_shapes"});
        CHECK(keyed.not_in_key[0].why ==
              "equal to the model's declared shape: not part of the key");
      }
      CHECK(with_shape(model, "x:1,3").not_in_key[0].value == "x:1,3");
    }
    SUBCASE("a named dim given a value is not a no-op") {
      KeyOptions keyed = with_shape(model, "n:4,3");
      CHECK(keyed.canonical != plain);
      CHECK(keyed.not_in_key.empty());
      CHECK(nlohmann::json::parse(keyed.canonical)["input_shapes"]["n"] ==
            nlohmann::json::array({4, 3}));
    }
    SUBCASE("only the no-op entries leave: x goes, n stays") {
      KeyOptions keyed = with_shape(model, "x:1,3;n:4,3");
      CHECK(keyed.canonical == with_shape(model, "n:4,3").canonical);
      CHECK(omitted_names(keyed) == std::vector<std::string>{"input_shapes"});
    }
    SUBCASE("what would be an error stays in the key (the compile refuses it)") {
      for (std::string shapes : {"x:2,3", "x:1,3,1", "nope:1,3", "w:3", "u:1"}) {
        CAPTURE(shapes);
        KeyOptions keyed = with_shape(model, shapes);
        CHECK(keyed.canonical != plain);
        CHECK(keyed.not_in_key.empty());
      }
    }
    SUBCASE("an input of unknown rank gets a shape: not a no-op, even an empty one") {
      auto unranked = model;
      unranked.mutable_graph()
          ->mutable_input(2)
          ->mutable_type()
          ->mutable_tensor_type()
          ->clear_shape();
      CHECK(with_shape(unranked, "u:").not_in_key.empty());
      CHECK(with_shape(unranked, "x:1,3").not_in_key.size() == 1);
    }
    SUBCASE("without the model nothing is judged: the shapes stay") {
      CompileOptions options;
      options.input_shapes = npucc::parse_input_shapes("x:1,3");
      CHECK(npucc::key::key_options_need_model(options));
      CHECK(key_options(options, nullptr).canonical != plain);
      CHECK_FALSE(npucc::key::key_options_need_model(with_mode("fast|step")));
    }
  }

  TEST_CASE("--passes equal to the default pipeline is keyed as the default") {
    const auto model = model_at(17);
    CompileOptions options;
    const std::string plain = key_options(options, model).canonical;
    options.passes = npucc::passes::default_pipeline();
    KeyOptions keyed = key_options(options, model);
    CHECK(keyed.canonical == plain);
    CHECK(omitted_names(keyed) == std::vector<std::string>{"passes"});
    options.passes.pop_back();
    keyed = key_options(options, model);
    CHECK(keyed.canonical != plain);
    CHECK(keyed.not_in_key.empty());
  }

  TEST_CASE(
      "--target-opset equal to the model's opset is a no-op unless a bfloat16 graph is raised") {
    CompileOptions options = with_mode("fast|step");
    const auto at17 = model_at(17);
    const std::string plain = key_options(options, at17).canonical;
    options.target_opset = 17;
    KeyOptions keyed = key_options(options, at17);
    CHECK(keyed.canonical == plain);
    CHECK(omitted_names(keyed) == std::vector<std::string>{"schedule", "target_opset"});

    SUBCASE("another opset raises the model") {
      options.target_opset = 18;
      CHECK(key_options(options, at17).canonical != plain);
    }
    SUBCASE("fast1 below 22: the option keeps the low graph at the model's opset") {
      options.accelerate_train_mode = npucc::parse_accelerate_train_mode("fast1|step");
      CHECK(omitted_names(key_options(options, at17)) == std::vector<std::string>{"schedule"});
    }
    SUBCASE("fast below 15: the option keeps a BatchNormalization's low graph at the model's "
            "opset") {
      const auto at13 = model_at(13);
      options.target_opset = 13;
      CHECK(omitted_names(key_options(options, at13)) == std::vector<std::string>{"schedule"});
    }
    SUBCASE("a precision mode is judged conservatively: kept") {
      options.accelerate_train_mode.reset();
      options.precision.precision_mode = "allow_fp32_to_fp16";
      CHECK(key_options(options, at17).not_in_key.empty());
    }
    SUBCASE("fast1 at opset 22: nothing to raise, a no-op") {
      const auto at22 = model_at(22);
      options.accelerate_train_mode = npucc::parse_accelerate_train_mode("fast1|step");
      options.target_opset = 22;
      CompileOptions without = options;
      without.target_opset = 0;
      CHECK(key_options(options, at22).canonical == key_options(without, at22).canonical);
    }
  }

  TEST_CASE("a hit's manifest states the request's schedule, not the entry's") {
    nlohmann::json stored = {{"model", {{"file", "first.onnx"}, {"sha256", "s"}}},
                             {"schedule", npucc::output::schedule_json(
                                              *with_mode("fast|step|0.9").accelerate_train_mode)},
                             {"graphs", nlohmann::json::array()}};
    CompileOptions request = with_mode("fast|loss|1.2");
    request.model_path = "/models/second.onnx";
    npucc::CacheKey key;
    key.key = std::string(64, 'a');
    key.components.push_back({"options", std::string(64, 'b'), "{}"});
    key.not_in_key = key_options(request, nullptr).not_in_key;

    nlohmann::json manifest = stored;
    npucc::output::restate_request(manifest, request, key);
    CHECK(manifest["model"]["file"] == "second.onnx");
    CHECK(manifest["model"]["sha256"] == "s");
    CHECK(manifest["schedule"]["mode"] == "fast|loss|1.2");
    CHECK(manifest["schedule"]["trigger"] == "loss");
    CHECK(manifest["schedule"]["ratio"] == 1.2);
    CHECK(manifest["schedule"]["rule"].get<std::string>().find("final_loss * 1.2") !=
          std::string::npos);
    CHECK(manifest["graphs"] == stored["graphs"]);
    CHECK(manifest["cache_key"] == key.key);
    const auto& components = manifest["cache_key_components"];
    REQUIRE(components.size() == 2);
    CHECK(components[0]["in_key"] == true);
    CHECK(components[1] == nlohmann::json({{"name", "schedule"},
                                           {"in_key", false},
                                           {"value", "fast|loss|1.2"},
                                           {"why", key.not_in_key[0].why}}));

    SUBCASE("without a mode there is no schedule") {
      CompileOptions plain;
      plain.model_path = "m.onnx";
      npucc::output::restate_request(manifest, plain, key);
      CHECK_FALSE(manifest.contains("schedule"));
    }
  }
}

TEST_SUITE("npucc::key::KeyFacts") {
  using npucc::key::key_facts;
  using npucc::key::key_facts_text;
  using npucc::key::KeyFacts;
  using npucc::key::parse_key_facts;

  TEST_CASE("facts kept as text key every request as the model itself does") {
    for (int opset : {17, 22}) {
      const auto model = model_at(opset);
      const std::string text = key_facts_text(key_facts(model));
      CHECK(text.find('\n') == std::string::npos);
      std::optional<KeyFacts> facts = parse_key_facts(text);
      REQUIRE(facts.has_value());
      CHECK(facts->opset == opset);
      CHECK(facts->input_shapes.count("w") == 0); // an initializer
      for (std::string shapes : {"", "x:1,3", "x:-1,3", "n:-1,3", "n:4,3", "u:", "u:1", "x:2,3",
                                 "nope:1", "w:3", "x:1,3;n:4,3"}) {
        for (int64_t target : {0, 17, 22}) {
          CompileOptions options = with_mode("fast1|step|0.9");
          if (!shapes.empty()) {
            options.input_shapes = npucc::parse_input_shapes(shapes);
          }
          options.target_opset = target;
          CAPTURE(shapes);
          CAPTURE(target);
          const KeyOptions direct = key_options(options, model);
          const KeyOptions kept = key_options(options, &*facts);
          CHECK(kept.canonical == direct.canonical);
          CHECK(omitted_names(kept) == omitted_names(direct));
        }
      }
    }
  }

  TEST_CASE("any input name survives the text; what is not facts is refused") {
    KeyFacts facts;
    facts.opset = 13;
    facts.input_shapes[std::string("a\nb\xff\0c", 6)] = {1, std::nullopt, 3};
    std::optional<KeyFacts> back = parse_key_facts(key_facts_text(facts));
    REQUIRE(back.has_value());
    CHECK(back->input_shapes == facts.input_shapes);
    for (std::string bad :
         {"", "{}", "[]", R"({"opset":"13","inputs":[]})", R"({"opset":13,"inputs":[["zz",[1]]]})",
          R"({"opset":13,"inputs":[["61",[1.5]]]})", R"({"opset":13,"inputs":[["61"]]})"}) {
      CAPTURE(bad);
      CHECK_FALSE(parse_key_facts(bad).has_value());
    }
  }
}
