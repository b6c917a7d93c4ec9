#include "http/router.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "http/path_segments.h"

namespace runledger::http {

Reply settle(Engine& engine, Answer answer) {
  if (answer.command) return engine.execute(std::move(*answer.command));
  return std::move(*answer.reply);
}

void Router::add(std::string method, std::string pattern, Handler handler) {
  add_route(std::move(method), std::move(pattern), std::move(handler), true);
}

void Router::add_command(std::string method, std::string pattern, Handler handler) {
  add_route(std::move(method), std::move(pattern), std::move(handler), false);
}

void Router::add_stream(std::string method, std::string pattern, Handler fallback) {
  add_route(std::move(method), std::move(pattern), std::move(fallback), true).streams = true;
}

Router::Route& Router::add_route(std::string method, std::string pattern, Handler handler,
                                 bool may_block) {
  Route r;
  r.may_block = may_block;
  r.method = std::move(method);
  r.pattern = pattern;
  // Split as request paths are, but not decoded: a pattern is written plain.
  for_each_segment(pattern, [&r](std::string_view segment) {
    r.segments.emplace_back(segment);
    if (segment.front() != '{') ++r.literals;
  });
  r.handler = std::move(handler);
  // More literal segments first, so fixed paths beat placeholders: the new
  // route goes after every route with as many literals or more.
  auto at = std::upper_bound(routes_.begin(), routes_.end(), r.literals,
                             [](int literals, const Route& b) { return literals > b.literals; });
  return *routes_.insert(at, std::move(r));
}

namespace {

bool pattern_matches(const std::vector<std::string>& pattern,
                     const std::vector<std::string>& segments) {
  if (pattern.size() != segments.size()) return false;
  for (size_t i = 0; i < segments.size(); ++i) {
    const auto& pat = pattern[i];
    if (pat.front() == '{' ? segments[i].empty() : pat != segments[i]) return false;
  }
  return true;
}

}  // namespace

std::string Router::allowed_methods(std::string_view path) const {
  const std::vector<std::string> segments = split_path(path);
  std::set<std::string_view> methods;
  for (const auto& r : routes_) {
    if (!pattern_matches(r.segments, segments)) continue;
    methods.insert(r.method);
    if (r.method == "GET") methods.insert("HEAD");
  }
  std::string allow;
  for (std::string_view m : methods) {
    if (!allow.empty()) allow += ", ";
    allow += m;
  }
  return allow;
}

Router::Match Router::route(ApiRequest& request, const Route** route) const {
  // Split the raw path so an encoded "/" (%2F) stays inside its segment.
  std::vector<std::string> segments = split_path(request.path);
  bool path_matched = false;
  for (const auto& r : routes_) {
    if (!pattern_matches(r.segments, segments)) continue;
    path_matched = true;
    if (r.method != request.method) continue;
    // Parameters are named only for the route that matched: no map is built
    // for the routes tried before it.
    request.params.clear();
    for (size_t i = 0; i < segments.size(); ++i) {
      const auto& pat = r.segments[i];
      if (pat.front() == '{') {
        request.params[pat.substr(1, pat.size() - 2)] = std::move(segments[i]);
      }
    }
    *route = &r;
    return Match::kFound;
  }
  return path_matched ? Match::kNoMethod : Match::kNoPath;
}

}  // namespace runledger::http
