// The "then" half of the decider tests, for every entity: a decision
// accepted, or refused with a status and code (and the field or the
// sentence it names), and the stored bytes folded afresh as a replay does.
// The "given" half is tests/support/test_support.h's Given; each entity adds
// its own short ways to reach a state (job_testing.h, connector_testing.h,
// hold_testing.h).
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "events/event_codec.h"
#include "http/rejection_status.h"
#include "projections/state.h"
#include "tests/support/test_support.h"

namespace runledger::testing {

// Then: accepted (no rejection).
inline void expect_accepted(const Decision& d) {
  EXPECT_FALSE(d.rejection.has_value())
      << code_name(d.rejection->code) << ": " << d.rejection->message;
}

// Then: refused with this status and code.
inline void expect_refusal(const Decision& d, int status, const std::string& code) {
  ASSERT_TRUE(d.rejection.has_value())
      << "expected " << code << ", got " << d.events.size() << " events";
  EXPECT_EQ(http::http_status(d.rejection->code), status) << d.rejection->message;
  EXPECT_EQ(code_name(d.rejection->code), code) << d.rejection->message;
}

// Then: refused so, and nothing to append.
inline void expect_refused(const Decision& d, int status, const std::string& code) {
  ASSERT_NO_FATAL_FAILURE(expect_refusal(d, status, code));
  EXPECT_TRUE(d.events.empty()) << "a refused command must change nothing";
}

// Then: refused so, naming the input field that is wrong.
inline void expect_refused_naming_field(const Decision& d, int status, const std::string& code,
                                        const std::string& field) {
  ASSERT_NO_FATAL_FAILURE(expect_refused(d, status, code));
  EXPECT_EQ(d.rejection->extra.value("field", ""), field);
}

// Then: refused with this status, code and exactly this sentence as its
// error. A refusal may still record that it came (a connector's report of a
// stale sync is refused and recorded as SyncReportIgnored): the tests that
// speak of it check the events themselves.
inline void expect_refused_saying(const Decision& d, int status, const std::string& code,
                                  const std::string& message) {
  ASSERT_NO_FATAL_FAILURE(expect_refusal(d, status, code));
  EXPECT_EQ(d.rejection->message, message);
}

// Folds the stored bytes into a fresh State, as a replay from scratch does.
inline State replay(const std::vector<std::string>& log) {
  State s;
  for (const auto& bytes : log) {
    const fb::Event* e = nullptr;
    Status st = decode_event(bytes, &e);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) break;
    evolve(s, *e);
    s.last_hash = sha256(bytes);
  }
  return s;
}

}  // namespace runledger::testing
