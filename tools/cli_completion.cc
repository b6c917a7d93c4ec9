// runledger completion bash|zsh: a shell completion script, written from the
// commands and flags registered on the command line itself, so it never
// falls behind them. Source it (`source <(runledger completion bash)`), or
// install it where the shell looks for completions.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tools/cli_commands.h"

namespace runledger::cli {
namespace {

struct CompletionOptions {
  std::string shell;
};

// Each command path (" job list") with the words that may follow it.
void walk(const CLI::App* app, const std::string& path,
          std::vector<std::pair<std::string, std::string>>* out) {
  std::string words;
  for (const CLI::App* sub : app->get_subcommands({})) {
    words += sub->get_name() + " ";
    walk(sub, path + " " + sub->get_name(), out);
  }
  for (const CLI::Option* opt : app->get_options({})) {
    for (const std::string& name : opt->get_lnames()) words += "--" + name + " ";
  }
  if (!words.empty()) words.pop_back();
  out->emplace_back(path, words);
}

std::string bash_script(const CLI::App& root) {
  std::vector<std::pair<std::string, std::string>> paths;
  walk(&root, "", &paths);
  std::string known;
  std::string cases;
  for (const auto& [path, words] : paths) {
    if (!path.empty()) known += "      \"" + path + "\") path=\"$next\" ;;\n";
    cases += "    \"" + path + "\") words=\"" + words + "\" ;;\n";
  }
  return "# bash completion for runledger (runledger completion bash)\n"
         "_runledger() {\n"
         "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=\"\" words=\"\" w next\n"
         "  for w in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do\n"
         "    next=\"$path $w\"\n"
         "    case \"$next\" in\n" +
         known +
         "    esac\n"
         "  done\n"
         "  case \"$path\" in\n" +
         cases +
         "  esac\n"
         "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
         "}\n"
         "complete -F _runledger runledger\n";
}

int completion(const CLI::App& root, const CompletionOptions& o) {
  std::string script = bash_script(root);
  if (o.shell == "zsh") {
    script =
        "#compdef runledger\n"
        "autoload -U +X bashcompinit && bashcompinit\n" +
        script;
  }
  std::fwrite(script.data(), 1, script.size(), stdout);
  return kExitOk;
}

}  // namespace

Subcommand add_completion(CLI::App& root) {
  auto o = std::make_shared<CompletionOptions>();
  CLI::App* app = root.add_subcommand(
      "completion",
      "Print a completion script for bash or zsh: source <(runledger completion bash)");
  app->add_option("SHELL", o->shell, "bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
  return {app, [o, &root] { return completion(root, *o); }};
}

}  // namespace runledger::cli
