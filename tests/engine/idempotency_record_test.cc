// The kept record of a reply (engine/idempotency.h): a secret the reply
// carries is cut out and sealed under the key, so the record's bytes hold
// neither the secret nor the key, and only the key opens it again; records
// of earlier versions are still read.
#include <string>

#include <gtest/gtest.h>

#include "engine/idempotency.h"

namespace runledger {
namespace {

const std::string kToken = "0123456789abcdef0123456789abcdef";
const std::string kKey = "claim-7c1e0d";

Reply claim_reply() {
  return Reply{200, R"({"job":{"id":"j1"},"lease_expires_at":"2026-12-05T10:00:00.000Z",)"
                    R"("lease_token":")" +
                        kToken + R"("})"};
}

Hash some_fingerprint() { return request_fingerprint("w1", "POST", "/v1/jobs/claim", "{}"); }

TEST(IdempotencyRecord, ASecretIsKeptSealedAndTheKeyOpensIt) {
  const std::string record =
      encode_idempotency(1234, some_fingerprint(), claim_reply(), kToken, kKey);

  EXPECT_EQ(record.find(kToken), std::string::npos);
  EXPECT_EQ(record.find(kKey), std::string::npos);
  auto opened = decode_idempotency(record, kKey);
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->reply.status, 200);
  EXPECT_EQ(opened->reply.body, claim_reply().body);
  EXPECT_EQ(opened->recorded_at_ms, 1234);
  EXPECT_EQ(opened->fingerprint, some_fingerprint());
}

TEST(IdempotencyRecord, AnotherKeyOpensNothingOfTheSecret) {
  const std::string record = encode_idempotency(1, some_fingerprint(), claim_reply(), kToken, kKey);

  auto opened = decode_idempotency(record, "claim-7c1e0e");

  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->reply.body.find(kToken), std::string::npos);
  EXPECT_EQ(opened->reply.body.size(), claim_reply().body.size());
}

TEST(IdempotencyRecord, TwoRecordsOfOneSecretAndKeyDiffer) {
  // A fresh nonce each time: no two records share a pad.
  EXPECT_NE(encode_idempotency(1, some_fingerprint(), claim_reply(), kToken, kKey),
            encode_idempotency(1, some_fingerprint(), claim_reply(), kToken, kKey));
}

TEST(IdempotencyRecord, AReplyWithoutTheSecretIsKeptAsItIs) {
  const Reply no_job{204, ""};
  const Reply refused{409, R"({"code":"invalid_transition","error":"no"})"};

  auto empty =
      decode_idempotency(encode_idempotency(1, some_fingerprint(), no_job, kToken, kKey), kKey);
  auto kept =
      decode_idempotency(encode_idempotency(1, some_fingerprint(), refused, "", kKey), kKey);

  ASSERT_TRUE(empty && kept);
  EXPECT_EQ(empty->reply.status, 204);
  EXPECT_EQ(empty->reply.body, "");
  EXPECT_EQ(kept->reply.body, refused.body);
}

TEST(IdempotencyRecord, AnEarlierVersionsRecordIsRead) {
  // recorded_at, status, fingerprint, then the body in clear.
  std::string legacy(8, '\0');
  legacy += std::string("\x00\xc9", 2);  // 201
  const Hash fp = legacy_request_fingerprint("POST", "/v1/jobs", "{}");
  legacy.append(reinterpret_cast<const char*>(fp.data()), fp.size());
  legacy += R"({"id":"j1"})";

  auto rec = decode_idempotency(legacy, "any key");

  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->reply.status, 201);
  EXPECT_EQ(rec->reply.body, R"({"id":"j1"})");
  EXPECT_EQ(rec->fingerprint, fp);
}

TEST(IdempotencyRecord, ATruncatedRecordIsNoRecord) {
  const std::string record = encode_idempotency(1, some_fingerprint(), claim_reply(), kToken, kKey);
  // Cut inside the sealed secret.
  EXPECT_FALSE(decode_idempotency(record.substr(0, 42 + 1 + 5 + 16 + 4), kKey));
  EXPECT_FALSE(decode_idempotency(record.substr(0, 30), kKey));
}

TEST(IdempotencyRecord, TheRecordKeyIsADigestAndTheFingerprintNamesTheCaller) {
  const std::string stored = idempotency_record_key(kKey);

  EXPECT_EQ(stored.size(), 33u);
  EXPECT_EQ(stored[0], '\0');
  EXPECT_EQ(stored.find(kKey), std::string::npos);
  EXPECT_NE(stored, idempotency_record_key("claim-7c1e0e"));
  EXPECT_NE(request_fingerprint("w1", "POST", "/p", "{}"),
            request_fingerprint("w2", "POST", "/p", "{}"));
}

}  // namespace
}  // namespace runledger
