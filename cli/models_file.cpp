#include "models_file.h"

#include "config/compile_request.h"
#include "config/option_table.h"
#include "config/toml_subset.h"
#include "config/value.h"
#include "npucc/error.h"
#include "util/file_io.h"
#include "util/strings.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace npucc::cli {

namespace fs = std::filesystem;
using config::TomlEntry;
using config::TomlType;

namespace {

using config::OptionArity;
using config::OptionGroup;
using config::OptionRow;

// What a file named in a table may hold (a node list, a mixlist edit): far more than any.
constexpr uint64_t k_max_named_file_bytes = uint64_t{1} << 20;
// A models file, and each string in it: bounded, so that a huge one costs neither memory
// nor a megabyte-long error line.
constexpr uint64_t k_max_models_file_bytes = uint64_t{4} << 20;
constexpr size_t k_max_string_bytes = size_t{64} << 10;
// A sample file a table names (a .npz, an input_N.pb): larger than any set of samples an
// accuracy check runs, small enough that a wrong file (a disk image) is refused up front.
constexpr uint64_t k_max_sample_file_bytes = uint64_t{4} << 30;

// Every compile option, by its key ("input_shape"); --options is the run's (run_only).
std::map<std::string, const OptionRow*> option_keys() {
  std::map<std::string, const OptionRow*> keys;
  for (const auto& row : config::option_table()) {
    if (row.group == OptionGroup::compile || row.group == OptionGroup::options_file) {
      keys[config::option_key(row)] = &row;
    }
  }
  return keys;
}

struct ModelsFile {
  fs::path file;
  fs::path dir; // FILE's folder (empty: the current one): paths are taken from it
  std::map<std::string, const OptionRow*> keys;

  std::string where(size_t line) const { return file.string() + ":" + std::to_string(line); }
  std::string dir_name() const { return dir.empty() ? "." : dir.string(); }
};

// Options a [[model]] table cannot set: --options feeds the cache settings too, which
// are the run's.
bool run_only(const ModelsFile& models, const std::string& name) {
  auto key = models.keys.find(name);
  return key != models.keys.end() && key->second->group == OptionGroup::options_file;
}

[[noreturn]] void unknown_key(const ModelsFile& models, const TomlEntry& entry,
                              const std::string& name) {
  if (run_only(models, name)) {
    throw usage_error(models.where(entry.line) + ": " + name +
                          " applies to the whole run, not "
                          "to one [[model]]",
                      "give --" + name + " on the command line");
  }
  std::vector<std::string> candidates = {"path"};
  for (const auto& [key, option] : models.keys) {
    if (!run_only(models, key)) {
      candidates.push_back(key);
    }
  }
  // No key is long: a huge one is neither matched (the edit distance costs its length)
  // nor echoed whole.
  std::string match = name.size() <= 64 ? util::closest_match(name, candidates) : "";
  throw usage_error(models.where(entry.line) + ": unknown key \"" + util::cut_for_message(name) +
                        "\" in [[model]]",
                    match.empty() ? "keys: " + util::join(candidates, ", ")
                                  : "did you mean \"" + match + "\"?");
}

// What a path in a table may name: a file (a model, a node list), or also a folder
// (sample inputs: a folder of test data sets or of .npy files, or a .npz).
enum class Named { file, file_or_folder };

// What the path a table names refers to once every link is resolved: a regular file of at
// most `limit` bytes (none: any), or (Named::file_or_folder) a folder, readable by this
// user; else refuse()d with why.
void check_named_target(const fs::path& real, Named named, std::optional<uint64_t> limit,
                        const std::function<void(const std::string&)>& refuse) {
  struct stat info {};
  if (::stat(real.c_str(), &info) != 0) {
    refuse(std::string(": cannot be read: ") + std::strerror(errno));
  }
  const bool folder = S_ISDIR(info.st_mode);
  if (!S_ISREG(info.st_mode) && !(folder && named == Named::file_or_folder)) {
    refuse(named == Named::file ? ": not a regular file" : ": neither a regular file nor a folder");
  }
  if (::access(real.c_str(), folder ? R_OK | X_OK : R_OK) != 0) {
    refuse(std::string(": cannot be read: ") + std::strerror(errno));
  }
  if (!folder && limit && static_cast<uint64_t>(info.st_size) > *limit) {
    refuse(" is larger than " + util::format_bytes(*limit) + "; is it the right file?");
  }
}

// A path a table names (its model, keep_dtype, modify_mixlist, sample_inputs): relative
// to FILE's folder and inside it once every link is resolved, and what check_named_target
// accepts. A models file may come from a pull request on CI: it must not be able to make
// npucc read, and print into a job log, a file from elsewhere (a key), nor stall it on a
// FIFO. Errors name the key and the path, never what the file holds.
fs::path named_path(const ModelsFile& models, const TomlEntry& entry, const std::string& key,
                    std::optional<uint64_t> limit, Named named = Named::file) {
  fs::path relative = fs::path(entry.value).lexically_normal();
  std::string shown = key + " \"" + util::cut_for_message(entry.value) + "\"";
  auto refuse = [&](const std::string& why, const std::string& hint = "") {
    throw usage_error(models.where(entry.line) + ": " + shown + why, hint);
  };
  const std::string inside = models.dir_name() + ", the folder of " + models.file.string();
  if (entry.value.empty() || relative.is_absolute() || *relative.begin() == ".." ||
      entry.value[0] == '~') {
    refuse(" is not inside " + inside, "name each file relative to that folder");
  }
  fs::path path = models.dir / relative;
  std::error_code ec;
  fs::path real = fs::canonical(path, ec);
  if (ec) {
    refuse(ec == std::errc::no_such_file_or_directory
               ? ": no such file" + (models.dir.empty() ? "" : " (" + path.string() + ")")
               : ": cannot be read: " + ec.message());
  }
  fs::path base = fs::canonical(models.dir.empty() ? fs::path(".") : models.dir, ec);
  fs::path within = real.lexically_relative(base);
  if (ec || within.empty() || *within.begin() == "..") {
    refuse(" leads outside " + inside + " (through a symlink)",
           "keep the file itself in that folder");
  }
  check_named_target(real, named, limit, refuse);
  return path;
}

// The value as the option's text; a wrong type is an error naming the line.
std::string value_text(const ModelsFile& models, const TomlEntry& entry, const std::string& name,
                       const OptionRow& row) {
  auto wrong = [&](const std::string& wanted) {
    throw usage_error(models.where(entry.line) + ": " + name + " must be " + wanted + ", not " +
                      config::toml_type_name(entry.type));
  };
  bool list = !row.list_separator.empty() || row.arity == OptionArity::repeated;
  switch (row.arity) {
  case OptionArity::flag:
  case OptionArity::negatable_flag:
    if (entry.type != TomlType::boolean) {
      wrong("a boolean (true or false)");
    }
    return entry.value;
  case OptionArity::integer:
    if (entry.type != TomlType::integer) {
      wrong("an integer");
    }
    return entry.value;
  case OptionArity::repeated: // each item of an array (read_table), or the one string
  case OptionArity::text:
    if (entry.type == TomlType::string_array && list) {
      return util::join(entry.items, row.list_separator);
    }
    if (entry.type != TomlType::string) {
      wrong(list ? "a string or an array of strings" : "a string");
    }
    break;
  }
  // A file option's value (a setting's too: modify_mixlist) stays inside the models file's
  // folder (named_path); sample inputs too, and they may also be folders.
  if (row.value == config::OptionValueType::path && !entry.value.empty()) { // "": unset
    fs::path file = named_path(models, entry, name, k_max_named_file_bytes);
    // A setting's check (read_table) resolves the value against the folder itself.
    return config::is_setting(row) ? entry.value : file.string();
  }
  const bool paths = row.value == config::OptionValueType::paths ||
                     row.value == config::OptionValueType::samples;
  if (paths && !entry.value.empty()) {
    return named_path(models, entry, name, k_max_sample_file_bytes, Named::file_or_folder)
        .string();
  }
  return entry.value;
}

// A repeated option's values: an array of strings, or one string, each as value_text
// gives it (a relative file from FILE's folder).
std::vector<std::string> repeated_items(const ModelsFile& models, const TomlEntry& entry,
                                        const std::string& name, const OptionRow& row) {
  if (entry.type != TomlType::string_array) {
    return {value_text(models, entry, name, row)};
  }
  std::vector<std::string> items;
  for (const auto& item : entry.items) {
    TomlEntry one = entry;
    one.type = TomlType::string;
    one.value = item;
    items.push_back(value_text(models, one, name, row));
  }
  return items;
}

// `path` of a table: relative to FILE's folder and inside it, an existing file.
fs::path model_path(const ModelsFile& models, const TomlEntry& entry) {
  if (entry.type != TomlType::string) {
    throw usage_error(models.where(entry.line) + ": path must be a string, not " +
                      config::toml_type_name(entry.type));
  }
  return named_path(models, entry, "path", std::nullopt);
}

void refuse_long_strings(const ModelsFile& models, const TomlEntry& entry, const std::string& name) {
  size_t longest = entry.value.size();
  for (const auto& item : entry.items) {
    longest = std::max(longest, item.size());
  }
  if (longest > k_max_string_bytes) {
    throw usage_error(models.where(entry.line) + ": " + util::cut_for_message(name) + " holds a " +
                      util::format_bytes(longest) + " string; at most " +
                      util::format_bytes(k_max_string_bytes));
  }
}

// One [[model]] table: its path, and the run's options with the table's on top.
PopulateModel read_table(const ModelsFile& models, const config::TomlArrayTable& table,
                         const std::vector<const TomlEntry*>& entries,
                         const OptionValues& command_line, const Config& settings) {
  PopulateModel model;
  OptionValues values = command_line; // the table's come later: they win
  Config model_settings = settings;
  std::map<std::string, std::pair<std::string, size_t>> key_of_option; // --opt: key, line
  for (const TomlEntry* entry : entries) {
    std::string name = entry->key.substr(table.name.size() + 1);
    refuse_long_strings(models, *entry, name);
    if (name == "path") {
      model.path = model_path(models, *entry);
      // As written, not as found from here: the same on every machine of a CI matrix.
      model.shard_key = fs::path(entry->value).lexically_normal().generic_string();
      continue;
    }
    auto key = models.keys.find(name);
    if (key == models.keys.end() || run_only(models, name)) {
      unknown_key(models, *entry, name);
    }
    const OptionRow& row = *key->second;
    if (row.arity == OptionArity::repeated) {
      // The table's list replaces the command line's, item by item like a string.
      values.erase(std::remove_if(values.begin(), values.end(),
                                  [&](const OptionValue& value) { return value.name == row.name; }),
                   values.end());
      for (const auto& item : repeated_items(models, *entry, name, row)) {
        values.push_back({row.name, item});
      }
      key_of_option[config::option_spelling(row)] = {name, entry->line};
      continue;
    }
    std::string text = value_text(models, *entry, name, row);
    key_of_option[config::option_spelling(row)] = {name, entry->line};
    if (config::is_setting(row)) {
      std::string where = models.where(entry->line);
      model_settings.set(row.setting.key, Setting{config::check_value(row.setting, text, where,
                                                                      models.dir, process_getenv),
                                                  SettingSource::command_line, where});
    } else {
      values.push_back({row.name, text});
    }
  }
  if (model.path.empty()) {
    throw usage_error(models.where(table.line) + ": [[model]] without a path",
                      "add path = \"MODEL.onnx\" (relative to " + models.dir_name() + ")");
  }
  // The message with the line of the option it names, and the option as its key there
  // ("--input-shape: ..." -> "m.toml:4: input_shape: ..."); else the table's line.
  auto blame = [&](std::string message) {
    for (const auto& [option, key] : key_of_option) {
      size_t at = message.find(option);
      if (at != std::string::npos) {
        return models.where(key.second) + ": " + message.replace(at, option.size(), key.first);
      }
    }
    return models.where(table.line) + ": " + message;
  };
  try {
    model.compile = config::build_compile_options(values, model_settings);
  } catch (const Error& e) {
    throw usage_error(blame(e.what()), e.hint());
  }
  return model;
}

} // namespace

std::vector<PopulateModel> read_models_file(const fs::path& file, const OptionValues& command_line,
                                            const Config& settings) {
  std::string text;
  try {
    std::error_code ec;
    if (fs::is_regular_file(file, ec) && fs::file_size(file, ec) > k_max_models_file_bytes) {
      throw usage_error("--models " + file.string() + ": larger than " +
                        util::format_bytes(k_max_models_file_bytes) + "; is it a models file?");
    }
    text = util::read_file(file);
  } catch (const Error& e) {
    throw usage_error(std::string("--models: ") + e.what());
  }
  ModelsFile models{file, file.parent_path(), option_keys()};
  config::TomlDocument document = config::parse_toml_document(text, file.string());
  for (const auto& table : document.array_tables) {
    if (table.name != "model") {
      throw usage_error(models.where(table.line) + ": unknown table [[" + table.name + "]]",
                        "the models file holds [[model]] tables");
    }
  }
  // Every array table is a [[model]]: an entry's index among them is its table's.
  std::vector<std::vector<const TomlEntry*>> tables(document.array_tables.size());
  for (const auto& entry : document.entries) {
    if (entry.array_table != "model") {
      throw usage_error(models.where(entry.line) + ": \"" + entry.key +
                            "\" is outside a [[model]] table",
                        "begin each model with a [[model]] line");
    }
    tables[entry.array_index].push_back(&entry);
  }
  std::vector<PopulateModel> out;
  for (size_t i = 0; i < document.array_tables.size(); ++i) {
    out.push_back(read_table(models, document.array_tables[i], tables[i], command_line, settings));
  }
  if (out.empty()) {
    throw usage_error(file.string() + ": no [[model]] table", "add one per model to compile");
  }
  return out;
}

} // namespace npucc::cli
