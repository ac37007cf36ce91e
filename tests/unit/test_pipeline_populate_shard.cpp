#include "npucc/error.h"
#include "pipeline/populate_shard.h"
#include "test_support.h"

#include <algorithm>
#include <doctest/doctest.h>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using npucc::PopulateModel;
using npucc::PopulateShard;
using npucc::pipeline::parse_shard;
using npucc::pipeline::shard_from_environment;
using npucc::pipeline::shard_of;
using npucc::pipeline::take_shard;

namespace {

std::vector<PopulateModel> models_named(const std::vector<std::string>& keys) {
  std::vector<PopulateModel> models;
  for (const auto& key : keys) {
    PopulateModel model;
    model.path = "/checkout/" + key;
    model.shard_key = key;
    models.push_back(model);
  }
  return models;
}

std::vector<std::string> many_keys(size_t count) {
  std::vector<std::string> keys;
  for (size_t i = 0; i < count; ++i) {
    keys.push_back("models/group" + std::to_string(i % 7) + "/model_" + std::to_string(i) +
                   ".onnx");
  }
  return keys;
}

std::multiset<std::string> keys_of(const std::vector<PopulateModel>& models) {
  std::multiset<std::string> keys;
  for (const auto& model : models) {
    keys.insert(model.shard_key);
  }
  return keys;
}

PopulateShard from_env(std::map<std::string, std::string> variables) {
  return shard_from_environment(npucc::test::fake_getenv(std::move(variables)));
}

// The usage error (exit 2) of the environment, its message and hint in one line.
std::string env_error(std::map<std::string, std::string> variables) {
  try {
    from_env(std::move(variables));
  } catch (const npucc::Error& e) {
    CHECK(e.status() == npucc::ExitStatus::usage);
    return e.line();
  }
  FAIL("no error");
  return {};
}

std::string shard_error(const std::string& text) {
  try {
    parse_shard(text);
  } catch (const npucc::Error& e) {
    CHECK(e.status() == npucc::ExitStatus::usage);
    return e.line();
  }
  FAIL("no error for --shard " << text);
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_SUITE("npucc::pipeline::populate_shard") {
  TEST_CASE("known assignments: a change of the hash would split CI matrices differently") {
    // SHA-256 of the key, first 8 bytes big-endian, modulo N (checked with Python's hashlib).
    CHECK(shard_of("ppocr_cls.onnx", 7) == 3);
    CHECK(shard_of("a.onnx", 4) == 2);
    CHECK(shard_of("models/bert.onnx", 3) == 1);
    CHECK(shard_of("torch/lstm_tagger.onnx", 4) == 3);
    CHECK(shard_of("ocr/det.onnx", 7) == 4);
    CHECK(shard_of("z.onnx", 7) == 5);
    CHECK(shard_of("anything", 1) == 0);
  }

  TEST_CASE("the shards are disjoint and together the whole set, for several N") {
    std::vector<std::string> keys = many_keys(500);
    std::multiset<std::string> all(keys.begin(), keys.end());
    for (unsigned count : {1u, 2u, 3u, 4u, 7u, 16u}) {
      CAPTURE(count);
      std::multiset<std::string> seen;
      for (unsigned index = 0; index < count; ++index) {
        for (const auto& key : keys_of(take_shard(models_named(keys), {index, count, ""}))) {
          CHECK(seen.count(key) == 0);
          seen.insert(key);
        }
      }
      CHECK(seen == all);
    }
  }

  TEST_CASE("about 1/N each: 2000 models over 4 shards") {
    std::vector<std::string> keys = many_keys(2000);
    for (unsigned index = 0; index < 4; ++index) {
      size_t taken = take_shard(models_named(keys), {index, 4, ""}).size();
      CAPTURE(index);
      CHECK(taken > 400);
      CHECK(taken < 600);
    }
  }

  TEST_CASE("a model's shard does not depend on the listing order or the other models") {
    std::vector<std::string> keys = many_keys(60);
    std::multiset<std::string> first = keys_of(take_shard(models_named(keys), {1, 3, ""}));
    std::mt19937 shuffle(42);
    std::shuffle(keys.begin(), keys.end(), shuffle);
    CHECK(keys_of(take_shard(models_named(keys), {1, 3, ""})) == first);
    keys.resize(30); // a machine that lists fewer models keeps the others' shards
    for (const auto& key : keys_of(take_shard(models_named(keys), {1, 3, ""}))) {
      CHECK(first.count(key) == 1);
    }
  }

  TEST_CASE("the key, not the path, decides: the checkout may be anywhere") {
    PopulateModel here;
    here.path = "/home/runner/work/m/models/a.onnx";
    here.shard_key = "a.onnx";
    PopulateModel there = here;
    there.path = "/builds/group/m/models/a.onnx";
    std::vector<PopulateModel> in_shard = take_shard({here, there}, {2, 4, ""});
    CHECK(in_shard.size() == 2);
    PopulateModel without_key;
    without_key.path = "a.onnx"; // no key: the path
    CHECK(take_shard({without_key}, {2, 4, ""}).size() == 1);
    CHECK(take_shard({without_key}, {1, 4, ""}).empty());
  }

  TEST_CASE("--shard K/N counts K from 1") {
    PopulateShard shard = parse_shard("2/4");
    CHECK(shard.index == 1);
    CHECK(shard.count == 4);
    CHECK(shard.source == "--shard");
    CHECK(parse_shard("1/1").index == 0);
    CHECK(parse_shard("4/4").index == 3);
  }

  TEST_CASE("--shard refuses what is not K/N with 1 <= K <= N") {
    CHECK(contains(shard_error("0/4"), "--shard 0/4: K counts from 1, not 0"));
    CHECK(contains(shard_error("5/4"), "--shard 5/4: K is above N"));
    CHECK(contains(shard_error("2/0"), "--shard 2/0: N must be at least 1"));
    CHECK(contains(shard_error("1/10001"), "N is above 10000"));
    for (const char* bad : {"a/b", "", "2", "/", "1/", "/4", "1/4/4", "-1/4", "+1/4", " 1/4",
                            "1 /4", "1.0/4", "0x1/4", "99999999999/4"}) {
      CAPTURE(bad);
      std::string line = shard_error(bad);
      CHECK(contains(line, "not K/N"));
      CHECK(contains(line, "give --shard K/N with K from 1 to N"));
    }
  }

  TEST_CASE("auto: the variables of each engine, and the source named") {
    PopulateShard gitlab = from_env({{"CI_NODE_INDEX", "2"}, {"CI_NODE_TOTAL", "4"}});
    CHECK(gitlab.index == 1);
    CHECK(gitlab.count == 4);
    CHECK(gitlab.source == "CI_NODE_INDEX/CI_NODE_TOTAL");
    PopulateShard k8s = from_env({{"JOB_COMPLETION_INDEX", "0"}, {"NPUCC_SHARD_COUNT", "3"}});
    CHECK(k8s.index == 0);
    CHECK(k8s.count == 3);
    CHECK(k8s.source == "JOB_COMPLETION_INDEX/NPUCC_SHARD_COUNT");
    PopulateShard ours = from_env({{"NPUCC_SHARD_INDEX", "4"}, {"NPUCC_SHARD_COUNT", "4"}});
    CHECK(ours.index == 3);
    CHECK(ours.source == "NPUCC_SHARD_INDEX/NPUCC_SHARD_COUNT");
    PopulateShard alone = from_env({{"CI_NODE_TOTAL", "1"}}); // GitLab without parallel:
    CHECK(alone.index == 0);
    CHECK(alone.count == 1);
    CHECK(alone.source == "CI_NODE_TOTAL");
  }

  TEST_CASE("auto: Slurm array IDs count from SLURM_ARRAY_TASK_MIN, in steps") {
    auto slurm = [](const std::string& id, const std::string& min, const std::string& step) {
      std::map<std::string, std::string> env = {{"SLURM_ARRAY_TASK_ID", id},
                                                {"SLURM_ARRAY_TASK_COUNT", "4"},
                                                {"SLURM_ARRAY_TASK_MIN", min}};
      if (!step.empty()) {
        env["SLURM_ARRAY_TASK_STEP"] = step;
      }
      return env;
    };
    CHECK(from_env(slurm("1", "1", "")).index == 0); // --array=1-4
    CHECK(from_env(slurm("4", "1", "")).index == 3);
    CHECK(from_env(slurm("0", "0", "1")).index == 0); // --array=0-3
    CHECK(from_env(slurm("3", "0", "1")).index == 3);
    CHECK(from_env(slurm("8", "0", "4")).index == 2); // --array=0-12:4
    CHECK(from_env(slurm("8", "0", "4")).source == "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT");
    std::map<std::string, std::string> ends = slurm("12", "0", "4");
    ends["SLURM_ARRAY_TASK_MAX"] = "12";
    CHECK(from_env(ends).index == 3);
    CHECK(contains(env_error(slurm("5", "1", "")), "SLURM_ARRAY_TASK_ID=5 is not an ID of"));
    CHECK(contains(env_error(slurm("0", "1", "")), "SLURM_ARRAY_TASK_ID=0 is not an ID of"));
    CHECK(contains(env_error(slurm("6", "0", "4")), "SLURM_ARRAY_TASK_ID=6 is not an ID of"));
    std::map<std::string, std::string> uneven = slurm("2", "1", ""); // --array=1,2,3,9
    uneven["SLURM_ARRAY_TASK_MAX"] = "9";
    CHECK(contains(env_error(uneven), "does not end at SLURM_ARRAY_TASK_MAX=9"));
    std::map<std::string, std::string> no_min = slurm("2", "1", "");
    no_min.erase("SLURM_ARRAY_TASK_MIN");
    CHECK(
        contains(env_error(no_min), "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MIN is not"));
  }

  TEST_CASE("auto: NPUCC_SHARD_INDEX takes precedence; two engines at once are refused") {
    PopulateShard ours = from_env({{"NPUCC_SHARD_INDEX", "1"},
                                   {"NPUCC_SHARD_COUNT", "2"},
                                   {"CI_NODE_INDEX", "3"},
                                   {"CI_NODE_TOTAL", "4"},
                                   {"SLURM_ARRAY_TASK_ID", "7"}});
    CHECK(ours.source == "NPUCC_SHARD_INDEX/NPUCC_SHARD_COUNT");
    CHECK(ours.index == 0);
    std::string both = env_error({{"CI_NODE_INDEX", "1"},
                                  {"CI_NODE_TOTAL", "2"},
                                  {"SLURM_ARRAY_TASK_ID", "1"},
                                  {"SLURM_ARRAY_TASK_COUNT", "2"},
                                  {"SLURM_ARRAY_TASK_MIN", "1"}});
    CHECK(contains(both, "CI_NODE_INDEX (GitLab) and SLURM_ARRAY_TASK_ID (Slurm) are both set"));
    CHECK(contains(both, "NPUCC_SHARD_INDEX and NPUCC_SHARD_COUNT, which take precedence"));
  }

  TEST_CASE("auto: partial, non-numeric and out-of-range variables name the variable") {
    CHECK(contains(env_error({{"CI_NODE_INDEX", "2"}}),
                   "--shard auto: CI_NODE_INDEX is set but CI_NODE_TOTAL is not"));
    CHECK(contains(env_error({{"JOB_COMPLETION_INDEX", "2"}}),
                   "JOB_COMPLETION_INDEX is set but NPUCC_SHARD_COUNT is not"));
    CHECK(contains(env_error({{"NPUCC_SHARD_COUNT", "4"}}),
                   "NPUCC_SHARD_COUNT is set but neither NPUCC_SHARD_INDEX nor JOB_COMPLETION_INDEX is"));
    CHECK(contains(env_error({{"CI_NODE_TOTAL", "4"}}),
                   "CI_NODE_TOTAL is set but CI_NODE_INDEX is not"));
    CHECK(contains(env_error({{"SLURM_ARRAY_TASK_COUNT", "4"}}),
                   "SLURM_ARRAY_TASK_COUNT is set but SLURM_ARRAY_TASK_ID is not"));
    CHECK(contains(env_error({{"CI_NODE_INDEX", "two"}, {"CI_NODE_TOTAL", "4"}}),
                   "CI_NODE_INDEX=\"two\" is not a whole number"));
    CHECK(contains(env_error({{"CI_NODE_INDEX", "1"}, {"CI_NODE_TOTAL", "-4"}}),
                   "CI_NODE_TOTAL=\"-4\" is not a whole number"));
    CHECK(contains(env_error({{"CI_NODE_INDEX", "5"}, {"CI_NODE_TOTAL", "4"}}),
                   "CI_NODE_INDEX=5 is outside 1..4 (CI_NODE_TOTAL=4)"));
    CHECK(contains(env_error({{"CI_NODE_INDEX", "0"}, {"CI_NODE_TOTAL", "4"}}),
                   "GitLab counts CI_NODE_INDEX from 1"));
    CHECK(contains(env_error({{"JOB_COMPLETION_INDEX", "3"}, {"NPUCC_SHARD_COUNT", "3"}}),
                   "JOB_COMPLETION_INDEX=3 is outside 0..2"));
    CHECK(contains(env_error({{"NPUCC_SHARD_INDEX", "1"}, {"NPUCC_SHARD_COUNT", "0"}}),
                   "NPUCC_SHARD_COUNT=0 is not a number of shards from 1 to 10000"));
  }

  TEST_CASE("auto: nothing set is an error; in GitHub Actions it says what to pass") {
    std::string none = env_error({{"CI_NODE_INDEX", ""}, {"HOME", "/root"}}); // empty: unset
    CHECK(contains(none, "--shard auto: no shard index in the environment"));
    CHECK(contains(none, "set NPUCC_SHARD_INDEX, counting from 1, and NPUCC_SHARD_COUNT"));
    std::string github = env_error({{"GITHUB_ACTIONS", "true"}});
    CHECK(contains(github, "NPUCC_SHARD_INDEX: ${{ matrix.shard }}"));
    CHECK(contains(github, "NPUCC_SHARD_COUNT: ${{ strategy.job-total }}"));
  }
}
