// GET /v1/openapi.json (docs/api.md, Operations: "an OpenAPI 3 document of
// this API"): a document of version 3 naming the contract's paths, and the
// 200 of a create posted again beside its 201.
#include <string>

#include <gtest/gtest.h>

#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

class OpenApiTest : public ServerTest {};

TEST_F(OpenApiTest, TheDocumentNamesTheContractsPathsAndTheirOutcomes) {
  ApiReply r = client().get("/v1/openapi.json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json.value("openapi", "").substr(0, 2), "3.");
  const auto& paths = r.json.at("paths");
  for (const char* path :
       {"/v1/jobs", "/v1/jobs/claim", "/v1/jobs/{id}", "/v1/jobs/{id}/start",
        "/v1/jobs/{id}/steps/{step}/done", "/v1/jobs/{id}/rerun", "/v1/connectors",
        "/v1/connectors/{id}/sync", "/v1/connectors/{id}/syncs/{sync_id}/progress", "/v1/holds",
        "/v1/holds/{id}/release", "/v1/targets/{target}/gate", "/v1/events", "/v1/events/live",
        "/v1/health"}) {
    EXPECT_TRUE(paths.contains(path)) << path;
  }
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
}

}  // namespace
}  // namespace runledger::testing
