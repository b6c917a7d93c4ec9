// ServerTest: the fixture of the end-to-end HTTP tests. Each test gets its
// own runledgerd subprocess on a fresh data folder and a client for it; the
// test ends with SIGTERM, which must exit 0 (docs/operations.md: "The server").
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/api_client.h"
#include "tests/support/server_process.h"
#include "tests/support/test_support.h"

namespace runledger::testing {

// runledgerd's default --body-limit-bytes.
inline constexpr size_t kBodyLimitBytes = 1 << 20;

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override { start(initial_flags()); }
  // The flags of the server each test starts with.
  virtual std::vector<std::string> initial_flags() const { return {}; }

  void TearDown() override {
    client_.reset();  // an idle keep-alive connection would hold a server thread
    if (server_ && server_->running()) {
      EXPECT_EQ(server_->terminate(), 0) << server_->log();
    }
  }

  // Starts a server on the fixture's data folder with `flags`.
  void start(const std::vector<std::string>& flags) {
    client_.reset();
    server_ = std::make_unique<ServerProcess>(data_.path(), flags);
    ASSERT_TRUE(server_->wait_ready()) << server_->log();
    client_ = std::make_unique<ApiClient>(server_->port());
  }

  // Stops the server cleanly (exit 0) and starts it again on the same data.
  void restart(const std::vector<std::string>& flags = {}) {
    client_.reset();
    ASSERT_EQ(server_->terminate(), 0) << server_->log();
    start(flags);
  }

  ApiClient& client() { return *client_; }
  ServerProcess& server() { return *server_; }
  const std::string& data() const { return data_.path(); }

 private:
  TempDir data_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<ApiClient> client_;
};

}  // namespace runledger::testing
