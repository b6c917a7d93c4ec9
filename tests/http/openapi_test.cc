// GET /v1/openapi.json (docs/api.md, Operations: "an OpenAPI 3 document of
// this API"): every route the router registers and every path docs/api.md
// lists is in the document, each operation has a unique operationId, a tag
// and its replies, and each route's query parameters are those the server
// takes (http/query_parameters.cc), asked of a running server.
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "http/rejection_status.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

class OpenApiTest : public ServerTest {};

// The source tree: this file is tests/http/openapi_test.cc in it.
std::string openapi_source_dir() {
  std::string file = __FILE__;
  return file.substr(0, file.rfind("tests/http/"));
}

std::string openapi_read_source(const std::string& relative) {
  std::ifstream in(openapi_source_dir() + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string openapi_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "/v1/jobs/{id}/steps/{step}/done" -> "/v1/jobs/x1/steps/x2/done".
std::string openapi_concrete(const std::string& pattern) {
  return std::regex_replace(pattern, std::regex("\\{[a-z_]+\\}"), "x1");
}

TEST_F(OpenApiTest, TheDocumentNamesTheContractsPathsAndTheirOutcomes) {
  ApiReply r = client().get("/v1/openapi.json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json.value("openapi", "").substr(0, 2), "3.");
  const auto& paths = r.json.at("paths");
  // The worker's yield, and reattach with the fields of a step's observed exit.
  const auto& yield = paths.at("/v1/jobs/{id}/yield").at("post");
  EXPECT_TRUE(yield.at("responses").contains("200"));
  const auto& yield_fields =
      yield.at("requestBody").at("content").at("application/json").at("schema").at("properties");
  EXPECT_TRUE(yield_fields.contains("lease_token") && yield_fields.contains("reason"));
  const auto& reattach_fields = paths.at("/v1/jobs/{id}/reattach")
                                    .at("post")
                                    .at("requestBody")
                                    .at("content")
                                    .at("application/json")
                                    .at("schema")
                                    .at("properties");
  for (const char* field : {"step", "exit_code", "output", "retryable", "execution_handle"}) {
    EXPECT_TRUE(reattach_fields.contains(field)) << field;
  }
  for (const char* create : {"/v1/jobs", "/v1/connectors"}) {
    const auto& responses = paths.at(create).at("post").at("responses");
    EXPECT_TRUE(responses.contains("201")) << create;
    EXPECT_TRUE(responses.contains("200")) << create << ": a create posted again is a 200";
  }
  EXPECT_TRUE(paths.at("/v1/jobs/claim").at("post").at("responses").contains("204"));
  EXPECT_TRUE(r.json.at("components").at("securitySchemes").contains("bearer"));
  // The fields that were once served and not documented.
  const auto& schemas = r.json.at("components").at("schemas");
  EXPECT_TRUE(schemas.at("Gate").at("properties").contains("recovery_needed"));
  EXPECT_TRUE(schemas.at("HoldPage").at("properties").contains("next"));
}

TEST_F(OpenApiTest, EveryRouteOfTheRouterIsInTheDocument) {
  ApiReply r = client().get("/v1/openapi.json");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto& paths = r.json.at("paths");
  const std::regex add(R"re(\.add(?:_command|_stream)?\(\s*"([A-Z]+)",\s*"([^"]+)")re");
  size_t routes = 0;
  for (const char* file : {"http/job_routes.cc", "http/connector_routes.cc", "http/hold_routes.cc",
                           "http/event_routes.cc", "http/ops_routes.cc"}) {
    const std::string text = openapi_read_source(file);
    ASSERT_FALSE(text.empty()) << file;
    for (std::sregex_iterator it(text.begin(), text.end(), add), end; it != end; ++it) {
      ++routes;
      const std::string method = openapi_lower((*it)[1]);
      const std::string path = (*it)[2];
      EXPECT_TRUE(paths.contains(path) && paths[path].contains(method))
          << method << " " << path << " (" << file << ") is not in the document";
    }
  }
  EXPECT_GE(routes, 40u);
  size_t operations = 0;
  for (const auto& [path, item] : paths.items()) operations += item.size();
  EXPECT_EQ(operations, routes) << "the document has an operation no route serves";
}

TEST_F(OpenApiTest, EveryPathOfTheApiPageIsInTheDocument) {
  ApiReply r = client().get("/v1/openapi.json");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto& paths = r.json.at("paths");
  const std::string page = openapi_read_source("docs/api.md");
  ASSERT_FALSE(page.empty());
  const std::regex row(R"(\| `(GET|POST|PATCH|DELETE) (/[^`?\s]*)[^`]*`)");
  size_t rows = 0;
  for (std::sregex_iterator it(page.begin(), page.end(), row), end; it != end; ++it) {
    ++rows;
    const std::string method = openapi_lower((*it)[1]);
    const std::string path = (*it)[2];
    EXPECT_TRUE(paths.contains(path) && paths[path].contains(method))
        << method << " " << path << " (docs/api.md) is not in the document";
  }
  EXPECT_GE(rows, 35u);
}

// Every reason a decider refuses a command is in the errors table of
// docs/api.md, under the status the server answers it with.
TEST(RejectionCodes, EachIsInTheErrorsTableUnderItsStatus) {
  const std::string page = openapi_read_source("docs/api.md");
  ASSERT_FALSE(page.empty());
  const std::regex row(R"(\n\| (\d{3}) \| ([^|]+) \|)");
  std::map<std::string, int> documented;
  for (std::sregex_iterator it(page.begin(), page.end(), row), end; it != end; ++it) {
    const std::string codes = (*it)[2];
    const std::regex code("`([a-z_]+)`");
    for (std::sregex_iterator c(codes.begin(), codes.end(), code); c != end; ++c) {
      documented[(*c)[1]] = std::stoi((*it)[1]);
    }
  }
  for (RejectionCode code : kAllRejectionCodes) {
    const std::string name(code_name(code));
    ASSERT_TRUE(documented.count(name)) << name << " is not in docs/api.md's errors table";
    EXPECT_EQ(documented[name], http::http_status(code)) << name;
  }
}

TEST_F(OpenApiTest, OperationsHaveUniqueIdsTagsAndASuccess) {
  ApiReply r = client().get("/v1/openapi.json");
  ASSERT_EQ(r.status, 200) << r.body;
  std::set<std::string> tags;
  for (const auto& t : r.json.at("tags")) tags.insert(t.at("name").get<std::string>());
  std::set<std::string> ids;
  for (const auto& [path, item] : r.json.at("paths").items()) {
    for (const auto& [method, op] : item.items()) {
      const std::string where = method + " " + path;
      ASSERT_TRUE(op.contains("operationId")) << where;
      EXPECT_TRUE(ids.insert(op["operationId"].get<std::string>()).second)
          << where << ": operationId " << op["operationId"] << " is used twice";
      ASSERT_TRUE(op.contains("tags")) << where;
      for (const auto& t : op["tags"]) {
        EXPECT_TRUE(tags.contains(t.get<std::string>())) << where << ": tag " << t;
      }
      bool success = false;
      for (const auto& [status, reply] : op.at("responses").items()) {
        success = success || status.starts_with("2");
      }
      EXPECT_TRUE(success) << where;
    }
  }
}

// The server names what a route takes when it refuses a parameter: those
// names must be the document's query parameters, no more, no fewer.
TEST_F(OpenApiTest, QueryParametersAreThoseTheServerTakes) {
  ApiReply r = client().get("/v1/openapi.json");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::regex takes(R"(\(it takes ([a-z_, ]+)\))");
  for (const auto& [path, item] : r.json.at("paths").items()) {
    for (const auto& [method, op] : item.items()) {
      std::set<std::string> documented;
      for (const auto& p : op.value("parameters", nlohmann::json::array())) {
        if (p.value("in", "") == "query") documented.insert(p.at("name").get<std::string>());
      }
      std::string upper = method;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      ApiReply refused = client().send(upper, openapi_concrete(path) + "?zz_unknown=1", "", {});
      ASSERT_TRUE(IsError(refused, 422, "invalid_query")) << method << " " << path;
      std::set<std::string> served;
      std::smatch m;
      const std::string message = refused.json.value("error", "");
      if (std::regex_search(message, m, takes)) {
        std::stringstream list(m[1].str());
        for (std::string name; std::getline(list, name, ',');) {
          served.insert(name.substr(name.find_first_not_of(' ')));
        }
      }
      EXPECT_EQ(documented, served) << method << " " << path << ": " << message;
    }
  }
}

// Every body field the document lists is one the route takes: the server
// refuses a field it does not take (422 unknown_field naming it) before it
// looks at any value, and 0 is a value no field accepts in a body that
// lacks the others, so nothing is changed.
TEST_F(OpenApiTest, BodyFieldsAreThoseTheServerTakes) {
  ApiReply r = client().get("/v1/openapi.json");
  ASSERT_EQ(r.status, 200) << r.body;
  size_t fields = 0;
  for (const auto& [path, item] : r.json.at("paths").items()) {
    for (const auto& [method, op] : item.items()) {
      if (!op.contains("requestBody")) continue;
      std::string upper = method;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      const auto& props =
          op["requestBody"].at("content").at("application/json").at("schema").at("properties");
      for (const auto& [name, schema] : props.items()) {
        ++fields;
        const nlohmann::json body = {{name, 0}};
        ApiReply sent = client().send(upper, openapi_concrete(path), body.dump(),
                                      {{"Content-Type", "application/json"}});
        const bool unknown = sent.status == 422 && sent.json.is_object() &&
                             sent.json.value("code", "") == "unknown_field" &&
                             sent.json.value("field", "") == name;
        EXPECT_FALSE(unknown) << method << " " << path << ": the document lists '" << name
                              << "', the server does not take it";
        EXPECT_NE(sent.status / 100, 2) << method << " " << path << " " << sent.body;
      }
    }
  }
  EXPECT_GE(fields, 50u);
}

}  // namespace
}  // namespace runledger::testing
