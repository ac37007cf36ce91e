#include "config/compile_request.h"
#include "config/option_table.h"
#include "npucc/compile_request.h"

#include <doctest/doctest.h>
#include <set>

using npucc::config::OptionArity;
using npucc::config::OptionGroup;
using npucc::config::OptionRow;
using npucc::config::OptionValueType;

// The table is the one list of option names: these check that each row is whole, so a
// row added without what its front doors need fails here, not in a user's hands.
TEST_SUITE("config::option_table") {
  TEST_CASE("names and aliases are unique, spelled as options") {
    std::set<std::string> seen;
    for (const auto& row : npucc::config::option_table()) {
      CAPTURE(row.name);
      CHECK(row.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") ==
            std::string::npos);
      CHECK(seen.insert(row.name).second);
      if (!row.alias.empty()) {
        CHECK(seen.insert(row.alias).second);
      }
      if (row.arity == OptionArity::negatable_flag) {
        CHECK(seen.insert("no-" + row.name).second);
      }
    }
  }

  TEST_CASE("every row is complete: help, and a reader for its value") {
    for (const auto& row : npucc::config::option_table()) {
      CAPTURE(row.name);
      if (row.group != OptionGroup::global) {
        CHECK_FALSE(row.help.empty());
      }
      if (npucc::config::is_setting(row)) {
        CHECK(row.setting.option == "--" + row.name);
        CHECK(row.setting.environment.rfind("NPUCC_", 0) == 0);
        CHECK_FALSE(row.setting.description.empty());
        CHECK(&npucc::setting_info(row.setting.key) != nullptr);
      } else if (row.group != OptionGroup::options_file) {
        // Not a setting and not --options: only its apply function reads the value.
        CHECK(static_cast<bool>(row.apply));
      }
      if (row.group == OptionGroup::compile) {
        // A compile option reaches CompileOptions (the cache key hashes those).
        CHECK(static_cast<bool>(row.apply));
      }
      if (row.arity != OptionArity::text && row.arity != OptionArity::repeated) {
        CHECK(row.list_separator.empty());
        CHECK(row.value == npucc::config::OptionValueType::text);
      }
      // A --models array is joined into a list option's one string.
      if (row.value == OptionValueType::paths) {
        CHECK(row.arity == OptionArity::repeated);
      }
      CHECK(row.list_separator.empty() == (row.value != npucc::config::OptionValueType::names &&
                                           row.value != npucc::config::OptionValueType::shapes));
    }
  }

  TEST_CASE("the settings are the rows with a key, in table order") {
    std::vector<std::string> keys;
    for (const auto& row : npucc::config::option_table()) {
      if (npucc::config::is_setting(row)) {
        keys.push_back(row.setting.key);
      }
    }
    std::vector<std::string> settings;
    for (const auto& info : npucc::settings_table()) {
      settings.push_back(info.key);
    }
    CHECK(settings == keys);
  }

  TEST_CASE("the Python names are the rows of compile's and the cache commands' groups") {
    for (const auto& name : npucc::compile_option_names()) {
      CAPTURE(name);
      const OptionRow* row = npucc::config::find_option(name);
      REQUIRE(row != nullptr);
      CHECK(row->group != OptionGroup::global);
    }
    CHECK(npucc::cache_option_names() == std::vector<std::string>{"cache-dir", "read-only",
                                                                  "cache-shared", "cache-key-file",
                                                                  "options"});
    CHECK(npucc::config::find_option("nonexistent") == nullptr);
    CHECK(npucc::config::option_key(*npucc::config::find_option("accelerate-train-mode")) ==
          "accelerate_train_mode");
  }
}
