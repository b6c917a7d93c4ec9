// PgSchemaTest: a fixture with a real PostgreSQL primary of its own
// (tests/support/pg_server.h) whose database holds runledger's schema, for
// the tests of one cluster part against the database (the connection, the
// store). Each test gets a fresh server.
#pragma once

#include <memory>

#include <gtest/gtest.h>

#include "cluster/pg_connection.h"
#include "cluster/pg_schema.h"
#include "tests/support/pg_server.h"

namespace runledger::testing {

class PgSchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = PgServer::start_primary();
    ASSERT_TRUE(db_->ok()) << db_->error();
    ASSERT_TRUE(pg::Connection::open(db_->dsn(), 10'000, &admin_).ok());
    ASSERT_TRUE(pg::ensure_schema(*admin_).ok());
  }

  std::unique_ptr<PgServer> db_;
  // A session of the test's own, with the schema's statements not prepared.
  std::unique_ptr<pg::Connection> admin_;
};

}  // namespace runledger::testing
