// CrashClient: sending, resending and recording; see crash_clients.h.
#include "tests/faults/crash_clients.h"

namespace runledger::testing {

void CrashClient::run(int port, const std::atomic<bool>& stop, const std::atomic<bool>& killed) {
  ApiClient http(port);
  while (!stop) {
    if (!pending_) pending_ = next_command();
    const SentCommand c = *pending_;
    ++stats_.sent;
    ApiReply r = http.send(c.method, c.path, c.body,
                           {{"Idempotency-Key", c.key}, {"X-Runledger-Actor", name_}});
    if (r.status == 0) {
      if (!killed) problem("no answer while the server ran: " + c.what + " " + r.transport);
      if (!resending_) ++stats_.unknown;
      resending_ = true;
      return;
    }
    pending_.reset();
    const uint64_t acked_before = stats_.acked;
    const nlohmann::json* before = view_of(c.stream);
    const uint64_t version_before = before ? before->value("version", uint64_t{0}) : 0;
    on_reply(c, r);
    if (resending_) {
      ++stats_.resent;
      // Applied before the kill, yet the resend was not answered with the
      // command's first reply: the key did not protect the command.
      if (stats_.acked == acked_before && observed_version_ > version_before) {
        problem(c.what + " on " + c.stream + " was applied before the kill (version " +
                std::to_string(observed_version_) + "), its resend got " +
                std::to_string(r.status) + ": " + r.body);
      }
    }
    resending_ = false;
  }
}

SentCommand CrashClient::command(std::string method, std::string path, const nlohmann::json& body,
                                 std::string what, std::string stream) {
  SentCommand c;
  c.method = std::move(method);
  c.path = std::move(path);
  c.body = body.dump();
  c.key = name_ + "-k" + std::to_string(++keys_);
  c.what = std::move(what);
  c.stream = std::move(stream);
  return c;
}

Ack& CrashClient::ack(const SentCommand& c, const nlohmann::json& view,
                      std::set<std::string> last_types) {
  const nlohmann::json* before = view_of(c.stream);
  const uint64_t version_before = before ? before->value("version", uint64_t{0}) : 0;
  Ack& a = acks_.emplace_back();
  a.what = c.what;
  a.stream = c.stream;
  a.version = view.value("version", uint64_t{0});
  a.last_types = std::move(last_types);
  a.attempt = view.value("attempt", 0);
  a.resent = resending_;
  ++stats_.acked;
  if (resending_) {
    // Invariant 7 across a kill: a command applied before the kill gets its
    // first reply again; one that was not is applied now, once.
    const bool applied_before = observed_version_ > version_before;
    stats_.applied += applied_before;
    if (applied_before && a.version != observed_version_) {
      problem(c.what + " on " + c.stream + ": applied before the kill at version " +
              std::to_string(observed_version_) + ", the resend's reply shows version " +
              std::to_string(a.version));
    } else if (!applied_before && a.version <= observed_version_) {
      problem(c.what + " on " + c.stream + ": not applied before the kill (version " +
              std::to_string(observed_version_) + "), the resend's reply shows version " +
              std::to_string(a.version));
    }
  }
  if (a.version <= version_before) {
    problem(c.what + " on " + c.stream + " acknowledged at version " + std::to_string(a.version) +
            ", not after the previous acknowledged version " + std::to_string(version_before));
  }
  views_[c.stream] = view;
  touched_.insert(c.stream);
  return a;
}

void CrashClient::problem(const std::string& what) { problems_.push_back(name_ + ": " + what); }

const nlohmann::json* CrashClient::view_of(const std::string& stream) const {
  auto it = views_.find(stream);
  return it == views_.end() ? nullptr : &it->second;
}

}  // namespace runledger::testing
