// runledger work: any command as a fenced, heartbeating worker
// (docs/worker.md). This file reads the command line; worker/ runs it.
#include <memory>
#include <regex>
#include <sstream>

#include "tools/cli_commands.h"
#include "worker/runner.h"

namespace runledger::cli {
namespace {

struct WorkFlags {
  worker::WorkOptions work;
  std::string grace = "10s", drain = "20s", step_timeout, fence_after;
  std::string retryable_exits = "75";
  std::vector<std::string> steps;
  std::string cancel = "boundary";
  std::string summary;
  std::string keeper = "bound";
  std::string log_format = "text";
};

// N, Ns, Nms, Nm or Nh.
bool parse_duration(const std::string& text, std::chrono::milliseconds* out) {
  static const std::regex kDuration(R"(([0-9]{1,9})(ms|s|m|h)?)");
  std::smatch m;
  if (!std::regex_match(text, m, kDuration)) return false;
  const int64_t n = std::stoll(m[1]);
  const std::string unit = m[2];
  const int64_t per = unit == "ms" ? 1 : unit == "m" ? 60'000 : unit == "h" ? 3'600'000 : 1000;
  *out = std::chrono::milliseconds(n * per);
  return true;
}

int work(WorkFlags& f) {
  struct Duration {
    const char* flag;
    const std::string& text;
    std::chrono::milliseconds* out;
  };
  for (const Duration& d :
       {Duration{"--grace", f.grace, &f.work.grace}, Duration{"--drain", f.drain, &f.work.drain},
        Duration{"--step-timeout", f.step_timeout, &f.work.step_timeout},
        Duration{"--fence-after", f.fence_after, &f.work.fence_after}}) {
    if (!d.text.empty() && !parse_duration(d.text, d.out)) {
      return fail(
          std::string(d.flag) + " must be a duration (N, Ns, Nms, Nm, Nh), got '" + d.text + "'",
          kExitUsage);
    }
  }
  f.work.retryable_exits.clear();
  std::stringstream codes(f.retryable_exits);
  for (std::string code; std::getline(codes, code, ',');) {
    if (code.empty() || code.find_first_not_of("0123456789") != std::string::npos ||
        code.size() > 3) {
      return fail(
          "--retryable-exit must be a comma list of exit codes, got '" + f.retryable_exits + "'",
          kExitUsage);
    }
    f.work.retryable_exits.insert(std::stoi(code));
  }
  for (const std::string& step : f.steps) {
    const size_t eq = step.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == step.size()) {
      return fail("--step must be NAME=CMD, got '" + step + "'", kExitUsage);
    }
    f.work.step_commands[step.substr(0, eq)] = step.substr(eq + 1);
  }
  f.work.cancel_interrupt = f.cancel == "interrupt";
  f.work.summary_json = f.summary == "json";
  f.work.keeper_detached = f.keeper == "detached";
  f.work.log_json = f.log_format == "json";
  return worker::run_worker(f.work);
}

}  // namespace

Subcommand add_work(CLI::App& root) {
  auto f = std::make_shared<WorkFlags>();
  CLI::App* app = root.add_subcommand(
      "work",
      "Run a command as a fenced, heartbeating worker: runledger work --kind K -- COMMAND [ARG...] "
      "(an ARG {step} is the step's name), or --step NAME=CMD per step.");
  worker::WorkOptions& w = f->work;
  app->add_option("--kind", w.kinds, "the kinds of job to claim (repeatable)")->required();
  app->add_option("--server", w.client.server,
                  "the runledgerd (default $RUNLEDGER_SERVER, else http://127.0.0.1:8080)");
  app->add_option("--token-file", w.client.token_file,
                  "bearer token file (default $RUNLEDGER_TOKEN_FILE); never given to a child");
  app->add_option("--cacert", w.client.cacert, "CA certificate to trust the server's with");
  app->add_option("--cert", w.client.cert, "client certificate (PEM), with --key");
  app->add_option("--key", w.client.key, "the client certificate's key (PEM)");
  app->add_option("--worker", w.worker, "the worker id in events (default <hostname>/<pid>)");
  app->add_flag("--once", w.once, "claim at most one job, run it, exit with its outcome");
  app->add_option("--lease-s", w.lease_s, "lease length; a heartbeat every third of it")
      ->check(CLI::Range(1, 3600));
  app->add_option("--wait-s", w.wait_s, "claim long poll")->check(CLI::Range(0, 30));
  app->add_option("--concurrency", w.concurrency,
                  "attempts run at once: slots, each with its own folder <state-dir>/slot-N")
      ->check(CLI::Range(1, 64));
  app->add_option("--state-dir", w.state_dir,
                  "journal and per-step files (default $STATE_DIRECTORY, else .runledger-work)");
  app->add_option("--cancel", f->cancel, "on cancel: boundary (finish the step) or interrupt")
      ->check(CLI::IsMember({"boundary", "interrupt"}));
  app->add_option("--grace", f->grace, "TERM -> KILL wait (default 10s)");
  app->add_option("--drain", f->drain, "on SIGTERM, how long the running step may go on");
  app->add_option("--step-timeout", f->step_timeout, "a step running longer is stopped and failed");
  app->add_option("--retryable-exit", f->retryable_exits,
                  "exit codes reported as retryable failures (default 75)");
  app->add_option("--fence-after", f->fence_after,
                  "with no successful call for this long, stop the child (default 10 leases, at "
                  "least 60s)");
  app->add_option("--keep-attempts", w.keep_attempts,
                  "folders of attempts that are over kept in the state folder, the newest")
      ->check(CLI::Range(0, 1000000));
  app->add_option("--tail-bytes", w.tail_bytes, "output kept for a failed step's error")
      ->check(CLI::Range(size_t{0}, size_t{1 << 20}));
  app->add_option("--summary", f->summary, "json: one JSON line on stdout per attempt")
      ->check(CLI::IsMember({"json"}));
  app->add_option("--keeper", f->keeper,
                  "bound (a step is stopped when its runner dies) or detached (it runs on, and "
                  "a runner started again on the same --state-dir watches it)")
      ->check(CLI::IsMember({"bound", "detached"}));
  app->add_option("--log-format", f->log_format, "text or json: the runner's lines and the steps'")
      ->check(CLI::IsMember({"text", "json"}));
  app->add_option("--step", f->steps, "NAME=CMD: a step's own command, run by /bin/sh");
  app->add_option("COMMAND", w.command, "the command run for each step, after --");
  return {app, [f] { return work(*f); }};
}

}  // namespace runledger::cli
