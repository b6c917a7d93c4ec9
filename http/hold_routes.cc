// The Holds section of the API and the start gate.
#include "engine/view_index.h"
#include "http/entity_reads.h"
#include "http/handler_support.h"
#include "http/routes.h"
#include "projections/limits.h"

namespace runledger::http {
namespace {

std::optional<nlohmann::json> live_hold(const State& s, const std::string& id) {
  auto it = s.holds.by_id.find(id);
  if (it == s.holds.by_id.end()) return std::nullopt;
  return holds::view(it->second);
}

Renderer hold_reply(std::string id, int status) {
  return [id = std::move(id), status](const State& s, const Decision* d) {
    if (d->rejection) return rejection_reply(*d->rejection);
    auto v = live_hold(s, id);
    if (!v) return Reply::error(404, "not_found", "hold " + id + " not found");
    return Reply::json(status, *v);
  };
}

Reply list_holds(Engine& engine, const ApiRequest& a) {
  const auto limit = static_cast<size_t>(
      // A page of the list: at most kListLimitMax, and that many unless asked.
      query_int(a, "limit", kListLimitMax, 1, static_cast<int64_t>(kListLimitMax)));
  // The cursor is the id of the last hold of a page (`next`).
  const std::string after = query_id(a, "after").value_or("");
  auto open = query_bool(a, "open");
  const std::string* target = a.query_value("target");
  auto keep = [&](const nlohmann::json& v) {
    return (!open || v.value("released", false) == !*open) &&
           (!target || v.value("target", "") == *target);
  };
  auto live_page = [&](const State& s) {
    std::vector<nlohmann::json> out;
    for (auto it = s.holds.by_id.upper_bound(after); it != s.holds.by_id.end(); ++it) {
      auto v = holds::view(it->second);
      if (!keep(v)) continue;
      out.push_back(std::move(v));
      if (out.size() > limit) break;
    }
    return out;
  };
  // Stored views are of released holds only.
  StoredMatches stored;
  if (open && *open) {
    stored.mode = StoredMatches::Mode::kNone;
  } else if (target) {
    stored = {StoredMatches::Mode::kIndexed,
              view_index::prefix(view_index::Field::kHoldTarget, *target)};
  }
  Page page = list_entities(engine, std::string(stream_prefix(StreamKind::kHold)), after, limit,
                            live_page, keep, stored);
  nlohmann::json out{{"holds", std::move(page.items)}};
  out["next"] = page.next ? nlohmann::json(*page.next) : nlohmann::json(nullptr);
  return Reply::json(200, out);
}

}  // namespace

void add_hold_routes(Router& router, Engine& engine) {
  router.add_command("POST", "/v1/holds", [](ApiRequest& a) {
    return prepare_command(a, [&](const nlohmann::json& body) {
      JsonInput in(body);
      in.only({"target", "kind", "reason", "job"});
      holds::Place c;
      c.id = new_id("hold");
      c.target = in.str("target", limits::kTargetBytesMax);
      c.kind = in.enumeration("kind", {holds::kExecutionStateUnknown, holds::kResultUnknown});
      c.reason = in.str("reason", holds::kReasonBytesMax);
      c.job = in.opt_id("job").value_or("");
      Request r;
      r.render = hold_reply(c.id, 201);
      r.command = std::move(c);
      return r;
    });
  });
  router.add_command("POST", "/v1/holds/{id}/release", [](ApiRequest& a) {
    return prepare_command(a, [&](const nlohmann::json& body) {
      JsonInput in(body);
      in.only({"note", "execution_stopped", "outcome"});
      holds::ReleaseHold c;
      c.id = a.param("id");
      c.note = in.str("note", holds::kNoteBytesMax);
      c.execution_stopped = in.opt_bool("execution_stopped");
      c.outcome = in.opt_enumeration("outcome", {"SUCCEEDED", "FAILED"});
      Request r;
      r.render = hold_reply(c.id, 200);
      r.command = std::move(c);
      return r;
    });
  });
  router.add("GET", "/v1/holds", [&engine](ApiRequest& a) { return list_holds(engine, a); });
  router.add("GET", "/v1/holds/{id}", [&engine](ApiRequest& a) {
    std::string id = a.param("id");
    auto live = [id](const State& s) { return live_hold(s, id); };
    if (a.query_value("as_of")) return read_as_of(engine, a, hold_stream(id), live, "hold " + id);
    return read_entity(engine, hold_stream(id), live, "hold " + id);
  });
  router.add("GET", "/v1/holds/{id}/events", [&engine](ApiRequest& a) {
    return stream_events(engine, a, hold_stream(a.param("id")), "hold " + a.param("id"));
  });
  router.add("GET", "/v1/targets/{target}/gate", [&engine](ApiRequest& a) {
    std::string target = a.param("target");
    return engine.read(
        [&](const State& s, const Decision*) { return Reply::json(200, holds::gate(s, target)); });
  });
}

}  // namespace runledger::http
