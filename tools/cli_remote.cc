#include "tools/cli_remote.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

#include "tools/cli_common.h"

namespace runledger::cli {

void add_remote_flags(CLI::App* app, RemoteOptions* o) {
  app->add_option("--server", o->client.server,
                  "the runledgerd, http(s)://HOST[:PORT] (default $RUNLEDGER_SERVER, else "
                  "http://127.0.0.1:8080)");
  app->add_option("--token-file", o->client.token_file,
                  "file whose first line is the bearer token (default $RUNLEDGER_TOKEN_FILE)");
  app->add_option("--cacert", o->client.cacert, "CA certificate to trust the server's with");
  app->add_option("--cert", o->client.cert, "client certificate (PEM), with --key");
  app->add_option("--key", o->client.key, "the client certificate's key (PEM)");
  app->add_option("--output", o->output, "table or json (default: a table on a terminal)")
      ->check(CLI::IsMember({"table", "json"}));
}

void add_idempotency_flag(CLI::App* app, std::string* key) {
  app->add_option("--idempotency-key", *key,
                  "the request's Idempotency-Key (default: a fresh one, kept across retries)")
      ->check(kNotEmpty);
}

std::unique_ptr<client::Client> open_client(const RemoteOptions& o, int* exit_code) {
  std::unique_ptr<client::Client> c;
  if (Status s = client::Client::open(o.client, &c); !s.ok()) {
    *exit_code = fail(s.message(), kExitUsage);
    return nullptr;
  }
  return c;
}

int exit_for(const client::Response& r, std::string_view what) {
  if (r.status >= 200 && r.status < 300) return kExitOk;
  const std::string why = std::string(what) + ": " + r.message();
  if (r.status == 0 || r.status == 503) return fail(why, kExitUnavailable);
  if (r.status >= 400 && r.status < 500) {
    std::string code = r.json.is_object() ? r.json.value("code", "") : "";
    return fail(why + (code.empty() ? "" : " (" + std::to_string(r.status) + " " + code + ")"),
                kExitFindings);
  }
  return fail(why + " (HTTP " + std::to_string(r.status) + ")", kExitSoftware);
}

bool as_table(const RemoteOptions& o) {
  if (!o.output.empty()) return o.output == "table";
  return ::isatty(STDOUT_FILENO) == 1;
}

void print_json_line(const nlohmann::json& value) {
  std::printf("%s\n", value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

std::string cell(const nlohmann::json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void print_table(const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  };
  print_row(header);
  for (const auto& row : rows) print_row(row);
}

namespace {

// An array whose every item is an object: a table of its own under the
// entity's fields (a job's steps and attempts).
bool is_table_of_objects(const nlohmann::json& value) {
  return value.is_array() && !value.empty() &&
         std::all_of(value.begin(), value.end(), [](const auto& v) { return v.is_object(); });
}

// The entity's fields as FIELD VALUE rows; an object's fields one level down
// as `name.field`.
void print_fields(const nlohmann::json& entity) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, value] : entity.items()) {
    if (is_table_of_objects(value)) continue;
    if (value.is_object() && !value.empty()) {
      for (const auto& [field, inner] : value.items()) {
        std::string dotted = name;
        dotted.append(".").append(field);
        rows.push_back({std::move(dotted), cell(inner)});
      }
    } else {
      rows.push_back({name, cell(value)});
    }
  }
  print_table({"FIELD", "VALUE"}, rows);
}

// An array of objects under its name: a column per field, what names an
// item (name, id, attempt) first, then its state, then the rest by name.
void print_objects(const std::string& name, const nlohmann::json& items) {
  std::vector<std::string> header;
  for (const auto& item : items) {
    for (const auto& [field, value] : item.items()) {
      if (std::find(header.begin(), header.end(), field) == header.end()) header.push_back(field);
    }
  }
  auto rank = [](const std::string& field) {
    static constexpr std::array<std::string_view, 4> kFirst = {"name", "id", "attempt", "state"};
    return static_cast<size_t>(std::find(kFirst.begin(), kFirst.end(), field) - kFirst.begin());
  };
  std::stable_sort(header.begin(), header.end(),
                   [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  std::vector<std::vector<std::string>> rows;
  rows.reserve(items.size());
  for (const auto& item : items) {
    std::vector<std::string> row;
    row.reserve(header.size());
    for (const auto& field : header) row.push_back(item.contains(field) ? cell(item[field]) : "-");
    rows.push_back(std::move(row));
  }
  std::printf("\n%s\n", name.c_str());
  std::vector<std::string> upper;
  for (const auto& field : header) {
    std::string h = field;
    std::transform(h.begin(), h.end(), h.begin(), [](unsigned char c) { return std::toupper(c); });
    upper.push_back(std::move(h));
  }
  print_table(upper, rows);
}

}  // namespace

void print_entity(const RemoteOptions& o, const nlohmann::json& entity) {
  if (!as_table(o)) {
    print_json_line(entity);
    return;
  }
  if (!entity.is_object()) {
    std::printf("%s\n", cell(entity).c_str());
    return;
  }
  print_fields(entity);
  for (const auto& [name, value] : entity.items()) {
    if (is_table_of_objects(value)) print_objects(name, value);
  }
}

int send_and_print(const RemoteOptions& o, const std::string& what, const std::string& method,
                   const std::string& path, const nlohmann::json& body, const std::string& key) {
  int code = kExitOk;
  auto c = open_client(o, &code);
  if (!c) return code;
  client::Response r = c->send(method, path, body, key);
  if (int e = exit_for(r, what); e != kExitOk) return e;
  print_entity(o, r.json);
  return kExitOk;
}

int read_pages(client::Client& c, const std::string& what, const std::string& path_and_query,
               const std::string& items, size_t limit,
               const std::function<void(const nlohmann::json&)>& each) {
  const char glue = path_and_query.find('?') == std::string::npos ? '?' : '&';
  size_t seen = 0;
  std::string after;
  while (seen < limit) {
    const size_t page = std::min(limit - seen, kListPageMax);
    client::Response r = c.get(path_and_query + glue + "limit=" + std::to_string(page) +
                               (after.empty() ? "" : "&after=" + client::path_segment(after)));
    if (int e = exit_for(r, what); e != kExitOk) return e;
    for (const auto& item : r.json.value(items, nlohmann::json::array())) {
      each(item);
      if (++seen == limit) break;
    }
    if (!r.json.contains("next") || !r.json["next"].is_string()) break;
    after = r.json["next"].get<std::string>();
  }
  return kExitOk;
}

int print_list(const RemoteOptions& o, const std::string& what, const std::string& path,
               const std::string& items, size_t limit, const std::vector<std::string>& header,
               const std::function<std::vector<std::string>(const nlohmann::json&)>& row) {
  int code = kExitOk;
  auto c = open_client(o, &code);
  if (!c) return code;
  std::vector<std::vector<std::string>> rows;
  const bool table = as_table(o);
  code = read_pages(*c, what, path, items, limit, [&](const nlohmann::json& item) {
    if (table) {
      rows.push_back(row(item));
    } else {
      print_json_line(item);
    }
  });
  if (code == kExitOk && table) print_table(header, rows);
  return code;
}

int print_one(const RemoteOptions& o, const std::string& what, const std::string& path) {
  int code = kExitOk;
  auto c = open_client(o, &code);
  if (!c) return code;
  client::Response r = c->get(path);
  if (int e = exit_for(r, what); e != kExitOk) return e;
  print_entity(o, r.json);
  return kExitOk;
}

int run_chosen(const std::vector<Verb>& verbs) {
  for (const auto& v : verbs) {
    if (v.app->parsed()) return v.run();
  }
  return fail("name a verb; --help lists them", kExitUsage);
}

}  // namespace runledger::cli
