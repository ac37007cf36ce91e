// `npucc completion bash|zsh`: a completion script generated from the command table and
// CLI11's own option lists, so it cannot drift from the real command line. The build
// writes both scripts and `cmake --install` puts them where bash-completion and zsh
// look (completion/CMakeLists.txt).
#include "app.h"
#include "config/option_table.h"
#include "npucc/config.h"
#include "precision/option_values.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <sstream>

namespace npucc::cli {

namespace {

std::vector<const CLI::App*> children(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

// "{never,auto,always}" in CLI11's type name (from an IsMember check) -> the choices.
std::string choices_of(const CLI::Option& option) {
  std::string type = option.get_type_name();
  size_t open = type.find('{');
  size_t close = type.find('}', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos) {
    return "";
  }
  std::string list = type.substr(open + 1, close - open - 1);
  for (auto& c : list) {
    c = c == ',' ? ' ' : c;
  }
  return list;
}

struct Node {
  std::vector<std::string> paths;         // "cache purge", its alias "cache clean"; "" for npucc
  std::vector<std::string> subcommands;   // their names and aliases
  std::vector<std::string> options;       // every spelling, the node's and its parents'
  std::vector<std::string> value_options; // those that take a value
  // What the positional argument completes to: "" (none), "files", "models" (*.onnx and
  // folders: MODEL, MODEL_OR_DIR), "dirs" (DIR) or "choices".
  std::string positional;
  std::string positional_choices; // "bash zsh" when the positional is checked against a set
};

// Options whose values are checked by library code, not by a CLI11 IsMember (which
// choices_of reads): the lists come from the option table and the precision code that
// checks them.
std::map<std::string, std::vector<std::string>> checked_values() {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& row : config::option_table()) {
    if (!config::is_setting(row) || row.group == config::OptionGroup::global) {
      continue; // --color: an IsMember of its own
    }
    std::string option = config::option_spelling(row);
    switch (row.setting.kind) {
    case SettingKind::choice:
      out[option] = row.setting.choices;
      break;
    case SettingKind::precision_mode:
      out[option] = precision::precision_mode_values();
      break;
    case SettingKind::precision_mode_v2:
      out[option] = precision::precision_mode_v2_values();
      break;
    case SettingKind::train_mode:
      out[option] = precision::accelerate_train_mode_values();
      break;
    default:
      break;
    }
  }
  out["--shard"] = {"auto"}; // K/N has too many values to list; auto is the one word
  return out;
}

std::string positional_kind(const CLI::Option& option) {
  const std::string& name = option.get_name();
  if (!choices_of(option).empty()) {
    return "choices";
  }
  if (name.rfind("MODEL", 0) == 0 || name == "REFERENCE" || name == "CANDIDATE") { // compare's
    return "models";
  }
  return name == "DIR" ? "dirs" : "files";
}

void collect(const CLI::App& app, const std::vector<std::string>& paths, std::vector<Node>& nodes,
             std::map<std::string, std::string>& choices) {
  Node node;
  node.paths = paths;
  for (const CLI::App* level = &app; level != nullptr; level = level->get_parent()) {
    for (const CLI::Option* option : level->get_options()) {
      if (!option->nonpositional()) {
        if (level == &app) {
          node.positional = positional_kind(*option);
          node.positional_choices = choices_of(*option);
        }
        continue;
      }
      std::vector<std::string> names;
      for (const auto& name : option->get_lnames()) {
        names.push_back("--" + name);
      }
      for (const auto& name : option->get_snames()) {
        names.push_back("-" + name);
      }
      bool takes_value = option->get_expected_max() != 0;
      for (const auto& name : names) {
        if (std::find(node.options.begin(), node.options.end(), name) != node.options.end()) {
          continue; // --help: every level has its own
        }
        node.options.push_back(name);
        if (takes_value) {
          node.value_options.push_back(name);
          std::string list = choices_of(*option);
          if (!list.empty()) {
            choices.emplace(name, list);
          }
        }
      }
    }
  }
  std::vector<const CLI::App*> subs = children(app);
  for (const CLI::App* sub : subs) {
    node.subcommands.push_back(sub->get_name());
    for (const auto& alias : sub->get_aliases()) {
      node.subcommands.push_back(alias);
    }
  }
  nodes.push_back(node);
  const std::string& path = paths.front();
  for (const CLI::App* sub : subs) {
    std::vector<std::string> sub_paths;
    sub_paths.push_back(path.empty() ? sub->get_name() : path + " " + sub->get_name());
    for (const auto& alias : sub->get_aliases()) {
      sub_paths.push_back(path.empty() ? alias : path + " " + alias);
    }
    collect(*sub, sub_paths, nodes, choices);
  }
}

std::string words(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& word : list) {
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

// Shell functions both scripts share: plain POSIX-ish syntax that bash and zsh read alike.
std::string tables(const CLI::App& root) {
  std::vector<Node> nodes;
  std::map<std::string, std::string> choices;
  collect(root, {""}, nodes, choices);
  for (const auto& [option, values] : checked_values()) {
    choices.emplace(option, words(values));
  }
  std::ostringstream out;
  out << "# The command tree: subcommands, options, options taking a value, positionals.\n"
      << "_npucc_node() {\n  case \"$1\" in\n";
  for (const auto& node : nodes) {
    std::string pattern;
    for (const auto& path : node.paths) {
      pattern += (pattern.empty() ? "\"" : "|\"") + path + "\"";
    }
    out << "    " << pattern << ") _npucc_subs=\"" << words(node.subcommands)
        << "\"; _npucc_opts=\"" << words(node.options) << "\"; _npucc_vopts=\""
        << words(node.value_options) << "\"; _npucc_pos=\"" << node.positional
        << "\"; _npucc_pchoices=\"" << node.positional_choices << "\" ;;\n";
  }
  out << "    *) _npucc_subs=\"\"; _npucc_opts=\"\"; _npucc_vopts=\"\"; _npucc_pos=\"\"; "
         "_npucc_pchoices=\"\" ;;\n  esac\n}\n"
      << "_npucc_choices() {\n  case \"$1\" in\n";
  for (const auto& [option, list] : choices) {
    out << "    " << option << ") echo \"" << list << "\" ;;\n";
  }
  out << "  esac\n}\n"
      << "# Walks the words before the cursor: sets _npucc_path to the subcommand reached.\n"
      << "_npucc_walk() {\n"
      << "  local i=$1 last=$2 word\n"
      << "  _npucc_path=\"\"\n"
      << "  while [[ $i -lt $last ]]; do\n"
      << "    eval \"word=\\${$3[$i]}\"\n"
      << "    _npucc_node \"$_npucc_path\"\n"
      << "    if [[ $word == -* ]]; then\n"
      << "      if [[ $word != *=* && \" $_npucc_vopts \" == *\" $word \"* ]]; then i=$((i + 1)); "
         "fi\n"
      << "    elif [[ \" $_npucc_subs \" == *\" $word \"* ]]; then\n"
      << "      _npucc_path=\"${_npucc_path:+$_npucc_path }$word\"\n"
      << "    fi\n"
      << "    i=$((i + 1))\n"
      << "  done\n"
      << "  _npucc_node \"$_npucc_path\"\n"
      << "}\n";
  return out.str();
}

std::string bash_script(const CLI::App& root) {
  std::ostringstream out;
  out << "# bash completion for npucc (generated by `npucc completion bash`; do not edit)\n"
      << tables(root) << "_npucc() {\n"
      << "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"\" option=\"\"\n"
      << "  [[ $COMP_CWORD -gt 0 ]] && prev=\"${COMP_WORDS[COMP_CWORD - 1]}\"\n"
      << "  COMPREPLY=()\n"
      << "  _npucc_walk 1 \"$COMP_CWORD\" COMP_WORDS\n"
      // bash splits --color=never into "--color" "=" "never".
      << "  if [[ $cur == = ]]; then option=$prev; cur=\"\";\n"
      << "  elif [[ $prev == = && $COMP_CWORD -gt 1 ]]; then option=\"${COMP_WORDS[COMP_CWORD - "
         "2]}\";\n"
      << "  elif [[ \" $_npucc_vopts \" == *\" $prev \"* ]]; then option=$prev; fi\n"
      << "  if [[ -n $option ]]; then\n"
      << "    local choices\n"
      << "    choices=$(_npucc_choices \"$option\")\n"
      << "    if [[ -n $choices ]]; then\n"
      // Values hold '|' (fast|step): readline quotes them as it quotes file names, and
      // what the user typed is compared without its quoting.
      << "      compopt -o filenames 2>/dev/null\n"
      << "      cur=${cur//\\\\/}; cur=${cur#[\\\"\\']}\n"
      << "      mapfile -t COMPREPLY < <(compgen -W \"$choices\" -- \"$cur\")\n"
      << "    else\n"
      << "      compopt -o filenames 2>/dev/null\n"
      << "      mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
      << "    fi\n"
      << "  elif [[ $cur == -* ]]; then\n"
      << "    mapfile -t COMPREPLY < <(compgen -W \"$_npucc_opts\" -- \"$cur\")\n"
      << "  elif [[ -n $_npucc_subs ]]; then\n"
      << "    mapfile -t COMPREPLY < <(compgen -W \"$_npucc_subs\" -- \"$cur\")\n"
      << "  elif [[ -n $_npucc_pchoices ]]; then\n"
      << "    mapfile -t COMPREPLY < <(compgen -W \"$_npucc_pchoices\" -- \"$cur\")\n"
      << "  elif [[ -n $_npucc_pos ]]; then\n"
      << "    compopt -o filenames 2>/dev/null\n"
      << "    case $_npucc_pos in\n"
      << "      models) mapfile -t COMPREPLY < <({ compgen -d -- \"$cur\"; "
         "compgen -f -X \"!*.onnx\" -- \"$cur\"; } | sort -u) ;;\n"
      << "      dirs) mapfile -t COMPREPLY < <(compgen -d -- \"$cur\") ;;\n"
      << "      *) mapfile -t COMPREPLY < <(compgen -f -- \"$cur\") ;;\n"
      << "    esac\n"
      << "  fi\n"
      << "}\n"
      << "complete -F _npucc npucc\n";
  return out.str();
}

std::string zsh_script(const CLI::App& root) {
  std::ostringstream out;
  out << "#compdef npucc\n"
      << "# zsh completion for npucc (generated by `npucc completion zsh`; do not edit)\n"
      << tables(root) << "_npucc_main() {\n"
      << "  local cur=${words[CURRENT]} prev=${words[CURRENT-1]} option=\"\" choices\n"
      << "  _npucc_walk 2 \"$CURRENT\" words\n"
      << "  if [[ $cur == --*=* ]]; then\n"
      << "    option=${cur%%=*}\n"
      << "    choices=$(_npucc_choices \"$option\")\n"
      << "    if [[ -n $choices ]]; then compadd -P \"$option=\" -- ${=choices}; else _files; fi\n"
      << "    return\n"
      << "  fi\n"
      << "  if [[ \" $_npucc_vopts \" == *\" $prev \"* ]]; then\n"
      << "    choices=$(_npucc_choices \"$prev\")\n"
      << "    if [[ -n $choices ]]; then compadd -- ${=choices}; else _files; fi\n"
      << "  elif [[ $cur == -* ]]; then\n"
      << "    compadd -- ${=_npucc_opts}\n"
      << "  elif [[ -n $_npucc_subs ]]; then\n"
      << "    compadd -- ${=_npucc_subs}\n"
      << "  elif [[ -n $_npucc_pchoices ]]; then\n"
      << "    compadd -- ${=_npucc_pchoices}\n"
      << "  elif [[ $_npucc_pos == models ]]; then\n"
      << "    _files -g \"*.onnx\"\n"
      << "  elif [[ $_npucc_pos == dirs ]]; then\n"
      << "    _files -/\n"
      << "  elif [[ -n $_npucc_pos ]]; then\n"
      << "    _files\n"
      << "  fi\n"
      << "}\n"
      << "_npucc_main \"$@\"\n";
  return out.str();
}

} // namespace

std::function<int()> setup_completion(CLI::App& command, const GlobalOptions&) {
  auto shell = std::make_shared<std::string>();
  command.add_option("SHELL", *shell, "bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
  command.footer(
      "bash: source <(npucc completion bash)   zsh: npucc completion zsh > ~/.zfunc/_npucc");
  const CLI::App* self = &command;
  return [shell, self] {
    const CLI::App* root = self;
    while (root->get_parent() != nullptr) {
      root = root->get_parent();
    }
    std::cout << (*shell == "bash" ? bash_script(*root) : zsh_script(*root));
    return 0;
  };
}

} // namespace npucc::cli
