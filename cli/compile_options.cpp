#include "compile_options.h"

#include "config_options.h"
#include "npucc/config.h"
#include "npucc/error.h"
#include "util/strings.h"

#include <iostream>

namespace npucc::cli {

namespace {

// `--options FILE` feeds both the compile and the cache settings; whichever of
// add_compile_options / add_cache_options comes first declares it, the other listens.
void add_options_file(CLI::App& command, std::string& target) {
  if (CLI::Option* existing = command.get_option_no_throw("--options")) {
    existing->each([&target](const std::string& value) { target = value; });
    return;
  }
  command.add_option("--options", target,
                     "Ascend-style options file (JSON: graph_compiler_cache_dir, "
                     "accelerate_train_mode, precision_mode, precision_mode_v2, modify_mixlist)");
}

} // namespace

void add_compile_options(CLI::App& command, CompileArgs& args) {
  // Given twice (one input each), the values join as one list: "x:1,3;h:2,1".
  command
      .add_option("--input-shape", args.input_shape,
                  "fix dynamic input dims: \"name:d0,d1,...;name2:...\" (-1 keeps a dim "
                  "dynamic; repeat it for more inputs)")
      ->delimiter(';')
      ->multi_option_policy(CLI::MultiOptionPolicy::Join);
  command.add_flag("--external-data", args.external_data,
                   "store weights in <graph>.onnx.data beside each graph (always done past "
                   "2 GiB)");
  command.add_option("--passes", args.passes,
                     "comma-separated passes to run instead of the default pipeline");
  command.add_option("--target-opset", args.target_opset,
                     "raise the model's ai.onnx opset to N (up to 26) before compiling, with the "
                     "adapters each version change needs; refused naming the op that cannot be "
                     "carried (default: keep it; fast1 raises its low graph to 22)");
  add_precision_options(command, args.precision);
  add_accuracy_options(command, args.accuracy);
  add_options_file(command, args.options_file);
}

CompileOptions make_compile_options(const CompileArgs& args) {
  return make_compile_options(args, load_settings(&args, nullptr));
}

CompileOptions make_compile_options(const CompileArgs& args, const Config& settings) {
  CompileOptions options;
  if (!args.input_shape.empty()) {
    options.input_shapes = parse_input_shapes(args.input_shape);
  }
  options.external_data = args.external_data ? ExternalData::always : ExternalData::automatic;
  if (!args.passes.empty()) {
    for (const auto& name : util::split(args.passes, ',')) {
      options.passes.emplace_back(util::trim(name));
    }
  }
  if (args.target_opset < 0) {
    throw usage_error("--target-opset " + std::to_string(args.target_opset) +
                      ": expected an opset number");
  }
  options.target_opset = args.target_opset;
  PrecisionArgs effective = args.precision;
  effective.accelerate_train_mode = settings.value("accelerate_train_mode");
  effective.precision_mode = settings.value("precision_mode");
  effective.precision_mode_v2 = settings.value("precision_mode_v2");
  effective.modify_mixlist = settings.value("modify_mixlist");
  apply_precision_options(effective, options);
  apply_accuracy_options(args.accuracy, options);
  // Checked here, before the model is read, so a conflict names the sources of both
  // values (the compile's own check can only name the model).
  validate_precision_options(options.precision, options.accelerate_train_mode,
                             {settings.get("accelerate_train_mode").origin,
                              settings.get("precision_mode").origin,
                              settings.get("precision_mode_v2").origin});
  return options;
}

void add_compile_command_options(CLI::App& command, CompileCommandArgs& args,
                                 CompileCommand which) {
  bool explain = which == CompileCommand::explain;
  command
      .add_option("MODEL", args.model,
                  explain ? "the .onnx model the compile reads" : "the .onnx model to compile")
      ->required();
  CLI::Option* output =
      command.add_option("-o,--output", args.output,
                         explain ? "the compile's output folder (explain writes nothing there)"
                                 : "folder to write the graph(s) and manifest.json to");
  if (!explain) {
    output->required();
  }
  add_compile_options(command, args.compile);
  add_cache_options(command, args.cache, MaxSizeOption::yes);
  add_link_mode_option(command, args.cache);
  add_digest_cache_option(command, args.cache);
  add_remote_cache_options(command, args.cache);
  command.add_flag("--no-cache", args.no_cache, "compile without reading or writing the cache");
  command.add_flag("--json", args.json,
                   explain ? "print the explanation as JSON (format npucc-cache-explain)"
                           : "print the manifest as JSON instead of a summary");
  command.add_flag("--force", args.force,
                   "replace files in OUTDIR of the names npucc writes even when no earlier "
                   "npucc manifest lists them");
  command.add_option("--max-memory", args.max_memory,
                     "refuse models whose data would take more memory (e.g. 8G = 8 GiB; K/M/G/T "
                     "are powers of 1024, KB/MB/GB/TB of 1000; default: a quarter of physical "
                     "memory)");
}

CompileOptions make_compile_options(const CompileCommandArgs& args, const Config& settings) {
  CompileOptions options = make_compile_options(args.compile, settings);
  options.model_path = args.model;
  options.output_dir = args.output;
  options.replace_output = args.force ? OutputReplace::any : OutputReplace::npucc_files;
  if (!args.max_memory.empty()) {
    options.limits.max_memory_bytes = parse_memory_size(args.max_memory);
  }
  return options;
}

void add_cache_options(CLI::App& command, CacheArgs& args, MaxSizeOption max_size) {
  note_empty_value(command.add_option("--cache-dir,--graph-compiler-cache-dir", args.dir,
                                      "the compile cache folder (default: $NPUCC_CACHE_DIR, else "
                                      "${XDG_CACHE_HOME:-~/.cache}/npucc)"),
                   args.empty_settings, "cache.dir");
  if (max_size == MaxSizeOption::yes) {
    note_empty_value(
        command.add_option(
            "--max-size", args.max_size,
            "keep the cache under this size after each store, least recently used "
            "first (e.g. 10G = 10 GiB; K/M/G/T are powers of 1024, KB/MB/GB/TB of 1000; "
            "default: $NPUCC_CACHE_MAX_SIZE, else unbounded)"),
        args.empty_settings, "cache.max_size");
  }
  command.add_flag("--read-only", args.read_only,
                   "use cache hits but write nothing to the cache: misses are compiled and not "
                   "stored; commands that modify the cache refuse (default: "
                   "$NPUCC_CACHE_READ_ONLY)");
  note_empty_value(
      command.add_option("--cache-shared", args.shared,
                         "who may use entries written: no (private), group (setgid, group-writable "
                         "folders), world (readable by all) or auto (default: $NPUCC_CACHE_SHARED, "
                         "else auto)"),
      args.empty_settings, "cache.shared");
  note_empty_value(
      command.add_option("--cache-key-file", args.key_file,
                         "sign entries with HMAC-SHA-256 under this key and reject entries without "
                         "a valid signature (default: $NPUCC_CACHE_KEY_FILE)"),
      args.empty_settings, "cache.key_file");
  add_options_file(command, args.options_file);
}

void add_link_mode_option(CLI::App& command, CacheArgs& args) {
  command.add_option("--link-mode", args.link_mode,
                     "how a hit's outputs share the entry's files: copy (your own writable "
                     "files), hardlink (fastest; an output edited in place edits the entry) or "
                     "auto (copies, but hard links to entry files you cannot change) (default: "
                     "$NPUCC_CACHE_LINK_MODE, else auto)");
}

void add_digest_cache_option(CLI::App& command, CacheArgs& args) {
  note_empty_value(
      command.add_option("--digest-cache", args.digest_cache,
                         "trust the input digests recorded beside each file's inode, size and "
                         "times, so an unchanged model is not read again: auto (on local disk "
                         "file systems), on (everywhere) or off (hash every input each time) "
                         "(default: $NPUCC_DIGEST_CACHE, else auto)"),
      args.empty_settings, "cache.digest_cache");
}

void add_remote_cache_options(CLI::App& command, CacheArgs& args) {
  note_empty_value(
      command.add_option("--remote-cache", args.remote,
                         "a shared remote cache: http://host:port/path or redis://host:port/db "
                         "(default: $NPUCC_REMOTE_CACHE)"),
      args.empty_settings, "cache.remote");
  command.add_flag("--remote-read-only", args.remote_read_only,
                   "read the remote cache but upload nothing to it");
  note_empty_value(
      command.add_option("--remote-connect-timeout", args.remote_connect_timeout,
                         "seconds to wait for the remote cache to accept a connection (default 2)"),
      args.empty_settings, "cache.remote_connect_timeout");
  note_empty_value(
      command.add_option("--remote-timeout", args.remote_timeout,
                         "seconds without progress before a remote transfer is abandoned "
                         "(default 5)"),
      args.empty_settings, "cache.remote_timeout");
  // Files, never the secrets: a token on the command line would show in ps.
  note_empty_value(
      command.add_option("--remote-token-file", args.remote_token_file,
                         "a file holding the remote cache's bearer token / Redis password"),
      args.empty_settings, "remote.token_file");
  note_empty_value(command.add_option("--remote-credentials-file", args.remote_credentials_file,
                                      "a file holding USER:PASSWORD for the remote cache"),
                   args.empty_settings, "remote.credentials_file");
  note_empty_value(command.add_option("--remote-ca-file", args.remote_ca_file,
                                      "PEM certificates to trust for an https:// remote cache"),
                   args.empty_settings, "remote.ca_file");
  note_empty_value(command.add_option("--remote-client-cert", args.remote_client_cert,
                                      "a PEM client certificate for an https:// remote cache"),
                   args.empty_settings, "remote.client_cert");
  note_empty_value(command.add_option("--remote-client-key", args.remote_client_key,
                                      "the private key of --remote-client-cert"),
                   args.empty_settings, "remote.client_key");
}

CacheConfig make_cache_config(const CacheArgs& args) {
  return resolve_cache_config(load_settings(nullptr, &args));
}

Config load_settings(const CompileArgs* compile, const CacheArgs* cache) {
  std::vector<CommandLineValue> values;
  std::set<std::string> empty; // keys given '' (note_empty_value)
  std::string options_file;
  if (compile != nullptr) {
    const PrecisionArgs& given = compile->precision;
    values.insert(
        values.end(),
        {{"accelerate_train_mode", given.accelerate_train_mode, "--accelerate-train-mode"},
         {"precision_mode", given.precision_mode, "--precision-mode"},
         {"precision_mode_v2", given.precision_mode_v2, "--precision-mode-v2"},
         {"modify_mixlist", given.modify_mixlist, "--modify-mixlist"}});
    empty.insert(given.empty_settings.begin(), given.empty_settings.end());
    options_file = compile->options_file;
  }
  if (cache != nullptr) {
    const CacheArgs& args = *cache;
    values.insert(
        values.end(),
        {{"cache.dir", args.dir, "--cache-dir"},
         {"cache.max_size", args.max_size, "--max-size"},
         {"cache.read_only", args.read_only ? "true" : "", "--read-only"},
         {"cache.shared", args.shared, "--cache-shared"},
         {"cache.key_file", args.key_file, "--cache-key-file"},
         {"cache.link_mode", args.link_mode, "--link-mode"},
         {"cache.digest_cache", args.digest_cache, "--digest-cache"},
         {"cache.remote", args.remote, "--remote-cache"},
         {"cache.remote_read_only", args.remote_read_only ? "true" : "", "--remote-read-only"},
         {"cache.remote_connect_timeout", args.remote_connect_timeout, "--remote-connect-timeout"},
         {"cache.remote_timeout", args.remote_timeout, "--remote-timeout"},
         {"remote.token_file", args.remote_token_file, "--remote-token-file"},
         {"remote.credentials_file", args.remote_credentials_file, "--remote-credentials-file"},
         {"remote.ca_file", args.remote_ca_file, "--remote-ca-file"},
         {"remote.client_cert", args.remote_client_cert, "--remote-client-cert"},
         {"remote.client_key", args.remote_client_key, "--remote-client-key"}});
    if (options_file.empty()) {
      options_file = args.options_file;
    }
    empty.insert(args.empty_settings.begin(), args.empty_settings.end());
  }
  for (auto& value : values) {
    value.given_empty = empty.count(value.key) > 0;
  }
  ConfigSources sources;
  sources.command_line = std::move(values);
  sources.options_file = options_file;
  Config config = load_config(sources);
  for (const auto& warning : config.warnings) {
    std::cerr << "npucc: warning: " << warning << "\n";
  }
  return config;
}

} // namespace npucc::cli
