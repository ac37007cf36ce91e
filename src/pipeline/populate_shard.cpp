#include "pipeline/populate_shard.h"

#include "npucc/error.h"
#include "util/sha256.h"
#include "util/strings.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace npucc::pipeline {

namespace {

constexpr const char* k_shard_hint =
    "give --shard K/N with K from 1 to N, as 1/4 to 4/4 for four machines, or --shard auto";
constexpr const char* k_variable_hint = "fix the variable, or give --shard K/N";
constexpr const char* k_slurm_min = "SLURM_ARRAY_TASK_MIN";
constexpr const char* k_slurm_max = "SLURM_ARRAY_TASK_MAX";
constexpr const char* k_slurm_step = "SLURM_ARRAY_TASK_STEP";

// Digits only, at most 9 of them: "-1", "+1", " 1", "1.0", "0x4" and "" are not numbers.
std::optional<uint64_t> parse_number(const std::string& text) {
  bool digits = !text.empty() && text.size() <= 9 &&
                std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    return std::nullopt;
  }
  return std::stoull(text);
}

// Where a shard index and count come from.
struct Engine {
  const char* name; // for messages
  const char* index;
  const char* count;
  uint64_t first = 0;     // the index of the first shard
  bool slurm_ids = false; // the index is a Slurm array ID: from SLURM_ARRAY_TASK_MIN
};

const Engine k_npucc = {"npucc", "NPUCC_SHARD_INDEX", "NPUCC_SHARD_COUNT", 1};
const std::vector<Engine> k_engines = {
    {"GitLab", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1},
    {"Kubernetes", "JOB_COMPLETION_INDEX", "NPUCC_SHARD_COUNT", 0},
    {"Slurm", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", 0, true},
};

[[noreturn]] void refuse(const std::string& message, std::string hint = k_variable_hint) {
  throw usage_error("--shard auto: " + message, std::move(hint));
}

struct Environment {
  const GetEnv& getenv;

  std::optional<std::string> get(const std::string& name) const {
    std::optional<std::string> value = getenv(name);
    return value && !value->empty() ? value : std::nullopt;
  }
  bool has(const std::string& name) const { return get(name).has_value(); }

  // The number in `name`; `needed_by`: the variable set without it, for the error.
  uint64_t number(const std::string& name, const std::string& needed_by) const {
    std::optional<std::string> value = get(name);
    if (!value) {
      refuse(needed_by + " is set but " + name + " is not",
             "set " + name + " as well, or give --shard K/N");
    }
    std::optional<uint64_t> number = parse_number(*value);
    if (!number) {
      refuse(name + "=\"" + util::cut_for_message(*value) + "\" is not a whole number");
    }
    return *number;
  }

  uint64_t count(const Engine& engine) const {
    uint64_t count = number(engine.count, engine.index);
    if (count == 0 || count > k_max_shards) {
      refuse(std::string(engine.count) + "=" + std::to_string(count) +
             " is not a number of shards from 1 to " + std::to_string(k_max_shards));
    }
    return count;
  }
};

std::string source_of(const Engine& engine) {
  return std::string(engine.index) + "/" + engine.count;
}

PopulateShard from_variables(const Environment& env, const Engine& engine) {
  uint64_t index = env.number(engine.index, engine.index);
  uint64_t count = env.count(engine);
  if (index < engine.first || index - engine.first >= count) {
    refuse(std::string(engine.index) + "=" + std::to_string(index) + " is outside " +
               std::to_string(engine.first) + ".." + std::to_string(engine.first + count - 1) +
               " (" + engine.count + "=" + std::to_string(count) + ")",
           std::string(engine.name) + " counts " + engine.index + " from " +
               std::to_string(engine.first) + "; " + k_variable_hint);
  }
  return {static_cast<unsigned>(index - engine.first), static_cast<unsigned>(count),
          source_of(engine)};
}

// A Slurm array's IDs run from SLURM_ARRAY_TASK_MIN in steps (--array=1-4, 0-12:4): the
// shard is the ID's place among them. An uneven list (--array=1,2,7) has no such place.
PopulateShard from_slurm(const Environment& env, const Engine& engine) {
  uint64_t id = env.number(engine.index, engine.index);
  uint64_t count = env.count(engine);
  uint64_t min = env.number(k_slurm_min, engine.index);
  uint64_t step = env.has(k_slurm_step) ? env.number(k_slurm_step, engine.index) : 1;
  std::string array = std::string("the array from ") + k_slurm_min + "=" + std::to_string(min) +
                      " in steps of " + std::to_string(step) + ", " + engine.count + "=" +
                      std::to_string(count);
  uint64_t max =
      env.has(k_slurm_max) ? env.number(k_slurm_max, engine.index) : min + (count - 1) * step;
  if (step == 0 || max != min + (count - 1) * step) {
    refuse(array + ", does not end at " + k_slurm_max + "=" + std::to_string(max),
           "give the array evenly spaced IDs, as --array=1-4, or give --shard K/N");
  }
  if (id < min || (id - min) % step != 0 || (id - min) / step >= count) {
    refuse(std::string(engine.index) + "=" + std::to_string(id) + " is not an ID of " + array);
  }
  return {static_cast<unsigned>((id - min) / step), static_cast<unsigned>(count),
          source_of(engine)};
}

// Count variables, each with the index it needs.
const std::vector<std::pair<std::string, std::string>> k_counts = {
    {"NPUCC_SHARD_COUNT", "neither NPUCC_SHARD_INDEX nor JOB_COMPLETION_INDEX is"},
    {"SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_ID is not"},
    {"CI_NODE_TOTAL", "CI_NODE_INDEX is not"},
};

// No index is set: a count alone is a mistake, but for GitLab's CI_NODE_TOTAL=1 (a job
// without `parallel:`, which GitLab still gives a total).
PopulateShard without_index(const Environment& env, const GetEnv& getenv) {
  for (const auto& [count, index] : k_counts) {
    if (count == "CI_NODE_TOTAL" && env.has(count) && env.number(count, count) == 1) {
      return {0, 1, count};
    }
    if (env.has(count)) {
      refuse(count + " is set but " + index, "set the index as well, or give --shard K/N");
    }
  }
  bool github = getenv("GITHUB_ACTIONS").value_or("") == "true";
  refuse("no shard index in the environment (NPUCC_SHARD_INDEX, CI_NODE_INDEX, "
         "JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID)",
         github ? "pass the matrix in the step's env, NPUCC_SHARD_INDEX: ${{ matrix.shard }} "
                  "counting from 1 and NPUCC_SHARD_COUNT: ${{ strategy.job-total }}, or give "
                  "--shard K/N"
                : "set NPUCC_SHARD_INDEX, counting from 1, and NPUCC_SHARD_COUNT, or give "
                  "--shard K/N");
}

} // namespace

unsigned shard_of(std::string_view shard_key, unsigned count) {
  std::string digest = util::sha256_hex(shard_key);
  uint64_t number = std::stoull(digest.substr(0, 16), nullptr, 16);
  return static_cast<unsigned>(number % count);
}

std::vector<PopulateModel> take_shard(std::vector<PopulateModel> models,
                                      const PopulateShard& shard) {
  std::vector<PopulateModel> mine;
  for (auto& model : models) {
    const std::string key = model.shard_key.empty() ? model.path.generic_string() : model.shard_key;
    if (shard_of(key, shard.count) == shard.index) {
      mine.push_back(std::move(model));
    }
  }
  return mine;
}

PopulateShard parse_shard(const std::string& text) {
  auto bad = [&](const std::string& why) {
    throw usage_error("--shard " + util::cut_for_message(text) + ": " + why, k_shard_hint);
  };
  size_t slash = text.find('/');
  std::optional<uint64_t> k = parse_number(text.substr(0, slash));
  std::optional<uint64_t> n =
      slash == std::string::npos ? std::nullopt : parse_number(text.substr(slash + 1));
  if (!k || !n) {
    bad("not K/N");
  }
  if (*n == 0 || *n > k_max_shards) {
    bad(*n == 0 ? "N must be at least 1" : "N is above " + std::to_string(k_max_shards));
  }
  if (*k == 0 || *k > *n) {
    bad(*k == 0 ? "K counts from 1, not 0" : "K is above N");
  }
  return {static_cast<unsigned>(*k - 1), static_cast<unsigned>(*n), "--shard"};
}

PopulateShard shard_from_environment(const GetEnv& getenv) {
  Environment env{getenv};
  if (env.has(k_npucc.index)) {
    return from_variables(env, k_npucc);
  }
  std::vector<const Engine*> found;
  for (const Engine& engine : k_engines) {
    if (env.has(engine.index)) {
      found.push_back(&engine);
    }
  }
  if (found.size() > 1) {
    refuse(std::string(found[0]->index) + " (" + found[0]->name + ") and " + found[1]->index +
               " (" + found[1]->name + ") are both set",
           "set NPUCC_SHARD_INDEX and NPUCC_SHARD_COUNT, which take precedence, or give "
           "--shard K/N");
  }
  if (found.empty()) {
    return without_index(env, getenv);
  }
  return found[0]->slurm_ids ? from_slurm(env, *found[0]) : from_variables(env, *found[0]);
}

} // namespace npucc::pipeline
