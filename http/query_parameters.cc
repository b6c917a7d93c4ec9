#include "http/query_parameters.h"

#include <algorithm>
#include <initializer_list>
#include <string>

namespace runledger::http {
namespace {

struct QueryRule {
  std::string_view method;
  std::string_view pattern;
  std::initializer_list<std::string_view> takes;
  std::initializer_list<std::string_view> repeatable;
};

// Routes not listed take no query parameter.
const QueryRule kRules[] = {
    {"GET", "/v1/jobs", {"state", "target", "kind", "limit", "after"}, {}},
    {"GET", "/v1/jobs/{id}", {"as_of"}, {}},
    {"GET", "/v1/jobs/{id}/events", {"after", "limit"}, {}},
    {"GET", "/v1/connectors", {"status", "sync_status", "limit", "after"}, {}},
    {"GET", "/v1/connectors/{id}", {"as_of"}, {}},
    {"GET", "/v1/connectors/{id}/events", {"after", "limit"}, {}},
    {"GET", "/v1/connectors/{id}/documents", {"status"}, {}},
    {"GET", "/v1/holds", {"target", "open", "limit", "after"}, {}},
    {"GET", "/v1/holds/{id}", {"as_of"}, {}},
    {"GET", "/v1/holds/{id}/events", {"after", "limit"}, {}},
    {"GET", "/v1/events", {"after", "limit", "stream", "type", "since"}, {"type"}},
    {"GET", "/v1/events/live", {"after"}, {}},
};

bool contains(std::initializer_list<std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::optional<Reply> refuse_query(std::string_view method, std::string_view pattern,
                                  const ApiRequest& a) {
  if (a.query.empty()) return std::nullopt;
  const QueryRule* rule = nullptr;
  for (const QueryRule& r : kRules) {
    if (r.method == method && r.pattern == pattern) rule = &r;
  }
  for (auto it = a.query.begin(); it != a.query.end(); it = a.query.upper_bound(it->first)) {
    const std::string& name = it->first;
    if (rule == nullptr || !contains(rule->takes, name)) {
      std::string takes;
      if (rule != nullptr) {
        for (std::string_view t : rule->takes)
          takes += (takes.empty() ? "" : ", ") + std::string(t);
      }
      return Reply::error(
          422, "invalid_query",
          "query parameter '" + name + "' is not taken here" +
              (takes.empty() ? " (this route takes none)" : " (it takes " + takes + ")"),
          {{"field", name}});
    }
    if (a.query.count(name) > 1 && !contains(rule->repeatable, name)) {
      return Reply::error(422, "invalid_query", "query parameter '" + name + "' is given twice",
                          {{"field", name}});
    }
  }
  return std::nullopt;
}

}  // namespace runledger::http
