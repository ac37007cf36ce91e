#pragma once

#include "npucc/cache.h"
#include "npucc/config.h"

#include <string>
#include <string_view>
#include <vector>

// `cache populate --shard K/N` and `--shard auto`: which models this machine of a CI
// matrix compiles.
//
// The split is by a hash of each model's path (PopulateModel::shard_key), so a model's
// shard depends on its path and N alone: not on the listing order, the other models, the
// directory iteration order or the machine. The shards are disjoint and together the
// whole set. With a uniform hash each shard gets about 1/N of the models (for M models,
// M/N give or take about sqrt(M/N)); a small set can leave a shard with none.
namespace npucc::pipeline {

// The largest N: a matrix of more machines than this is a typo.
constexpr unsigned k_max_shards = 10000;

// The shard (0-based, below `count`) of the model with this key: the first 8 bytes of
// the key's SHA-256 as a big-endian number, modulo `count`. Never change it: every
// machine of one matrix must split alike, whatever npucc version each runs.
unsigned shard_of(std::string_view shard_key, unsigned count);

// The models of `shard`, in their order: those whose shard_key (or, when it is empty,
// path) shard_of puts there.
std::vector<PopulateModel> take_shard(std::vector<PopulateModel> models,
                                      const PopulateShard& shard);

// "K/N" with 1 <= K <= N (K counts from 1, as CI matrices do: 1/4 to 4/4); throws
// usage_error naming --shard otherwise.
PopulateShard parse_shard(const std::string& text);

// `--shard auto`: the shard from the environment (the first that applies):
//   NPUCC_SHARD_INDEX (1-based) / NPUCC_SHARD_COUNT: set by hand, or in GitHub Actions
//     from the matrix; it overrides the rest;
//   one of
//     CI_NODE_INDEX (1-based) / CI_NODE_TOTAL: GitLab's `parallel:`;
//     JOB_COMPLETION_INDEX (0-based) / NPUCC_SHARD_COUNT: a Kubernetes indexed Job (its
//       `completions`, which no variable gives);
//     SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT: a Slurm array, whose IDs run from
//       SLURM_ARRAY_TASK_MIN in steps of SLURM_ARRAY_TASK_STEP (1 if unset);
//     two of them at once (a Slurm job submitted from a GitLab one inherits its
//     variables) are refused, not guessed between;
//   CI_NODE_TOTAL=1 alone: a GitLab job without `parallel:`, shard 1/1.
// An empty variable counts as unset. Throws usage_error naming the variable for an index
// without its count, a value that is not a number or out of range, and when none is set.
PopulateShard shard_from_environment(const GetEnv& getenv);

} // namespace npucc::pipeline
