// A training program's (or a tool's) view of npucc, built against the installed package
// only: the version, reading a model, the train mode and its schedule, a compile through
// the cache (a miss, then a hit), and listing and verifying the cache.
//
//   consumer                      the version
//   consumer MODEL                also the model's node count
//   consumer MODEL CACHE OUT      also everything else; CACHE must not exist yet
//
// Prints one fact a line for tests/e2e/test_install_consumer.sh; returns non-zero on failure.
#include <filesystem>
#include <iostream>
#include <npucc/cache.h>
#include <npucc/cache_maintenance.h>
#include <npucc/compile.h>
#include <npucc/error.h>
#include <npucc/model.h>
#include <npucc/schedule.h>
#include <npucc/train_mode.h>
#include <npucc/version.h>
#include <string>

namespace {

void schedule_example() {
  npucc::AccelerateTrainMode mode = npucc::parse_accelerate_train_mode("fast|step|0.9");
  npucc::PrecisionSchedule schedule(mode);
  std::cout << "mode " << mode.to_string() << "\n";
  std::cout << "step 8999 " << npucc::to_string(schedule.report_step(8999, 10000)) << "\n";
  std::cout << "step 9000 " << npucc::to_string(schedule.report_step(9000, 10000)) << "\n";
  // One-way: an earlier step after the switch stays high.
  std::cout << "step 10 " << npucc::to_string(schedule.report_step(10, 10000)) << "\n";

  // What a checkpoint saves (as JSON), restored into the schedule of a resumed run.
  const std::string checkpoint = npucc::schedule_state_json(schedule.state());
  npucc::ScheduleState saved = npucc::parse_schedule_state_json(checkpoint, "checkpoint");
  npucc::PrecisionSchedule resumed(npucc::parse_accelerate_train_mode(saved.mode));
  resumed.restore(saved);
  std::cout << "resumed " << npucc::to_string(resumed.current()) << "\n";

  try {
    npucc::parse_accelerate_train_mode("slow|step|0.9");
  } catch (const npucc::Error& e) {
    std::cout << "bad mode: " << e.line() << "\n";
  }
}

void compile_twice(const std::filesystem::path& model, const npucc::CacheConfig& config,
                   const std::filesystem::path& out) {
  npucc::CompileOptions options;
  options.model_path = model;
  options.output_dir = out;
  options.accelerate_train_mode = npucc::parse_accelerate_train_mode("fast|step|0.9");
  for (int run = 0; run < 2; ++run) {
    npucc::CachedCompile compiled =
        npucc::compile_cached(options, config, npucc::CacheUse::enabled);
    std::cout << "compile " << npucc::outcome_name(compiled.outcome) << " " << compiled.key << "\n";
    for (const auto& graph : compiled.result.graphs) {
      std::cout << "  graph " << graph.role << " " << graph.precision << " " << graph.graph.file
                << (std::filesystem::is_regular_file(out / graph.graph.file) ? " written" : "")
                << "\n";
    }
    std::cout << "  manifest "
              << (std::filesystem::is_regular_file(compiled.result.manifest_path) ? "written"
                                                                                  : "missing")
              << "\n";
  }
}

void read_cache(const npucc::CacheConfig& config) {
  npucc::Cache cache(config);
  for (const auto& entry : cache.entries()) {
    std::cout << "entry " << entry.key << " " << entry.model << " " << entry.variants << " "
              << entry.state << "\n";
  }
  npucc::CacheStatistics stats = cache.stats();
  std::cout << "stats " << stats.entries << " entries, " << stats.counter("hits") << " hits, "
            << stats.counter("misses") << " misses\n";
  npucc::CacheVerifyResult verified = cache.verify();
  std::cout << "verify " << verified.entries << " entries, " << verified.problems.size()
            << " problems\n";
}

} // namespace

int main(int argc, char** argv) {
  std::cout << "npucc " << npucc::k_version << "\n";
  if (argc < 2) {
    return 0;
  }
  try {
    npucc::Model model = npucc::read_model(argv[1]);
    std::cout << model.proto.graph().node_size() << " nodes\n";
    if (argc < 4) {
      return 0;
    }
    schedule_example();
    npucc::CacheConfig config;
    config.dir = argv[2];
    config.dir_source = npucc::SettingSource::command_line;
    npucc::init_cache_dir(config.dir);
    compile_twice(argv[1], config, argv[3]);
    read_cache(config);
  } catch (const npucc::Error& e) {
    std::cerr << "npucc: error: " << e.line() << "\n";
    return 1;
  }
  return 0;
}
