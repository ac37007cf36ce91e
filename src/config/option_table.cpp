// The option table (config/option_table.h): one row per option, with how its value
// reaches CompileOptions. The help lines are `--help`'s; a setting's description is
// `config show`'s.
#include "config/option_table.h"

#include "accuracy/target.h"
#include "npucc/error.h"
#include "npucc/model.h"
#include "npucc/train_mode.h"
#include "precision/keep_dtype.h"
#include "util/bool_text.h"
#include "util/file_io.h"
#include "util/strings.h"

#include <algorithm>
#include <cstdlib>

namespace npucc::config {

namespace {

using Arity = OptionArity;
using Group = OptionGroup;

// A flag's value: "true"/"false" (1/0, yes/no, on/off), from Python or a --models file.
bool flag_value(const OptionRow& row, const std::string& text) {
  std::optional<bool> parsed = util::parse_bool_text(text);
  if (!parsed) {
    throw usage_error(option_spelling(row) + ": \"" + text + "\" is not a boolean",
                      "use true or false (or 1 / 0)");
  }
  return *parsed;
}

// A file an option names, read whole; an error names the option and the file.
std::string read_option_file(const OptionRow& row, const std::string& path) {
  try {
    return util::read_file(path);
  } catch (const Error& e) {
    throw usage_error(option_spelling(row) + " " + path + ": " + e.what());
  }
}

void apply_input_shape(const OptionRow&, const std::string& text, CompileOptions& options) {
  options.input_shapes = parse_input_shapes(text);
}

void apply_external_data(const OptionRow& row, const std::string& text, CompileOptions& options) {
  options.external_data = flag_value(row, text) ? ExternalData::always : ExternalData::automatic;
}

void apply_self_contained(const OptionRow& row, const std::string& text, CompileOptions& options) {
  options.weight_layout =
      flag_value(row, text) ? WeightLayout::self_contained : WeightLayout::shared;
}

void apply_passes(const OptionRow&, const std::string& text, CompileOptions& options) {
  for (const auto& name : util::split(text, ',')) {
    options.passes.emplace_back(util::trim(name));
  }
}

void apply_target_opset(const OptionRow& row, const std::string& text, CompileOptions& options) {
  int64_t opset = 0;
  if (!util::parse_int64(text, opset) || opset < 0) {
    throw usage_error(option_spelling(row) + " " + text + ": expected an opset number");
  }
  options.target_opset = opset;
}

void apply_train_mode(const OptionRow&, const std::string& text, CompileOptions& options) {
  options.accelerate_train_mode = parse_accelerate_train_mode(text);
}

void apply_precision_mode(const OptionRow&, const std::string& text, CompileOptions& options) {
  options.precision.precision_mode = text;
}

void apply_precision_mode_v2(const OptionRow&, const std::string& text, CompileOptions& options) {
  options.precision.precision_mode_v2 = text;
}

void apply_modify_mixlist(const OptionRow& row, const std::string& text, CompileOptions& options) {
  options.modify_mixlist = read_option_file(row, text);
  options.modify_mixlist_source = text;
  if (options.modify_mixlist.empty()) {
    throw usage_error(option_spelling(row) + " " + text + ": the file is empty");
  }
}

void apply_keep_dtype(const OptionRow& row, const std::string& text, CompileOptions& options) {
  options.keep_dtype_nodes = precision::parse_keep_dtype(read_option_file(row, text));
  if (options.keep_dtype_nodes.empty()) {
    throw usage_error(option_spelling(row) + " " + text + ": the file names no node");
  }
}

void apply_keep_io_types(const OptionRow& row, const std::string& text, CompileOptions& options) {
  options.keep_io_types = flag_value(row, text);
}

void apply_low_precision_weights(const OptionRow& row, const std::string& text,
                                 CompileOptions& options) {
  options.low_precision_weights = flag_value(row, text);
}

void apply_emit_emulation(const OptionRow& row, const std::string& text, CompileOptions& options) {
  options.emit_emulation = flag_value(row, text);
}

void apply_check_accuracy(const OptionRow& row, const std::string& text, CompileOptions& options) {
  options.check_accuracy = options.check_accuracy || flag_value(row, text);
}

// One more sample file or folder for `paths`; sample paths imply the check.
void add_sample_path(const OptionRow& row, const std::string& text, CompileOptions& options,
                     std::vector<std::filesystem::path>& paths) {
  if (text.empty()) {
    throw usage_error(option_spelling(row) + ": expected a file or folder, got ''");
  }
  paths.emplace_back(text);
  options.check_accuracy = true;
}

void apply_sample_inputs(const OptionRow& row, const std::string& text, CompileOptions& options) {
  add_sample_path(row, text, options, options.sample_inputs);
}

void apply_allow_nonfinite_samples(const OptionRow& row, const std::string& text,
                                   CompileOptions& options) {
  options.allow_nonfinite_samples = flag_value(row, text);
}

void apply_validation_inputs(const OptionRow& row, const std::string& text,
                             CompileOptions& options) {
  add_sample_path(row, text, options, options.validation_inputs);
}

// "nodes" (the only report beyond the check's own); implies the check.
void apply_accuracy_report(const OptionRow& row, const std::string& text,
                           CompileOptions& options) {
  if (text != "nodes") {
    throw usage_error(option_spelling(row) + " " + text + ": unknown report",
                      "use --accuracy-report nodes (the per-value drift report, drift.json)");
  }
  options.accuracy_report = text;
  options.check_accuracy = true;
}

// A cosine in (0, 1]: the drift report calls out values below it.
void apply_drift_threshold(const OptionRow& row, const std::string& text,
                           CompileOptions& options) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(value > 0 && value <= 1)) {
    throw usage_error(option_spelling(row) + " " + text + ": expected a cosine in (0, 1]",
                      "e.g. --drift-threshold 0.999");
  }
  options.drift_threshold = value;
}

// Each clause, comma-joined or repeated; they imply the check. The canonical text of all the
// clauses so far (a metric given again keeps the last).
void apply_accuracy_target(const OptionRow&, const std::string& text, CompileOptions& options) {
  std::vector<std::string> clauses;
  if (!options.accuracy_target.empty()) {
    clauses.push_back(options.accuracy_target);
  }
  clauses.push_back(text);
  options.accuracy_target = accuracy::target_text(accuracy::parse_accuracy_target(clauses));
  options.check_accuracy = true;
}

void apply_force(const OptionRow& row, const std::string& text, CompileOptions& options) {
  options.replace_output = flag_value(row, text) ? OutputReplace::any : OutputReplace::npucc_files;
}

void apply_max_memory(const OptionRow&, const std::string& text, CompileOptions& options) {
  options.limits.max_memory_bytes = parse_memory_size(text);
}

// A row without a setting; `key`: how its value enters the cache key.
OptionRow option(KeyDeclaration key, std::string name, Group group, Arity arity, std::string help,
                 ApplyOption apply = nullptr) {
  OptionRow row(std::move(key));
  row.name = std::move(name);
  row.group = group;
  row.arity = arity;
  row.help = std::move(help);
  row.apply = apply;
  return row;
}

// A row backed by a setting: config.toml `key`, `environment`, the Ascend options-file
// key (`ascend`, "" = none), how the value is checked and `config show`'s description.
OptionRow setting(OptionRow row, std::string key, std::string environment, std::string ascend,
                  SettingKind kind, std::vector<std::string> choices, std::string description) {
  row.setting = {std::move(key), std::move(environment), option_spelling(row),  std::move(ascend),
                 kind,           std::move(choices),     std::move(description)};
  switch (kind) {
  case SettingKind::path:
    row.value = OptionValueType::path;
    break;
  case SettingKind::size:
    row.value = OptionValueType::size;
    break;
  case SettingKind::seconds:
    row.value = OptionValueType::seconds;
    break;
  case SettingKind::train_mode:
    row.value = OptionValueType::train_mode;
    break;
  default:
    break;
  }
  return row;
}

// A text option whose value is a `type` (a setting's follows from its kind).
OptionRow typed(OptionRow row, OptionValueType type) {
  row.value = type;
  return row;
}

// A list in one string, each item ended by `separator`.
OptionRow listed(OptionRow row, OptionValueType type, std::string separator) {
  row.value = type;
  row.list_separator = std::move(separator);
  return row;
}

OptionRow alias(OptionRow row, std::string name) {
  row.alias = std::move(name);
  return row;
}

} // namespace

KeyDeclaration keyed_by_value() {
  return {KeyRole::value, NotKeyedReason::none, ""};
}

KeyDeclaration keyed_by_file_digest() {
  return {KeyRole::file_digest, NotKeyedReason::none, ""};
}

KeyDeclaration not_keyed(NotKeyedReason reason, std::string why) {
  if (reason == NotKeyedReason::none || why.empty()) {
    throw Error("internal error: an option left out of the cache key without a reason");
  }
  return {KeyRole::not_keyed, reason, std::move(why)};
}

const char* not_keyed_reason_name(NotKeyedReason reason) {
  switch (reason) {
  case NotKeyedReason::none:
    return "keyed";
  case NotKeyedReason::schedule_only:
    return "schedule-only";
  case NotKeyedReason::output_only:
    return "output-only";
  case NotKeyedReason::cache_only:
    return "cache-only";
  case NotKeyedReason::limit_only:
    return "limit-only";
  case NotKeyedReason::settings_file:
    return "settings-file";
  }
  return "keyed";
}

// The order is `npucc compile --help`'s, and so the Python keywords'.
const std::vector<OptionRow>& option_table() {
  static const std::vector<OptionRow> table = {
      listed(option(keyed_by_value(), "input-shape", Group::compile, Arity::text,
                    "fix dynamic input dims: \"name:d0,d1,...;name2:...\" (-1 keeps a dim "
                    "dynamic)",
                    apply_input_shape),
             OptionValueType::shapes, ";"),
      option(keyed_by_value(), "external-data", Group::compile, Arity::flag,
             "store weights in OUTDIR/<graph>.onnx.data (always done past 2 GiB; the "
             "graphs of a pair share OUTDIR/weights.data anyway)",
             apply_external_data),
      option(keyed_by_value(), "self-contained", Group::compile, Arity::flag,
             "write each graph as a file of its own with its weights, instead of one "
             "OUTDIR/weights.data that the graphs share (each weight stored once)",
             apply_self_contained),
      listed(option(keyed_by_value(), "passes", Group::compile, Arity::text,
                    "comma-separated passes to run instead of the default pipeline", apply_passes),
             OptionValueType::names, ","),
      option(keyed_by_value(), "target-opset", Group::compile, Arity::integer,
             "raise the model's ai.onnx opset to N (up to 26) before compiling, with the "
             "adapters each version change needs; refused naming the op that cannot be "
             "carried (default: keep it; fast1 raises its low graph to 22)",
             apply_target_opset),
      setting(option(keyed_by_value(), "accelerate-train-mode", Group::compile, Arity::text,
                     "TYPE|TRIGGER[|RATIO], e.g. fast|step|0.9: also emit low.onnx "
                     "(fast: mixed float16, fast1: mixed bfloat16) and the switch "
                     "schedule; '' turns it off",
                     apply_train_mode),
              "accelerate_train_mode", "NPUCC_ACCELERATE_TRAIN_MODE", "accelerate_train_mode",
              SettingKind::train_mode, {},
              "emit paired high/low precision graphs: TYPE|TRIGGER[|RATIO]"),
      setting(option(keyed_by_value(), "precision-mode", Group::compile, Arity::text,
                     "Ascend precision_mode (force_fp32, allow_fp32_to_fp16, force_fp16, "
                     "must_keep_origin_dtype, allow_mix_precision[_fp16|_bf16], "
                     "cube_fp16in_fp32out, allow_fp32_to_bf16); see npucc-precision(7)",
                     apply_precision_mode),
              "precision_mode", "NPUCC_PRECISION_MODE", "precision_mode",
              SettingKind::precision_mode, {}, "Ascend precision_mode"),
      setting(option(keyed_by_value(), "precision-mode-v2", Group::compile, Arity::text,
                     "Ascend precision_mode_v2 (fp16, origin, cube_fp16in_fp32out, "
                     "mixed_float16, mixed_bfloat16)",
                     apply_precision_mode_v2),
              "precision_mode_v2", "NPUCC_PRECISION_MODE_V2", "precision_mode_v2",
              SettingKind::precision_mode_v2, {}, "Ascend precision_mode_v2"),
      setting(option(keyed_by_file_digest(), "modify-mixlist", Group::compile, Arity::text,
                     "JSON file editing the mixed-precision lists: {\"black-list\"|"
                     "\"white-list\"|\"gray-list\": {\"to-add\": [ONNX ops], "
                     "\"to-remove\": [...]}}",
                     apply_modify_mixlist),
              "modify_mixlist", "NPUCC_MODIFY_MIXLIST", "modify_mixlist", SettingKind::path, {},
              "JSON file editing the mixed-precision op lists"),
      typed(option(keyed_by_file_digest(), "keep-dtype", Group::compile, Arity::text,
                   "file of node names (one per line) that keep their original precision",
                   apply_keep_dtype),
            OptionValueType::path),
      option(keyed_by_value(), "keep-io-types", Group::compile, Arity::negatable_flag,
             "keep graph input/output types in lowered graphs (default: on)", apply_keep_io_types),
      option(keyed_by_value(), "low-precision-weights", Group::compile, Arity::flag,
             "store trainable weights in the low type instead of float32 master weights",
             apply_low_precision_weights),
      option(keyed_by_value(), "emit-emulation", Group::compile, Arity::flag,
             "also write emulation.onnx: float32 ops with Cast round trips wherever "
             "low.onnx holds float16/bfloat16",
             apply_emit_emulation),
      option(keyed_by_value(), "check-accuracy", Group::compile, Arity::flag,
             "run the high graph and the low graph's emulation in ONNX Runtime and report "
             "per output cosine, max abs/rel error and non-finite values",
             apply_check_accuracy),
      typed(option(keyed_by_file_digest(), "sample-inputs", Group::compile, Arity::repeated,
                   "inputs for --check-accuracy (implies it; repeatable): a .npz, a folder of "
                   "test_data_set_*/input_*.pb, a folder of .npz files, a folder of .npy files "
                   "named after the inputs, or a folder of such set folders (.npy or "
                   "input_*.pb, one level deep) (default: random inputs from a fixed seed)",
                   apply_sample_inputs),
            OptionValueType::samples),
      option(keyed_by_value(), "allow-nonfinite-samples", Group::compile, Arity::flag,
             "check with samples that hold NaN or infinite values (refused otherwise); the "
             "figures they leave undefined are reported as such",
             apply_allow_nonfinite_samples),
      typed(option(keyed_by_file_digest(), "validation-inputs", Group::compile, Arity::repeated,
                   "sample sets the accuracy repair never searches on, in the layouts of "
                   "--sample-inputs (implies --check-accuracy; repeatable): the emitted graph "
                   "must meet --accuracy-target on them too (default: with 8 or more sample "
                   "sets and a target, every 4th set is held out)",
                   apply_validation_inputs),
            OptionValueType::paths), // files and folders: Python's array sets are sample_inputs only

      option(keyed_by_value(), "accuracy-target", Group::compile, Arity::repeated,
             "bounds the outputs must meet on every sample, all of them, e.g. "
             "'cosine>=0.9995,nonfinite<=0', 'logits:top1>=0.99', 'close[atol=1e-3,rtol=1e-2]>=0.999' "
             "(metrics: cosine, top1, iou@T, psnr, snr_db, close[atol,rtol], nonfinite, "
             "max_abs_error, max_rel_error; OUTPUT: names one output; implies "
             "--check-accuracy; repeatable): a low graph that misses them keeps the fewest "
             "units float32 that meet them",
             apply_accuracy_target),
      option(keyed_by_value(), "accuracy-report", Group::compile, Arity::text,
             "nodes: also measure every value the low graph stores against the high graph's "
             "(cosine, max abs error, flush and overflow shares, range; implies "
             "--check-accuracy), named where the drift begins, written to drift.json",
             apply_accuracy_report),
      option(keyed_by_value(), "drift-threshold", Group::compile, Arity::text,
             "the cosine below which --accuracy-report nodes calls a value out (default: "
             "0.9999)",
             apply_drift_threshold),
      typed(option(not_keyed(NotKeyedReason::settings_file, "other rows' settings, each keyed as its row says"),
                   "options", Group::options_file, Arity::text,
                   "Ascend-style options file (JSON: graph_compiler_cache_dir, "
                   "accelerate_train_mode, precision_mode, precision_mode_v2, modify_mixlist)"),
            OptionValueType::path),
      setting(alias(option(not_keyed(NotKeyedReason::cache_only, "where the cache is"),
                           "cache-dir", Group::cache, Arity::text,
                           "the compile cache folder (default: $NPUCC_CACHE_DIR, else "
                           "${XDG_CACHE_HOME:-~/.cache}/npucc)"),
                    "graph-compiler-cache-dir"),
              "cache.dir", "NPUCC_CACHE_DIR", "graph_compiler_cache_dir", SettingKind::path, {},
              "the compile cache folder"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "how large the cache may grow"),
                     "max-size", Group::max_size, Arity::text,
                     "keep the cache under this size after each store, least recently used "
                     "first (e.g. 10G = 10 GiB; K/M/G/T are powers of 1024, KB/MB/GB/TB of "
                     "1000; default: $NPUCC_CACHE_MAX_SIZE, else unbounded)"),
              "cache.max_size", "NPUCC_CACHE_MAX_SIZE", "", SettingKind::size, {},
              "evict least recently used entries past this size (10G, 512M: powers of 1024; "
              "10GB: powers of 1000; empty or 0: unbounded)"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "whether the cache is written"),
                     "read-only", Group::cache, Arity::flag,
                     "use cache hits but write nothing to the cache: misses are compiled and "
                     "not stored; commands that modify the cache refuse (default: "
                     "$NPUCC_CACHE_READ_ONLY)"),
              "cache.read_only", "NPUCC_CACHE_READ_ONLY", "", SettingKind::boolean, {},
              "use cache hits but write nothing to the cache (misses are compiled, not stored)"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "who may read the entries written"),
                     "cache-shared", Group::cache, Arity::text,
                     "who may use entries written: no (private), group (setgid, "
                     "group-writable folders), world (readable by all) or auto (default: "
                     "$NPUCC_CACHE_SHARED, else auto)"),
              "cache.shared", "NPUCC_CACHE_SHARED", "", SettingKind::choice,
              {"auto", "no", "group", "world"},
              "who may use the entries written: no (private: folders 0700), group (folders "
              "02770), world (readable by all: 0755), auto (group when the cache folder is "
              "setgid and group-writable, else no)"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "how entries are signed"),
                     "cache-key-file", Group::cache, Arity::text,
                     "sign entries with HMAC-SHA-256 under this key and reject entries without "
                     "a valid signature (default: $NPUCC_CACHE_KEY_FILE)"),
              "cache.key_file", "NPUCC_CACHE_KEY_FILE", "", SettingKind::path, {},
              "sign entries with HMAC-SHA-256 under this key and reject entries without a "
              "valid signature"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "how a hit's files reach the output"),
                     "link-mode", Group::link_mode, Arity::text,
                     "how a hit's outputs share the entry's files: copy (your own writable "
                     "files), hardlink (fastest; an output edited in place edits the entry) or "
                     "auto (copies, but hard links to entry files you cannot change) (default: "
                     "$NPUCC_CACHE_LINK_MODE, else auto)"),
              "cache.link_mode", "NPUCC_CACHE_LINK_MODE", "", SettingKind::choice,
              {"auto", "copy", "hardlink"},
              "how a hit's outputs share the entry's files: copy (each output your own file), "
              "hardlink (fastest; an output edited in place edits the entry) or auto (copies, "
              "but hard links to entry files you cannot change: another user's)"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "whether recorded digests are trusted, not the digests"),
                     "digest-cache", Group::digest_cache, Arity::text,
                     "trust the input digests recorded beside each file's inode, size and "
                     "times, so an unchanged model is not read again: auto (on local disk "
                     "file systems), on (everywhere) or off (hash every input each time) "
                     "(default: $NPUCC_DIGEST_CACHE, else auto)"),
              "cache.digest_cache", "NPUCC_DIGEST_CACHE", "", SettingKind::choice,
              {"auto", "on", "off"},
              "whether a compile trusts the digests recorded beside its input files' inode, "
              "size and times, so an unchanged model is not read again: auto (on local disk "
              "file systems, not NFS, SMB, FUSE), on (everywhere) or off (hash every input "
              "each time)"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "where the remote tier is"),
                     "remote-cache", Group::remote, Arity::text,
                     "a shared remote cache: http://host:port/path or redis://host:port/db "
                     "(default: $NPUCC_REMOTE_CACHE)"),
              "cache.remote", "NPUCC_REMOTE_CACHE", "", SettingKind::remote_url, {},
              "a shared remote cache: http://host:port/path or redis://host:port/db"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "whether the remote tier is written"),
                     "remote-read-only", Group::remote, Arity::flag,
                     "read the remote cache but upload nothing to it"),
              "cache.remote_read_only", "NPUCC_REMOTE_CACHE_READ_ONLY", "", SettingKind::boolean,
              {}, "read the remote cache but upload nothing to it"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "the remote tier's connect wait"),
                     "remote-connect-timeout", Group::remote, Arity::text,
                     "seconds to wait for the remote cache to accept a connection (default 2)"),
              "cache.remote_connect_timeout", "NPUCC_REMOTE_CACHE_CONNECT_TIMEOUT", "",
              SettingKind::seconds, {},
              "seconds to wait for the remote cache to accept a connection (default 2)"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "how long a remote transfer may take"),
                     "remote-timeout", Group::remote, Arity::text,
                     "seconds a remote transfer may take in all (connect, headers, body) "
                     "before it is abandoned (default 60)"),
              "cache.remote_timeout", "NPUCC_REMOTE_CACHE_TIMEOUT", "", SettingKind::seconds, {},
              "seconds a remote transfer may take in all (connect, headers, body) before it "
              "is abandoned (default 60)"),
      // Files, never the secrets: a token on the command line would show in ps.
      setting(option(not_keyed(NotKeyedReason::cache_only, "the remote tier's credentials"),
                     "remote-token-file", Group::remote, Arity::text,
                     "a file holding the remote cache's bearer token / Redis password"),
              "remote.token_file", "NPUCC_REMOTE_TOKEN_FILE", "", SettingKind::path, {},
              "a file whose first line is the remote cache's secret: an HTTP bearer token, or "
              "a Redis password"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "the remote tier's credentials"),
                     "remote-credentials-file", Group::remote, Arity::text,
                     "a file holding USER:PASSWORD for the remote cache"),
              "remote.credentials_file", "NPUCC_REMOTE_CREDENTIALS_FILE", "", SettingKind::path, {},
              "a file whose first line is USER:PASSWORD: HTTP basic authentication, or a "
              "Redis ACL user"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "whom the remote tier's TLS trusts"),
                     "remote-ca-file", Group::remote, Arity::text,
                     "PEM certificates to trust for an https:// remote cache"),
              "remote.ca_file", "NPUCC_REMOTE_CA_FILE", "", SettingKind::path, {},
              "PEM certificates to trust for an https:// remote cache (instead of the "
              "system's)"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "the remote tier's client certificate"),
                     "remote-client-cert", Group::remote, Arity::text,
                     "a PEM client certificate for an https:// remote cache"),
              "remote.client_cert", "NPUCC_REMOTE_CLIENT_CERT", "", SettingKind::path, {},
              "a PEM client certificate for an https:// remote cache"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "the remote tier's client key"),
                     "remote-client-key", Group::remote, Arity::text,
                     "the private key of --remote-client-cert"),
              "remote.client_key", "NPUCC_REMOTE_CLIENT_KEY", "", SettingKind::path, {},
              "the PEM private key of --remote-client-cert"),
      setting(option(not_keyed(NotKeyedReason::cache_only, "whether the cache is used at all"),
                     "no-cache", Group::no_cache, Arity::flag,
                     "compile without reading or writing the cache"),
              "cache.disable", "NPUCC_CACHE_DISABLE", "", SettingKind::boolean, {},
              "compile without reading or writing the cache"),
      option(not_keyed(NotKeyedReason::output_only, "which output files may be replaced"),
             "force", Group::output, Arity::flag,
             "replace files in OUTDIR of the names npucc writes even when no earlier "
             "npucc manifest lists them",
             apply_force),
      typed(option(not_keyed(NotKeyedReason::limit_only, "refuses a model, or compiles it as without"),
                   "max-memory", Group::output, Arity::text,
                   "refuse models whose data would take more memory (e.g. 8G = 8 GiB; K/M/G/T "
                   "are powers of 1024, KB/MB/GB/TB of 1000; default: a quarter of physical "
                   "memory)",
                   apply_max_memory),
            OptionValueType::size),
      setting(option(not_keyed(NotKeyedReason::output_only, "colour on a terminal"),
                     "color", Group::global, Arity::text, ""), "color", "NPUCC_COLOR", "",
              SettingKind::choice, {"never", "auto", "always"},
              "colour on a terminal (NO_COLOR in the environment means never)"),
  };
  return table;
}

const OptionRow* find_option(const std::string& name) {
  for (const auto& row : option_table()) {
    if (row.name == name) {
      return &row;
    }
  }
  return nullptr;
}

bool is_setting(const OptionRow& row) {
  return !row.setting.key.empty();
}

std::string option_spelling(const OptionRow& row) {
  return "--" + row.name;
}

std::string value_type_name(const OptionRow& row) {
  switch (row.arity) {
  case OptionArity::flag:
  case OptionArity::negatable_flag:
    return "flag";
  case OptionArity::integer:
    return "integer";
  case OptionArity::text:
  case OptionArity::repeated:
    break;
  }
  switch (row.value) {
  case OptionValueType::path:
    return "path";
  case OptionValueType::size:
    return "size";
  case OptionValueType::seconds:
    return "seconds";
  case OptionValueType::train_mode:
    return "train_mode";
  case OptionValueType::names:
    return "names";
  case OptionValueType::shapes:
    return "shapes";
  case OptionValueType::paths:
    return "paths";
  case OptionValueType::samples:
    return "samples";
  case OptionValueType::text:
    break;
  }
  return "text";
}

std::string option_key(const OptionRow& row) {
  std::string key = row.name;
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

} // namespace npucc::config
