// What the verbs that talk to a running server share (docs/cli.md "Talking
// to a running server"): their connection flags, the client, how an answer
// is printed (a table on a terminal, JSON otherwise or with --output json)
// and the exit code it gives: 0 done, 1 refused by the server (its message
// on stderr), 69 the server cannot be reached (or cannot write: 503), 64
// bad arguments, 70 anything else.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "client/client.h"

namespace runledger::cli {

struct RemoteOptions {
  client::ClientOptions client;
  std::string output;  // "table" or "json"; empty: a table on a terminal
};

// --server, --token-file, --cacert, --cert, --key, --output.
void add_remote_flags(CLI::App* app, RemoteOptions* o);
// --idempotency-key, for a verb that sends a command.
void add_idempotency_flag(CLI::App* app, std::string* key);

// The client for o, or nullptr with the reason printed and *exit_code set.
std::unique_ptr<client::Client> open_client(const RemoteOptions& o, int* exit_code);

// The exit code of an answer (see the top of this file); prints the
// server's refusal or why nothing came, naming `what`.
int exit_for(const client::Response& r, std::string_view what);

// Whether the answer is printed as a table (a terminal, unless --output json).
bool as_table(const RemoteOptions& o);
// One JSON value on one line of stdout.
void print_json_line(const nlohmann::json& value);
// Rows under a header, each column as wide as its widest cell.
void print_table(const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows);
// A JSON value as a table cell: strings bare, null as "-", the rest as JSON.
std::string cell(const nlohmann::json& value);
// One entity: on a terminal (or with --output table) a FIELD VALUE table,
// then each array of objects in it (a job's steps, its attempts) as a table
// of its own; one JSON line otherwise.
void print_entity(const RemoteOptions& o, const nlohmann::json& entity);
// Sends a command (under `key`, or a fresh key) and prints the entity it
// answers with; the exit code of the answer.
int send_and_print(const RemoteOptions& o, const std::string& what, const std::string& method,
                   const std::string& path, const nlohmann::json& body, const std::string& key);
// Reads every page of a list (`items` in each, `next` the cursor) up to
// `limit` items, calling `each` for each; the exit code of the reads.
int read_pages(client::Client& c, const std::string& what, const std::string& path_and_query,
               const std::string& items, size_t limit,
               const std::function<void(const nlohmann::json&)>& each);

// A list verb: every page of `path` (up to `limit` items), printed as a
// table of `header` and row(item) on a terminal, else as JSON lines.
int print_list(const RemoteOptions& o, const std::string& what, const std::string& path,
               const std::string& items, size_t limit, const std::vector<std::string>& header,
               const std::function<std::vector<std::string>(const nlohmann::json&)>& row);
// A show verb: GET `path`, printed with print_entity.
int print_one(const RemoteOptions& o, const std::string& what, const std::string& path);

// The API's largest page of a list.
inline constexpr size_t kListPageMax = 1000;

// A group of verbs (`job list`, `job show` ...): the group's app, and what
// runs the verb the arguments chose.
struct Verb {
  CLI::App* app;
  std::function<int()> run;
};
int run_chosen(const std::vector<Verb>& verbs);

}  // namespace runledger::cli
