// The Connectors section of the API: lifecycle, manual sync and abort, the
// sync loop's reports (fenced by sync_id), documents, reads.
#include "http/entity_reads.h"
#include "http/handler_support.h"
#include "http/routes.h"

namespace runledger::http {
namespace {

constexpr size_t kDocumentErrorBytesMax = 4096;

std::optional<nlohmann::json> live_connector(const State& s, const std::string& id) {
  auto it = s.connectors.by_id.find(id);
  if (it == s.connectors.by_id.end()) return std::nullopt;
  return connectors::view(it->second);
}

Renderer connector_reply(std::string id, int status) {
  return [id = std::move(id), status](const State& s, const Decision* d) {
    if (d->rejection) return rejection_reply(*d->rejection);
    auto v = live_connector(s, id);
    if (!v) return Reply::error(404, "not_found", "connector " + id + " not found");
    return Reply::json(status, *v);
  };
}

std::optional<int64_t> schedule(const JsonInput& in) {
  if (in.is_null("sync_schedule_s")) return 0;
  return in.opt_integer("sync_schedule_s", 1, connectors::kSyncScheduleSMax);
}

std::vector<std::string> doc_ids(const nlohmann::json& v, const std::string& field) {
  if (!v.is_array()) {
    throw FieldError{"invalid_field", field, "field '" + field + "' must be an array of ids"};
  }
  std::vector<std::string> out;
  for (const auto& id : v) {
    if (!id.is_string() || id.get_ref<const std::string&>().empty() ||
        id.get_ref<const std::string&>().size() > connectors::kDocumentIdBytesMax) {
      throw FieldError{"invalid_field", field,
                       "field '" + field + "' must hold non-empty document ids of at most " +
                           std::to_string(connectors::kDocumentIdBytesMax) + " bytes"};
    }
    out.push_back(id.get<std::string>());
  }
  return out;
}

// One item of documents.failed, named `at` ("documents.failed[2]"): both
// fields are required, and an error is text, as a sync failure's is.
std::pair<std::string, std::string> failed_document(const nlohmann::json& f,
                                                    const std::string& at) {
  if (!f.is_object()) {
    throw FieldError{"invalid_field", at,
                     "field '" + at + "' must be an object {\"id\", \"error\"}"};
  }
  JsonInput item(f, at + ".");
  item.only({"id", "error"});
  std::string id = item.str("id", connectors::kDocumentIdBytesMax);
  return {std::move(id), item.str("error", kDocumentErrorBytesMax)};
}

connectors::DocumentReport documents(const JsonInput& in) {
  connectors::DocumentReport rep;
  const auto* d = in.raw("documents");
  if (d == nullptr) return rep;
  if (!d->is_object()) {
    throw FieldError{"invalid_field", "documents", "field 'documents' must be an object"};
  }
  for (const auto& [key, value] : d->items()) {
    std::string field = "documents." + key;
    if (key == "pending") {
      rep.pending = doc_ids(value, field);
    } else if (key == "running") {
      rep.running = doc_ids(value, field);
    } else if (key == "indexed") {
      rep.indexed = doc_ids(value, field);
    } else if (key == "failed") {
      if (!value.is_array()) {
        throw FieldError{"invalid_field", field, "field '" + field + "' must be an array"};
      }
      for (size_t i = 0; i < value.size(); ++i) {
        rep.failed.push_back(failed_document(value[i], field + "[" + std::to_string(i) + "]"));
      }
    } else {
      throw FieldError{"unknown_field", field, "unknown field '" + field + "'"};
    }
  }
  size_t n = rep.pending.size() + rep.running.size() + rep.indexed.size() + rep.failed.size();
  if (n > connectors::kDocumentsPerReportMax) {
    throw FieldError{"invalid_field", "documents",
                     "a report may carry at most " +
                         std::to_string(connectors::kDocumentsPerReportMax) + " documents"};
  }
  return rep;
}

void add_lifecycle_routes(Router& router) {
  router.add_command("POST", "/v1/connectors", [](ApiRequest& a) {
    return prepare_command(a, [&](const nlohmann::json& body) {
      JsonInput in(body);
      in.only({"id", "name", "sync_schedule_s"});
      connectors::Create c;
      c.id = in.opt_id("id").value_or(new_id("conn"));
      c.name = in.str("name", connectors::kNameBytesMax);
      c.sync_schedule_s = schedule(in).value_or(0);
      Request r;
      // 201 for a new connector; 200 when the same body was posted again.
      r.render = [id = c.id](const State& s, const Decision* d) {
        if (d->rejection) return rejection_reply(*d->rejection);
        bool existing = d->body.is_object() && d->body.value("existing", false);
        auto v = live_connector(s, id);
        if (!v) return Reply::error(404, "not_found", "connector " + id + " not found");
        return Reply::json(existing ? 200 : 201, *v);
      };
      r.command = std::move(c);
      return r;
    });
  });
  router.add_command("PATCH", "/v1/connectors/{id}", [](ApiRequest& a) {
    return prepare_command(a, [&](const nlohmann::json& body) {
      JsonInput in(body);
      in.only({"status", "name", "sync_schedule_s"});
      connectors::Update c;
      c.id = a.param("id");
      if (auto st = in.opt_str("status", 64)) {
        if (*st != "active" && *st != "paused") {
          throw FieldError{"invalid_field", "status",
                           *st == "error" || *st == "deleting"
                               ? "status '" + *st + "' is set by the engine only"
                               : "field 'status' must be one of: active, paused"};
        }
        c.status = st;
      }
      c.name = in.opt_str("name", connectors::kNameBytesMax);
      if (c.name && c.name->empty()) {
        throw FieldError{"invalid_field", "name", "field 'name' is empty"};
      }
      if (in.has("sync_schedule_s")) c.sync_schedule_s = schedule(in);
      Request r;
      r.render = connector_reply(c.id, 200);
      r.command = std::move(c);
      return r;
    });
  });
  router.add_command("DELETE", "/v1/connectors/{id}", [](ApiRequest& a) {
    return prepare_command(a, [&](const nlohmann::json& body) {
      JsonInput(body).only({});
      Request r;
      r.command = connectors::Delete{a.param("id")};
      r.render = [](const State&, const Decision* d) {
        if (d->rejection) return rejection_reply(*d->rejection);
        return Reply::json(202, d->body);
      };
      return r;
    });
  });
}

void add_sync_routes(Router& router) {
  router.add_command("POST", "/v1/connectors/{id}/sync", [](ApiRequest& a) {
    return prepare_command(a, [&](const nlohmann::json& body) {
      JsonInput(body).only({});
      connectors::StartSync c{a.param("id"), new_id("sync")};
      Request r;
      r.render = [id = c.id, sync_id = c.sync_id](const State& s, const Decision* d) {
        if (d->rejection) return rejection_reply(*d->rejection);
        auto v = live_connector(s, id);
        if (!v) return Reply::error(404, "not_found", "connector " + id + " not found");
        return Reply::json(202, {{"sync_id", sync_id}, {"connector", *v}});
      };
      r.command = std::move(c);
      return r;
    });
  });
  router.add_command("POST", "/v1/connectors/{id}/sync/abort", [](ApiRequest& a) {
    return prepare_command(a, [&](const nlohmann::json& body) {
      JsonInput(body).only({});
      Request r;
      r.command = connectors::AbortSync{a.param("id")};
      r.render = connector_reply(a.param("id"), 202);
      return r;
    });
  });
  router.add_command("POST", "/v1/connectors/{id}/syncs/{sync_id}/progress", [](ApiRequest& a) {
    return prepare_command(a, [&](const nlohmann::json& body) {
      JsonInput in(body);
      in.only({"documents"});
      Request r;
      r.command = connectors::ReportProgress{a.param("id"), a.param("sync_id"), documents(in)};
      r.render = [](const State&, const Decision* d) {
        if (d->rejection) {
          Reply rep = rejection_reply(*d->rejection);
          if (rep.status != 409) return rep;
          auto j = nlohmann::json::parse(rep.body);
          j["continue"] = false;
          return Reply::json(409, j);
        }
        return Reply::json(200, {{"continue", true}});
      };
      return r;
    });
  });
  router.add_command("POST", "/v1/connectors/{id}/syncs/{sync_id}/succeeded", [](ApiRequest& a) {
    return prepare_command(a, [&](const nlohmann::json& body) {
      JsonInput in(body);
      in.only({"documents"});
      Request r;
      r.command = connectors::ReportSucceeded{a.param("id"), a.param("sync_id"), documents(in)};
      r.render = connector_reply(a.param("id"), 200);
      return r;
    });
  });
  router.add_command("POST", "/v1/connectors/{id}/syncs/{sync_id}/failed", [](ApiRequest& a) {
    return prepare_command(a, [&](const nlohmann::json& body) {
      JsonInput in(body);
      in.only({"error"});
      Request r;
      r.command = connectors::ReportFailed{a.param("id"), a.param("sync_id"),
                                           in.str("error", kCutTextBytesMax)};
      r.render = connector_reply(a.param("id"), 200);
      return r;
    });
  });
}

std::optional<connectors::DocStatus> doc_status(const ApiRequest& a) {
  const auto* v = a.query_value("status");
  if (v == nullptr) return std::nullopt;
  for (auto s : {connectors::DocStatus::kPending, connectors::DocStatus::kRunning,
                 connectors::DocStatus::kIndexed, connectors::DocStatus::kFailed}) {
    if (*v == connectors::to_string(s)) return s;
  }
  throw ApiError{422,
                 "invalid_query",
                 "query parameter 'status' must be one of pending, running, indexed, failed",
                 {{"field", "status"}}};
}

void check_filter(const ApiRequest& a, const std::string& name,
                  std::initializer_list<std::string_view> values) {
  const auto* v = a.query_value(name);
  if (v == nullptr) return;
  std::string list;
  for (auto x : values) {
    if (*v == x) return;
    list += (list.empty() ? "" : ", ") + std::string(x);
  }
  throw ApiError{422,
                 "invalid_query",
                 "query parameter '" + name + "' must be one of " + list,
                 {{"field", name}}};
}

void add_read_routes(Router& router, Engine& engine) {
  router.add("GET", "/v1/connectors", [&engine](ApiRequest& a) {
    check_filter(a, "status", {"active", "paused", "error", "deleting"});
    check_filter(a, "sync_status", {"idle", "running"});
    const auto* status = a.query_value("status");
    const auto* sync = a.query_value("sync_status");
    const auto limit = static_cast<size_t>(
        // A page of the list: at most kListLimitMax, and that many unless asked.
        query_int(a, "limit", kListLimitMax, 1, static_cast<int64_t>(kListLimitMax)));
    // The cursor is the id of the last connector of a page (`next`).
    const std::string after = query_id(a, "after").value_or("");
    return engine.read([&](const State& s, const Decision*) {
      nlohmann::json list = nlohmann::json::array();
      nlohmann::json next = nullptr;
      for (auto it = s.connectors.by_id.upper_bound(after); it != s.connectors.by_id.end(); ++it) {
        const auto& c = it->second;
        if (status && connectors::to_string(c.status) != *status) continue;
        if (sync && connectors::to_string(c.sync_status) != *sync) continue;
        if (list.size() == limit) {
          next = list.back()["id"];
          break;
        }
        list.push_back(connectors::view(c));
      }
      return Reply::json(200, {{"connectors", std::move(list)}, {"next", std::move(next)}});
    });
  });
  router.add("GET", "/v1/connectors/{id}", [&engine](ApiRequest& a) {
    std::string id = a.param("id");
    auto live = [id](const State& s) { return live_connector(s, id); };
    if (a.query_value("as_of")) {
      return read_as_of(engine, a, connector_stream(id), live, "connector " + id);
    }
    return read_entity(engine, connector_stream(id), live, "connector " + id);
  });
  router.add("GET", "/v1/connectors/{id}/documents", [&engine](ApiRequest& a) {
    auto filter = doc_status(a);
    std::string id = a.param("id");
    return engine.read([&](const State& s, const Decision*) {
      auto it = s.connectors.by_id.find(id);
      if (it == s.connectors.by_id.end()) {
        return Reply::error(404, "not_found", "connector " + id + " not found");
      }
      auto docs = connectors::documents_view(it->second, filter);
      if (!docs.is_object()) docs = nlohmann::json{{"documents", std::move(docs)}};
      return Reply::json(200, docs);
    });
  });
  router.add("GET", "/v1/connectors/{id}/events", [&engine](ApiRequest& a) {
    return stream_events(engine, a, connector_stream(a.param("id")), "connector " + a.param("id"));
  });
}

}  // namespace

void add_connector_routes(Router& router, Engine& engine) {
  add_lifecycle_routes(router);
  add_sync_routes(router);
  add_read_routes(router, engine);
}

}  // namespace runledger::http
